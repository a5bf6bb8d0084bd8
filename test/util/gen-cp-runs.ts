// Random cp.async kernels aimed at AsyncUnit.issueRuns / #waitRuns and compile/cp-async.ts
// blockIssue: tiles of 1-4 repeats (one or two repeat axes, 2-D sources whose repeats are rows),
// several tiles per group, commits and wait_group 0/1/2 by all or some lanes, mbarrier
// arrive/try_wait (all threads or one warp) between issue and wait, partial __syncwarp, named
// barriers, cta_sync, contiguous and strided reads and writes of the tiles, global writes of the
// source, loops, 2 CTAs and clusters.
import fc from "fast-check";
import type { KernelArg, PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { checkSame } from "./first-diff.js";
import { AsyncUnit } from "../../packages/runtime-sim/src/exec/async-copy.js";

export const stats = { verified: 0, issueRuns: 0, issueRunsTrue: 0 };
const orig = AsyncUnit.prototype.issueRuns;
AsyncUnit.prototype.issueRuns = function (
  this: AsyncUnit,
  ...a: Parameters<AsyncUnit["issueRuns"]>
) {
  stats.issueRuns++;
  const r = orig.apply(this, a);
  if (r && a[3].length > 1) stats.issueRunsTrue++;
  return r;
};

const NS = 2048; // shared floats
const W = 1024; // A row floats
type Mask = "all" | "lt" | "ge" | "w0" | "w1" | "odd" | "half";
type Op =
  | {
      k: "tile";
      mask: Mask;
      chunk: 4 | 8 | 16;
      form: "r" | "rr" | "rows";
      r: number;
      doff: number;
      soff: number;
      row: number;
    }
  | { k: "commit"; mask: Mask }
  | { k: "wait"; mask: Mask; n: number }
  | { k: "waitall"; mask: Mask }
  | { k: "syncwarp"; mask: Mask }
  | { k: "sync" }
  | { k: "named" }
  | { k: "mbar"; who: "all" | "w0" }
  | { k: "read"; mask: Mask; off: number; stride: number }
  | { k: "write"; mask: Mask; off: number; stride: number }
  | { k: "gwrite"; mask: Mask; off: number; row: number }
  | { k: "loop"; body: Op[] };
export interface Shape {
  readonly threads: 32 | 64 | 128;
  readonly grid: number;
  readonly cluster: boolean;
  readonly ops: readonly Op[];
}

export function build(sh: Shape): PrimFunc {
  const th = sh.threads;
  let mbars = 0;
  return T.function(
    "cpfuzz2",
    { A: T.Tensor([8, W], "float32"), B: T.Tensor([8, W], "float32") },
    ({ A, B }) => {
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
      const bar = T.alloc_shared([2], "uint64");
      const phase = T.alloc_local([1], "int32");
      phase.set([0], T.int32(0));
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), th);
        T.ptx.mbarrier.init(bar.sub(1), 32);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      const masked = (m: Mask, f: () => void) => {
        if (m === "all") f();
        else if (m === "lt") T.if_(tid.lt(th - 8), f);
        else if (m === "ge") T.if_(tid.ge(1), f);
        else if (m === "w0") T.if_(tid.lt(32), f);
        else if (m === "w1") T.if_(tid.ge(th - 32), f);
        else if (m === "half") T.if_(tid.floormod(32).lt(16), f);
        else T.if_(tid.floormod(2).eq(1), f);
      };
      const emit = (op: Op, j: PrimExpr) => {
        switch (op.k) {
          case "tile": {
            const v = op.chunk / 4;
            const len = op.r * th * v;
            if (len > W) return;
            const doff = Math.min(op.doff, NS - len);
            const dst: TileView = s.sub(`${doff}:${doff + len}`);
            let dv: TileView;
            let sv: TileView;
            const sz = { w: th / 32, t: 32, v };
            if (op.form === "r") {
              const soff = Math.min(op.soff, W - len);
              const pat = "(r w t v) -> w t r v";
              dv = dst.rearrange(pat, { r: op.r, ...sz });
              sv = A.sub(op.row, `${soff}:${soff + len}`).rearrange(pat, { r: op.r, ...sz });
            } else if (op.form === "rr") {
              const r1 = op.r % 2 === 0 ? 2 : 1;
              const r2 = op.r / r1;
              const soff = Math.min(op.soff, W - len);
              const pat = "(a b w t v) -> w t a b v";
              dv = dst.rearrange(pat, { a: r1, b: r2, ...sz });
              sv = A.sub(op.row, `${soff}:${soff + len}`).rearrange(pat, { a: r1, b: r2, ...sz });
            } else {
              // repeats are rows of A
              const rows = Math.min(op.r, 8 - op.row);
              const cols = th * v;
              const soff = Math.min(op.soff, W - cols);
              dv = s
                .sub(
                  `${Math.min(op.doff, NS - rows * cols)}:${Math.min(op.doff, NS - rows * cols) + rows * cols}`,
                )
                .rearrange("(r w t v) -> w t r v", { r: rows, ...sz });
              sv = A.sub(`${op.row}:${op.row + rows}`, `${soff}:${soff + cols}`).rearrange(
                "r (w t v) -> w t r v",
                sz,
              );
            }
            masked(op.mask, () =>
              T.cuda.tile.apply(T.ptx["cp.async.ca.shared.global"]!, dv, sv, {
                chunk_bytes: op.chunk,
                scope: "cta",
              }),
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
            if (op.mask === "half") T.if_(tid.floormod(32).lt(16), () => T.cuda.__syncwarp(0xffff));
            else masked(op.mask, () => T.cuda.__syncwarp());
            return;
          case "sync":
            return T.cuda.cta_sync();
          case "named":
            T.if_(
              tid.lt(32),
              () => T.cuda.bar_arrive(1, th),
              () => T.cuda.bar_sync(1, th),
            );
            return;
          case "mbar": {
            mbars++;
            if (op.who === "all") {
              T.ptx.mbarrier.arrive(bar.sub(0));
              T.ptx.mbarrier.try_wait(bar.sub(0), phase.get([0]));
              phase.set([0], T.int32(1).sub(phase.get([0])));
            } else {
              // warp 0 arrives on bar 1 and waits; the other warps do nothing
              T.if_(tid.lt(32), () => {
                T.ptx.mbarrier.arrive(bar.sub(1));
                T.ptx.mbarrier.try_wait(bar.sub(1), phase.get([0]));
              });
            }
            return;
          }
          case "read":
            return masked(op.mask, () =>
              B.set(
                [cta.floormod(8), tid.add(j.mul(th))],
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
      void mbars;
    },
  );
}

const mask = fc.constantFrom<Mask>(
  "all",
  "all",
  "all",
  "all",
  "lt",
  "ge",
  "w0",
  "w1",
  "odd",
  "half",
);
const leaf: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant("tile" as const),
      mask,
      chunk: fc.constantFrom(4 as const, 8 as const, 16 as const),
      form: fc.constantFrom<"r" | "rr" | "rows">("r", "rr", "rows"),
      r: fc.constantFrom(1, 2, 2, 3, 4),
      doff: fc.constantFrom(0, 0, 128, 256, 512, 1024, 2044),
      soff: fc.constantFrom(0, 4, 512),
      row: fc.integer({ min: 0, max: 7 }),
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
      mask: fc.constantFrom<Mask>("w0", "w1", "all", "half"),
    }),
  },
  { weight: 2, arbitrary: fc.record({ k: fc.constant("sync" as const) }) },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("named" as const) }) },
  {
    weight: 2,
    arbitrary: fc.record({
      k: fc.constant("mbar" as const),
      who: fc.constantFrom<"all" | "w0">("all", "w0"),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      k: fc.constant("read" as const),
      mask,
      off: fc.constantFrom(0, 1, 4, 32, 256, 512, 1024),
      stride: fc.constantFrom(1, 1, 2, 4, 0, 3),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      k: fc.constant("write" as const),
      mask,
      off: fc.constantFrom(0, 3, 256, 512, 1024),
      stride: fc.constantFrom(1, 4, 2),
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
export const shape: fc.Arbitrary<Shape> = fc.record({
  threads: fc.constantFrom(32 as const, 64 as const, 128 as const),
  grid: fc.constantFrom(1, 2),
  cluster: fc.constantFrom(false, false, true),
  ops: fc.array(op, { minLength: 1, maxLength: 10 }),
});

export const argsOf = (): KernelArg[] => [
  simTensor(
    Array.from({ length: 8 * W }, (_, i) => i * 0.25),
    { shape: [8, W], dtype: "float32" },
  ),
  simZeros([8, W], "float32"),
];

export function check(sh0: Shape): void {
  const sh = sh0.cluster ? { ...sh0, grid: 2 } : sh0;
  if (checkSame(sh, build, argsOf)) stats.verified++;
}
