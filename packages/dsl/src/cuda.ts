import {
  constInt,
  intImm,
  mkVar,
  TirxError,
  type Expr,
  type GridExtent,
  type LaunchConfig,
  type Span,
  type SpecialName,
} from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, show } from "./expr.js";
import { checkOptInt, checkOptions, isPlainObject } from "./check.js";
import { recordStmtOp } from "./op-call.js";
import { tile } from "./tile-apply.js";
import { callerSpan } from "./span.js";

type Dim3 =
  number | readonly [number] | readonly [number, number] | readonly [number, number, number];

/** A grid extent as written: a number, or an int32 expression of scalar parameters. */
type GridDim = number | PrimExpr;
type GridDim3 =
  GridDim | readonly [GridDim] | readonly [GridDim, GridDim] | readonly [GridDim, GridDim, GridDim];

function isGridExpr(e: unknown): e is Expr {
  return (
    typeof e === "object" &&
    e !== null &&
    (e as { dtype?: unknown }).dtype === "int32" &&
    typeof (e as { kind?: unknown }).kind === "string"
  );
}

/** Grid extents: numbers stay static, int32 expressions (constants folded) become runtime extents. */
function gridDim3(d: unknown, span?: Span): [GridExtent, GridExtent, GridExtent] {
  const a: unknown[] =
    typeof d === "number" || d instanceof PrimExpr
      ? [d]
      : Array.isArray(d)
        ? Array.from(d as unknown[])
        : [];
  const out: GridExtent[] = a.map((g) => {
    if (!(g instanceof PrimExpr)) return g as number;
    if (g.expr.dtype !== "int32") {
      throw new TirxError(
        "TX2007",
        `a runtime grid extent must be an int32 expression of scalar parameters, got ${g.expr.dtype}`,
        span,
      );
    }
    return constInt(g.expr) ?? g.expr;
  });
  // Everything that is not a runtime expression must be a valid static extent.
  const statics = out.filter((g) => !isGridExpr(g));
  if (a.length < 1 || a.length > 3) dim3(d, "grid", span);
  if (statics.length > 0) dim3(statics, "grid", span);
  while (out.length < 3) out.push(1);
  return out as [GridExtent, GridExtent, GridExtent];
}

const MAX_EXTENT = 2 ** 31 - 1;

function dim3(d: unknown, what: string, span?: Span): [number, number, number] {
  const a: unknown[] =
    typeof d === "number" ? [d] : Array.isArray(d) ? Array.from(d as unknown[]) : [];
  if (
    a.length < 1 ||
    a.length > 3 ||
    a.some((n) => typeof n !== "number" || !Number.isSafeInteger(n) || n <= 0 || n > MAX_EXTENT)
  ) {
    throw new TirxError(
      "TX2007",
      `${what} must be a positive integer or a list of up to 3 of them, got ${show(d)}`,
      span,
    );
  }
  while (a.length < 3) a.push(1);
  return a as [number, number, number];
}

/**
 * Launch configuration: `T.cuda.LaunchConfig({ grid: 1, block: 128 })`; grid in CTAs, block in
 * threads, each up to 3-D; `dynamic_shared_bytes` for `shared.dyn` buffers. A grid extent may be
 * an int32 expression of scalar parameters, `{ grid: [T.ceildiv(n, 256)], block: 256 }`: the host
 * evaluates it at each launch and refuses values below 1 or above the CUDA limit (TX5009).
 * The block is static.
 * @throws TirxError TX2007 for extents that are not positive integers, TX1002 for other options.
 */
export function LaunchConfig(cfg: {
  grid: GridDim3;
  block: Dim3;
  dynamic_shared_bytes?: number;
  /** CTAs per thread-block cluster (sm_90), e.g. `[2, 1, 1]`; checked by the verifier (TX4025). */
  cluster?: Dim3;
  /**
   * CTAs that must fit on one SM at once (CUDA `__launch_bounds__(block, n)`, PTX
   * `.minnctapersm n`): caps registers per thread at 65536 / (threads · n), so that e.g. two
   * 256-thread CTAs stay resident (128 registers each). Checked by the verifier (TX2007).
   */
  min_ctas_per_sm?: number;
}): LaunchConfig {
  const span = callerSpan();
  if (!isPlainObject(cfg)) {
    throw new TirxError(
      "TX2007",
      `T.cuda.LaunchConfig needs { grid, block }, e.g. { grid: 1, block: 128 }, got ${show(cfg)}`,
      span,
    );
  }
  const o = checkOptions(
    cfg,
    ["grid", "block", "dynamic_shared_bytes", "cluster", "min_ctas_per_sm"],
    "T.cuda.LaunchConfig",
    span,
  );
  checkOptInt(o.dynamic_shared_bytes, "dynamic_shared_bytes", 0, span);
  checkOptInt(o.min_ctas_per_sm, "min_ctas_per_sm", 1, span);
  return {
    grid: gridDim3(o.grid, span),
    block: dim3(o.block, "block", span),
    dynamicSharedBytes: o.dynamic_shared_bytes ?? 0,
    ...(o.cluster !== undefined ? { cluster: dim3(o.cluster, "cluster", span) } : {}),
    ...(o.min_ctas_per_sm !== undefined ? { minCtasPerSm: o.min_ctas_per_sm } : {}),
  };
}

/**
 * Check a launch given to T.device_entry: what T.cuda.LaunchConfig returns (a copy is kept, so
 * later changes to the object do not reach the kernel).
 * @throws TirxError TX2007.
 */
export function checkLaunchConfig(l: unknown, span?: Span): LaunchConfig {
  const c = l as Partial<Record<keyof LaunchConfig, unknown>> | null;
  const dims = (d: unknown, runtime: boolean): d is [number, number, number] =>
    Array.isArray(d) &&
    d.length === 3 &&
    [0, 1, 2].every((i) => {
      const n: unknown = d[i];
      if (runtime && isGridExpr(n)) return true;
      return typeof n === "number" && Number.isSafeInteger(n) && n > 0 && n <= MAX_EXTENT;
    });
  if (
    typeof c !== "object" ||
    c === null ||
    !dims(c.grid, true) ||
    !dims(c.block, false) ||
    typeof c.dynamicSharedBytes !== "number" ||
    !Number.isSafeInteger(c.dynamicSharedBytes) ||
    c.dynamicSharedBytes < 0
  ) {
    throw new TirxError(
      "TX2007",
      `launch must be T.cuda.LaunchConfig({ grid, block }), got ${show(l)}`,
      span,
    );
  }
  return {
    grid: [c.grid[0], c.grid[1], c.grid[2]] as [GridExtent, GridExtent, GridExtent],
    block: [c.block[0], c.block[1], c.block[2]],
    dynamicSharedBytes: c.dynamicSharedBytes,
    ...(c.cluster !== undefined ? { cluster: dim3(c.cluster, "cluster", span) } : {}),
    ...(typeof c.minCtasPerSm === "number" ? { minCtasPerSm: c.minCtasPerSm } : {}),
  };
}

function special(kind: "tid" | "ctaid" | "ntid" | "nctaid", axis: string, label: string): PrimExpr {
  const span = callerSpan();
  const b = builder(label, span);
  if (axis !== "x" && axis !== "y" && axis !== "z") {
    throw new TirxError("TX1002", `${label} takes "x", "y" or "z", got ${show(axis)}`, span);
  }
  if (!b.deviceEntered) {
    throw new TirxError(
      "TX2002",
      `${label} is only defined inside T.device_entry; call T.device_entry first`,
      span,
    );
  }
  const names = {
    tid: "threadIdx",
    ctaid: "blockIdx",
    ntid: "blockDim",
    nctaid: "gridDim",
  } as const;
  const v = mkVar(`${names[kind]}_${axis}`, "int32", span);
  const value = {
    kind: "Special",
    name: `${kind}.${axis}` as SpecialName,
    dtype: "int32",
    ...(span ? { span } : {}),
  } as const;
  b.emit({ kind: "Let", var: v, value, ...(span ? { span } : {}) });
  return new PrimExpr(v);
}

/** `%tid.{x,y,z}`: this thread's index in its CTA (int32). */
export const thread_idx = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("tid", axis, "T.cuda.thread_idx");
/** `%ctaid.{x,y,z}`: this CTA's index in the grid (int32). */
export const block_idx = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("ctaid", axis, "T.cuda.block_idx");
/** `%ntid.{x,y,z}`: threads per CTA along an axis (int32). */
export const block_dim = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("ntid", axis, "T.cuda.block_dim");
/** `%nctaid.{x,y,z}`: CTAs per grid along an axis (int32). */
export const grid_dim = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("nctaid", axis, "T.cuda.grid_dim");

/** CTA-wide barrier (`bar.sync 0`): every thread of the CTA waits here (PTX ISA, bar.sync). */
export function cta_sync(): void {
  recordStmtOp("bar.sync", [intImm(0)], callerSpan());
}

export { tile };
