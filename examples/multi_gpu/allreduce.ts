// In-kernel all-reduce over P PEs (GPUs) with T.nvshmem on symmetric tensors (a global tensor
// whose leading dim is the PE, TIRx's device axis `pid`), one CTA per PE:
// - one-shot: every PE pushes its input to every PE's staging buffer (put_signal, cta scope,
//   signal ADD 1), waits until all P signals arrived, and sums the P copies;
// - two-shot: reduce-scatter (PE c receives chunk c of every input, sums it), then all-gather
//   (PE c pushes its reduced chunk to every PE), each phase ordered by its own signal word.
// The signal's atom/red.release.sys orders the put's stores before the waiter's reads
// (ld.acquire.sys in signal_wait_until). `wait: false` leaves the wait out: the simulator then
// reports the read of a peer's put that nothing orders (TX6003, naming both lines).
// Runs on the simulator with runSim's `pes` (one simulated GPU per PE), and on P GPUs of one
// machine with compile(fn).launchAll (symmetric tensors padded to the GPUs' allocation
// granularity); float32 or bfloat16 (summed in float32, rounded once).
// Run: npx tsx examples/multi_gpu/allreduce.ts (on 2+ GPUs it runs there too)
import { compile, symmetricShard, T, verify, type PrimFunc } from "tirx-ts";
import { runSim, simTensor, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
// The GPU side (SymmetricTensor, the driver) as a namespace: the lab, which loads every example
// in a browser, has no CUDA runtime, and only checkAllreduceOnGpus and the main block use it.
import * as gpu from "@tirx-ts/runtime-cuda";
import { bf16Bits, bf16Value, type TirxError } from "@tirx-ts/core";

/** Threads of each PE's CTA. */
const BLOCK = 64;

/** The two algorithms. */
export type AllreduceKind = "one_shot" | "two_shot";

/** Sizes and options of an all-reduce kernel. */
export interface AllreduceOptions {
  /** PEs (2..8). */
  readonly pes: number;
  /** Elements per PE (a multiple of pes · 64 for two-shot). */
  readonly n: number;
  readonly dtype: "float32" | "bfloat16";
  /** False leaves out the signal waits (the race the simulator reports). Default true. */
  readonly wait?: boolean;
  /**
   * Bytes each symmetric tensor's shard is padded to a multiple of (symmetricShard: the leading
   * dim of the shard grows, indices stay): the GPUs' allocation granularity for a launch on
   * GPUs, 1 (no padding, the default) on the simulator.
   */
  readonly granularity?: number;
}

/** The shapes of the kernel's four symmetric tensors (X, Out, Stage, Sig), padded as `o` says. */
export function allreduceShapes(o: AllreduceOptions): {
  readonly x: number[];
  readonly stage: number[];
  readonly sig: number[];
} {
  const g = o.granularity ?? 1;
  return {
    x: [o.pes, ...symmetricShard([o.n], o.dtype, g)],
    stage: [o.pes, ...symmetricShard([o.pes, o.n], o.dtype, g)],
    sig: [o.pes, ...symmetricShard([2], "uint64", g)],
  };
}

/**
 * The kernel: X [P, n] (PE p's input at X[p]), Out [P, n] (PE p's result at Out[p]: the sum over
 * PEs of X), Stage [P, P, n] staging (PE p's copy receives peer q's data at Stage[p, q]), Sig
 * [P, 2] uint64 signal words, zero before the launch. Launch: one CTA of 64 threads per PE.
 */
export function makeAllreduce(kind: AllreduceKind, o: AllreduceOptions): PrimFunc {
  const { pes: P, n, dtype } = o;
  const wait = o.wait ?? true;
  const C = n / P;
  const shapes = allreduceShapes(o);
  return T.function(
    `allreduce_${kind}_${dtype}_${P}${wait ? "" : "_nowait"}`,
    {
      X: T.Tensor(shapes.x, dtype),
      Out: T.Tensor(shapes.x, dtype),
      Stage: T.Tensor(shapes.stage, dtype),
      Sig: T.Tensor(shapes.sig, "uint64"),
    },
    ({ X, Out, Stage, Sig }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: BLOCK }) });
      const me = T.let_("me", T.nvshmem.my_pe());
      const tid = T.cuda.thread_idx("x");
      if (kind === "one_shot") {
        for (let q = 0; q < P; q++) {
          T.nvshmem.put_signal(Stage, [me, 0], X, [me, 0], n, Sig, [0], 1, "add", q, {
            scope: "cta",
          });
        }
        if (wait) T.nvshmem.signal_wait_until(Sig, [0], "ge", P);
        for (const j of T.range(n / BLOCK)) {
          const i = T.let_("i", j.mul(BLOCK).add(tid));
          const acc = T.local_scalar("float32", 0, { name: "acc" });
          for (let q = 0; q < P; q++) acc.set(acc.add(Stage.get([me, q, i]).cast("float32")));
          Out.set([me, i], acc.cast(dtype));
        }
        return;
      }
      // Reduce-scatter: chunk c of every PE's input lands at Stage[c, q, 0:C].
      for (let c = 0; c < P; c++) {
        T.nvshmem.put_signal(Stage, [me, 0], X, [me, c * C], C, Sig, [0], 1, "add", c, {
          scope: "cta",
        });
      }
      if (wait) T.nvshmem.signal_wait_until(Sig, [0], "ge", P);
      // This PE's reduced chunk, written to its own Out[me, me·C:], then pushed to every PE.
      for (const j of T.range(C / BLOCK)) {
        const i = T.let_("i", j.mul(BLOCK).add(tid));
        const acc = T.local_scalar("float32", 0, { name: "acc" });
        for (let q = 0; q < P; q++) acc.set(acc.add(Stage.get([me, q, i]).cast("float32")));
        Out.set([me, me.mul(C).add(i)], acc.cast(dtype));
      }
      T.cuda.cta_sync();
      for (let q = 0; q < P; q++) {
        T.if_(T.ne(me, q), () => {
          T.nvshmem.put_signal(Out, [me.mul(C)], Out, [me, me.mul(C)], C, Sig, [1], 1, "add", q, {
            scope: "cta",
          });
        });
      }
      if (wait) T.nvshmem.signal_wait_until(Sig, [1], "ge", P - 1);
    },
  );
}

/** PE p's input element i: multiples of 1/4 in [-3.75, 3.75], exact in bfloat16 and their sums. */
export function allreduceInput(p: number, i: number): number {
  return (((p * 37 + i * 11) % 31) - 15) / 4;
}

/** What a check found: whether it matched, what it compared, the simulator's reports. */
export interface AllreduceCheck {
  readonly ok: boolean;
  readonly summary: string;
  readonly reports: readonly TirxError[];
}

/** How many of PE p's `n` results `got(p, i)` differ from the host's sum, rounded to the dtype. */
function allreduceMismatches(o: AllreduceOptions, got: (p: number, i: number) => number): number {
  let bad = 0;
  for (let p = 0; p < o.pes; p++) {
    for (let i = 0; i < o.n; i++) {
      let s = 0;
      for (let q = 0; q < o.pes; q++) s += allreduceInput(q, i);
      const want = o.dtype === "bfloat16" ? bf16Value(bf16Bits(s)) : Math.fround(s);
      if (got(p, i) !== want) bad++;
    }
  }
  return bad;
}

/**
 * Run the kernel on `o.pes` simulated GPUs (hazards collected) and compare every PE's result with
 * the host's sum in float64 (exact for these inputs), rounded to the dtype.
 */
export function checkAllreduce(
  kind: AllreduceKind,
  o: AllreduceOptions,
  simSeed = 0,
): AllreduceCheck {
  const { pes: P, n, dtype } = o;
  const x = Array.from({ length: P * n }, (_, k) => allreduceInput(Math.floor(k / n), k % n));
  const X = simTensor(x, { shape: [P, n], dtype });
  const Out = simZeros([P, n], dtype);
  const args: SimTensor[] = [X, Out, simZeros([P, P, n], dtype), simZeros([P, 2], "uint64")];
  const { reports } = runSim(verify(makeAllreduce(kind, o)), args, {
    pes: P,
    hazards: "collect",
    simSeed,
  });
  const got = Out.toArray() as ArrayLike<number>;
  const bad = allreduceMismatches(o, (p, i) => got[p * n + i]!);
  return {
    ok: bad === 0 && reports.length === 0,
    summary: `${kind} ${dtype} on ${P} PEs: ${P * n - bad} of ${P * n} elements equal the host's sum, ${reports.length} reports`,
    reports,
  };
}

/**
 * Run the kernel on the GPUs `devices` (PE p on devices[p], `o.pes` of them), its four tensors
 * symmetric (SymmetricTensor, shards padded to the GPUs' allocation granularity), launched with
 * compile(fn).launchAll, and compare every PE's result with the host's sum as checkAllreduce
 * does. Needs as many GPUs as PEs, with peer access between them (NVLink).
 */
export function checkAllreduceOnGpus(
  kind: AllreduceKind,
  o: AllreduceOptions,
  devices: readonly number[],
): AllreduceCheck {
  const { pes: P, n, dtype } = o;
  const granularity = Math.max(...devices.map((d) => gpu.symmetricGranularity(d)));
  const padded = { ...o, granularity };
  const shapes = allreduceShapes(padded);
  const sym = (shape: number[], dt: "float32" | "bfloat16" | "uint64"): gpu.SymmetricTensor =>
    gpu.SymmetricTensor.allocate(devices, shape.slice(1), dt).zero();
  const [X, Out, Stage, Sig] = [
    sym(shapes.x, dtype),
    sym(shapes.x, dtype),
    sym(shapes.stage, dtype),
    sym(shapes.sig, "uint64"),
  ];
  try {
    for (let p = 0; p < P; p++) {
      X.slice(p, 0, [n]).copyFrom(Array.from({ length: n }, (_, i) => allreduceInput(p, i)));
    }
    compile(makeAllreduce(kind, padded)).launchAll(devices, X, Out, Stage, Sig);
    const got = Array.from({ length: P }, (_, p) => Out.slice(p, 0, [n]).toArray());
    const bad = allreduceMismatches(o, (p, i) => got[p]![i] as number);
    return {
      ok: bad === 0,
      summary: `${kind} ${dtype} on ${P} GPUs (cuda:${devices.join(", cuda:")}): ${P * n - bad} of ${P * n} elements equal the host's sum`,
      reports: [],
    };
  } finally {
    for (const t of [X, Out, Stage, Sig]) t.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const kind of ["one_shot", "two_shot"] as const) {
    for (const pes of [2, 4]) {
      const r = checkAllreduce(kind, { pes, n: pes * 64, dtype: "bfloat16" });
      console.log(`allreduce on the simulated devices: ${r.summary}`);
      if (!r.ok) process.exitCode = 1;
    }
  }
  const gpus = gpu.cudaAvailable().ok ? gpu.driver().deviceCount() : 0;
  if (gpus >= 2) {
    for (const kind of ["one_shot", "two_shot"] as const) {
      const r = checkAllreduceOnGpus(kind, { pes: 2, n: 4096, dtype: "bfloat16" }, [0, 1]);
      console.log(`allreduce on GPUs: ${r.summary}`);
      if (!r.ok) process.exitCode = 1;
    }
  } else
    console.log(`allreduce on GPUs: not run (${gpus} GPU${gpus === 1 ? "" : "s"} here, 2 needed)`);
}
