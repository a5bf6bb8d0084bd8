import { bufferName } from "../buffer-name.js";
import { dtypeBytes } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import type { DiagnosticCode } from "../catalog.js";
import { binary } from "../ir/arith.js";
import { numel, staticShape, type Buffer, type View } from "../ir/buffer.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { LaunchConfig, TileApply, TileParam } from "../ir/stmt.js";
import {
  exprRange,
  gcd,
  knownDivisor,
  provableAlignment,
  type RangeEnv,
} from "../analysis/bounds.js";
import { didYouMean } from "../suggest.js";
import { MAX_UNROLL } from "../limits.js";
import type { Span } from "../span.js";
import { isExpr, isView } from "../visit.js";
import type { AtomSide } from "../ir/tile-plan.js";

/** What a tile-pattern contract needs to know about the place of a `tile.apply`. */
export interface PatternContext {
  readonly launch: LaunchConfig;
  readonly env: RangeEnv;
}

/** Number of threads of one CTA. */
export function ctaThreads(launch: LaunchConfig): number {
  return launch.block[0] * launch.block[1] * launch.block[2];
}

/**
 * Refuse parameters outside `allowed`, suggesting the nearest known name.
 * @throws TirxError `code` (the tile op's own) for the first unknown parameter.
 */
export function checkParamNames(
  s: TileApply,
  allowed: readonly string[],
  code: DiagnosticCode,
  what: string,
): void {
  for (const key of Object.keys(s.params)) {
    if (allowed.includes(key)) continue;
    const guess = didYouMean(key, allowed);
    throw new TirxError(
      code,
      `unknown parameter "${key}" of ${what}${guess ? `; did you mean "${guess}"?` : ""} (parameters: ${allowed.join(", ")}; qualifiers belong in the opcode)`,
      s.span,
    );
  }
}

/**
 * The runtime expression parameter `key`, checked against the accepted dtypes (a boolean or an
 * integer literal becomes an immediate of the first accepted dtype, int32 for a negative one).
 * @throws TirxError `code` for a value that is not an expression of an accepted dtype.
 */
export function exprParam(
  s: TileApply,
  key: string,
  dtypes: readonly string[],
  code: DiagnosticCode,
): Expr | undefined {
  const p: TileParam | undefined = s.params[key];
  if (p === undefined) return undefined;
  if (typeof p === "boolean" && dtypes.includes("bool")) return intImm(p ? 1 : 0, "bool");
  if (typeof p === "number" && Number.isInteger(p) && !dtypes.includes("bool")) {
    // A negative literal takes the signed dtype when one is accepted, so that the parameter's
    // own range rule (e.g. TX3019) reports it rather than the literal check.
    const dt = p < 0 && dtypes.includes("int32") ? "int32" : (dtypes[0] as "uint32");
    return intImm(p, dt, s.span);
  }
  if (!isExpr(p) || isView(p) || !dtypes.includes(p.dtype)) {
    const got =
      typeof p !== "object"
        ? typeof p
        : isView(p)
          ? "a view"
          : isExpr(p)
            ? p.dtype
            : Array.isArray(p)
              ? "a list"
              : "a tensor map";
    throw new TirxError(
      code,
      `${key} must be a runtime ${dtypes.join(" or ")} expression, got ${got}`,
      s.span,
    );
  }
  return p;
}

/** Byte origin and per-axis byte strides of a view. */
export function sideOf(view: View, groupAxes: number, span?: Span): AtomSide {
  const eb = dtypeBytes(view.dtype);
  const bytes = view.strides.map((s) => s * eb);
  return {
    view,
    buffer: view.buffer,
    baseBytes: binary("mul", view.offset, intImm(eb), span),
    groupStridesBytes: bytes.slice(0, groupAxes),
    repeatStridesBytes: bytes.slice(groupAxes, view.shape.length - 1),
  };
}

/** gcd of the byte offsets an atom of `side` can start at (relative to its buffer). */
export function atomAlignment(side: AtomSide): number {
  let g = knownDivisor(side.baseBytes);
  for (const s of [...side.groupStridesBytes, ...side.repeatStridesBytes]) g = gcd(g, s);
  // Relative alignment is capped by the alignment of the buffer itself.
  return provableAlignment(g, side.buffer.align);
}

/**
 * Element range [min, max] a view touches, when the analysis can bound it; undefined otherwise.
 * Group axes are covered by their full extents.
 */
export function viewElementRange(
  view: View,
  env: RangeEnv,
): { min: number; max: number } | undefined {
  const r = exprRange(view.offset, env);
  if (!Number.isFinite(r.min) || !Number.isFinite(r.max)) return undefined;
  let lo = r.min;
  let hi = r.max;
  view.shape.forEach((n, k) => {
    const span = (n - 1) * view.strides[k]!;
    if (span >= 0) hi += span;
    else lo += span;
  });
  return { min: lo, max: hi };
}

/**
 * Refuse a view that provably reaches outside its buffer (element ranges over `env`'s variable
 * bounds, in the view's dtype).
 * @throws TirxError `code` for a view reaching outside; TX2003 for a buffer of symbolic shape.
 */
export function checkViewBounds(
  view: View,
  env: RangeEnv,
  code: DiagnosticCode,
  what: string,
  span?: Span,
): void {
  // Code under a guard no value satisfies never runs: nothing there can go out of bounds.
  // Tile operands must come from static tensors: their bounds are proved numerically.
  const shape = staticShape(view.buffer, `${what} operand`, span);
  if ([...env.vars.values()].some((v) => v.min > v.max)) return;
  const r = viewElementRange(view, env);
  if (!r) return;
  const eb = dtypeBytes(view.dtype);
  const limit = (numel(shape) * dtypeBytes(view.buffer.dtype)) / eb;
  if (r.min < 0 || r.max >= limit) {
    throw new TirxError(
      code,
      `${what} view of ${bufferName(view.buffer)} reaches elements ${r.min}..${r.max}, but the buffer holds ${limit} ${view.dtype} elements`,
      span,
    );
  }
}

/**
 * A tile pattern emits one instruction per repeat index, fully unrolled: refuse more than
 * MAX_UNROLL of them. @throws TirxError TX2012.
 */
export function checkRepeatCount(repeatShape: readonly number[], what: string, span?: Span): void {
  const n = numel(repeatShape);
  if (n > MAX_UNROLL) {
    throw new TirxError(
      "TX2012",
      `${what} repeats ${n} times per thread (repeat shape (${repeatShape.join(", ")})); code generation unrolls repeats, at most ${MAX_UNROLL}: give each thread less, or loop with T.range around smaller tiles`,
      span,
    );
  }
}

/**
 * The `cache_policy` parameter (uint64) of a bulk or tensor copy, which must be given exactly when
 * the opcode has `.L2::cache_hint` (PTX ISA, cp.async.bulk / cp.async.bulk.tensor).
 * @throws TirxError TX4002 for a wrong dtype, or a policy without the hint or the hint without one.
 */
export function cachePolicyParam(s: TileApply, cacheHint: boolean): Expr | undefined {
  const cachePolicy = exprParam(s, "cache_policy", ["uint64"], "TX4002");
  if (cacheHint !== (cachePolicy !== undefined)) {
    throw new TirxError(
      "TX4002",
      cacheHint
        ? "the opcode has .L2::cache_hint but no cache_policy was given"
        : "cache_policy needs .L2::cache_hint in the opcode",
      s.span,
    );
  }
  return cachePolicy;
}
