// T.ptx.rnd (core ops/arith/rounding.ts): the instruction each call lowers to (inline snapshots,
// assembled by ptxas for sm_90a), the simulator's results on a small kernel against exact
// rounding computed here (BigInt), and the refusals (TX2005, TX2010, TX5006). The op × dtype
// matrix over random and edge inputs is in the differential test (test/diff/cases.ts).
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor } from "tirx-ts";
import type { PrimExpr } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { refRoundedArith } from "./diff/rounding-reference.js";
import { ptxLines as lines } from "./util/ptx-lines.js";

const dev = sim();

/** Y[i] = op(A[i], B[i], C[i]) on float32 for n lanes. */
function kernel(n: number, body: (a: PrimExpr, b: PrimExpr, c: PrimExpr) => PrimExpr) {
  return T.function(
    "rnd",
    {
      A: T.Tensor([n], "float32"),
      B: T.Tensor([n], "float32"),
      C: T.Tensor([n], "float32"),
      Y: T.Tensor([n], "float32"),
    },
    ({ A, B, C, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: n }) });
      const i = T.let_("i", T.cuda.thread_idx("x"));
      Y.set([i], body(A.get([i]), B.get([i]), C.get([i])));
    },
  );
}

describe("T.ptx.rnd", () => {
  it("fma.rm and fma.rp bracket the exact a·b + c; the simulator matches BigInt rounding", () => {
    const n = 64;
    const lo = kernel(n, (a, b, c) => T.ptx.rnd.fma(a, b, c, "rm"));
    const hi = kernel(n, (a, b, c) => T.ptx.rnd.fma(a, b, c, "rp"));
    const text = compileToPtx(lo, { arch: "sm_90a" }).text;
    expect(lines(text, /fma\./)).toMatchInlineSnapshot(`"fma.rm.f32 %f4, %f1, %f2, %f3;"`);
    assembleLater(text, "sm_90a", "fma.rm");
    // Inputs whose exact a·b + c is not a float32 (and one exact case, one cancellation).
    const f = Math.fround;
    const a = Float32Array.from({ length: n }, (_, i) => f(1 + i * 2 ** -20));
    const b = Float32Array.from({ length: n }, (_, i) => f(3 - i * 2 ** -19));
    const c = Float32Array.from({ length: n }, (_, i) => (i === 0 ? -3 : f(-(i % 7) * 2 ** -30)));
    const run = (fn: typeof lo): Float32Array => {
      const y = tensor.zeros([n], "float32", dev);
      compile(fn, { target: "cuda" })(
        ...[a, b, c].map((x) => tensor(x, { shape: [n], dtype: "float32", device: dev })),
        y,
      );
      return y.toArray() as Float32Array;
    };
    const [ylo, yhi] = [run(lo), run(hi)];
    for (let i = 0; i < n; i++) {
      const args = [a[i]!, b[i]!, c[i]!];
      expect(ylo[i]).toBe(refRoundedArith("fma", "rm", "float32", args));
      expect(yhi[i]).toBe(refRoundedArith("fma", "rp", "float32", args));
      expect(ylo[i]! <= yhi[i]!).toBe(true);
    }
    // a·b + c = 0 exactly: +0 rounding up, -0 rounding down (IEEE 754 §6.3).
    expect(Object.is(ylo[0], -0) && Object.is(yhi[0], 0)).toBe(true);
  });

  it("16-bit forms stay in 16-bit registers; cvt spells source and destination", () => {
    const fn = T.function(
      "rnd16",
      {
        A: T.Tensor([32], "float16"),
        X: T.Tensor([32], "float64"),
        Y: T.Tensor([32], "float16"),
        Z: T.Tensor([32], "int32"),
        W: T.Tensor([32], "bfloat16"),
        V: T.Tensor([32], "int64"),
      },
      ({ A, X, Y, Z, W, V }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const i = T.let_("i", T.cuda.thread_idx("x"));
        const a = A.get([i]);
        Y.set([i], T.ptx.rnd.fma(a, a, a, "rn"));
        Z.set([i], T.ptx.rnd.cvt(X.get([i]), "int32", "rmi"));
        W.set([i], T.ptx.rnd.cvt(X.get([i]), "bfloat16", "rz"));
        V.set([i], T.ptx.rnd.cvt(a, "int64", "rzi"));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    // From float64 or to a 64-bit integer, cvt gives the most negative integer for NaN on the
    // H200: a setp.nan / selp pair makes it 0, as the simulator and the plain cast give.
    expect(lines(text, /(fma|cvt|setp\.nan|selp)\./)).toMatchInlineSnapshot(`
      "fma.rn.f16 %h4, %h1, %h2, %h3;
      cvt.rmi.s32.f64 %r2, %fd1;
      setp.nan.f64 %p1, %fd1, %fd1;
      selp.b32 %r2, 0, %r2, %p1;
      cvt.rz.bf16.f64 %h5, %fd2;
      cvt.rzi.s64.f16 %rd18, %h6;
      setp.nan.f16 %p2, %h6, %h6;
      selp.b64 %rd18, 0, %rd18, %p2;"
    `);
    assembleLater(text, "sm_90a", "rnd16");
  });

  it("refuses modes and dtypes the ISA lacks", () => {
    const x = (dt: "float16" | "float32" | "float64" | "bfloat16", f: (v: PrimExpr) => unknown) =>
      errorOf(() =>
        T.function("bad", { A: T.Tensor([1], dt) }, ({ A }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
          f(A.get([0]));
        }),
      );
    expect(x("float16", (v) => T.ptx.rnd.add(v, v, "rz")).code).toBe("TX2005");
    expect(x("float32", (v) => T.ptx.rnd.add(v, v, "rq" as "rz")).code).toBe("TX2010");
    expect(x("float32", (v) => T.ptx.rnd.cvt(v, "int32", "rz")).code).toBe("TX2010");
    // Widening is exact: cast.
    expect(x("float32", (v) => T.ptx.rnd.cvt(v, "float64", "rz")).code).toBe("TX2005");
    expect(x("bfloat16", (v) => T.ptx.rnd.cvt(v, "int8", "rni")).code).toBe("TX2005");
  });

  it("bfloat16 add needs sm_90 (TX5006 below)", () => {
    const fn = T.function("bf", { A: T.Tensor([1], "bfloat16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      A.set([0], T.ptx.rnd.add(A.get([0]), A.get([0]), "rn"));
    });
    expect(errorOf(() => compileToPtx(fn, { arch: "sm_80" })).code).toBe("TX5006");
    expect(() => compileToPtx(fn, { arch: "sm_90" })).not.toThrow();
  });
});
