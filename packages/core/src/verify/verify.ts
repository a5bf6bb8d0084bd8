import { bufferName } from "../buffer-name.js";
import { dtypeBytes } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { isStaticShape, numel, showShape, staticShape, type Buffer } from "../ir/buffer.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import type { PrimFunc } from "../ir/func.js";
import type { DeviceEntry, LaunchConfig, Stmt, TileApply } from "../ir/stmt.js";
import { exprRange, negateCond, refineRanges, type Interval } from "../analysis/bounds.js";
import {
  provablyBelowNumel,
  refineFacts,
  symMaxes,
  type Fact,
  type SymEnv,
} from "../analysis/symbolic.js";
import { binary } from "../ir/arith.js";
import { TILE_OPS, tileOpOf } from "../patterns/tile-ops.js";
import type { TilePlan } from "../ir/tile-plan.js";
import { checkExpectTx } from "./expect-tx.js";
import { checkCluster } from "./cluster.js";
import { checkWgmmaFence } from "./wgmma-fence.js";
import { checkOpCall, findOp, opOf } from "../ops/index.js";
import type { PtxVersion, Requirement } from "../target.js";
import { RequirementLog } from "./requirements.js";
import { exprChildren, stmtExprs, walkExpr } from "../visit.js";
import type { Span } from "../span.js";
import { checkPrimFunc } from "../show.js";
import { checkDepth } from "../analysis/depth.js";
import { didYouMean } from "../suggest.js";
import {
  MAX_LOCAL_BYTES,
  MAX_SHARED_PER_CTA,
  MAX_TENSOR_BYTES,
  MAX_UNROLL,
  STATIC_SHARED_LIMIT,
} from "../limits.js";
import { checkKernelName } from "./kernel-name.js";

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

const showExtent = (g: number | Expr): string => (typeof g === "number" ? String(g) : "runtime");

/**
 * A runtime grid extent is an int32 expression of scalar parameters only (the host evaluates
 * it at launch): no thread indices, loads or intrinsics.
 */
function checkGridExpr(e: Expr, scalars: ReadonlySet<number>, span?: Span): void {
  if (e.dtype !== "int32") {
    throw new TirxError("TX2007", `a runtime grid extent must be int32, got ${e.dtype}`, span);
  }
  walkExpr(e, (x) => {
    if (x.kind === "Var" && !scalars.has(x.id)) {
      throw new TirxError(
        "TX2007",
        `a runtime grid extent may use only the kernel's scalar parameters; "${x.name}" is not one`,
        span,
      );
    }
    if (
      x.kind === "Special" ||
      x.kind === "BufferLoad" ||
      x.kind === "BufferPtr" ||
      x.kind === "CallExpr"
    ) {
      throw new TirxError(
        "TX2007",
        "a runtime grid extent is computed on the host from scalar parameters; it cannot read thread indices, buffers or intrinsics",
        span,
      );
    }
  });
}

function checkLaunch(l: LaunchConfig, span?: Span): void {
  const all = [...l.grid.filter((g): g is number => typeof g === "number"), ...l.block];
  if (all.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new TirxError(
      "TX2007",
      `grid (${l.grid.map(showExtent).join(", ")}) and block (${l.block.join(", ")}) must be positive integers`,
      span,
    );
  }
  const threads = l.block[0] * l.block[1] * l.block[2];
  if (threads > 1024 || l.block[2] > 64) {
    throw new TirxError(
      "TX2007",
      `a CTA has at most 1024 threads (block z at most 64); got block (${l.block.join(", ")})`,
      span,
    );
  }
  const [gx, gy, gz] = l.grid.map((g) => (typeof g === "number" ? g : 0));
  if (gx! >= 2 ** 31 || gy! > 65535 || gz! > 65535) {
    throw new TirxError(
      "TX2007",
      `grid (${l.grid.map(showExtent).join(", ")}) exceeds CUDA limits (x < 2^31, y and z ≤ 65535)`,
      span,
    );
  }
}

/**
 * Check well-formedness and every instruction contract of `fn`.
 * Well-formedness: one `device_entry`; variables and buffers used only where defined; thread
 * indices only inside the device entry; constant-bounded accesses inside their buffers; launch
 * and shared memory within CUDA limits (48 KiB static, 227 KiB in all: TX2008), local arrays
 * within 512 KiB per thread (TX2020), a kernel name that makes a PTX identifier (TX2019),
 * nesting within MAX_EXPR_DEPTH (TX2013) and expressions within MAX_EXPR_NODES (TX2018).
 * Contracts: see `patterns/`.
 * @throws TirxError with the author's span; never any other exception for IR the DSL builds.
 */
export function verify(fn: PrimFunc): VerifiedFunc {
  checkPrimFunc(fn, "verify", (fn as Partial<PrimFunc> | null | undefined)?.span);
  // Before any walker sees the tree (TX2013, TX2018).
  checkDepth(fn);
  checkKernelName(fn.name, fn.span);
  const tops = fn.body.kind === "Seq" ? fn.body.stmts : [fn.body];
  const entries = tops.filter((s): s is DeviceEntry => s.kind === "DeviceEntry");
  if (entries.length !== 1) {
    throw new TirxError(
      "TX2004",
      `kernel "${fn.name}" has ${entries.length} T.device_entry calls; it needs exactly one`,
      fn.span,
    );
  }
  const stray = tops.find((s) => s.kind !== "DeviceEntry");
  if (stray) {
    throw new TirxError(
      "TX2004",
      "statements before T.device_entry would run on the host, which tirx-ts does not support; call T.device_entry first",
      stray.span,
    );
  }
  const entry = entries[0]!;
  checkLaunch(entry.launch, entry.span);
  checkCluster(entry.launch, entry.span);
  const plans = new Map<TileApply, TilePlan>();
  const reqs = new RequirementLog();
  let sharedBytes = 0;
  let dynamicBytes = 0;
  let localBytes = 0;
  // The target check itself (and its errors) lives in codegen (`resolveArch`); here every
  // requirement is recorded from its record. `.reqnctapercluster` and the cluster special
  // registers: PTX 7.8, sm_90.
  if (entry.launch.cluster) {
    reqs.launch(90, [7, 8], "PTX ISA, .reqnctapercluster: sm_90, PTX 7.8", entry.span);
  }
  const vars = new Set<number>();
  const buffers = new Set<number>();
  const ranges = new Map<number, Interval>();
  const dims = new Set<number>();
  const scalars = new Set<number>();
  for (const p of fn.params) if (p.kind === "scalar") scalars.add(p.var.id);
  for (const p of fn.params) {
    if (p.kind === "buffer" && !isStaticShape(p.buffer.shape)) {
      buffers.add(p.buffer.id);
      for (const d of p.buffer.shape) {
        if (typeof d === "number") continue;
        if (!scalars.has(d.id) || d.dtype !== "int32") {
          throw new TirxError(
            "TX2001",
            `dim "${d.name}" of tensor "${p.name}" must be an int32 scalar parameter of the kernel`,
            p.buffer.span ?? fn.span,
          );
        }
        dims.add(d.id);
        // A dim equals a tensor extent (checked at launch), so it is a non-negative int32.
        ranges.set(d.id, { min: 0, max: 2 ** 31 - 1 });
      }
      // Its byte size is checked when the tensor is made (TX5007) and against the dims at launch.
    } else if (p.kind === "buffer") {
      buffers.add(p.buffer.id);
      const bytes = numel(staticShape(p.buffer, "a tensor parameter")) * dtypeBytes(p.buffer.dtype);
      if (bytes > MAX_TENSOR_BYTES) {
        throw new TirxError(
          "TX2011",
          `tensor "${p.name}" has ${bytes} bytes; a tensor holds at most ${MAX_TENSOR_BYTES} bytes (2^48, the GPU's address space)`,
          p.buffer.span ?? fn.span,
        );
      }
    } else vars.add(p.var.id);
  }
  for (const g of entry.launch.grid)
    if (typeof g !== "number") checkGridExpr(g, scalars, entry.span);
  const facts: Fact[] = [];
  const env: SymEnv = { vars: ranges, launch: entry.launch, dims, facts };

  const checkAccess = (buffer: Buffer, offset: Expr, dtype: string, span?: Span): void => {
    if (!buffers.has(buffer.id)) {
      throw new TirxError(
        "TX2001",
        `buffer ${bufferName(buffer)} is used outside the scope that allocates it`,
        span,
      );
    }
    // Code under a guard no value satisfies never runs: nothing there can go out of bounds.
    if ([...ranges.values()].some((v) => v.min > v.max)) return;
    const r = exprRange(offset, env);
    if (!isStaticShape(buffer.shape)) {
      const scale = dtypeBytes(buffer.dtype) / dtypeBytes(dtype as never);
      if (r.min >= 0 && provablyBelowNumel(buffer, offset, scale, env)) return;
      const names = buffer.shape.filter((d) => typeof d !== "number").map((d) => d.name);
      throw new TirxError(
        "TX2006",
        r.min < 0
          ? `access to ${bufferName(buffer)} (shape ${showShape(buffer.shape)}) may be at a negative element (from ${r.min})`
          : `access to ${bufferName(buffer)} (shape ${showShape(buffer.shape)}) is not provably inside the tensor for every ${names.join(", ")}`,
        span,
        [
          {
            message: `guard the access with the dim it must stay below, e.g. T.if_(i.lt(${names[0] ?? "n"}), () => ...), or bound each index by its axis with a loop such as T.range(${names[0] ?? "n"})`,
          },
        ],
      );
    }
    const limit =
      (numel(staticShape(buffer, "a buffer access", span)) * dtypeBytes(buffer.dtype)) /
      dtypeBytes(dtype as never);
    const low = Number.isFinite(r.min) && r.min < 0;
    const high = Number.isFinite(r.max) && r.max >= limit;
    // A guard on a whole index expression (`T.if_(i.lt(1024), ...)` with i = ctaid * 256 + tid)
    // bounds it as a fact, which the variable ranges above cannot express.
    const scale = dtypeBytes(buffer.dtype) / dtypeBytes(dtype as never);
    if (low || (high && !provablyBelowNumel(buffer, offset, scale, env))) {
      throw new TirxError(
        "TX2006",
        `access to ${bufferName(buffer)} at elements ${r.min}..${r.max}, but it holds ${limit} elements (shape [${buffer.shape.join(", ")}])`,
        span,
        high && !low
          ? [
              {
                message: `guard the access, e.g. T.if_(i.lt(${limit}), () => ...); for a length known only at launch declare the dim from a scalar parameter, { n: T.int32, ${buffer.name}: T.Tensor(["n"], ...) }, and guard with T.if_(i.lt(n), ...)`,
              },
            ]
          : [],
      );
    }
  };

  // Each node with the span of its nearest ancestor that has one (iterative: any depth).
  const checkExpr = (root: Expr, span?: Span): void => {
    const work: [Expr, Span | undefined][] = [[root, span]];
    while (work.length > 0) {
      const [e, outer] = work.pop()!;
      const where = e.span ?? outer;
      checkNode(e, where);
      const cs = exprChildren(e);
      for (let i = cs.length - 1; i >= 0; i--) work.push([cs[i]!, where]);
    }
  };
  const checkNode = (e: Expr, where: Span | undefined): void => {
    if (e.kind === "Var" && !vars.has(e.id)) {
      throw new TirxError(
        "TX2001",
        `variable "${e.name}" is used outside the scope that defines it`,
        where,
      );
    }
    if (e.kind === "BufferLoad") checkAccess(e.buffer, e.offset, e.dtype, where);
    if (e.kind === "BufferPtr" && !buffers.has(e.buffer.id)) {
      throw new TirxError(
        "TX2001",
        `buffer ${bufferName(e.buffer)} is used outside the scope that allocates it`,
        where,
      );
    }
    if (e.kind === "CallExpr") {
      const op = opOf(e.op, "value", where);
      const rt = checkOpCall(op, e.args, where);
      if (rt !== e.dtype) {
        throw new TirxError(
          "TX2005",
          `${op.surface} gives ${rt}, but the call says ${e.dtype}`,
          where,
        );
      }
      reqs.exprOp(op);
    }
  };

  // Statements are visited from an explicit stack of work (a statement, or what to do once a
  // nested body is done), so nesting costs no JS stack.
  type Work = Stmt | (() => void);
  const work: Work[] = [];
  /** Run `items` in order, before anything scheduled earlier. */
  const then = (...items: Work[]): void => {
    for (let i = items.length - 1; i >= 0; i--) work.push(items[i]!);
  };
  const visit = (s: Stmt): void => {
    if (s.kind !== "Seq" && s.kind !== "DeviceEntry") {
      reqs.enter(s.span);
      for (const e of stmtExprs(s)) checkExpr(e, s.span);
    }
    switch (s.kind) {
      case "Seq": {
        const saved = { vars: new Set(vars), buffers: new Set(buffers) };
        then(...s.stmts, () => {
          vars.clear();
          saved.vars.forEach((v) => vars.add(v));
          buffers.clear();
          saved.buffers.forEach((b) => buffers.add(b));
        });
        return;
      }
      case "DeviceEntry":
        then(s.body);
        return;
      case "For": {
        if (s.annotation === "unroll" || s.annotation === "vectorized") {
          const n = constInt(s.extent);
          const what = s.annotation === "unroll" ? "T.unroll" : "T.vectorized";
          if (n === undefined || n > MAX_UNROLL) {
            throw new TirxError(
              "TX2012",
              n === undefined
                ? `${what} needs a constant trip count; use T.range for a runtime bound`
                : `${what} of ${n} iterations would emit ${n} copies of the body; at most ${MAX_UNROLL} (use T.range)`,
              s.span,
            );
          }
        }
        // The simulator runs a statement's collectives once per statement; a loop bound is
        // evaluated outside any statement, and on the GPU per lane (PTX ISA, shfl.sync).
        for (const b of [s.min, s.extent]) {
          walkExpr(b, (x) => {
            if (x.kind === "CallExpr" && findOp(x.op)?.sim.kind === "warp") {
              throw new TirxError(
                "TX2016",
                `${findOp(x.op)!.surface} is a warp collective and cannot be a loop bound; compute it into a variable with T.let_ before the loop`,
                x.span ?? s.span,
              );
            }
          });
        }
        const lo = exprRange(s.min, env);
        const n = exprRange(s.extent, env);
        vars.add(s.var.id);
        ranges.set(s.var.id, { min: lo.min, max: lo.max + n.max - 1 });
        // A runtime trip count such as T.range(n) bounds the loop variable symbolically.
        const last =
          s.min.dtype === "int32" && s.extent.dtype === "int32"
            ? symMaxes(binary("sub", binary("add", s.min, s.extent), intImm(1)), env)
            : [];
        const mark = facts.length;
        for (const max of last) facts.push({ expr: s.var, max });
        then(s.body, () => {
          facts.length = mark;
          vars.delete(s.var.id);
        });
        return;
      }
      case "While":
        then(s.body);
        return;
      case "If": {
        // Inside the then-branch the guard holds, inside the else-branch its negation (where
        // `negateCond` can state it): narrow the ranges and add the facts each constrains.
        const saved = new Map(ranges);
        const mark = facts.length;
        const enter = (cond: Expr | undefined) => (): void => {
          if (!cond) return;
          const learnt = refineFacts(cond, env);
          for (const [k, v] of refineRanges(cond, env)) ranges.set(k, v);
          facts.push(...learnt);
        };
        const leave = (): void => {
          facts.length = mark;
          ranges.clear();
          saved.forEach((v, k) => ranges.set(k, v));
        };
        const negated = s.else ? negateCond(s.cond, env) : undefined;
        then(enter(s.cond), s.then, leave, ...(s.else ? [enter(negated), s.else, leave] : []));
        return;
      }
      case "Let": {
        vars.add(s.var.id);
        ranges.set(s.var.id, exprRange(s.value, env));
        for (const max of symMaxes(s.value, env)) facts.push({ expr: s.var, max });
        return;
      }
      case "Store":
        if (s.value.dtype !== s.dtype) {
          throw new TirxError(
            "TX2005",
            `storing a ${s.value.dtype} value into ${s.dtype} elements of ${bufferName(s.buffer)}; cast it explicitly`,
            s.span,
          );
        }
        checkAccess(s.buffer, s.offset, s.dtype, s.span);
        return;
      case "Alloc": {
        const b = s.buffer;
        if (b.scope === "global") {
          throw new TirxError(
            "TX2009",
            `${bufferName(b)}: kernels allocate shared or local buffers; global tensors are parameters`,
            s.span,
          );
        }
        buffers.add(b.id);
        if (b.scope === "shared.dyn") {
          dynamicBytes =
            Math.ceil(dynamicBytes / b.align) * b.align +
            numel(staticShape(b, "a shared allocation", s.span)) * dtypeBytes(b.dtype);
          if (dynamicBytes > entry.launch.dynamicSharedBytes) {
            throw new TirxError(
              "TX2008",
              `dynamic shared buffers need ${dynamicBytes} bytes, but the launch gives dynamic_shared_bytes ${entry.launch.dynamicSharedBytes}`,
              s.span,
            );
          }
        }
        if (b.scope === "local") {
          const align = Math.max(b.align, 1);
          localBytes =
            Math.ceil(localBytes / align) * align +
            numel(staticShape(b, "a local allocation", s.span)) * dtypeBytes(b.dtype);
          if (localBytes > MAX_LOCAL_BYTES) {
            throw new TirxError(
              "TX2020",
              `local arrays reach ${localBytes} bytes per thread; a thread has at most ${MAX_LOCAL_BYTES} (512 KiB, CUDA's local memory per thread)`,
              s.span,
              [{ message: "keep large data in shared memory or in a global tensor" }],
            );
          }
        }
        if (b.scope === "shared") {
          sharedBytes =
            Math.ceil(sharedBytes / b.align) * b.align +
            numel(staticShape(b, "a shared allocation", s.span)) * dtypeBytes(b.dtype);
          if (sharedBytes > STATIC_SHARED_LIMIT) {
            throw new TirxError(
              "TX2008",
              `static shared memory reaches ${sharedBytes} bytes; a CTA may have ${STATIC_SHARED_LIMIT} without dynamic shared memory`,
              s.span,
            );
          }
        }
        return;
      }
      case "Call": {
        const op = opOf(s.op, "stmt", s.span);
        checkOpCall(op, s.args, s.span);
        op.checkLaunch?.(s.args, entry.launch, s.span);
        reqs.stmtOp(op);
        return;
      }
      case "TileApply": {
        for (const v of [s.dst, s.src]) {
          if (!buffers.has(v.buffer.id)) {
            throw new TirxError(
              "TX2001",
              `buffer ${bufferName(v.buffer)} is used outside the scope that allocates it`,
              s.span,
            );
          }
        }
        const op = tileOpOf(s.opcode);
        if (op) {
          const plan = op.plan(s, { launch: entry.launch, env });
          plans.set(s, plan);
          reqs.tile(op, s.opcode, plan);
          return;
        }
        const known = TILE_OPS.flatMap((o) => o.examples);
        const guess = didYouMean(s.opcode, known);
        throw new TirxError(
          "TX3001",
          `no tile pattern for opcode "${s.opcode}"${guess ? `; did you mean "${guess}"?` : ""} (tile patterns: cp.async.{ca|cg}.shared.global…, cp.async.bulk…)`,
          s.span,
        );
      }
    }
  };
  then(entry.body);
  while (work.length > 0) {
    const w = work.pop()!;
    if (typeof w === "function") w();
    else visit(w);
  }
  const dynShared = Math.max(dynamicBytes, entry.launch.dynamicSharedBytes);
  if (sharedBytes + dynShared > MAX_SHARED_PER_CTA) {
    throw new TirxError(
      "TX2008",
      `the CTA's shared memory reaches ${sharedBytes + dynShared} bytes (${sharedBytes} static, ${dynShared} dynamic); a CTA has at most ${MAX_SHARED_PER_CTA} (227 KiB, sm_90's)`,
      entry.span,
    );
  }
  checkExpectTx(entry.body, plans);
  checkWgmmaFence(entry.body);
  return {
    fn,
    entry,
    launch: entry.launch,
    plans,
    ptxVersion: reqs.ptxVersion,
    minSm: reqs.minSm,
    requirements: reqs.requirements,
    staticSharedBytes: sharedBytes,
  };
}
