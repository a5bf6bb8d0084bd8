// Random batched statements (fast-check): stores and Lets with up to several loads of distinct
// buffers (vector loops of compile/vector.ts), offsets with runtime terms (k/2, min(k, 5), k & 3,
// a register), masks, loops, clusters, aliasing, out-of-bounds lanes. Every fast way must match
// the reference (test/util/first-diff.ts).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { DType, KernelArg, PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { SimTensor, simZeros } from "@tirx-ts/runtime-sim";
import { checkSame } from "./util/first-diff.js";

const N = 2048;
type Buf = "A" | "B" | "C" | "s" | "u";
type Idx = readonly [c: number, px: number, pj: number, pk: number, op: number];
type Val =
  | { k: "load"; buf: Buf; idx: Idx }
  | { k: "bin"; op: "add" | "mul" | "sub" | "max"; a: Val; b: Val }
  | { k: "reg"; which: number }
  | { k: "const" };
type St =
  | { k: "store"; buf: Buf; idx: Idx; val: Val; mask: number; loop: number }
  | { k: "let"; val: Val; mask: number }
  | { k: "sync" };
interface Shape {
  readonly dtype: DType;
  readonly threads: number;
  readonly grid: number;
  readonly k: number;
  readonly alias: boolean;
  readonly cluster: boolean;
  readonly sts: readonly St[];
}

function build(sh: Shape): PrimFunc {
  const th = sh.threads;
  const dt = sh.dtype;
  return T.function(
    "arith",
    { A: T.Tensor([N], dt), B: T.Tensor([N], dt), C: T.Tensor([N], dt), k: T.int32 },
    ({ A, B, C, k }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: sh.grid,
          block: th,
          ...(sh.cluster && sh.grid === 2 ? { cluster: [2, 1, 1] } : {}),
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([1024], dt);
      const u = T.alloc_shared([1024], dt);
      const bufs: Record<Buf, TileView> = { A, B, C, s, u };
      const regs: PrimExpr[] = [];
      const idx = (x: Idx, j: PrimExpr): PrimExpr => {
        const [c, px, pj, pk, op] = x;
        let e = tid.mul(px).add(j.mul(pj)).add(k.mul(pk)).add(c);
        if (op === 1) e = e.add(k.floordiv(2));
        if (op === 2) e = e.add(T.min(k, 5));
        if (op === 3) e = e.add(k.bitand(3).mul(2));
        if (op === 4 && regs.length > 0) e = e.add(regs[0]!.cast("int32").bitand(1));
        return e;
      };
      const val = (v: Val, j: PrimExpr): PrimExpr => {
        switch (v.k) {
          case "load":
            return bufs[v.buf].get([idx(v.idx, j)]);
          case "bin": {
            const a = val(v.a, j);
            const b = val(v.b, j);
            if (v.op === "add") return a.add(b);
            if (v.op === "sub") return a.sub(b);
            if (v.op === "mul") return a.mul(b);
            return T.max(a, b);
          }
          case "reg":
            return regs.length > 0 ? regs[v.which % regs.length]! : tid.cast(dt);
          case "const":
            return T.float32(1.5).cast(dt);
        }
      };
      const masked = (m: number, f: () => void) => {
        if (m === 0) f();
        else if (m === 1) T.if_(tid.lt(th - 7), f);
        else if (m === 2) T.if_(tid.floormod(3).ne(0), f);
        else T.if_(tid.ge(32), f);
      };
      sh.sts.forEach((st, i) => {
        if (st.k === "sync") return T.cuda.cta_sync();
        if (st.k === "let") {
          regs.push(T.let_(`r${i}`, val(st.val, T.int32(0))));
          return;
        }
        const body = (j: PrimExpr) =>
          masked(st.mask, () => bufs[st.buf].set([idx(st.idx, j)], val(st.val, j)));
        if (st.loop === 0) body(T.int32(0));
        else for (const j of T.range(st.loop === 1 ? 2 : tid.floormod(2).add(1))) body(j);
      });
    },
  );
}

const buf = fc.constantFrom<Buf>("A", "B", "C", "s", "u");
const idx: fc.Arbitrary<Idx> = fc.tuple(
  fc.constantFrom(0, 1, 2, 33, 128, 500),
  fc.constantFrom(1, 1, 1, 2, 0),
  fc.constantFrom(0, 0, 1, 64),
  fc.constantFrom(0, 0, 1),
  fc.constantFrom(0, 0, 0, 1, 2, 3, 4),
);
const val: fc.Arbitrary<Val> = fc.letrec<{ v: Val }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: fc.record({ k: fc.constant("load" as const), buf, idx }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("reg" as const), which: fc.nat(3) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant("const" as const) }) },
    {
      weight: 2,
      arbitrary: fc.record({
        k: fc.constant("bin" as const),
        op: fc.constantFrom("add" as const, "mul" as const, "sub" as const, "max" as const),
        a: tie("v"),
        b: tie("v"),
      }),
    },
  ),
})).v;
const st: fc.Arbitrary<St> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      k: fc.constant("store" as const),
      buf,
      idx,
      val,
      mask: fc.constantFrom(0, 0, 1, 2, 3),
      loop: fc.constantFrom(0, 0, 1, 2),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ k: fc.constant("let" as const), val, mask: fc.constant(0) }),
  },
  { weight: 1, arbitrary: fc.record({ k: fc.constant("sync" as const) }) },
);
const shape: fc.Arbitrary<Shape> = fc.record({
  dtype: fc.constantFrom<DType>("float32", "float16", "int32", "bfloat16", "int8"),
  threads: fc.constantFrom(32, 64, 128),
  grid: fc.constantFrom(1, 1, 2),
  k: fc.constantFrom(0, 1, 5, 900, 2000, 2147483600),
  alias: fc.boolean(),
  cluster: fc.boolean(),
  sts: fc.array(st, { minLength: 1, maxLength: 6 }),
});

const args = (sh: Shape) => (): KernelArg[] => {
  const eb = sh.dtype === "int8" ? 1 : sh.dtype.endsWith("16") ? 2 : 4;
  const mk = (seed: number) => {
    const b = new Uint8Array(N * eb);
    for (let i = 0; i < b.length; i++) b[i] = (i * seed + 7) & 0xff;
    return new SimTensor(b, [N], sh.dtype);
  };
  const a = mk(37);
  return [a, sh.alias ? a : simZeros([N], sh.dtype), mk(91), sh.k];
};

describe("random arithmetic statements", () => {
  it("fast ways match the reference", () => {
    let verified = 0;
    fc.assert(
      fc.property(shape, (sh) => {
        if (checkSame(sh, build, args(sh))) verified++;
      }),
      {
        numRuns: 20,
        seed: 1,
        endOnFailure: true,
      },
    );
    expect(verified).toBeGreaterThan(14);
  });
});
