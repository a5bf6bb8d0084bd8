// Minimal kernels on which the fast paths (jitAfter: 0, and the default {}) once differed from
// the reference ({ rangeChecks: false, jitAfter: Infinity }): a block copy of float64 and bool
// elements (the codec is not the identity on their bits), a cp.async run landed at its first
// thread's clock when its threads' clocks differed, and a tile's repeats issued repeat by repeat
// when one of them had to be issued thread by thread. Each asserts the outcomes are the same
// (test/util/same-outcome.ts).
import { describe, it } from "vitest";
import type { DType, KernelArg, PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { SimTensor, simEmpty, simTensor, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { same } from "./util/same-outcome.js";

const WAYS: readonly SimOptions[] = [
  { jitAfter: 0 },
  {},
  { rangeChecks: false, jitAfter: Infinity },
];
const pat = "(r w t v) -> w t r v";
const cpAsync = T.ptx["cp.async.ca.shared.global"]!;

/** B[t] = A[t] over `grid` CTAs of 128 threads. */
function copy(dtype: DType, grid = 1): PrimFunc {
  return T.function(
    `copy_${dtype}`,
    { A: T.Tensor([grid * 128], dtype), B: T.Tensor([grid * 128], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid, block: 128 }) });
      const i = T.cuda.block_idx("x").mul(128).add(T.cuda.thread_idx("x"));
      B.set([i], A.get([i]));
    },
  );
}

describe("1. AffineCopy (compile/vector.ts) moves bytes where the element path decodes/encodes", () => {
  it("float64 NaN payload (and the 0xff poison of simEmpty / uninitialised shared) is canonicalised only by the reference", () => {
    // reference: B = 0x7fffffffffffffff (codec store of NaN); fast: B = A's bytes (memcpy)
    same(
      copy("float64"),
      () => [simEmpty([128], "float64"), simZeros([128], "float64")],
      [0],
      ["collect"],
      WAYS,
    );
  });
  it("float64, default options (AffineCopy after 4096 lanes)", () => {
    same(
      copy("float64", 64),
      () => [simEmpty([64 * 128], "float64"), simZeros([64 * 128], "float64")],
      [0],
      ["collect"],
      [{}, WAYS[2]!],
    );
  });
  it("bool bytes other than 0/1 are normalised only by the reference", () => {
    same(
      copy("bool"),
      () => [new SimTensor(new Uint8Array(128).fill(2), [128], "bool"), simZeros([128], "bool")],
      [0],
      ["collect"],
      WAYS,
    );
  });
});

describe("2. AsyncUnit.#waitRuns lands a whole run at the clock of its first thread", () => {
  /** A 64-thread tile; lanes 32..47 bump their clocks (partial __syncwarp) between issue and wait. */
  const tileThenWait = (
    name: string,
    after: (
      tid: import("@tirx-ts/dsl").PrimExpr,
      s: import("@tirx-ts/dsl").TileView,
      B: import("@tirx-ts/dsl").TileView,
    ) => void,
    bump: "w0" | "w1lo",
  ) =>
    T.function(name, { A: T.Tensor([64], "float32"), B: T.Tensor([64], "float32") }, ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "float32");
      const sz = { r: 1, w: 2, t: 32, v: 1 };
      T.cuda.tile.apply(cpAsync, s.rearrange(pat, sz), A.rearrange(pat, sz), {
        chunk_bytes: 4,
        scope: "cta",
      });
      T.ptx.cp.async_.commit_group();
      if (bump === "w0")
        T.if_(tid.ge(32), () => T.cuda.__syncwarp()); // warp 1's clocks move, thread 0's do not
      else T.if_(tid.ge(32).and(tid.lt(48)), () => T.cuda.__syncwarp(0xffff));
      T.ptx.cp.async_.wait_group(0);
      after(tid, s, B);
    });
  const a = (): KernelArg[] => [
    simTensor(
      Array.from({ length: 64 }, (_, i) => i),
      { shape: [64], dtype: "float32" },
    ),
    simZeros([64], "float32"),
  ];

  it("missed race: thread 32 reads thread 33's landed chunk with nothing ordering them", () => {
    // reference: TX6003 (thread 32 reads bytes 132..135 written by thread 33); fast: no report
    const k = tileThenWait(
      "cp_missed_race",
      (tid, s, B) => {
        T.if_(tid.lt(32), () => B.set([tid], s.get([tid])));
        T.if_(tid.ge(32), () => B.set([tid], s.get([tid.add(1).floormod(32).add(32)])));
      },
      "w0",
    );
    same(k, a, [0], ["collect", "throw"], WAYS);
  });

  it("false race: an mbarrier orders the reads, but the run's chunks carry thread 32's later clock", () => {
    // reference: no report; fast: TX6003 (thread 16 reads bytes 192..195 written by thread 48)
    const k = T.function(
      "cp_false_race",
      { A: T.Tensor([64], "float32"), B: T.Tensor([64], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([64], "float32");
        const bar = T.alloc_shared([1], "uint64");
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 32);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        const sz = { r: 1, w: 2, t: 32, v: 1 };
        T.cuda.tile.apply(cpAsync, s.rearrange(pat, sz), A.rearrange(pat, sz), {
          chunk_bytes: 4,
          scope: "cta",
        });
        T.ptx.cp.async_.commit_group();
        T.if_(tid.ge(32).and(tid.lt(48)), () => T.cuda.__syncwarp(0xffff));
        T.ptx.cp.async_.wait_group(0);
        T.if_(
          tid.ge(32),
          () => T.ptx.mbarrier.arrive(bar.sub(0)),
          () => {
            T.ptx.mbarrier.try_wait(bar.sub(0), 0);
            B.set([tid], s.get([tid.add(32)]));
          },
        );
      },
    );
    same(k, a, [0], ["collect", "throw"], WAYS);
  });
});

describe("3. blockIssue (compile/cp-async.ts) issues repeat by repeat; the reference thread by thread", () => {
  it("first report of a 2-repeat tile over bytes other threads read (TX6013)", () => {
    // reference: TX6013 thread 0, bytes 256..259 (its repeat 1); fast: TX6013 thread 1, bytes 4..7 (its repeat 0)
    const k = T.function(
      "war_order",
      { A: T.Tensor([128], "float32"), B: T.Tensor([128], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([128], "float32");
        s.set([tid], A.get([tid]));
        s.set([tid.add(64)], A.get([tid.add(64)]));
        T.cuda.cta_sync();
        T.if_(tid.lt(2), () => B.set([tid], s.get([tid.mul(63).add(1)]))); // t0 reads s[1], t1 reads s[64]
        const sz = { r: 2, w: 2, t: 32, v: 1 };
        T.cuda.tile.apply(cpAsync, s.rearrange(pat, sz), A.rearrange(pat, sz), {
          chunk_bytes: 4,
          scope: "cta",
        });
        T.ptx.cp.async_.wait_all();
      },
    );
    const a = (): KernelArg[] => [
      simTensor(
        Array.from({ length: 128 }, (_, i) => i),
        { shape: [128], dtype: "float32" },
      ),
      simZeros([128], "float32"),
    ];
    same(k, a, [0], ["collect", "throw"], WAYS);
  });

  it("first report of a 2-repeat tile over bytes earlier cp.async still target (TX6008)", () => {
    // reference: TX6008 thread 0, byte 256; fast: TX6008 thread 1, byte 4
    const tile = (
      dst: import("@tirx-ts/dsl").TileView,
      src: import("@tirx-ts/dsl").TileView,
      r: number,
    ) =>
      T.cuda.tile.apply(
        cpAsync,
        dst.rearrange(pat, { r, w: 2, t: 32, v: 1 }),
        src.rearrange(pat, { r, w: 2, t: 32, v: 1 }),
        { chunk_bytes: 4, scope: "cta" },
      );
    const k = T.function(
      "overlap_order",
      { A: T.Tensor([128], "float32"), B: T.Tensor([128], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([128], "float32");
        tile(s.sub("64:128"), A.sub("64:128"), 1);
        T.if_(tid.ge(1), () => tile(s.sub("0:64"), A.sub("0:64"), 1));
        tile(s, A, 2);
        T.ptx.cp.async_.wait_all();
        T.cuda.cta_sync();
        B.set([tid], s.get([tid]));
      },
    );
    const a = (): KernelArg[] => [
      simTensor(
        Array.from({ length: 128 }, (_, i) => i),
        { shape: [128], dtype: "float32" },
      ),
      simZeros([128], "float32"),
    ];
    same(k, a, [0], ["collect", "throw"], WAYS);
  });
});
