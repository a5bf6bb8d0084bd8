import { PROBE_KEYS, readByAuthor } from "./author-read.js";
import { allOps, didYouMean, numel, opOf, TirxError, viewStartPtr, type Expr } from "@tirx-ts/core";
import { builder } from "./builder.js";
import { recordStmtOp, staticOperand } from "./op-call.js";
import { PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";
import { ldmatrix, mma, mma_sp, stmatrix } from "./mma.js";
import { encode_matrix_descriptor, setmaxnreg, wgmma } from "./wgmma.js";
import { arrive_remote, barrierCluster, mapa } from "./cluster.js";
import { cvt } from "./cvt.js";
import { rnd } from "./rnd.js";
import { pack, unpack, x2 } from "./packed.js";
import { vec } from "./vector.js";
import { fenceAcqRel, fenceSc, ld, st } from "./memory-order.js";
import { PtxOp } from "./tile-apply.js";

/** Record a call of statement op `op` of the op table, checked against its record at the author's line. */
function call(op: string, args: Expr[]): void {
  recordStmtOp(op, args, callerSpan());
}

/** The static operand `n` of statement op `op` (see `staticOperand`: the op record's code, else TX2017). */
function staticN(op: string, n: unknown): Expr {
  const span = callerSpan();
  return staticOperand(opOf(op, "stmt", span), "n", n, span);
}

/** `T.ptx.cp.async_`: the cp.async group operations (PTX ISA, cp.async.commit_group / wait_group). */
const async_ = {
  /** `cp.async.commit_group`: batch this thread's uncommitted cp.async into a new group. */
  commit_group(): void {
    call("cp.async.commit_group", []);
  },
  /** `cp.async.wait_group n`: wait until at most `n` (static, 0..7) most recent groups are pending. */
  wait_group(n: number): void {
    call("cp.async.wait_group", [staticN("cp.async.wait_group", n)]);
  },
  /** `cp.async.wait_all`: commit and wait for every cp.async of this thread. */
  wait_all(): void {
    call("cp.async.wait_all", []);
  },
};

/**
 * An mbarrier operand: a one-element view of a shared uint64 buffer (also a view of another
 * dtype that starts on a whole uint64 element, e.g. `bars.view_as("uint32").sub(2)` is bars[1]),
 * or its `.ptr()`.
 */
export type MbarrierRef = TileView | PrimExpr;

function mbarPtr(ref: MbarrierRef): Expr {
  const span = callerSpan();
  if (ref instanceof PrimExpr) return ref.expr;
  if (ref instanceof TileView) {
    if (numel(ref.shape) !== 1) {
      throw new TirxError(
        "TX4011",
        `an mbarrier operand is one uint64 element; this view has shape [${ref.shape.join(", ")}] (use bars.sub(i))`,
        span,
      );
    }
    return viewStartPtr(ref.view, "the mbarrier operand", span, "TX4011");
  }
  throw new TirxError(
    "TX4011",
    `an mbarrier operand must be a view of a shared uint64 element or its ptr(), got ${show(ref)}`,
    span,
  );
}

function u32(x: ExprLike): Expr {
  return toExpr(x, "uint32", callerSpan());
}

/** `mbarrier.arrive` (count 1); `.expect_tx(bar, bytes)` also adds transaction bytes (PTX ISA, mbarrier.arrive). */
const arrive = Object.assign((bar: MbarrierRef): void => call("mbarrier.arrive", [mbarPtr(bar)]), {
  /** `mbarrier.arrive.expect_tx`: add `bytes` (uint32) to the phase's tx-count, then arrive. sm_90. */
  expect_tx(bar: MbarrierRef, bytes: ExprLike): void {
    call("mbarrier.arrive.expect_tx", [mbarPtr(bar), u32(bytes)]);
  },
  /**
   * `mapa` + `mbarrier.arrive.shared::cluster`: arrive (count 1) on the mbarrier at `bar`'s
   * offset in CTA `cta` (uint32 rank) of the cluster. sm_90.
   */
  cluster(bar: MbarrierRef, cta: ExprLike): void {
    call("mbarrier.arrive.shared::cluster", [mbarPtr(bar), u32(cta)]);
  },
});

/** `T.ptx.mbarrier`: split arrive/wait barriers in shared memory (PTX ISA, mbarrier). */
const mbarrier = {
  /** `mbarrier.init`: set the arrival count (static or runtime, 1..2^20-1) of the phase. */
  init(bar: MbarrierRef, count: ExprLike): void {
    call("mbarrier.init", [mbarPtr(bar), u32(count)]);
  },
  arrive,
  /**
   * `mbarrier.expect_tx.relaxed.cta`: add `bytes` (uint32) to the current phase's tx-count
   * without arriving (PTX ISA, mbarrier.expect_tx). sm_90.
   */
  expect_tx(bar: MbarrierRef, bytes: ExprLike): void {
    call("mbarrier.expect_tx", [mbarPtr(bar), u32(bytes)]);
  },
  /**
   * `mbarrier.complete_tx.relaxed.cta`: complete `bytes` (uint32) of the current phase's
   * tx-count, as a bulk copy landing would, without arriving; relaxed, so it orders no memory
   * for the waiters (PTX ISA, mbarrier.complete_tx). sm_90.
   */
  complete_tx(bar: MbarrierRef, bytes: ExprLike): void {
    call("mbarrier.complete_tx", [mbarPtr(bar), u32(bytes)]);
  },
  /**
   * Wait until the phase with parity `phase` (0 or 1) of `bar` completed: a loop around
   * `mbarrier.try_wait.parity`, which may return false spuriously. sm_90.
   */
  try_wait(bar: MbarrierRef, phase: ExprLike): void {
    const span = callerSpan();
    const test: Expr = {
      kind: "CallExpr",
      op: "mbarrier.try_wait.parity",
      args: [mbarPtr(bar), u32(phase)],
      dtype: "bool",
      ...(span ? { span } : {}),
    };
    builder("T.ptx.mbarrier.try_wait", span).emit({
      kind: "While",
      cond: { kind: "Not", a: test, dtype: "bool", ...(span ? { span } : {}) },
      body: { kind: "Seq", stmts: [] },
      ...(span ? { span } : {}),
    });
  },
};

/** The proxy fence op of state spaces `space` (op records with effect.spaces), or undefined. */
function proxyFenceOp(space: unknown): string | undefined {
  if (typeof space !== "string") return undefined;
  return allOps("fence").find((op) => {
    const sem = op.sim;
    return sem.kind === "machine" && "spaces" in sem.effect && sem.effect.spaces === space;
  })?.name;
}

/** `T.ptx.fence`: proxy and mbarrier-init fences. sm_90. */
const fence = {
  /**
   * A bidirectional proxy fence between the generic proxy (ld, st, atom) and the async proxy
   * (bulk copies, TMA, wgmma operands) for the accesses of one state space (PTX ISA,
   * fence.proxy.async; sm_90): `"shared::cta"` (the default) emits
   * `fence.proxy.async.shared::cta`, `"global"` emits `fence.proxy.async.global` (generic global
   * stores a later bulk or TMA load reads), `"all"` emits `fence.proxy.async` (every state space).
   * @throws TirxError TX2017 for another `space`; TX4007 below sm_90 (at compile).
   */
  proxy_async(space: "shared::cta" | "global" | "all" = "shared::cta"): void {
    const name = proxyFenceOp(space);
    if (name === undefined) {
      throw new TirxError(
        "TX2017",
        `T.ptx.fence.proxy_async takes the state space "shared::cta", "global" or "all", got ${show(space)}`,
        callerSpan(),
      );
    }
    call(name, []);
  },
  /** `fence.mbarrier_init.release.cluster`: make mbarrier.init visible to the async proxy. */
  mbarrier_init(): void {
    call("fence.mbarrier_init.release.cluster", []);
  },
  /** `fence.sc.<scope>` (default "gpu"; PTX ISA, membar/fence): see memory-order.ts. */
  sc: fenceSc,
  /** `fence.acq_rel.<scope>` (default "gpu"; PTX ISA, membar/fence): see memory-order.ts. */
  acq_rel: fenceAcqRel,
};

/** `T.ptx.cp.async_.bulk`: the bulk async-group operations of shared → global bulk copies. */
const bulk = {
  /** `cp.async.bulk.commit_group`. */
  commit_group(): void {
    call("cp.async.bulk.commit_group", []);
  },
  /** `cp.async.bulk.wait_group n`: wait until at most n bulk groups are pending. */
  wait_group(n: number): void {
    call("cp.async.bulk.wait_group", [staticN("cp.async.bulk.wait_group", n)]);
  },
  /** `cp.async.bulk.wait_group.read n`: wait until the sources of all but n groups were read. */
  wait_group_read(n: number): void {
    call("cp.async.bulk.wait_group.read", [staticN("cp.async.bulk.wait_group.read", n)]);
  },
  /**
   * `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size,
   * [mbar]` (PTX ISA, cp.async.bulk; sm_90): copy `size` bytes (a static multiple of 16) from
   * this CTA's shared memory at `src` (`buf.ptr([i])`, or a view: its first element) to the
   * shared memory of a CTA of the cluster at `dst`, completing `size` transaction bytes on the
   * mbarrier at `mbar` of that same CTA. `dst` and `mbar` are shared::cluster addresses
   * (`T.ptx.mapa(buf.ptr([i]), rank)`); both addresses 16-byte aligned; a cluster launch.
   * @example T.ptx.cp.async_.bulk.shared_cluster(T.ptx.mapa(S.ptr([0]), 1), S.ptr([0]), 256, T.ptx.mapa(bar.ptr([0]), 1))
   * @throws TirxError TX4003 (size), TX4004 (alignment, swizzle), TX4005 (not shared memory),
   *   TX4006 (mbarrier in another CTA than dst), TX4011 (mbarrier), TX4030 (no cluster launch),
   *   TX4007 below sm_90.
   */
  shared_cluster(dst: ExprLike, src: PrimExpr | TileView, size: number, mbar: ExprLike): void {
    const span = callerSpan();
    const op = opOf(
      "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",
      "stmt",
      span,
    );
    const from =
      src instanceof TileView
        ? viewStartPtr(
            src.view,
            "the source of T.ptx.cp.async_.bulk.shared_cluster",
            span,
            "TX4005",
          )
        : toExpr(src, "uint32", span);
    recordStmtOp(op, [u32(dst), from, staticOperand(op, "size", size, span), u32(mbar)], span);
  },
};

/** A namespace whose unknown members are errors with a "did you mean" over its members. */
function strict<N extends object>(path: string, target: N): N {
  return new Proxy(target, {
    get(t, key, receiver) {
      if (typeof key !== "string" || key in t || PROBE_KEYS.has(key)) {
        return Reflect.get(t, key, receiver) as unknown;
      }
      if (!readByAuthor()) return undefined;
      throw unknownMember(path, key, Object.keys(t));
    },
  });
}

function unknownMember(path: string, key: string, members: readonly string[]): TirxError {
  const guess = didYouMean(key, members);
  return new TirxError(
    "TX1002",
    `${path} has no member ${show(key)}${guess ? `; did you mean ${path}.${guess}?` : ""} (members: ${members.join(", ")})`,
    callerSpan(),
  );
}

/** `T.ptx.cp.async_` (also spelled `T.ptx.cp.async`). */
const cpAsync = strict("T.ptx.cp.async_", {
  ...async_,
  bulk: strict("T.ptx.cp.async_.bulk", bulk),
});

/** The cp.async group operations; TIRx spells it `async_` (a Python keyword), TypeScript allows both. */
export interface CpNamespace {
  readonly async_: typeof cpAsync;
  readonly async: typeof cpAsync;
}

const namespace = {
  cp: strict<CpNamespace>("T.ptx.cp", { async_: cpAsync, async: cpAsync }),
  mbarrier: strict("T.ptx.mbarrier", {
    ...mbarrier,
    arrive: strict("T.ptx.mbarrier.arrive", arrive),
    arrive_remote,
  }),
  fence: strict("T.ptx.fence", fence),
  barrier: strict("T.ptx.barrier", { cluster: strict("T.ptx.barrier.cluster", barrierCluster) }),
  mapa,
  cvt,
  rnd: strict("T.ptx.rnd", rnd),
  pack,
  unpack,
  x2: strict("T.ptx.x2", x2),
  vec: strict("T.ptx.vec", vec),
  ldmatrix,
  stmatrix,
  mma,
  mma_sp,
  wgmma: strict("T.ptx.wgmma", wgmma),
  /** TIRx's flat spelling of `T.ptx.wgmma.encode_matrix_descriptor`. */
  wgmma_encode_matrix_descriptor: encode_matrix_descriptor,
  setmaxnreg,
  ld,
  st,
  griddepcontrol: strict("T.ptx.griddepcontrol", {
    /**
     * `griddepcontrol.launch_dependents` (PTX ISA, griddepcontrol; sm_90): grids launched as
     * this one's programmatic dependents may start once every CTA issued it or exited.
     */
    launch_dependents(): void {
      call("griddepcontrol.launch_dependents", []);
    },
    /**
     * `griddepcontrol.wait` (sm_90): wait until the prerequisite grids completed and their
     * memory is visible. A no-op without a programmatic dependent launch (and on the simulator).
     */
    wait(): void {
      call("griddepcontrol.wait", []);
    },
  }),
};

type BulkHint = "" | ".L2::cache_hint";
type BulkReducePrefix = `cp.reduce.async.bulk.global.shared::cta.bulk_group${BulkHint}`;

/**
 * The bulk copy and bulk reduction opcodes (PTX ISA, "cp.async.bulk", "cp.reduce.async.bulk"
 * with its table of .redOp and .type), typed as members of `T.ptx` so that
 * `T.ptx[opcode](dst, src, params)` type-checks without a non-null assertion; any other dotted
 * name is a PtxOp too, possibly undefined to the type checker.
 */
export type BulkOpcodeName =
  | `cp.async.bulk.global.shared::cta.bulk_group${BulkHint}`
  | `cp.async.bulk.${"shared::cta" | "shared::cluster"}.global.mbarrier::complete_tx::bytes${BulkHint}`
  | `${BulkReducePrefix}.add.${"u32" | "s32" | "u64" | "f32" | "f64"}`
  | `${BulkReducePrefix}.add.noftz.${"f16" | "bf16"}`
  | `${BulkReducePrefix}.${"min" | "max"}.${"u32" | "s32" | "u64" | "s64" | "f16" | "bf16"}`
  | `${BulkReducePrefix}.${"inc" | "dec"}.u32`
  | `${BulkReducePrefix}.${"and" | "or" | "xor"}.${"b32" | "b64"}`;

/** `T.ptx`'s type: its namespaces, the bulk opcodes as members, any other dotted name. */
type PtxTable = typeof namespace & { readonly [K in BulkOpcodeName]: PtxOp } & Record<
    string,
    PtxOp
  >;

/**
 * `T.ptx`: index with an opcode string for tile patterns (`T.ptx["cp.async.ca.shared.global"]`),
 * or use its namespaces for plain instructions (`T.ptx.cp.async_.commit_group()`). Only dotted
 * names are opcodes; any other unknown member is an error (TX1002) with a "did you mean".
 */
export const ptx: PtxTable = new Proxy(namespace as PtxTable, {
  get(target, key, receiver) {
    if (typeof key !== "string" || key in target || PROBE_KEYS.has(key)) {
      return Reflect.get(target, key, receiver) as unknown;
    }
    if (key.includes(".")) return new PtxOp(key);
    if (!readByAuthor()) return undefined;
    throw unknownMember("T.ptx", key, Object.keys(target));
  },
});
