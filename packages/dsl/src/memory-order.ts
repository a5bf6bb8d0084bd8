import {
  MEMORY_SCOPES,
  MEMORY_SEMS,
  TirxError,
  type MemoryScope,
  type MemorySem,
  type Span,
} from "@tirx-ts/core";
import { checkOptions } from "./check.js";
import { let_ } from "./control.js";
import { PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { callStmtOp, callValueOp, recordStmtOp } from "./op-call.js";
import { callerSpan } from "./span.js";

/** The memory order of a strong access: its `sem` and `scope` (PTX ISA, Memory Consistency Model). */
export interface MemoryOrderOptions {
  /** `relaxed`, `acquire` (loads, atom), `release` (stores, atom, red), `acq_rel` (atom). */
  readonly sem?: MemorySem;
  /** `cta`, `cluster` (sm_90), `gpu` (the default), `sys`. */
  readonly scope?: MemoryScope;
}

/**
 * The static `sem` and `scope` operands (indices into MEMORY_SEMS / MEMORY_SCOPES) of
 * `opts`, `sem` defaulting to `defaultSem` and `scope` to gpu.
 * @throws TirxError TX1002 for an unknown option, sem or scope.
 */
export function semScopeOperands(
  opts: unknown,
  defaultSem: MemorySem,
  what: string,
  span?: Span,
): [number, number] {
  const o = checkOptions(opts, ["sem", "scope"], what, span);
  const sem = o.sem ?? defaultSem;
  const scope = o.scope ?? "gpu";
  const i = MEMORY_SEMS.indexOf(sem as MemorySem);
  const j = MEMORY_SCOPES.indexOf(scope as MemoryScope);
  if (i < 0 || j < 0) {
    throw new TirxError(
      "TX1002",
      i < 0
        ? `${what}: sem must be one of ${MEMORY_SEMS.map((s) => `"${s}"`).join(", ")}, got ${show(sem)}`
        : `${what}: scope must be one of ${MEMORY_SCOPES.map((s) => `"${s}"`).join(", ")}, got ${show(scope)}`,
      span,
    );
  }
  return [i, j];
}

/** The fence op of `sem` at `scope`. @throws TirxError TX1002 for an unknown scope. */
function fenceOp(sem: "sc" | "acq_rel", scope: unknown, span?: Span): void {
  if (!MEMORY_SCOPES.includes(scope as MemoryScope)) {
    throw new TirxError(
      "TX1002",
      `T.ptx.fence.${sem} takes the scope "cta", "cluster", "gpu" or "sys", got ${show(scope)}`,
      span,
    );
  }
  recordStmtOp(`fence.${sem}.${scope as MemoryScope}`, [], span);
}

/**
 * `fence.sc.<scope>` (PTX ISA, membar/fence): a sequentially consistent fence; it is also a
 * fence.acq_rel. sm_70; `"cluster"` sm_90.
 * @throws TirxError TX1002 for an unknown scope; TX4007 below sm_90 for `"cluster"` (at compile).
 */
export function fenceSc(scope: MemoryScope = "gpu"): void {
  fenceOp("sc", scope, callerSpan());
}

/**
 * `fence.acq_rel.<scope>` (PTX ISA, membar/fence): with a strong write after it, the release side
 * of a synchronization (everything before the fence is ordered before what the observer does
 * after its acquire); with a strong read before it, the acquire side. sm_70; `"cluster"` sm_90.
 * @throws TirxError TX1002 for an unknown scope; TX4007 below sm_90 for `"cluster"` (at compile).
 */
export function fenceAcqRel(scope: MemoryScope = "gpu"): void {
  fenceOp("acq_rel", scope, callerSpan());
}

/**
 * CUDA's `__threadfence()`: `fence.sc.gpu`, which the PTX ISA defines membar.gl to be
 * (membar/fence: "membar.gl ... fence.sc.gpu" semantics on sm_70+).
 */
export function threadfence(): void {
  recordStmtOp("fence.sc.gpu", [], callerSpan());
}

/** CUDA's `__threadfence_block()`: `fence.sc.cta` (membar.cta). */
export function threadfence_block(): void {
  recordStmtOp("fence.sc.cta", [], callerSpan());
}

/** CUDA's `__threadfence_system()`: `fence.sc.sys` (membar.sys). */
export function threadfence_system(): void {
  recordStmtOp("fence.sc.sys", [], callerSpan());
}

/**
 * A strong load of the global or shared element `ptr` (`buf.ptr([i])`): `ld.relaxed.<scope>` or
 * `ld.acquire.<scope>` (PTX ISA, ld; sm_70), bound to a variable where it is written. Element
 * dtypes int32, uint32, float32, int64, uint64, float64. An acquire load that reads a release's
 * value orders the releaser's earlier writes before this thread's later accesses.
 * Example: `const flag = T.ptx.ld(F.ptr([0]), { sem: "acquire", scope: "gpu" })`.
 * @throws TirxError TX1002 (options), TX2009 (ptr), TX2005 (dtype), TX2010 (sem release/acq_rel).
 */
export function ld(ptr: PrimExpr, opts: MemoryOrderOptions = { sem: "relaxed" }): PrimExpr {
  const span = callerSpan();
  const [sem, scope] = semScopeOperands(opts, "relaxed", "T.ptx.ld", span);
  return let_("ld", callValueOp("ld.sem", [ptr, sem, scope], span));
}

/**
 * A strong store of `value` to the global or shared element `ptr`: `st.relaxed.<scope>` or
 * `st.release.<scope>` (PTX ISA, st; sm_70). Dtypes as {@link ld}; a JS number takes the
 * element's dtype.
 * Example: `T.ptx.st(F.ptr([0]), 1, { sem: "release", scope: "gpu" })`.
 * @throws TirxError TX1002 (options), TX2009 (ptr), TX2005 (dtype), TX2010 (sem acquire/acq_rel).
 */
export function st(
  ptr: PrimExpr,
  value: ExprLike,
  opts: MemoryOrderOptions = { sem: "relaxed" },
): void {
  const span = callerSpan();
  const [sem, scope] = semScopeOperands(opts, "relaxed", "T.ptx.st", span);
  const e = ptr instanceof PrimExpr ? ptr.expr : undefined;
  const dt = e?.kind === "BufferPtr" ? e.buffer.dtype : undefined;
  const v = value instanceof PrimExpr ? value : new PrimExpr(toExpr(value, dt, span));
  callStmtOp("st.sem", [ptr, v, sem, scope], span);
}
