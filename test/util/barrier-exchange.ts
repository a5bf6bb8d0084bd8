// A kernel that exchanges data across PEs through T.nvshmem.barrier_all alone, for the simulator
// (test/multi-gpu-sim) and two GPUs (test/gpu/multi-gpu): in each round r, every thread stores
// its value into the next PE's copy of X (region r), barrier_all, then reads what the previous
// PE stored into its own copy and records it in Out; then a second barrier_all, so no PE starts
// round r + 1 (or exits) while another still reads. Without the barrier's release/acquire, a
// read could miss the peer's store.
import { T } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";

/** Sizes of the exchange. */
export interface BarrierExchange {
  readonly pes: number;
  readonly ctas: number;
  readonly threads: number;
  readonly rounds: number;
  /** Elements of X's and Out's shards (≥ rounds · ctas · threads; padded on GPUs). */
  readonly shard: number;
  /** False leaves the barriers out (the race the simulator reports). Default true. */
  readonly barrier?: boolean;
}

/** What thread `t` of CTA `b` on PE `p` stores in round `r` (exact in float32). */
export function exchangeValue(p: number, r: number, b: number, t: number): number {
  return p * 100000 + r * 10000 + b * 1000 + t;
}

/**
 * The kernel: X and Out [P, shard] float32, symmetric (each PE writes only its own row of Out).
 * Out[p, i] should be the value of the previous PE (p − 1 mod P) for i's round, CTA and thread.
 */
export function makeBarrierExchange(s: BarrierExchange): PrimFunc {
  const { pes: P, ctas, threads, rounds, shard } = s;
  const per = ctas * threads;
  const barrier = s.barrier ?? true;
  return T.function(
    `barrier_exchange_${P}_${ctas}${barrier ? "" : "_nobarrier"}`,
    { X: T.Tensor([P, shard], "float32"), Out: T.Tensor([P, shard], "float32") },
    ({ X, Out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ctas, block: threads }) });
      const me = T.let_("me", T.nvshmem.my_pe());
      const b = T.cuda.block_idx("x");
      const t = T.cuda.thread_idx("x");
      const next = T.let_("next", T.floormod(me.add(1), P));
      for (let r = 0; r < rounds; r++) {
        const i = T.let_(
          "i",
          b
            .mul(threads)
            .add(t)
            .add(r * per),
        );
        const v = me
          .mul(100000)
          .add(r * 10000)
          .add(b.mul(1000))
          .add(t);
        X.set([next, i], v.cast("float32"));
        if (barrier) T.nvshmem.barrier_all();
        Out.set([me, i], X.get([me, i]));
        if (barrier) T.nvshmem.barrier_all();
      }
    },
  );
}

/** Mismatches of PE p's row of Out (`got`, from element 0) against the previous PE's values. */
export function exchangeMismatches(s: BarrierExchange, p: number, got: ArrayLike<number>): number {
  const prev = (p + s.pes - 1) % s.pes;
  let bad = 0;
  for (let r = 0; r < s.rounds; r++) {
    for (let b = 0; b < s.ctas; b++) {
      for (let t = 0; t < s.threads; t++) {
        const i = r * s.ctas * s.threads + b * s.threads + t;
        if (got[i] !== exchangeValue(prev, r, b, t)) bad++;
      }
    }
  }
  return bad;
}
