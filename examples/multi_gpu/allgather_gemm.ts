// All-gather of A's row blocks overlapped with a GEMM, tile by tile, over P PEs (GPUs), one CTA
// per PE: A is sharded by rows (PE p holds rows p·Mp..(p+1)·Mp of A [M, K], M = P · Mp); each PE
// computes C = A · B for all M rows (B [K, N] replicated). Each PE first pushes its row block to
// every peer (T.nvshmem.put_signal, warp scope, one signal word per block: Sig[q, p] set to 1
// on PE q when p's block landed), then computes its own block's rows at once and each peer's
// block after waiting for that block's signal, so the GEMM of early blocks overlaps the transfer
// of later ones. A SIMT GEMM at the example's size (the simulator runs it quickly).
// `wait: false` leaves the waits out: the simulator reports the GEMM's read of a block a peer's
// put wrote with nothing ordering the two (TX6003, naming both lines).
// On P GPUs of one machine: compile(fn).launchAll with A, C and Sig symmetric (shards padded to
// the GPUs' allocation granularity) and one B per GPU.
// Run: npx tsx examples/multi_gpu/allgather_gemm.ts (on 2+ GPUs it runs there too)
import { compile, symmetricShard, T, tensor, verify, type PrimFunc } from "tirx-ts";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
// The GPU side (SymmetricTensor, cuda(n), the driver) as a namespace: the lab, which loads every
// example in a browser, has no CUDA runtime, and only checkAllgatherGemmOnGpus and the main
// block use it.
import * as gpu from "@tirx-ts/runtime-cuda";
import type { TirxError } from "@tirx-ts/core";

/** Threads of each PE's CTA (2 warps). */
const BLOCK = 64;

/** Sizes of the example. */
export interface AllgatherGemmSizes {
  /** PEs (2..8). */
  readonly pes: number;
  /** Rows of A per PE. */
  readonly mp: number;
  readonly k: number;
  readonly n: number;
  /** False leaves out the signal waits. Default true. */
  readonly wait?: boolean;
  /**
   * Bytes each symmetric tensor's shard is padded to a multiple of (symmetricShard): the GPUs'
   * allocation granularity on GPUs, 1 (the default) on the simulator.
   */
  readonly granularity?: number;
}

/** The shapes of the symmetric tensors A, C and Sig, padded as `s` says. */
export function allgatherGemmShapes(s: AllgatherGemmSizes): {
  readonly a: number[];
  readonly c: number[];
  readonly sig: number[];
} {
  const g = s.granularity ?? 1;
  const M = s.pes * s.mp;
  return {
    a: [s.pes, ...symmetricShard([M * s.k], "float32", g)],
    c: [s.pes, ...symmetricShard([M, s.n], "float32", g)],
    sig: [s.pes, ...symmetricShard([s.pes], "uint64", g)],
  };
}

/**
 * The kernel: A [P, M · K] float32 symmetric (PE p's copy of the whole of A, row-major; PE p
 * holds its own rows before the launch), B [K, N] float32, C [P, M, N] float32 (PE p's C at
 * C[p]), Sig [P, P] uint64 (zero before the launch). One CTA of 64 threads per PE.
 */
export function makeAllgatherGemm(s: AllgatherGemmSizes): PrimFunc {
  const { pes: P, mp, k: K, n: N } = s;
  const M = P * mp;
  const wait = s.wait ?? true;
  const tile = mp * N;
  const shapes = allgatherGemmShapes(s);
  return T.function(
    `allgather_gemm_${P}${wait ? "" : "_nowait"}`,
    {
      A: T.Tensor(shapes.a, "float32"),
      B: T.Tensor([K, N], "float32"),
      C: T.Tensor(shapes.c, "float32"),
      Sig: T.Tensor(shapes.sig, "uint64"),
    },
    ({ A, B, C, Sig }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: BLOCK }) });
      const me = T.let_("me", T.nvshmem.my_pe());
      const tid = T.cuda.thread_idx("x");
      const warp = T.let_("warp", T.floordiv(tid, 32));
      // Warp w pushes this PE's rows to the peers me + 1 + w, me + 1 + w + 2, ...
      for (let d = 1; d < P; d++) {
        T.if_(T.eq(warp, (d - 1) % 2), () => {
          const peer = T.let_("peer", T.floormod(me.add(d), P));
          T.nvshmem.put_signal(
            A,
            [me.mul(mp * K)],
            A,
            [me, me.mul(mp * K)],
            mp * K,
            Sig,
            [me],
            1,
            "set",
            peer,
            { scope: "warp" },
          );
        });
      }
      // Block t: the rows of PE (me + t) % P, own rows first.
      for (let t = 0; t < P; t++) {
        const src = T.let_("src", T.floormod(me.add(t), P));
        if (t > 0 && wait) T.nvshmem.signal_wait_until(Sig, [src], "ge", 1);
        for (const j of T.range(Math.ceil(tile / BLOCK))) {
          const e = T.let_("e", j.mul(BLOCK).add(tid));
          T.if_(e.lt(tile), () => {
            const row = T.let_("row", src.mul(mp).add(T.floordiv(e, N)));
            const col = T.let_("col", T.floormod(e, N));
            const acc = T.local_scalar("float32", 0, { name: "acc" });
            for (const kk of T.range(K)) {
              acc.set(acc.add(A.get([me, row.mul(K).add(kk)]).mul(B.get([kk, col]))));
            }
            C.set([me, row, col], acc);
          });
        }
      }
    },
  );
}

/** Small integers: every product and sum is exact in float32. */
const aAt = (r: number, c: number): number => ((r * 7 + c * 3) % 9) - 4;
const bAt = (r: number, c: number): number => ((r * 5 + c * 2) % 7) - 3;

/** What a check found. */
export interface AllgatherGemmCheck {
  readonly ok: boolean;
  readonly summary: string;
  readonly reports: readonly TirxError[];
}

/**
 * Run on `s.pes` simulated GPUs (hazards collected): PE p starts with only its own rows of A in
 * its copy (the rest NaN, so a block read before it landed shows), and every PE's C is compared
 * with the host's exact product.
 */
export function checkAllgatherGemm(s: AllgatherGemmSizes, simSeed = 0): AllgatherGemmCheck {
  const { pes: P, mp, k: K, n: N } = s;
  const M = P * mp;
  const a: number[] = [];
  for (let p = 0; p < P; p++) {
    for (let r = 0; r < M; r++) {
      for (let c = 0; c < K; c++) a.push(Math.floor(r / mp) === p ? aAt(r, c) : NaN);
    }
  }
  const b = Array.from({ length: K * N }, (_, i) => bAt(Math.floor(i / N), i % N));
  const C = simZeros([P, M, N], "float32");
  const { reports } = runSim(
    verify(makeAllgatherGemm(s)),
    [
      simTensor(a, { shape: [P, M * K], dtype: "float32" }),
      simTensor(b, { shape: [K, N], dtype: "float32" }),
      C,
      simZeros([P, P], "uint64"),
    ],
    { pes: P, hazards: "collect", simSeed },
  );
  const got = C.toArray() as ArrayLike<number>;
  const bad = productMismatches(s, (p, r, c) => got[(p * M + r) * N + c]!);
  const all = P * M * N;
  return {
    ok: bad === 0 && reports.length === 0,
    summary: `all-gather + GEMM on ${P} PEs (M ${M}, N ${N}, K ${K}): ${all - bad} of ${all} elements equal the host's product, ${reports.length} reports`,
    reports,
  };
}

/** How many of PE p's C[r, c] (`got(p, r, c)`) differ from the host's exact product. */
function productMismatches(
  s: AllgatherGemmSizes,
  got: (p: number, r: number, c: number) => number,
): number {
  const { pes: P, mp, k: K, n: N } = s;
  let bad = 0;
  for (let p = 0; p < P; p++) {
    for (let r = 0; r < P * mp; r++) {
      for (let c = 0; c < N; c++) {
        let want = 0;
        for (let k = 0; k < K; k++) want += aAt(r, k) * bAt(k, c);
        if (got(p, r, c) !== want) bad++;
      }
    }
  }
  return bad;
}

/**
 * Run on the GPUs `devices` (PE p on devices[p], `s.pes` of them): A, C and Sig symmetric
 * (SymmetricTensor, shards padded to the GPUs' allocation granularity), B one tensor per GPU, PE
 * p's copy of A holding only its own rows before the launch (the rest NaN), launched with
 * compile(fn).launchAll; every PE's C compared with the host's exact product.
 */
export function checkAllgatherGemmOnGpus(
  s: AllgatherGemmSizes,
  devices: readonly number[],
): AllgatherGemmCheck {
  const { pes: P, mp, k: K, n: N } = s;
  const M = P * mp;
  const granularity = Math.max(...devices.map((d) => gpu.symmetricGranularity(d)));
  const padded = { ...s, granularity };
  const shapes = allgatherGemmShapes(padded);
  const A = gpu.SymmetricTensor.allocate(devices, shapes.a.slice(1), "float32");
  const C = gpu.SymmetricTensor.allocate(devices, shapes.c.slice(1), "float32").zero();
  const Sig = gpu.SymmetricTensor.allocate(devices, shapes.sig.slice(1), "uint64").zero();
  const b = Array.from({ length: K * N }, (_, i) => bAt(Math.floor(i / N), i % N));
  const Bs = devices.map((d) =>
    tensor(b, { shape: [K, N], dtype: "float32", device: gpu.cuda(d) }),
  );
  try {
    for (let p = 0; p < P; p++) {
      const a = Array.from({ length: M * K }, (_, i) => {
        const r = Math.floor(i / K);
        return Math.floor(r / mp) === p ? aAt(r, i % K) : NaN;
      });
      A.slice(p, 0, [M * K]).copyFrom(a);
    }
    compile(makeAllgatherGemm(padded)).launchAll(devices, A, Bs, C, Sig);
    const got = devices.map((_, p) => C.slice(p, 0, [M, N]).toArray());
    const bad = productMismatches(s, (p, r, c) => got[p]![r * N + c] as number);
    const all = P * M * N;
    return {
      ok: bad === 0,
      summary: `all-gather + GEMM on ${P} GPUs (cuda:${devices.join(", cuda:")}; M ${M}, N ${N}, K ${K}): ${all - bad} of ${all} elements equal the host's product`,
      reports: [],
    };
  } finally {
    for (const t of [A, C, Sig, ...Bs]) t.dispose();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const pes of [2, 4]) {
    const r = checkAllgatherGemm({ pes, mp: 8, k: 16, n: 16 });
    console.log(`allgather_gemm on the simulated devices: ${r.summary}`);
    if (!r.ok) process.exitCode = 1;
  }
  const gpus = gpu.cudaAvailable().ok ? gpu.driver().deviceCount() : 0;
  if (gpus >= 2) {
    const r = checkAllgatherGemmOnGpus({ pes: 2, mp: 64, k: 64, n: 64 }, [0, 1]);
    console.log(`allgather_gemm on GPUs: ${r.summary}`);
    if (!r.ok) process.exitCode = 1;
  } else
    console.log(
      `allgather_gemm on GPUs: not run (${gpus} GPU${gpus === 1 ? "" : "s"} here, 2 needed)`,
    );
}
