// Random copy kernels (fast-check): copies global↔shared↔global of several dtypes (bool and
// float64 too: fast-path-regressions.test.ts) over 1-D, 2-D and 3-D
// blocks and clusters, with Let-bound offsets, loops of uniform and non-uniform trip counts,
// loops inside ifs, masked lanes, a runtime offset k (int32 wrap, out of bounds), and one tensor
// passed twice. Every fast way must match the reference (test/util/first-diff.ts).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { dtypeBytes, type DType, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { SimTensor, simZeros } from "@tirx-ts/runtime-sim";
import { checkSame } from "./util/first-diff.js";
import { AffineCopy } from "../packages/runtime-sim/src/compile/vector.js";

const stats = { copyTrue: 0, copyFalse: 0, verified: 0 };
const orig = AffineCopy.prototype.run;
AffineCopy.prototype.run = function (lanes: Int32Array, n: number): boolean {
  const r = orig.call(this, lanes, n);
  if (r) stats.copyTrue++;
  else stats.copyFalse++;
  return r;
};

const N = 4096;
type Idx = readonly [
  c: number,
  px: number,
  py: number,
  pz: number,
  pj: number,
  pk: number,
  pc: number,
];
interface St {
  readonly kind: "g2s" | "s2g" | "g2g" | "s2s";
  readonly src: Idx;
  readonly dst: Idx;
  readonly loop: "none" | "const" | "k" | "tid";
  readonly mask: "none" | "lt" | "odd" | "mid";
  readonly let: boolean;
  readonly sync: boolean;
  readonly outer: "none" | "lt" | "z0";
}
interface Shape {
  readonly dtype: DType;
  readonly block: readonly [number, number, number];
  readonly grid: number;
  readonly cluster: boolean;
  readonly alias: boolean;
  readonly k: number;
  readonly sts: readonly St[];
}

function build(sh: Shape): PrimFunc {
  const [bx, by, bz] = sh.block;
  return T.function(
    "fuzz",
    { A: T.Tensor([N], sh.dtype), B: T.Tensor([N], sh.dtype), k: T.int32 },
    ({ A, B, k }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: sh.grid,
          block: [bx, by, bz],
          ...(sh.cluster ? { cluster: [2, 1, 1] } : {}),
        }),
      });
      const tx = T.cuda.thread_idx("x");
      const ty = T.cuda.thread_idx("y");
      const tz = T.cuda.thread_idx("z");
      const cta = T.cuda.block_idx("x");
      const s = T.alloc_shared([2048], sh.dtype);
      const s2 = T.alloc_shared([512], sh.dtype);
      sh.sts.forEach((st, i) => {
        const body = (j: PrimExpr) => {
          const at = (x: Idx): PrimExpr => {
            const [c, px, py, pz, pj, pk, pc] = x;
            return tx
              .mul(px)
              .add(ty.mul(py * bx))
              .add(tz.mul(pz * bx * by))
              .add(j.mul(pj))
              .add(k.mul(pk))
              .add(cta.mul(pc))
              .add(c);
          };
          let si = at(st.src);
          let di = at(st.dst);
          if (st.let) {
            si = T.let_(`si${i}`, si);
            di = T.let_(`di${i}`, di);
          }
          const go = () => {
            if (st.kind === "g2s") s.set([di], A.get([si]));
            else if (st.kind === "s2g") B.set([di], s.get([si]));
            else if (st.kind === "g2g") B.set([di], A.get([si]));
            else s2.set([di.floormod(512)], s.get([si]));
          };
          if (st.mask === "none") go();
          else if (st.mask === "lt") T.if_(tx.lt(bx - 5), go);
          else if (st.mask === "odd") T.if_(tx.floormod(2).eq(1), go);
          else T.if_(tx.ge(3).and(tx.lt(bx - 3)), go);
        };
        const loop = () => {
          if (st.loop === "none") body(T.int32(0));
          else {
            const ext = st.loop === "const" ? 3 : st.loop === "k" ? k.floormod(4) : tx.floormod(3);
            for (const j of T.range(ext)) body(j);
          }
        };
        if (st.outer === "none") loop();
        else if (st.outer === "lt") T.if_(tx.lt(bx - 3).or(ty.eq(1)), loop);
        else T.if_(tz.eq(0).and(tx.ge(1)), loop);
        if (st.sync) T.cuda.cta_sync();
      });
    },
  );
}

const idx: fc.Arbitrary<Idx> = fc.tuple(
  fc.constantFrom(0, 1, 3, 64, 100, 500),
  fc.constantFrom(1, 1, 1, 1, 1, 0, 2, -1),
  fc.constantFrom(1, 1, 0, 2),
  fc.constantFrom(1, 0),
  fc.constantFrom(0, 0, 1, 32, 64, 300),
  fc.constantFrom(0, 0, 1, -1),
  fc.constantFrom(0, 0, 0, 64, 128),
);
const st: fc.Arbitrary<St> = fc.record({
  kind: fc.constantFrom("g2s", "s2g", "g2g", "s2s"),
  src: idx,
  dst: idx,
  loop: fc.constantFrom("none", "none", "const", "k", "tid"),
  mask: fc.constantFrom("none", "none", "lt", "odd", "mid"),
  let: fc.boolean(),
  sync: fc.boolean(),
  outer: fc.constantFrom("none", "none", "lt", "z0"),
});
const shape: fc.Arbitrary<Shape> = fc.record({
  dtype: fc.constantFrom<DType>(
    "float32",
    "float16",
    "int32",
    "int8",
    "bfloat16",
    "uint16",
    "uint8",
    "float64",
    "bool",
  ),
  block: fc.constantFrom(
    [64, 1, 1],
    [32, 2, 1],
    [96, 1, 1],
    [16, 2, 2],
    [8, 4, 2],
    [128, 1, 1],
    [48, 2, 1],
  ),
  grid: fc.constantFrom(1, 2),
  cluster: fc.boolean(),
  alias: fc.boolean(),
  k: fc.constantFrom(0, 1, 3, 7, 2000, 2147483600, -2147483640),
  sts: fc.array(st, { minLength: 1, maxLength: 4 }),
}) as fc.Arbitrary<Shape>;

function argsOf(sh: Shape): () => KernelArg[] {
  return () => {
    // Arbitrary bytes: NaN payloads, and bool bytes other than 0 and 1.
    const bytes = new Uint8Array(N * dtypeBytes(sh.dtype));
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 37 + 11) & 0xff;
    const a = new SimTensor(bytes, [N], sh.dtype);
    return [a, sh.alias ? a : simZeros([N], sh.dtype), sh.k];
  };
}

describe("random copies", () => {
  it("fast ways match the reference", () => {
    fc.assert(
      fc.property(shape, (sh) => {
        if (sh.cluster && (sh.grid !== 2 || (sh.block[0] * sh.block[1] * sh.block[2]) % 32 !== 0))
          return;
        if (checkSame(sh, build, argsOf(sh))) stats.verified++;
      }),
      {
        numRuns: 30,
        seed: 1,
        endOnFailure: true,
      },
    );
    // Block copies (AffineCopy) were taken, so the comparison covers them.
    expect(stats.copyTrue).toBeGreaterThan(2);
    expect(stats.verified).toBeGreaterThan(12);
  });
});
