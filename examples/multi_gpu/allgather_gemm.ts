// All-gather of A's row blocks overlapped with a GEMM, tile by tile, over P PEs (GPUs), one CTA
// per PE: A is sharded by rows (PE p holds rows p·Mp..(p+1)·Mp of A [M, K], M = P · Mp); each PE
// computes C = A · B for all M rows (B [K, N] replicated). Each PE first pushes its row block to
// every peer (T.nvshmem.put_signal, warp scope, one signal word per block: Sig[q, p] set to 1
// on PE q when p's block landed), then computes its own block's rows at once and each peer's
// block after waiting for that block's signal, so the GEMM of early blocks overlaps the transfer
// of later ones. A SIMT GEMM at the example's size (the simulator runs it quickly).
// `wait: false` leaves the waits out: the simulator reports the GEMM's read of a block a peer's
// put wrote with nothing ordering the two (TX6003, naming both lines).
// Run: npx tsx examples/multi_gpu/allgather_gemm.ts
import { T, verify, type PrimFunc } from "tirx-ts";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
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
  return T.function(
    `allgather_gemm_${P}${wait ? "" : "_nowait"}`,
    {
      A: T.Tensor([P, M * K], "float32"),
      B: T.Tensor([K, N], "float32"),
      C: T.Tensor([P, M, N], "float32"),
      Sig: T.Tensor([P, P], "uint64"),
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
  let bad = 0;
  for (let p = 0; p < P; p++) {
    for (let r = 0; r < M; r++) {
      for (let c = 0; c < N; c++) {
        let want = 0;
        for (let k = 0; k < K; k++) want += aAt(r, k) * bAt(k, c);
        if (got[(p * M + r) * N + c] !== want) bad++;
      }
    }
  }
  const all = P * M * N;
  return {
    ok: bad === 0 && reports.length === 0,
    summary: `all-gather + GEMM on ${P} PEs (M ${M}, N ${N}, K ${K}): ${all - bad} of ${all} elements equal the host's product, ${reports.length} reports`,
    reports,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const pes of [2, 4]) {
    const r = checkAllgatherGemm({ pes, mp: 8, k: 16, n: 16 });
    console.log(`allgather_gemm on the simulated devices: ${r.summary}`);
    if (!r.ok) process.exitCode = 1;
  }
}
