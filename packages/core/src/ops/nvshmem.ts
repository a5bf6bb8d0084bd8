import { TirxError } from "../diagnostics.js";
import { constInt, type Expr } from "../ir/expr.js";
import type { Span } from "../span.js";
import { staticArg, stmtOp, valueArg } from "./define.js";
import type { LowerCtx, Lowering, OpDef } from "./op.js";

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
 * The module-scope state of the direct (intra-node) path, `.global .u32 tirx_nvshmem_state[2]`:
 * my_pe at byte 0 and n_pes at byte 4, written by the host into each PE's module before launch
 * (runtime-cuda `writePeState`; as NVSHMEM's device state is set at module load).
 */
export const NVSHMEM_STATE = "tirx_nvshmem_state";

/**
 * The module-scope description of `barrier_all`'s counters on the direct path,
 * `.global .u64 tirx_nvshmem_barrier[3]`: word 0 the device address of the counters (PE 0's slice
 * of a symmetric uint64 tensor [P, slots], zero when allocated), word 1 the bytes between two
 * PEs' slices, word 2 `slots`, the counters per PE (one per CTA index of the grid; a CTA past
 * them traps). The host allocates the tensor per set of GPUs and writes the three words into
 * each PE's module before launch (runtime-cuda `peBarrier`, `writePeState`).
 */
export const NVSHMEM_BARRIER = "tirx_nvshmem_barrier";

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
 * `barrier_all`'s arrival on the direct path (PTX ISA, barrier.sync; atom / red with `.release.sys`;
 * ld `.acquire.sys`; Memory Consistency Model, "Release and Acquire Patterns"): a generation
 * counter per CTA index b in symmetric memory, counter[q][b] on PE q (see NVSHMEM_BARRIER).
 * 1. `barrier.sync 0`: the CTA's earlier writes happen before thread (0, 0, 0)'s release below.
 * 2. Thread (0, 0, 0) alone: `atom.release.sys.global.add.u64` on its own PE's counter (old value
 *    `old`), then `red.release.sys.global.add.u64` on every other PE's counter: one arrival per
 *    PE on each PE's counter, so every counter grows by P per generation and never resets.
 * 3. It spins on `ld.acquire.sys.global.u64` of its own counter until it reaches
 *    (⌊old / P⌋ + 1) · P: before this CTA's arrival its counter held g·P plus the arrivals of
 *    this generation g that came first (fewer than P; no PE arrives for g + 1 before g ends), so
 *    ⌊old / P⌋ = g, and the value reached means every PE's CTA b arrived. The acquire reads the
 *    last of the chain of release RMWs, so every PE's writes before its arrival happen before
 *    this thread's later reads (PTX ISA: observation order runs through atomic RMWs).
 * The counters persist across launches: each launch's arrivals keep them multiples of P at rest.
 * The wait op's `barrier.sync 0` then releases the CTA's other threads (the non-`.aligned` form:
 * warp 0 reconverges there from thread 0's spin).
 */
function lowerBarrierArrive(c: LowerCtx): void {
  const u32 = (): string => c.tmp("uint32");
  const u64 = (): string => c.tmp("uint64");
  const [t, u, w, b, me, n, q] = [u32(), u32(), u32(), u32(), u32(), u32(), u32()];
  const [b64, base, stride, slots, x, own, addr, old, n64, target, v] = [
    u64(),
    u64(),
    u64(),
    u64(),
    u64(),
    u64(),
    u64(),
    u64(),
    u64(),
    u64(),
    u64(),
  ];
  const [p, skip] = [c.tmp("bool"), c.tmp("bool")];
  const [done, loop, spin] = [
    c.newLabel("barrier_all_done"),
    c.newLabel("barrier_all_peers"),
    c.newLabel("barrier_all_wait"),
  ];
  c.ins("barrier.sync 0");
  // Thread (0, 0, 0) of the CTA arrives for it.
  c.ins(`mov.u32 ${t}, %tid.x`);
  c.ins(`mov.u32 ${u}, %tid.y`);
  c.ins(`or.b32 ${t}, ${t}, ${u}`);
  c.ins(`mov.u32 ${u}, %tid.z`);
  c.ins(`or.b32 ${t}, ${t}, ${u}`);
  c.ins(`setp.ne.u32 ${p}, ${t}, 0`);
  c.ins(`@${p} bra ${done}`);
  // b: the CTA's linear index, x fastest (as the simulator numbers its CTA groups).
  c.ins(`mov.u32 ${b}, %ctaid.z`);
  c.ins(`mov.u32 ${u}, %nctaid.y`);
  c.ins(`mov.u32 ${w}, %ctaid.y`);
  c.ins(`mad.lo.u32 ${b}, ${b}, ${u}, ${w}`);
  c.ins(`mov.u32 ${u}, %nctaid.x`);
  c.ins(`mov.u32 ${w}, %ctaid.x`);
  c.ins(`mad.lo.u32 ${b}, ${b}, ${u}, ${w}`);
  c.ins(`cvt.u64.u32 ${b64}, ${b}`);
  c.ins(`ld.global.u64 ${base}, [${NVSHMEM_BARRIER}+0]`);
  c.ins(`ld.global.u64 ${stride}, [${NVSHMEM_BARRIER}+8]`);
  c.ins(`ld.global.u64 ${slots}, [${NVSHMEM_BARRIER}+16]`);
  c.ins(`setp.hs.u64 ${p}, ${b64}, ${slots}`);
  c.ins(`@${p} trap`);
  c.ins(`ld.global.u32 ${me}, [${NVSHMEM_STATE}+0]`);
  c.ins(`ld.global.u32 ${n}, [${NVSHMEM_STATE}+4]`);
  c.ins(`mad.lo.u64 ${base}, ${b64}, 8, ${base}`);
  c.ins(`cvt.u64.u32 ${x}, ${me}`);
  c.ins(`mad.lo.u64 ${own}, ${x}, ${stride}, ${base}`);
  c.ins(`atom.release.sys.global.add.u64 ${old}, [${own}], 1`);
  c.ins(`mov.u32 ${q}, 0`);
  c.label(loop);
  c.ins(`setp.eq.u32 ${skip}, ${q}, ${me}`);
  c.ins(`cvt.u64.u32 ${x}, ${q}`);
  c.ins(`mad.lo.u64 ${addr}, ${x}, ${stride}, ${base}`);
  c.ins(`@!${skip} red.release.sys.global.add.u64 [${addr}], 1`);
  c.ins(`add.u32 ${q}, ${q}, 1`);
  c.ins(`setp.lt.u32 ${p}, ${q}, ${n}`);
  c.ins(`@${p} bra ${loop}`);
  c.ins(`cvt.u64.u32 ${n64}, ${n}`);
  c.ins(`div.u64 ${target}, ${old}, ${n64}`);
  c.ins(`add.u64 ${target}, ${target}, 1`);
  c.ins(`mul.lo.u64 ${target}, ${target}, ${n64}`);
  c.label(spin);
  c.ins(`ld.acquire.sys.global.u64 ${v}, [${own}]`);
  c.ins(`setp.lo.u64 ${p}, ${v}, ${target}`);
  c.ins(`@${p} bra ${spin}`);
  c.label(done);
}

/**
 * The barrier of every PE's CTA of the same index (`T.nvshmem.barrier_all`, NVSHMEM's
 * `nvshmemx_barrier_all_block` called by each CTA): every thread arrives (release), then waits
 * (acquire); CTA b of each PE meets CTA b of every other PE, so with one CTA per PE it is
 * nvshmemx_barrier_all_block itself. The simulator runs a multi-PE launch's CTAs of one index
 * together (runSim's `pes`) and simulates it as a cluster barrier over them (exec/cluster.ts).
 * On the direct path `arrive` is {@link lowerBarrierArrive} (the CTA's barrier, thread 0's
 * arrival on every PE's counter and its wait) and `wait` the `barrier.sync 0` that releases the
 * other threads after it. All CTAs of the grid must be resident at once on each GPU (as for
 * nvshmemx_collective_launch): runtime-cuda checks the occupancy before launch.
 */
function barrierOp(which: "arrive" | "wait"): OpDef {
  return stmtOp({
    name: `nvshmem.barrier_all.${which}`,
    family: "nvshmem",
    surface: "T.nvshmem.barrier_all",
    sm: 70,
    ptx: [6, 0],
    source:
      "NVSHMEM device API, nvshmem_barrier_all / nvshmemx_barrier_all_block; PTX ISA, barrier.sync, atom, red, ld (.release/.acquire .sys)",
    lower: which === "arrive" ? lowerBarrierArrive : (c) => c.ins("barrier.sync 0"),
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
