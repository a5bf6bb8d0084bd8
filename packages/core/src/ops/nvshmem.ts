import { TirxError } from "../diagnostics.js";
import { constInt, type Expr } from "../ir/expr.js";
import type { Span } from "../span.js";
import { staticArg, stmtOp, valueArg } from "./define.js";
import type { Lowering, OpDef } from "./op.js";

/**
 * The NVSHMEM unit's actions (NVSHMEM device API, "Library Setup, Exit, and Query Routines" and
 * "Signaling Operations"): the PE registers (`nvshmem_my_pe`, `nvshmem_n_pes`) and the signal
 * test that `nvshmem_signal_wait_until` polls. Puts, gets, signal updates, fences and barriers
 * are ordinary IR (loads, stores, `atom.release.sys`, `fence.sc.sys`, the PE barrier below), so
 * the simulator's race, bounds and memory-order checks apply to them (dsl `T.nvshmem`).
 */
export type NvshmemAction =
  | {
      readonly unit: "nvshmem";
      readonly action: "pe";
      /** `my_pe`: this PE's index; `n_pes`: the PEs of the launch. */
      readonly which: "my_pe" | "n_pes";
    }
  | { readonly unit: "nvshmem"; readonly action: "signal_test" };

declare module "./op.js" {
  interface MachineUnits {
    nvshmem: NvshmemAction;
  }
}

/**
 * The comparisons of `nvshmem_signal_wait_until` (NVSHMEM_CMP_EQ, NE, GT, GE, LT, LE), in the
 * order of the static `cmp` operand of `nvshmem.signal_test`; unsigned 64-bit comparisons.
 */
export const SIGNAL_CMPS = ["eq", "ne", "gt", "ge", "lt", "le"] as const;

/** A comparison of `nvshmem_signal_wait_until`. */
export type SignalCmp = (typeof SIGNAL_CMPS)[number];

/**
 * The module-scope state of the direct (intra-node) path, `.global .u64 tirx_nvshmem_state[2]`:
 * word 0 holds my_pe in its low and n_pes in its high 32 bits, set by the host before launch
 * (as NVSHMEM's device state is set at module load).
 */
export const NVSHMEM_STATE = "tirx_nvshmem_state";

/** `ld.global.u32 $d, [tirx_nvshmem_state + off]`: a PE register of the direct path. */
function stateLoad(off: number): Lowering {
  return (c, d) => c.ins(`ld.global.u32 ${d}, [${NVSHMEM_STATE}+${off}]`);
}

/** A PE register as a value op (int32). */
function peOp(which: "my_pe" | "n_pes"): OpDef {
  return {
    ...stmtOp({
      name: `nvshmem.${which}`,
      family: "nvshmem",
      surface: `T.nvshmem.${which}`,
      sm: 70,
      ptx: [6, 0],
      source: `NVSHMEM device API, nvshmem_${which}`,
      lower: stateLoad(which === "my_pe" ? 0 : 4),
      effect: { unit: "nvshmem", action: "pe", which },
    }),
    form: "value",
    result: () => "int32",
    signatures: [[]],
    effects: false,
  };
}

/**
 * TX2010 unless the `cmp` operand (the last) is a static comparison index, and the signal word
 * is uint64 (NVSHMEM: signals are `uint64_t`).
 */
function checkSignal(args: readonly Expr[], span?: Span): void {
  const p = args[0];
  const dt = p?.kind === "BufferPtr" ? p.buffer.dtype : undefined;
  if (dt !== undefined && dt !== "uint64") {
    throw new TirxError(
      "TX2005",
      `T.nvshmem.signal_wait_until: a signal is a uint64 word (NVSHMEM device API, Signaling Operations), got ${dt}`,
      span,
    );
  }
  const k = constInt(args[args.length - 1]!);
  if (k === undefined || k < 0 || k >= SIGNAL_CMPS.length) {
    throw new TirxError("TX2010", `nvshmem.signal_test: cmp must be 0..5, got ${String(k)}`, span);
  }
}

/**
 * `nvshmem.signal_test(sig, value, cmp)`: whether the uint64 signal word `sig` (an element of
 * this PE's shard of a symmetric tensor) compares `cmp` to `value`, read by an acquire load at
 * system scope: `ld.acquire.sys.global.u64` then `setp.<cmp>.u64` (PTX ISA, ld; setp). The
 * condition of `T.nvshmem.signal_wait_until`'s wait loop; the simulator polls it as it polls an
 * mbarrier (a wait loop that yields, TX6006 naming the signal when no PE can set it).
 */
const SIGNAL_TEST: OpDef = {
  name: "nvshmem.signal_test",
  family: "nvshmem",
  surface: "T.nvshmem.signal_wait_until",
  form: "value",
  operands: [
    { kind: "address", name: "sig" },
    valueArg("value", ["uint64"]),
    staticArg("cmp", 0, SIGNAL_CMPS.length - 1),
  ],
  result: () => "bool",
  signatures: [["uint64", "uint64", "int32"]],
  sm: 70,
  ptx: [6, 0],
  source: "NVSHMEM device API, nvshmem_signal_wait_until; PTX ISA, ld (.acquire.sys), setp",
  check: checkSignal,
  lower(c, d, ops) {
    const v = c.tmp("uint64");
    const cmp = SIGNAL_CMPS[Number(ops[2])]!;
    // setp's unsigned comparisons are lo/ls/hi/hs (PTX ISA, setp).
    const ptxCmp = { eq: "eq", ne: "ne", gt: "hi", ge: "hs", lt: "lo", le: "ls" }[cmp];
    c.ins(`ld.acquire.sys.${c.space(0)}.u64 ${v}, ${ops[0]!}`);
    c.ins(`setp.${ptxCmp}.u64 ${d}, ${v}, ${c.toReg(ops[1]!, "uint64")}`);
  },
  sim: { kind: "machine", effect: { unit: "nvshmem", action: "signal_test" } },
  effects: true,
};

/**
 * The barrier of every PE's CTA of the same index (`T.nvshmem.barrier_all`, NVSHMEM's
 * `nvshmemx_barrier_all_block` called by each CTA): every thread arrives (release), then waits
 * (acquire). The simulator runs a multi-PE launch's CTAs of one index together (runSim's `pes`)
 * and simulates it as a cluster barrier over them (exec/cluster.ts). Its PTX on the direct path
 * is a counter in symmetric memory; it has no lowering yet (TX4007 at PTX generation).
 */
function barrierOp(which: "arrive" | "wait"): OpDef {
  return stmtOp({
    name: `nvshmem.barrier_all.${which}`,
    family: "nvshmem",
    surface: "T.nvshmem.barrier_all",
    sm: 70,
    ptx: [6, 0],
    source: "NVSHMEM device API, nvshmem_barrier_all / nvshmemx_barrier_all_block",
    lower() {
      throw new TirxError(
        "TX4007",
        "T.nvshmem.barrier_all has no PTX lowering on the direct path yet (the simulator runs it); use put_signal / signal_wait_until pairs",
      );
    },
    effect:
      which === "arrive"
        ? { unit: "cluster", action: "arrive", relaxed: false }
        : { unit: "cluster", action: "wait" },
  });
}

/**
 * NVSHMEM's device API as tirx-ts ops (the direct intra-node path: no device library; peers'
 * memory is read and written by ordinary global accesses): `nvshmem.my_pe`, `nvshmem.n_pes`,
 * `nvshmem.signal_test` and the PE barrier. dsl's `T.nvshmem` builds put, get, put_signal,
 * signal_op, signal_wait_until, quiet and fence from them and ordinary IR.
 */
export const NVSHMEM_OPS: readonly OpDef[] = [
  peOp("my_pe"),
  peOp("n_pes"),
  SIGNAL_TEST,
  barrierOp("arrive"),
  barrierOp("wait"),
];
