import { TirxError } from "../diagnostics.js";
import { DiagnosticLog } from "../diagnostic-log.js";
import type { Expr } from "../ir/expr.js";
import type { PrimFunc } from "../ir/func.js";
import type { DeviceEntry, LaunchConfig, TileApply } from "../ir/stmt.js";
import { walkScoped } from "../analysis/scope-walk.js";
import type { TilePlan } from "../ir/tile-plan.js";
import { checkExpectTx } from "./expect-tx.js";
import { checkCluster } from "./cluster.js";
import { checkWgmmaFence } from "./wgmma-fence.js";
import { checkWarpgroupConvergence } from "./warpgroup-convergence.js";
import type { PtxVersion, Requirement } from "../target.js";
import { RequirementLog } from "./requirements.js";
import { exprChildren, stmtExprs } from "../visit.js";
import type { Span } from "../span.js";
import { checkPrimFunc } from "../show.js";
import { checkDepth } from "../analysis/depth.js";
import { checkKernelName } from "./kernel-name.js";
import type { VerifyContext } from "./context.js";
import {
  checkNames,
  checkNoHostCode,
  checkNotNested,
  kernelScope,
  deviceEntryOf,
} from "./scope-check.js";
import { AllocBudget, checkAccess, checkStore, checkTensorBytes } from "./access-check.js";
import { checkGridExpr, checkLaunch, checkTileLayoutLaunch } from "./launch-check.js";
import {
  checkCast,
  checkOperator,
  checkStmtCall,
  checkTileApply,
  checkValueCall,
} from "./op-check.js";
import { checkRegisterArrays } from "./register-arrays.js";
import { checkLoop } from "./loop-check.js";

/**
 * A function that passed the verifier, with everything later stages need: the launch, the plan
 * of every tile pattern, the lowest PTX ISA version and sm target its features need, and its
 * static shared memory in bytes.
 */
export interface VerifiedFunc {
  readonly fn: PrimFunc;
  readonly entry: DeviceEntry;
  readonly launch: LaunchConfig;
  /**
   * The plan of every `tile.apply` still in `fn`, by node. The `lower-tile` pass moves each plan
   * into a `TileOp` node and empties this map; later stages read `TileOp.plan`.
   */
  readonly plans: ReadonlyMap<TileApply, TilePlan>;
  /** The lowest PTX ISA version covering every requirement (at least 7.0). */
  readonly ptxVersion: PtxVersion;
  /** The lowest sm covering every requirement (at least 75). */
  readonly minSm: number;
  /**
   * What the kernel needs of its target, from the op and tile-op records and the launch, in
   * program order (see `RequirementLog`); codegen and the runtimes compare targets against it.
   */
  readonly requirements: readonly Requirement[];
  readonly staticSharedBytes: number;
}

/**
 * Check well-formedness and every instruction contract of `fn`, collecting every error (up to
 * MAX_DIAGNOSTICS) rather than stopping at the first. Code generation assumes what it checks
 * (it meets no user error of its own).
 * Well-formedness: one `device_entry`, not nested (`scope-check.ts`); operators on dtypes they
 * take (TX2005, `op-check.ts`); variables and buffers used only where
 * defined; thread indices only inside the device entry; accesses provably inside their buffers
 * and allocations within CUDA limits (48 KiB static shared memory, 227 KiB in all: TX2008; local
 * arrays within 512 KiB per thread: TX2020; `access-check.ts`); launch within CUDA limits
 * (`launch-check.ts`, `cluster.ts`); a local tile's TileLayout grouping by its shape with its
 * thread axes inside the launch (TX2021, `launch-check.ts`); loop forms (`loop-check.ts`); a kernel name that makes a PTX
 * identifier (TX2019), nesting within MAX_EXPR_DEPTH (TX2013) and expressions within
 * MAX_EXPR_NODES (TX2018). Contracts of instructions and tile ops: their records (`op-check.ts`,
 * `patterns/`), then whole-kernel rules (`expect-tx.ts`, `wgmma-fence.ts`, and register arrays
 * as codegen emits them, `register-arrays.ts`: TX7001, TX2006). One walk
 * (`walkScoped`) visits the device entry with the scope each check needs.
 * @throws TirxError with the author's span: one error, or, when there are several, the first
 *   found (its code, message, span and notes) carrying all of them, sorted by position, in `all`
 *   (`DiagnosticLog`). Malformed IR, nesting past the limits (TX2013, TX2018) and a kernel without
 *   exactly one device entry (TX2004) stop the check at once. Never any other exception for IR
 *   the DSL builds.
 */
export function verify(fn: PrimFunc): VerifiedFunc {
  checkPrimFunc(fn, "verify", (fn as Partial<PrimFunc> | null | undefined)?.span);
  // Before any walker sees the tree (TX2013, TX2018).
  checkDepth(fn);
  const log = new DiagnosticLog();
  const attempt = (check: () => void): boolean => log.attempt(check);
  const report = (e: TirxError): void => log.report(e);
  attempt(() => checkKernelName(fn.name, fn.span));
  let entry: DeviceEntry;
  try {
    entry = deviceEntryOf(fn);
  } catch (e) {
    if (e instanceof TirxError) log.fail(e);
    throw e;
  }
  attempt(() => checkNoHostCode(fn));
  attempt(() => checkLaunch(entry.launch, entry.span));
  checkCluster(entry.launch, report, entry.span);
  const reqs = new RequirementLog();
  // The target check itself (and its errors) lives in codegen (`resolveArch`); here every
  // requirement is recorded from its record. `.reqnctapercluster` and the cluster special
  // registers: PTX 7.8, sm_90.
  if (entry.launch.cluster) {
    reqs.launch(90, [7, 8], "PTX ISA, .reqnctapercluster: sm_90, PTX 7.8", entry.span);
  }
  const { scope, scalars } = kernelScope(fn, entry.launch, attempt, (p) =>
    attempt(() => checkTensorBytes(p, fn)),
  );
  for (const g of entry.launch.grid) {
    if (typeof g !== "number") attempt(() => checkGridExpr(g, scalars, entry.span));
  }
  const ctx: VerifyContext = { entry, scope, log, reqs, plans: new Map() };
  const budget = new AllocBudget(entry.launch);
  let unplanned = 0;
  walkScoped(entry.body, scope, {
    enter(s) {
      if (s.kind !== "Seq" && s.kind !== "DeviceEntry") {
        reqs.enter(s.span);
        for (const e of stmtExprs(s)) checkExpr(e, ctx, s.span);
      }
      switch (s.kind) {
        case "For":
          checkLoop(s, report);
          return;
        case "Store":
          attempt(() => checkStore(s, scope));
          return;
        case "Alloc":
          attempt(() => budget.alloc(s));
          attempt(() => checkTileLayoutLaunch(s.buffer, entry.launch, s.span));
          return;
        case "Call":
          attempt(() => checkStmtCall(s, ctx));
          return;
        case "TileApply":
          if (!attempt(() => checkTileApply(s, ctx))) unplanned++;
          return;
        case "DeviceEntry":
          attempt(() => checkNotNested(s));
          return;
      }
    },
  });
  attempt(() => budget.checkTotal(entry.span));
  // expect_tx is matched against the plans of the bulk copies: only when every one has its plan.
  if (unplanned === 0) checkExpectTx(entry.body, ctx.plans, report);
  checkWgmmaFence(entry.body, report);
  checkWarpgroupConvergence(entry.body, entry.launch, report);
  // What codegen assumes of register arrays (TX7001, TX2006), on IR whose names all resolve.
  if (log.count === 0) checkRegisterArrays(entry.body, report);
  log.throwIfAny();
  return {
    fn,
    entry,
    launch: entry.launch,
    plans: ctx.plans,
    ptxVersion: reqs.ptxVersion,
    minSm: reqs.minSm,
    requirements: reqs.requirements,
    staticSharedBytes: budget.sharedBytes,
  };
}

/**
 * Check every node of expression `root` (pre-order, each with the span of its nearest ancestor
 * that has one, else `span`): names in scope (`checkNames`), loads inside their buffers
 * (`checkAccess`), value intrinsics (`checkValueCall`). Each node's error is reported and the
 * walk goes on. Iterative: any depth.
 */
function checkExpr(root: Expr, ctx: VerifyContext, span?: Span): void {
  const work: [Expr, Span | undefined][] = [[root, span]];
  while (work.length > 0) {
    const [e, outer] = work.pop()!;
    const where = e.span ?? outer;
    ctx.log.attempt(() => {
      checkNames(e, ctx.scope, where);
      if (e.kind === "BufferLoad") {
        checkAccess(e.buffer, e.offset, e.dtype, ctx.scope, where, e.index);
      }
      if (e.kind === "CallExpr") checkValueCall(e, ctx, where);
      if (e.kind === "Binary") checkOperator(e, where);
      if (e.kind === "Cast") checkCast(e, ctx, where);
    });
    const cs = exprChildren(e);
    for (let i = cs.length - 1; i >= 0; i--) work.push([cs[i]!, where]);
  }
}
