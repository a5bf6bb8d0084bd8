// Random cp.async kernels (fast-check): CTA-scope tiles (4/8/16-byte chunks, masked issuers,
// overlapping destinations, a runtime source row), commits and wait_group 0/1/2 / wait_all by all
// or some lanes, __syncwarp, cta_sync, named barriers (producer bar.arrive / consumer bar.sync),
// generic reads and writes of the tile and of its source tensor, 2-iteration loops, CTA exit with
// copies pending, clusters. Every fast way must match the reference (test/util/first-diff.ts).
// Tiles have one or two repeats (two: all repeats issued as runs at once, AsyncUnit.issueRuns).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { isTirxError, verify, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { firstDiff } from "./util/first-diff.js";
import { AsyncUnit } from "../packages/runtime-sim/src/exec/async-copy.js";

const stats = { runs: 0, runThreads: 0 };
const origIssueRun = AsyncUnit.prototype.issueRun;
AsyncUnit.prototype.issueRun = function (this: AsyncUnit, ...a: Parameters<AsyncUnit["issueRun"]>) {
  stats.runs++;
  stats.runThreads += a[2];
  return origIssueRun.apply(this, a);
};

const NS = 1024; // shared floats
const W = 1024; // A row floats
type Mask = "all" | "lt" | "ge" | "w0" | "w1" | "odd";
type Op =
  | {
      k: "tile";
      mask: Mask;
      chunk: 4 | 8 | 16;
      r: number;
      doff: number;
      soff: number;
      row: number;
      rowK: boolean;
    }
  | { k: "commit"; mask: Mask }
  | { k: "wait"; mask: Mask; n: number }
  | { k: "waitall"; mask: Mask }
  | { k: "syncwarp"; mask: Mask }
  | { k: "sync" }
  | { k: "named"; prod: boolean }
  | { k: "read"; mask: Mask; off: number; stride: number; row: number }
  | { k: "write"; mask: Mask; off: number; stride: number }
  | { k: "gwrite"; mask: Mask; off: number; row: number }
  | { k: "loop"; body: Op[] };
interface Shape {
  readonly threads: 32 | 64 | 128;
  readonly grid: number;
  readonly cluster: boolean;
  readonly k: number;
  readonly ops: readonly Op[];
}

function build(sh: Shape): PrimFunc {
  const th = sh.threads;
  return T.function(
    "cpfuzz",
    { A: T.Tensor([8, W], "float32"), B: T.Tensor([8, W], "float32"), k: T.int32 },
    ({ A, B, k }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: sh.grid,
          block: th,
          ...(sh.cluster ? { cluster: [2, 1, 1] } : {}),
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const s = T.alloc_shared([NS], "float32");
      const masked = (m: Mask, f: () => void) => {
        if (m === "all") f();
        else if (m === "lt") T.if_(tid.lt(th - 8), f);
        else if (m === "ge") T.if_(tid.ge(1), f);
        else if (m === "w0") T.if_(tid.lt(32), f);
        else if (m === "w1") T.if_(tid.ge(th - 32), f);
        else T.if_(tid.floormod(2).eq(1), f);
      };
      const emit = (op: Op, j: PrimExpr) => {
        switch (op.k) {
          case "tile": {
            const v = op.chunk / 4;
            const len = op.r * th * v;
            const doff = Math.min(op.doff, NS - len);
            const soff = Math.min(op.soff, W - len);
            const rowE = op.rowK ? k.add(op.row).floormod(8) : T.int32(op.row);
            const src: TileView = A.sub(rowE, `${soff}:${soff + len}`);
            const dst: TileView = s.sub(`${doff}:${doff + len}`);
            const pat = "(r w t v) -> w t r v";
            const sz = { r: op.r, w: th / 32, t: 32, v };
            masked(op.mask, () =>
              T.cuda.tile.apply(
                T.ptx["cp.async.ca.shared.global"]!,
                dst.rearrange(pat, sz),
                src.rearrange(pat, sz),
                {
                  chunk_bytes: op.chunk,
                  scope: "cta",
                },
              ),
            );
            return;
          }
          case "commit":
            return masked(op.mask, () => T.ptx.cp.async_.commit_group());
          case "wait":
            return masked(op.mask, () => T.ptx.cp.async_.wait_group(op.n));
          case "waitall":
            return masked(op.mask, () => T.ptx.cp.async_.wait_all());
          case "syncwarp":
            return masked(op.mask, () => T.cuda.__syncwarp());
          case "sync":
            return T.cuda.cta_sync();
          case "named":
            if (op.prod) {
              T.if_(
                tid.lt(32),
                () => T.cuda.bar_arrive(1, th),
                () => T.cuda.bar_sync(1, th),
              );
            } else T.cuda.bar_sync(1, th);
            return;
          case "read":
            return masked(op.mask, () =>
              B.set(
                [T.int32(op.row).add(cta.mul(0)), tid.add(j.mul(th))],
                s.get([tid.mul(op.stride).add(op.off).add(j).floormod(NS)]),
              ),
            );
          case "write":
            return masked(op.mask, () =>
              s.set([tid.mul(op.stride).add(op.off).floormod(NS)], A.get([7, tid])),
            );
          case "gwrite":
            return masked(op.mask, () => A.set([op.row, tid.add(op.off)], B.get([7, tid])));
          case "loop":
            for (const jj of T.range(2)) for (const o of op.body) emit(o, jj);
            return;
        }
      };
      for (const op of sh.ops) emit(op, T.int32(0));
    },
  );
}

const mask = fc.constantFrom<Mask>("all", "all", "all", "lt", "ge", "w0", "w1", "odd");
const leaf: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant("tile" as const),
      mask,
      chunk: fc.constantFrom(4 as const, 8 as const, 16 as const),
      r: fc.constantFrom(1, 1, 2),
      doff: fc.constantFrom(0, 0, 128, 256, 512, 1020),
      soff: fc.constantFrom(0, 4, 512),
      row: fc.integer({ min: 0, max: 7 }),
      rowK: fc.boolean(),
    }),
  },
  { weight: 3, arbitrary: fc.record({ k: fc.constant("commit" as const), mask }) },
  {
    weight: 3,
    arbitrary: fc.record({ k: fc.constant("wait" as const), mask, n: fc.constantFrom(0, 0, 1, 2) }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("waitall" as const), mask }) },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("syncwarp" as const),
      mask: fc.constantFrom<Mask>("w0", "w1", "all"),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("sync" as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("named" as const), prod: fc.boolean() }) },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("read" as const),
      mask,
      off: fc.constantFrom(0, 1, 4, 32, 256, 512),
      stride: fc.constantFrom(1, 1, 4, 0),
      row: fc.integer({ min: 0, max: 6 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("write" as const),
      mask,
      off: fc.constantFrom(0, 3, 256, 512),
      stride: fc.constantFrom(1, 4),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("gwrite" as const),
      mask,
      off: fc.constantFrom(0, 512),
      row: fc.integer({ min: 0, max: 7 }),
    }),
  },
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: leaf },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("loop" as const),
      body: fc.array(leaf, { minLength: 1, maxLength: 4 }),
    }),
  },
);
const shape: fc.Arbitrary<Shape> = fc.record({
  threads: fc.constantFrom(32 as const, 64 as const, 128 as const),
  grid: fc.constantFrom(1, 2),
  cluster: fc.boolean(),
  k: fc.constantFrom(0, 1, 3),
  ops: fc.array(op, { minLength: 1, maxLength: 9 }),
});

const args = (sh: Shape) => (): KernelArg[] => [
  simTensor(
    Array.from({ length: 8 * W }, (_, i) => i * 0.25),
    { shape: [8, W], dtype: "float32" },
  ),
  simZeros([8, W], "float32"),
  sh.k,
];

describe("random cp.async kernels", () => {
  it("fast ways match the reference", () => {
    let verified = 0;
    fc.assert(
      fc.property(shape, (sh) => {
        if (sh.cluster && sh.grid !== 2) return;
        try {
          verify(build(sh));
          verified++;
        } catch (e) {
          if (!isTirxError(e)) throw e;
          return;
        }
        const d = firstDiff(build(sh), args(sh));
        if (d) {
          throw new Error(JSON.stringify({ sh, d }));
        }
      }),
      {
        numRuns: 20,
        seed: 1,
        endOnFailure: true,
      },
    );
    expect(verified).toBeGreaterThan(10);
    // Runs were issued (AsyncUnit.issueRun), so the comparison covers them.
    expect(stats.runs).toBeGreaterThan(500);
  });
});
