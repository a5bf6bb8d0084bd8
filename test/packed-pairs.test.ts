// Packed 16-bit float pairs (float16x2, bfloat16x2; core ops/arith/packed.ts): the instructions
// each T.ptx.pack / unpack / x2 call lowers to (inline snapshots, assembled by ptxas at sm_80 and
// sm_90a), the simulator's results on a small kernel against lanes computed here from the IEEE
// definitions, and the refusals (TX1027, TX2005, TX2010, TX5006). The op × dtype matrix over
// random and edge lane codes is in the differential test (test/diff/cases.ts, packed-reference.ts).
import { describe, expect, it } from "vitest";
import { getFloat16, setFloat16 } from "@petamoriken/float16";
import { T, compile, sim, tensor } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { ptxLines as lines } from "./util/ptx-lines.js";

const dev = sim();

const dv = new DataView(new ArrayBuffer(4));
const f16 = (bits: number): number => {
  dv.setUint16(0, bits, true);
  return getFloat16(dv, 0, true);
};
const f16Code = (x: number): number => {
  setFloat16(dv, 0, x, true);
  return dv.getUint16(0, true);
};

/** Y[i] = bits(body(from_bits(A[i]), from_bits(B[i]))), Z[i] = float16 lane 1 of the result. */
function pairKernel(
  n: number,
  body: (a: ReturnType<typeof T.ptx.pack>, b: ReturnType<typeof T.ptx.pack>) => unknown,
) {
  return T.function(
    "pairs",
    {
      A: T.Tensor([n], "uint32"),
      B: T.Tensor([n], "uint32"),
      Y: T.Tensor([n], "uint32"),
    },
    ({ A, B, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: n }) });
      const i = T.let_("i", T.cuda.thread_idx("x"));
      const a = T.let_("a", T.ptx.x2.from_bits(A.get([i]), "float16x2"));
      const b = T.let_("b", T.ptx.x2.from_bits(B.get([i]), "float16x2"));
      Y.set([i], T.ptx.x2.bits(body(a, b) as ReturnType<typeof T.ptx.pack>));
    },
  );
}

describe("float16x2 / bfloat16x2 values", () => {
  it("each op lowers to its packed instruction; pack and unpack move halves with mov.b32", () => {
    const fn = T.function(
      "x2ops",
      {
        H: T.Tensor([32], "float16"),
        F: T.Tensor([32], "float32"),
        Y: T.Tensor([32], "uint32"),
        Z: T.Tensor([32], "float16"),
      },
      ({ H, F, Y, Z }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const i = T.let_("i", T.cuda.thread_idx("x"));
        const p = T.let_("p", T.ptx.pack(H.get([i]), H.get([i.add(1).mod(32)])));
        const c = T.let_("c", T.ptx.x2.cvt(F.get([i]), F.get([0]), "float16x2"));
        const s = T.let_(
          "s",
          T.ptx.x2.fma(p, c, T.ptx.x2.sub(T.ptx.x2.add(p, c), T.ptx.x2.mul(p, p))),
        );
        const m = T.let_("m", T.ptx.x2.neg(T.ptx.x2.abs(T.ptx.x2.max(T.ptx.x2.min(s, p), c))));
        Y.set([i], T.ptx.x2.bits(m));
        Z.set([i], T.ptx.unpack(m, 1));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_80" }).text;
    expect(lines(text, /f16x2|mov\.b32/)).toMatchInlineSnapshot(`
      "mov.b32 %r4, {%h1, %h2};
      cvt.rn.f16x2.f32 %r5, %f1, %f2;
      add.rn.f16x2 %r6, %r4, %r5;
      mul.rn.f16x2 %r7, %r4, %r4;
      sub.rn.f16x2 %r8, %r6, %r7;
      fma.rn.f16x2 %r9, %r4, %r5, %r8;
      min.f16x2 %r10, %r9, %r4;
      max.f16x2 %r11, %r10, %r5;
      abs.f16x2 %r12, %r11;
      neg.f16x2 %r13, %r12;
      mov.b32 %r14, %r13;
      mov.b32 {%h4, %h3}, %r13;"
    `);
    assembleLater(text, "sm_80", "x2ops sm_80");
    assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", "x2ops sm_90a");
  });

  it("bfloat16x2 add/sub/mul need sm_90 (TX5006 below); fma, max, min, neg, abs and cvt do not", () => {
    const make = (f: (a: ReturnType<typeof T.ptx.pack>) => ReturnType<typeof T.ptx.pack>) =>
      T.function("bf", { U: T.Tensor([1], "uint32") }, ({ U }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const a = T.let_("a", T.ptx.x2.from_bits(U.get([0]), "bfloat16x2"));
        U.set([0], T.ptx.x2.bits(f(a)));
      });
    for (const f of [T.ptx.x2.add, T.ptx.x2.sub, T.ptx.x2.mul]) {
      const fn = make((a) => f(a, a));
      expect(errorOf(() => compileToPtx(fn, { arch: "sm_80" })).code).toBe("TX5006");
      assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", "bf16x2 sm_90a");
    }
    const rest = make((a) =>
      T.ptx.x2.neg(T.ptx.x2.abs(T.ptx.x2.max(T.ptx.x2.min(T.ptx.x2.fma(a, a, a), a), a))),
    );
    const text = compileToPtx(rest, { arch: "sm_80" }).text;
    expect(lines(text, /bf16x2/)).toMatchInlineSnapshot(`
      "fma.rn.bf16x2 %r3, %r2, %r2, %r2;
      min.bf16x2 %r4, %r3, %r2;
      max.bf16x2 %r5, %r4, %r2;
      abs.bf16x2 %r6, %r5;
      neg.bf16x2 %r7, %r6;"
    `);
    assembleLater(text, "sm_80", "bf16x2 sm_80");
  });

  it("the simulator computes each lane exactly, rounded once (float16x2 fma, add, max, neg)", () => {
    // Lane codes: a tie for fma (1 + 2^-10 squared minus 1), overflow, subnormals, NaN, -0.
    const codes = [0x3c01, 0x7bff, 0x0001, 0x7e00, 0x8000, 0x3c00, 0xc000, 0x0400];
    const n = codes.length * codes.length;
    const a = Uint32Array.from(
      { length: n },
      (_, k) => (codes[k % 8]! | (codes[(k >> 3) % 8]! << 16)) >>> 0,
    );
    const b = Uint32Array.from(
      { length: n },
      (_, k) => (codes[(k >> 3) % 8]! | (codes[k % 8]! << 16)) >>> 0,
    );
    const run = (fn: ReturnType<typeof pairKernel>): Uint32Array => {
      const y = tensor.zeros([n], "uint32", dev);
      compile(fn, { target: "cuda" })(
        tensor(a, { shape: [n], dtype: "uint32", device: dev }),
        tensor(b, { shape: [n], dtype: "uint32", device: dev }),
        y,
      );
      return y.toArray() as Uint32Array;
    };
    // Each reference lane from float64 arithmetic, rounded to float16 by @petamoriken/float16:
    // a sum or product of two float16 values is exact in float64; a·b + a can round twice, but
    // only where a float64 rounding lands on a float16 tie, which none of these codes reach.
    const lanes = (x: number): [number, number] => [f16(x & 0xffff), f16(x >>> 16)];
    const want = (f: (x: number, y: number) => number) =>
      Array.from(a, (x, k) => {
        const [x0, x1] = lanes(x);
        const [y0, y1] = lanes(b[k]!);
        const code = (v: number): number => (v !== v ? 0x7fff : f16Code(v));
        return (code(f(x0, y0)) | (code(f(x1, y1)) << 16)) >>> 0;
      });
    const fma = run(pairKernel(n, (x, y) => T.ptx.x2.fma(x, y, x)));
    expect(Array.from(fma)).toEqual(want((x, y) => x * y + x));
    const add = run(pairKernel(n, (x, y) => T.ptx.x2.add(x, y)));
    expect(Array.from(add)).toEqual(want((x, y) => x + y));
    // max: a NaN lane gives the other operand (the codes hold -0 but no +0, so no zero pair of
    // opposite signs, which the ISA does not order).
    const max = run(pairKernel(n, (x, y) => T.ptx.x2.max(x, y)));
    expect(Array.from(max)).toEqual(want((x, y) => (x !== x ? y : y !== y ? x : Math.max(x, y))));
    // neg flips each lane's sign bit, NaN included (the simulator keeps the payload).
    const neg = run(pairKernel(n, (x) => T.ptx.x2.neg(x)));
    expect(Array.from(neg)).toEqual(Array.from(a, (x) => (x ^ 0x80008000) >>> 0));
  });

  it("cvt puts its first source in the upper half; unpack takes lane 0 from the low half", () => {
    const fn = T.function(
      "cvt_x2",
      { F: T.Tensor([2], "float32"), Y: T.Tensor([1], "uint32"), Z: T.Tensor([2], "bfloat16") },
      ({ F, Y, Z }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const p = T.let_("p", T.ptx.x2.cvt(F.get([0]), F.get([1]), "bfloat16x2"));
        Y.set([0], T.ptx.x2.bits(p));
        Z.set([0], T.ptx.unpack(p, 0));
        Z.set([1], T.ptx.unpack(p, 1));
      },
    );
    const y = tensor.zeros([1], "uint32", dev);
    const z = tensor.zeros([2], "bfloat16", dev);
    // 1 + 2^-8 is a bfloat16 tie between 1 and 1 + 2^-7: it rounds to even, 1.
    compile(fn, { target: "cuda" })(
      tensor(Float32Array.of(1 + 2 ** -8, -(3 + 2 ** -5)), {
        shape: [2],
        dtype: "float32",
        device: dev,
      }),
      y,
      z,
    );
    // hi = bf16(1 + 2^-8) = 1.0 (0x3f80), lo = bf16(-(3 + 2^-5)) = -3.03125 (0xc042).
    expect((y.toArray() as Uint32Array)[0]!.toString(16)).toBe("3f80c042");
    expect(Array.from(z.toArray() as Float32Array)).toEqual([-3.03125, 1]);
  });

  it("a pair is a kernel scalar parameter: its host value is the 32 bits (.param .u32)", () => {
    const fn = T.function(
      "scalar_pair",
      { s: T.float16x2, Y: T.Tensor([1], "uint32") },
      ({ s, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        Y.set([0], T.ptx.x2.bits(T.ptx.x2.add(s, s)));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    expect(lines(text, /param_0|f16x2/)).toMatchInlineSnapshot(`
      ".param .u32 scalar_pair_param_0,
      ld.param.u32 %r1, [scalar_pair_param_0];
      add.rn.f16x2 %r2, %r1, %r1;"
    `);
    assembleLater(text, "sm_90a", "scalar_pair");
    const y = tensor.zeros([1], "uint32", dev);
    // Lane 0 = -2 (0xc000), lane 1 = 1 (0x3c00): doubled, -4 (0xc400) and 2 (0x4000).
    compile(fn, { target: "cuda" })(0x3c00c000, y);
    expect((y.toArray() as Uint32Array)[0]).toBe(0x4000c400);
  });

  it('a float16 buffer\'s view_as("float16x2") loads and stores two adjacent elements', () => {
    const n = 8;
    const fn = T.function(
      "view_pairs",
      { H: T.Tensor([2 * n], "float16"), Y: T.Tensor([2 * n], "float16") },
      ({ H, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: n }) });
        const i = T.let_("i", T.cuda.thread_idx("x"));
        const p = T.let_("p", H.view_as("float16x2").get([i]));
        Y.view_as("float16x2").set([i], T.ptx.x2.fma(p, p, p));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    expect(lines(text, /ld\.global|st\.global|f16x2/)).toMatchInlineSnapshot(`
      "ld.global.u32 %r2, [%rd5];
      fma.rn.f16x2 %r3, %r2, %r2, %r2;
      st.global.u32 [%rd6], %r3;"
    `);
    assembleLater(text, "sm_90a", "view_pairs");
    const h = Float32Array.from({ length: 2 * n }, (_, k) => k - 7.5);
    const y = tensor.zeros([2 * n], "float16", dev);
    compile(fn, { target: "cuda" })(
      tensor(h, { shape: [2 * n], dtype: "float16", device: dev }),
      y,
    );
    // x·x + x of a float16 with one fraction bit is exact in float16 here (|x| ≤ 8).
    expect(Array.from(y.toArray() as Float32Array)).toEqual(Array.from(h, (x) => x * x + x));
  });

  it("a pair literal is its bits; a Let of one is not an integer to the range checks", () => {
    // T.float16x2(0) in a Let reached the register-array check's integer range and failed an
    // invariant (packages/dsl/test/robustness.test.ts found it).
    const fn = T.function("pair_literal", { Y: T.Tensor([1], "uint32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const x = T.let_("x", T.float16x2(0x3c00bc00));
      Y.set([0], T.ptx.x2.bits(T.ptx.x2.abs(x)));
    });
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    assembleLater(text, "sm_90a", "pair_literal");
    const y = tensor.zeros([1], "uint32", dev);
    compile(fn, { target: "cuda" })(y);
    expect((y.toArray() as Uint32Array)[0]).toBe(0x3c003c00);
  });

  it("refuses tensors and buffers of pairs (TX1027), mixed or wrong dtypes (TX2005, TX2010), a lane other than 0 or 1, operators and casts (TX1007)", () => {
    expect(errorOf(() => T.Tensor([4], "float16x2")).code).toBe("TX1027");
    expect(errorOf(() => tensor.zeros([4], "bfloat16x2", dev)).code).toBe("TX1027");
    const body = (f: (u: ReturnType<typeof T.ptx.pack>, h: unknown) => unknown) =>
      errorOf(() =>
        T.function(
          "bad",
          { U: T.Tensor([4], "uint32"), H: T.Tensor([4], "float16") },
          ({ U, H }) => {
            T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
            f(T.ptx.x2.from_bits(U.get([0]), "float16x2"), H);
          },
        ),
      );
    expect(body(() => T.alloc_shared([4], "bfloat16x2")).code).toBe("TX1027");
    expect(body(() => T.alloc_local([2], "float16x2")).code).toBe("TX1027");
    const bf = (u: ReturnType<typeof T.ptx.pack>) =>
      T.ptx.x2.from_bits(T.ptx.x2.bits(u), "bfloat16x2");
    expect(body((u) => T.ptx.x2.add(u, bf(u))).code).toBe("TX2005");
    // An operand outside a record's operand dtypes is TX2010 (wf/intrinsic), as for every op.
    expect(body((_u, h) => T.ptx.x2.neg((h as { get(i: number[]): never }).get([0]))).code).toBe(
      "TX2010",
    );
    expect(body((u) => T.ptx.pack(u, u)).code).toBe("TX2010");
    expect(body((u) => T.ptx.unpack(u, 2 as 0)).code).toBe("TX2010");
    // No operator, comparison or cast takes a pair: its instructions are the T.ptx.x2 records.
    const pairOps: ((u: ReturnType<typeof T.ptx.pack>) => unknown)[] = [
      (u) => u.add(u),
      (u) => u.lt(u),
      (u) => u.cast("float32"),
      (u) => u.cast("uint32"),
      (u) => T.ptx.x2.bits(u).cast("float16x2"),
    ];
    for (const f of pairOps) expect(body(f).code).toBe("TX1007");
    expect(body((u) => T.ptx.x2.cvt(1, 2, "float16" as "float16x2")).code).toBe("TX2005");
  });
});
