// Minimal kernels on which the fast paths (jitAfter: 0, and the default {}) once differed from
// the reference ({ rangeChecks: false, jitAfter: Infinity }): a block copy of float64 and bool
// elements (the codec is not the identity on their bits), a cp.async run landed at its first
// thread's clock when its threads' clocks differed, and a tile's repeats issued repeat by repeat
// when one of them had to be issued thread by thread. Each asserts the outcomes are the same
// (test/util/same-outcome.ts).
import { describe, it } from "vitest";
import type { DType, KernelArg, PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { SimTensor, simEmpty, simTensor, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { same } from "./util/same-outcome.js";

const WAYS: readonly SimOptions[] = [
  { jitAfter: 0 },
  {},
  { rangeChecks: false, jitAfter: Infinity },
];
const pat = "(r w t v) -> w t r v";

/** A float32 tensor A of 0, 1, ... n - 1 and a zero B, fresh per launch. */
const floats = (n: number) => (): KernelArg[] => [
  simTensor(
    Array.from({ length: n }, (_, i) => i),
    { shape: [n], dtype: "float32" },
  ),
  simZeros([n], "float32"),
];
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

describe("1. AffineCopy (compile/vector.ts) once moved bytes where the element path re-encoded", () => {
  it("float64 NaN payloads (the 0xff poison of simEmpty) come out alike", () => {
    // Before the fix: reference B = 0x7fffffffffffffff (codec store of NaN); fast: A's bytes.
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
  it("bool bytes other than 0/1 are normalised alike", () => {
    same(
      copy("bool"),
      () => [new SimTensor(new Uint8Array(128).fill(2), [128], "bool"), simZeros([128], "bool")],
      [0],
      ["collect"],
      WAYS,
    );
  });
});

describe("2. AsyncUnit.#waitRuns once landed a whole run at its first thread's clock", () => {
  /** A 64-thread tile; warp 1 moves its clocks (__syncwarp) between issue and wait. */
  const tileThenWait = (name: string, after: (tid: PrimExpr, s: TileView, B: TileView) => void) =>
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
      T.if_(tid.ge(32), () => T.cuda.__syncwarp()); // warp 1's clocks move, thread 0's do not
      T.ptx.cp.async_.wait_group(0);
      after(tid, s, B);
    });
  const a = floats(64);

  it("missed race: thread 32 reads thread 33's landed chunk with nothing ordering them", () => {
    // Before the fix: reference TX6003 (thread 32 reads bytes 132..135 thread 33 wrote); fast: none.
    const k = tileThenWait("cp_missed_race", (tid, s, B) => {
      T.if_(tid.lt(32), () => B.set([tid], s.get([tid])));
      T.if_(tid.ge(32), () => B.set([tid], s.get([tid.add(1).floormod(32).add(32)])));
    });
    same(k, a, [0], ["collect", "throw"], WAYS);
  });

  it("false race: an mbarrier orders the reads, but the run's chunks carry thread 32's later clock", () => {
    // Before the fix: reference none; fast TX6003 (thread 16 reads bytes 192..195 thread 48 wrote).
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

describe("3. blockIssue (compile/cp-async.ts) once issued repeat by repeat, the reference thread by thread", () => {
  it("first report of a 2-repeat tile over bytes other threads read (TX6013)", () => {
    // Before the fix: reference TX6013 thread 0, bytes 256..259 (its repeat 1); fast: TX6013
    // thread 1, bytes 4..7 (its repeat 0).
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
    same(k, floats(128), [0], ["collect", "throw"], WAYS);
  });

  it("first report of a 2-repeat tile over bytes earlier cp.async still target (TX6008)", () => {
    // Before the fix: reference TX6008 thread 0, byte 256; fast: TX6008 thread 1, byte 4.
    const tile = (dst: TileView, src: TileView, r: number) =>
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
    same(k, floats(128), [0], ["collect", "throw"], WAYS);
  });
});
