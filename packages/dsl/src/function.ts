import {
  isDType,
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
  type Stmt,
} from "@tirx-ts/core";
import { Builder, builder, withBuilder } from "./builder.js";
import { describe, PrimExpr } from "./expr.js";
import { callerSpan } from "./span.js";
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
 * Parameters are passed in declaration order at launch.
 * @example
 * const k = T.function("k", { A: T.Tensor([128], "float32") }, ({ A }) => { ... });
 * @throws TirxError for malformed declarations or statements (TX1xxx).
 */
export function function_<P extends Record<string, ParamType>>(
  name: string,
  params: P,
  body: (args: ParamHandles<P>) => void,
): PrimFunc {
  const span = callerSpan();
  if (typeof name !== "string" || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new TirxError(
      "TX1002",
      `kernel name must be an identifier, got ${JSON.stringify(name)}`,
      span,
    );
  }
  const irParams: Param[] = [];
  const handles: Record<string, TileView | PrimExpr> = {};
  for (const [pname, t] of Object.entries(params)) {
    if (typeof t === "function" && isDType((t as DTypeFn).dtype)) {
      const v = mkVar(pname, (t as DTypeFn).dtype, span);
      irParams.push({ kind: "scalar", name: pname, var: v });
      handles[pname] = new PrimExpr(v);
    } else if (t && typeof t === "object" && t.kind === "ScalarType") {
      const v = mkVar(pname, t.dtype, span);
      irParams.push({ kind: "scalar", name: pname, var: v });
      handles[pname] = new PrimExpr(v);
    } else if (t && typeof t === "object" && t.kind === "TensorType") {
      const buf = mkBuffer(pname, t.shape, t.dtype, "global", span ? { span } : {});
      irParams.push({ kind: "buffer", name: pname, buffer: buf });
      handles[pname] = new TileView(viewOf(buf, span));
    } else {
      throw new TirxError(
        "TX1002",
        `parameter "${pname}" must be T.Tensor(...), T.Scalar(...) or a dtype such as T.int32, got ${describe(t)}`,
        span,
      );
    }
  }
  const b = new Builder();
  withBuilder(b, () => body(handles as ParamHandles<P>));
  const { top, device } = b.finish();
  const stmts: Stmt[] = [...top];
  if (device) {
    const entry = top.find((s) => s.kind === "DeviceEntry");
    if (entry) stmts.splice(stmts.indexOf(entry), 1, { ...entry, body: device });
  }
  return { kind: "PrimFunc", name, params: irParams, body: seq(stmts), ...(span ? { span } : {}) };
}

/**
 * Begin the device part of the kernel: every later statement runs on each thread of `launch`.
 * Call it once, first. (TIRx `T.device_entry(launch=...)`.)
 * @throws TirxError TX1006 when called twice or after other statements.
 */
export function device_entry(opts: { launch: LaunchConfig }): void {
  const span = callerSpan();
  const b = builder("T.device_entry", span);
  if (b.deviceEntered) throw new TirxError("TX1006", "T.device_entry is called twice", span);
  if (b.depth !== 1)
    throw new TirxError(
      "TX1006",
      "T.device_entry must be called at the top of the function body, not inside a loop or branch",
      span,
    );
  if (!opts || typeof opts !== "object" || !opts.launch) {
    throw new TirxError(
      "TX1002",
      "T.device_entry needs { launch: T.cuda.LaunchConfig({ grid, block }) }",
      span,
    );
  }
  b.emit({ kind: "DeviceEntry", launch: opts.launch, body: seq([]), ...(span ? { span } : {}) });
  b.openDevice();
}

function alloc(
  scope: Scope,
  shape: readonly number[],
  dtype: DType,
  align: number | undefined,
  what: string,
  name?: string,
): TileView {
  const span = callerSpan();
  const b = builder(what, span);
  if (!isDType(dtype)) throw new TirxError("TX1003", `unknown dtype "${String(dtype)}"`, span);
  if (
    !Array.isArray(shape) ||
    shape.length === 0 ||
    shape.some((n) => !Number.isInteger(n) || n <= 0)
  ) {
    throw new TirxError(
      "TX2003",
      `${what} needs a static shape of positive integers, got ${JSON.stringify(shape)}`,
      span,
    );
  }
  if (
    align !== undefined &&
    (!Number.isInteger(align) || align <= 0 || (align & (align - 1)) !== 0)
  ) {
    throw new TirxError("TX1002", `align must be a power of two, got ${align}`, span);
  }
  if (name !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
    throw new TirxError(
      "TX1002",
      `buffer name must be an identifier, got ${JSON.stringify(name)}`,
      span,
    );
  }
  name ??= scope === "local" ? "local" : "smem";
  const buf = mkBuffer(name, shape, dtype, scope, {
    ...(align ? { align } : {}),
    ...(span ? { span } : {}),
  });
  b.emit({ kind: "Alloc", buffer: buf, ...(span ? { span } : {}) });
  return new TileView(viewOf(buf, span));
}

/**
 * Allocate a static shared-memory tile for the CTA (TIRx `T.alloc_shared`); 16-byte aligned by default.
 * `layout: "default"` is row-major, the only layout so far; `name` names the buffer in
 * diagnostics, printed IR and PTX (default "smem"); `dynamic` puts it in dynamic shared memory.
 * @throws TirxError TX1003, TX2003, and TX1002 for an unknown layout.
 */
export function alloc_shared(
  shape: readonly number[],
  dtype: DType,
  opts: { layout?: "default"; align?: number; dynamic?: boolean; name?: string } = {},
): TileView {
  if (opts.layout !== undefined && opts.layout !== "default") {
    throw new TirxError(
      "TX1002",
      `layout "${String(opts.layout)}" is not supported; use "default" (row-major)`,
      callerSpan(),
    );
  }
  return alloc(
    opts.dynamic ? "shared.dyn" : "shared",
    shape,
    dtype,
    opts.align,
    "T.alloc_shared",
    opts.name,
  );
}

/** Allocate per-thread local storage (registers or local memory). */
export function alloc_local(
  shape: readonly number[],
  dtype: DType,
  opts: { name?: string } = {},
): TileView {
  return alloc("local", shape, dtype, undefined, "T.alloc_local", opts.name);
}
