// Random kernels with loops in coroutine schedules (named barriers or mbarrier waits inside the
// loops, so warps / lane groups run a loop's iterations at different times) whose bodies hold
// block copies (compile/affine.ts, AffineCopy) and cp.async tiles indexed by the loop variables
// (LoopVar records, compile/loop-var.ts): loop starts uniform, per warp, or per thread; nested
// loops; non-uniform trip counts. Fast ways vs the reference (first-diff.ts).
import fc from "fast-check";
import type { DType, KernelArg, PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { checkSame } from "./first-diff.js";

import { AffineCopy } from "../../packages/runtime-sim/src/compile/vector.js";
import { LoopVar } from "../../packages/runtime-sim/src/compile/loop-var.js";

export const stats = { verified: 0, copyTrue: 0, copyFalse: 0, recN: 0 };
const origRun = AffineCopy.prototype.run;
AffineCopy.prototype.run = function (this: AffineCopy, lanes: Int32Array, n: number): boolean {
  const r = origRun.call(this, lanes, n);
  if (r) stats.copyTrue++;
  else stats.copyFalse++;
  return r;
};
const origSet = LoopVar.prototype.set;
LoopVar.prototype.set = function (this: LoopVar, a: Int32Array, n: number, k: number): void {
  origSet.call(this, a, n, k);
  if (this.recN > 0) stats.recN++;
};
const N = 4096;
type Start = "zero" | "const" | "warp" | "thread" | "outer" | "mixed";
type Sync = "named" | "mbar" | "none" | "cta";
interface Loop {
  readonly start: Start;
  readonly ext: number;
  readonly extKind: "const" | "warp";
  readonly sync: Sync;
  readonly syncAt: "before" | "after";
  readonly body: readonly Body[];
}
type Body =
  | { k: "copy"; cj: number; c: number; dstOff: number }
  | { k: "tile"; cj: number }
  | { k: "loop"; loop: Loop };
export interface Shape {
  readonly threads: 64 | 96 | 128;
  readonly dtype: DType;
  readonly top: readonly Loop[];
}

export function build(sh: Shape): PrimFunc {
  const th = sh.threads;
  let copies = 0;
  return T.function(
    "loopfuzz",
    { A: T.Tensor([N], sh.dtype), B: T.Tensor([N], sh.dtype), C: T.Tensor([16, th], "float32") },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: th }) });
      const tid = T.cuda.thread_idx("x");
      const warp = tid.floordiv(32);
      const s = T.alloc_shared([8, th], "float32");
      const bar = T.alloc_shared([1], "uint64");
      const ph = T.alloc_local([1], "int32");
      ph.set([0], T.int32(0));
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), th);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      const Af = A;
      const sync = (k: Sync) => {
        if (k === "named") T.cuda.bar_sync(1, th);
        else if (k === "cta") T.cuda.cta_sync();
        else if (k === "mbar") {
          T.ptx.mbarrier.arrive(bar.sub(0));
          T.ptx.mbarrier.try_wait(bar.sub(0), ph.get([0]));
          ph.set([0], T.int32(1).sub(ph.get([0])));
        }
      };
      const emitLoop = (l: Loop, outer: PrimExpr) => {
        const st =
          l.start === "zero"
            ? T.int32(0)
            : l.start === "const"
              ? T.int32(3)
              : l.start === "warp"
                ? warp.mul(2)
                : l.start === "thread"
                  ? tid.floormod(3)
                  : l.start === "mixed"
                    ? tid.floormod(2).mul(T.int32(1).sub(warp.min(1)))
                    : outer;
        const ext = l.extKind === "const" ? T.int32(l.ext) : warp.floormod(2).add(l.ext);
        for (const j of T.range(st, st.add(ext))) {
          if (l.syncAt === "before") sync(l.sync);
          for (const b of l.body) {
            if (b.k === "copy") {
              copies++;
              const d = tid.add(j.mul(b.cj)).add(b.dstOff);
              B.set([d], Af.get([tid.add(j.mul(b.cj)).add(b.c)]));
            } else if (b.k === "tile") {
              const pat = "(r w t v) -> w t r v";
              const sz = { r: 1, w: th / 32, t: 32, v: 1 };
              const base = j.mul(b.cj).floormod(4);
              T.cuda.tile.apply(
                T.ptx["cp.async.ca.shared.global"]!,
                s.sub(base, ":").rearrange(pat, sz),
                C.sub(base.add(j).floormod(16), ":").rearrange(pat, sz),
                { chunk_bytes: 4, scope: "cta" },
              );
              T.ptx.cp.async_.wait_all();
            } else emitLoop(b.loop, j);
          }
          if (l.syncAt === "after") sync(l.sync);
        }
      };
      for (const l of sh.top) emitLoop(l, T.int32(0));
      void copies;
    },
  );
}

const leafBody: fc.Arbitrary<Body> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      k: fc.constant("copy" as const),
      cj: fc.constantFrom(0, 1, 64, 128, 200),
      c: fc.constantFrom(0, 1, 7, 500),
      dstOff: fc.constantFrom(0, 0, 3, 1000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ k: fc.constant("tile" as const), cj: fc.constantFrom(0, 1, 2) }),
  },
);
const loopLeaf = (body: fc.Arbitrary<Body>): fc.Arbitrary<Loop> =>
  fc.record({
    start: fc.constantFrom<Start>(
      ...(["zero", "const", "warp", "thread", "mixed", "mixed", "outer"] as Start[]),
    ),
    ext: fc.constantFrom(1, 2, 3),
    extKind: fc.constantFrom<"const" | "warp">("const", "const", "warp"),
    sync: fc.constantFrom<Sync>("named", "mbar", "none", "cta"),
    syncAt: fc.constantFrom<"before" | "after">("before", "after"),
    body: fc.array(body, { minLength: 1, maxLength: 3 }),
  });
const inner = loopLeaf(leafBody);
const body: fc.Arbitrary<Body> = fc.oneof(
  { weight: 3, arbitrary: leafBody },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("loop" as const), loop: inner }) },
);
export const shape: fc.Arbitrary<Shape> = fc.record({
  threads: fc.constantFrom<64 | 96 | 128>(64, 96, 128),
  dtype: fc.constantFrom<DType>("float32", "int32", "int16", "int8"),
  top: fc.array(loopLeaf(body), { minLength: 1, maxLength: 2 }),
});

export function argsOf(sh: Shape): () => KernelArg[] {
  return () => [
    simTensor(
      Array.from({ length: N }, (_, i) => (i * 7) % 120),
      { shape: [N], dtype: sh.dtype },
    ),
    simZeros([N], sh.dtype),
    simTensor(
      Array.from({ length: 16 * sh.threads }, (_, i) => i),
      { shape: [16, sh.threads], dtype: "float32" },
    ),
  ];
}

export function check(sh: Shape): void {
  if (checkSame(sh, build, argsOf(sh))) stats.verified++;
}
