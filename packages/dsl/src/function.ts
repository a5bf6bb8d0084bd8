import {
  ARCHS,
  archNamed,
  dtypeBytes,
  showSwizzle,
  swizzleInBytes,
  swizzlePeriodBytes,
  type SwizzleLayout,
  type TileLayout,
  isDType,
  isTileLayout,
  isStaticShape,
  checkLayoutShape,
  mkBuffer,
  mkVar,
  seq,
  TirxError,
  viewOf,
  type DType,
  type LaunchConfig,
  type Param,
  type PrimFunc,
  type Scope,
  type Span,
  type Stmt,
  type Dim,
  type Var,
} from "@tirx-ts/core";
import { Builder, builder, refuseThenable, setTileNotes, withBuilder } from "./builder.js";
import { checkDType, checkFunction, PrimExpr, show } from "./expr.js";
import { checkIdent, checkOptInt, checkOptions, checkShape, isPlainObject } from "./check.js";
import { checkLaunchConfig } from "./cuda.js";
import { callerSpan } from "./span.js";
import { bindingName } from "./binding-name.js";
import { unknownTMember } from "./unknown-member.js";
import type { DTypeFn, ScalarType, TensorType } from "./types.js";
import { TileView } from "./view.js";

/** A parameter declaration: a tensor type, a scalar type, or a bare dtype constructor (`T.int32`). */
export type ParamType = TensorType | ScalarType | DTypeFn;

/** What the body receives for each declared parameter. */
export type ParamHandles<P extends Record<string, ParamType>> = {
  [K in keyof P]: P[K] extends TensorType ? TileView : PrimExpr;
};

/**
 * Define a kernel (TIRx `@T.function`): traces `body` once and returns the PrimFunc.
 * Parameters are passed in declaration order at launch. A tensor dim given as a string names an
 * int32 scalar parameter (declared before or after the tensor): a symbolic dim, checked against
 * the tensor passed at launch.
 * @example
 * const k = T.function("k", { A: T.Tensor([128], "float32") }, ({ A }) => { ... });
 * const v = T.function("v", { n: T.int32, A: T.Tensor(["n"], "float32") }, ({ n, A }) => { ... });
 * @throws TirxError for malformed declarations or statements (TX1xxx); TX2003 for a dim that
 * names no int32 scalar parameter; TX1025 for a body that returns a promise (an `async` body:
 * statements after its first `await` would be lost).
 */
export function function_<P extends Record<string, ParamType>>(
  name: string,
  params: P,
  body: (args: ParamHandles<P>) => void,
): PrimFunc {
  const span = callerSpan();
  checkIdent(name, "the kernel name of T.function", span);
  if (!isPlainObject(params)) {
    throw new TirxError(
      "TX1002",
      `T.function needs its parameters as an object such as { A: T.Tensor([128], "float32") }, got ${show(params)}`,
      span,
    );
  }
  checkFunction(body, "T.function needs a body function as its third argument", span);
  const irParams: Param[] = [];
  const handles: Record<string, TileView | PrimExpr> = {};
  // Symbolic dims name scalar parameters, which may be declared after the tensor: bind scalars first.
  const scalarVars = new Map<string, Var>();
  const keys = Reflect.ownKeys(params);
  for (const pname of keys) {
    const t: unknown = Object.getOwnPropertyDescriptor(params, pname)?.value;
    if (typeof pname !== "string") continue;
    if (typeof t === "function" && isDType((t as DTypeFn).dtype)) {
      scalarVars.set(pname, mkVar(pname, (t as DTypeFn).dtype, span));
    } else if (isParamType(t, "ScalarType") && isDType(t.dtype)) {
      scalarVars.set(pname, mkVar(pname, t.dtype, span));
    }
  }
  const resolveDim = (d: unknown, pname: string): unknown => {
    if (typeof d !== "string") return d;
    const v = scalarVars.get(d);
    if (!v || v.dtype !== "int32") {
      const names = [...scalarVars].filter(([, x]) => x.dtype === "int32").map(([k]) => k);
      throw new TirxError(
        "TX2003",
        `dim "${d}" of parameter "${pname}" must name an int32 scalar parameter of this kernel${v ? `, but "${d}" is ${v.dtype}` : ""}`,
        span,
        [
          {
            message: names.length
              ? `int32 scalar parameters: ${names.join(", ")}`
              : `declare it, e.g. { ${d}: T.int32, ${pname}: T.Tensor(["${d}"], ...) }`,
          },
        ],
      );
    }
    return v;
  };
  for (const pname of keys) {
    checkIdent(pname, "a parameter name of T.function", span);
    const t: unknown = Object.getOwnPropertyDescriptor(params, pname)?.value;
    let handle: TileView | PrimExpr;
    if (typeof t === "function" && isDType((t as DTypeFn).dtype)) {
      const v = scalarVars.get(pname) ?? mkVar(pname, (t as DTypeFn).dtype, span);
      irParams.push({ kind: "scalar", name: pname, var: v });
      handle = new PrimExpr(v);
    } else if (isParamType(t, "ScalarType")) {
      const dtype: unknown = t.dtype;
      checkDType(dtype, `parameter "${pname}"`, span);
      const v = scalarVars.get(pname) ?? mkVar(pname, dtype, span);
      irParams.push({ kind: "scalar", name: pname, var: v });
      handle = new PrimExpr(v);
    } else if (isParamType(t, "TensorType")) {
      const dtype: unknown = t.dtype;
      checkDType(dtype, `parameter "${pname}"`, span);
      const dims = Array.isArray(t.shape)
        ? Array.from(t.shape as unknown[], (d) => resolveDim(d, pname))
        : t.shape;
      const statics = Array.isArray(dims)
        ? dims.filter((d) => typeof d !== "object" || d === null)
        : dims;
      checkShape(statics, `parameter "${pname}"`, span, false);
      const shape = dims as Dim[];
      const buf = mkBuffer(pname, shape, dtype, "global", span ? { span } : {});
      irParams.push({ kind: "buffer", name: pname, buffer: buf });
      handle = isStaticShape(shape) ? new TileView(viewOf(buf, span)) : new TileView(buf);
    } else {
      throw new TirxError(
        "TX1002",
        `parameter "${pname}" must be T.Tensor(...), T.Scalar(...) or a dtype such as T.int32, got ${show(t)}`,
        span,
      );
    }
    // defineProperty: a parameter named like an Object.prototype member stays a plain field.
    Object.defineProperty(handles, pname, {
      value: handle,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  const b = new Builder();
  withBuilder(b, () => {
    try {
      refuseThenable(body(handles as ParamHandles<P>), span);
    } catch (e) {
      // A misspelled member of T (T.cuda.thread_id): TX1024 at it, not a TypeError.
      throw unknownTMember(e) ?? e;
    }
  });
  const { top, device } = b.finish();
  const stmts: Stmt[] = [...top];
  if (device) {
    const entry = top.find((s) => s.kind === "DeviceEntry");
    // The tile primitives' shared scratch, sized now that every call is traced.
    if (entry) stmts.splice(stmts.indexOf(entry), 1, { ...entry, body: b.scratch.finish(device) });
  }
  const fn: PrimFunc = {
    kind: "PrimFunc",
    name,
    params: irParams,
    body: seq(stmts),
    ...(span ? { span } : {}),
  };
  setTileNotes(fn, b.tileNotes);
  return fn;
}

/**
 * Begin the device part of the kernel: every later statement runs on each thread of `launch`.
 * Call it once, first. (TIRx `T.device_entry(launch=...)`.) `arch` (optional, e.g. `"sm_90"`)
 * names the target the tile primitives dispatch for (TIRx reads the current target): with sm_90
 * or later `T.tile.warp.copy` stores mma fragments (and `T.tile.wg.copy` 16-bit tiles in the
 * wgmma accumulator layout) to shared memory by stmatrix; without it they choose instructions
 * every target has. Compiling for a lower arch than an instruction chosen
 * needs is the op table's arch error as usual.
 * @example T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }), arch: "sm_90" });
 * @throws TirxError TX1006 when called twice or after other statements; TX5006 for an `arch`
 *   that is not a target name of ARCHS.
 */
export function device_entry(opts: { launch: LaunchConfig; arch?: string }): void {
  const span = callerSpan();
  const b = builder("T.device_entry", span);
  if (b.deviceEntered) throw new TirxError("TX1006", "T.device_entry is called twice", span);
  if (b.depth !== 1)
    throw new TirxError(
      "TX1006",
      "T.device_entry must be called at the top of the function body, not inside a loop or branch",
      span,
    );
  if (!isPlainObject(opts) || opts.launch === undefined) {
    throw new TirxError(
      "TX1002",
      `T.device_entry needs { launch: T.cuda.LaunchConfig({ grid, block }) }, got ${show(opts)}`,
      span,
    );
  }
  checkOptions(opts, ["launch", "arch"], "T.device_entry", span);
  const launch = checkLaunchConfig(opts.launch, span);
  if (opts.arch !== undefined) {
    const a = typeof opts.arch === "string" ? archNamed(opts.arch) : undefined;
    if (!a) {
      throw new TirxError(
        "TX5006",
        `T.device_entry: arch must name a target (${ARCHS.map((x) => x.name).join(", ")}), got ${show(opts.arch)}`,
        span,
      );
    }
    b.sm = a.sm;
  }
  b.emit({ kind: "DeviceEntry", launch, body: seq([]), ...(span ? { span } : {}) });
  b.launch = launch;
  b.openDevice();
}

function alloc(
  scope: Scope,
  shape: unknown,
  dtype: unknown,
  align: unknown,
  what: string,
  name: unknown,
  span: Span | undefined,
  layout?: SwizzleLayout,
  tileLayout?: TileLayout,
): TileView {
  const b = builder(what, span);
  checkDType(dtype, what, span);
  const dims = checkShape(shape, what, span, true);
  if (
    align !== undefined &&
    (typeof align !== "number" ||
      !Number.isSafeInteger(align) ||
      align <= 0 ||
      align > 2 ** 30 ||
      (align & (align - 1)) !== 0)
  ) {
    throw new TirxError(
      "TX1002",
      `${what}: align must be a power of two, got ${show(align)}`,
      span,
    );
  }
  let bufName = scope === "local" ? "local" : "smem";
  if (name !== undefined) {
    checkIdent(name, `${what}: the buffer name`, span);
    bufName = name;
  } else {
    // The variable the author binds it to; else the default, which reports replace with the
    // declaration's position (core's bufferName).
    bufName = bindingName(span) ?? bufName;
  }
  let bytes: SwizzleLayout | undefined;
  let alignOut = typeof align === "number" ? align : undefined;
  if (layout && layout.swizzleLen > 0) {
    bytes = swizzleInBytes(layout, dtype as DType, span);
    const period = swizzlePeriodBytes(bytes);
    const size = dims.reduce<number>((a, d) => a * (typeof d === "number" ? d : 1), 1);
    if ((size * dtypeBytes(dtype as DType)) % period !== 0) {
      throw new TirxError(
        "TX1016",
        `${what}: a ${showSwizzle(layout)} buffer must span a multiple of the swizzle's period of ${period} bytes; [${dims.join(", ")}] ${String(dtype)} is ${size * dtypeBytes(dtype as DType)} bytes`,
        span,
      );
    }
    if (alignOut !== undefined && alignOut < period) {
      throw new TirxError(
        "TX1016",
        `${what}: a ${showSwizzle(layout)} buffer is aligned to its period of ${period} bytes; align ${alignOut} is smaller`,
        span,
      );
    }
    alignOut = Math.max(alignOut ?? 16, period);
  }
  const buf = mkBuffer(bufName, dims, dtype, scope, {
    ...(alignOut !== undefined ? { align: alignOut } : {}),
    ...(bytes ? { layout: bytes } : {}),
    ...(tileLayout ? { tileLayout } : {}),
    ...(span ? { span } : {}),
  });
  b.emit({ kind: "Alloc", buffer: buf, ...(span ? { span } : {}) });
  return new TileView(viewOf(buf, span));
}

/**
 * Allocate a static shared-memory tile for the CTA (TIRx `T.alloc_shared`); 16-byte aligned by default.
 * `layout` is `"default"` (row-major) or an XOR swizzle (`T.SwizzleLayout(per_element,
 * swizzle_len, atom_len)` in elements of `dtype`, or `T.swizzle_mode("128B")` in bytes): views
 * of the tile stay row-major in logical offsets and every access swizzles the byte offset; a
 * swizzled tile is aligned to the swizzle's period (1024 bytes for 128B). `name` names the buffer
 * in diagnostics, printed IR and PTX (default: the variable the call is bound to, `tile` in
 * `const tile = T.alloc_shared(...)`, else "smem", which reports show as the declaration's
 * position); `dynamic` puts it in dynamic shared memory.
 * @throws TirxError TX1003, TX2003, TX1002 for an unknown layout, TX1016 for a swizzle the
 *   tile's size is not a multiple of, or an align below its period.
 */
export function alloc_shared(
  shape: readonly number[],
  dtype: DType,
  opts: {
    layout?: "default" | SwizzleLayout;
    align?: number;
    dynamic?: boolean;
    name?: string;
  } = {},
): TileView {
  const span = callerSpan();
  const o = checkOptions(opts, ["layout", "align", "dynamic", "name"], "T.alloc_shared", span);
  const layout = o.layout;
  const isSwizzle =
    typeof layout === "object" &&
    layout !== null &&
    (layout as { kind?: unknown }).kind === "SwizzleLayout";
  if (layout !== undefined && layout !== "default" && !isSwizzle) {
    throw new TirxError(
      "TX1002",
      `layout ${show(layout)} is not supported; use "default" (row-major) or a swizzle (T.SwizzleLayout(...), T.swizzle_mode(...))`,
      span,
    );
  }
  if (o.dynamic !== undefined && typeof o.dynamic !== "boolean") {
    throw new TirxError(
      "TX1002",
      `T.alloc_shared: dynamic must be true or false, got ${show(o.dynamic)}`,
      span,
    );
  }
  checkOptInt(o.align, "T.alloc_shared: align", 1, span);
  return alloc(
    o.dynamic ? "shared.dyn" : "shared",
    shape,
    dtype,
    o.align,
    "T.alloc_shared",
    o.name,
    span,
    isSwizzle ? (layout as SwizzleLayout) : undefined,
  );
}

/**
 * Allocate per-thread local storage (registers or local memory). `name` names the buffer as in
 * `T.alloc_shared` (default: the variable the call is bound to, else "local"). `layout` (a
 * `T.TileLayout` or a built-in `T.layout.*`) makes it a register tile: the IR records which
 * thread holds each logical element and at which slot of its array (TIRx
 * `T.alloc_local(shape, dtype, layout=...)`). Any static shape of the layout's size is admitted
 * (TIRx docs, "Tensor Layout": an element's row-major index over the shape is its index over the
 * shard extents, so the dims need not line up with runs of the iters: `[2, 48]` over
 * `S[(3, 32) : (1, 1@laneid)]`); another size is TX2021 here, at this line; the verifier checks
 * that its thread axes fit the launch (TX2021 too). Without `layout`, every thread holds the
 * whole row-major array, as before; the storage and accesses are the same either way today.
 * @throws TirxError TX1003, TX2003, TX1002 for a `layout` that is not a TileLayout, TX2021 for a
 *   shape whose size is not the layout's.
 */
export function alloc_local(
  shape: readonly number[],
  dtype: DType,
  opts: { name?: string; layout?: TileLayout } = {},
): TileView {
  const span = callerSpan();
  const o = checkOptions(opts, ["name", "layout"], "T.alloc_local", span);
  if (o.layout !== undefined && !isTileLayout(o.layout)) {
    throw new TirxError(
      "TX1002",
      `T.alloc_local: layout ${show(o.layout)} is not a TileLayout; use T.TileLayout(...) or a built-in T.layout.*`,
      span,
    );
  }
  const view = alloc(
    "local",
    shape,
    dtype,
    undefined,
    "T.alloc_local",
    o.name,
    span,
    undefined,
    o.layout as TileLayout | undefined,
  );
  // A layout that cannot hold the shape is the allocation's error, at its line (not at the
  // first T.tile call that reads it).
  if (o.layout !== undefined && shape.every((d) => typeof d === "number")) {
    try {
      checkLayoutShape(o.layout as TileLayout, shape, span);
    } catch (e) {
      // The verifier's rule for a local tile (TX2021), reported while building.
      if (e instanceof TirxError && e.code === "TX1026") {
        throw new TirxError("TX2021", e.text, span, e.notes);
      }
      throw e;
    }
  }
  return view;
}

function isParamType<K extends "TensorType" | "ScalarType">(
  t: unknown,
  kind: K,
): t is { kind: K; dtype?: unknown; shape?: unknown } {
  return typeof t === "object" && t !== null && (t as { kind?: unknown }).kind === kind;
}
