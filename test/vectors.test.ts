// Vector values (float32x2/x4, int32x2/x4, uint32x2/x4, float16x4/x8, bfloat16x4/x8; core
// ops/arith/vector.ts): the loads and stores of a buffer viewed as vectors (one ld/st.v2/.v4,
// global and shared), the instructions each T.ptx.vec call lowers to (inline snapshots, assembled
// by ptxas), the simulator's results on a small kernel against values computed here, and the
// refusals (TX1027, TX1014, TX1007, TX2005, TX2010, TX5006). The op × dtype matrix over random
// and edge lanes is in the differential test (test/diff/vector-cases.ts).
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { structuralEqual, verify } from "@tirx-ts/core";
import { parseScript, printScriptModuleText } from "@tirx-ts/dsl";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { ptxLines as lines } from "./util/ptx-lines.js";

const dev = sim();

const n = 8;

/** Y[4i..4i+3] = fma(X[4i..], 2, X[4i..]); S[i] = sum of those lanes + lane 3; L = lanes. */
const f32Kernel = T.function(
  "vec_f32",
  {
    X: T.Tensor([n * 4], "float32"),
    Y: T.Tensor([n * 4], "float32"),
    S: T.Tensor([n], "float32"),
    I: T.Tensor([n * 2], "int32"),
  },
  ({ X, Y, S, I }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: n }) });
    const i = T.let_("i", T.cuda.thread_idx("x"));
    const v = T.let_("v", X.view_as("float32x4").get([i]));
    const w = T.let_("w", T.ptx.vec.fma(v, T.ptx.vec.broadcast(T.float32(2), 4), v));
    Y.view_as("float32x4").set([i], w);
    S.set([i], T.ptx.vec.sum(w).add(w.lane(3)));
    const lo = T.ptx.vec.make(w.lane(0), w.lane(1));
    I.view_as("int32x2").set([i], T.ptx.vec.cast(T.ptx.vec.neg(lo), "int32x2"));
  },
);

describe("vector values", () => {
  it("a view as vectors loads and stores one v4/v2 access; lanes compute one instruction each", () => {
    const text = compileToPtx(f32Kernel, { arch: "sm_90" }).text;
    expect(lines(text, /\.v[24]\.|fma|add\.rn|neg\.|cvt\.r|mov\.f32 %f1[3-9]/))
      .toMatchInlineSnapshot(`
      "ld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd9];
      fma.rn.f32 %f9, %f1, %f5, %f1;
      fma.rn.f32 %f10, %f2, %f6, %f2;
      fma.rn.f32 %f11, %f3, %f7, %f3;
      fma.rn.f32 %f12, %f4, %f8, %f4;
      st.global.v4.f32 [%rd10], {%f9, %f10, %f11, %f12};
      add.rn.f32 %f14, %f9, %f10;
      add.rn.f32 %f15, %f11, %f12;
      add.rn.f32 %f13, %f14, %f15;
      mov.f32 %f16, %f12;
      add.rn.f32 %f17, %f13, %f16;
      mov.f32 %f18, %f9;
      mov.f32 %f19, %f10;
      neg.f32 %f22, %f20;
      neg.f32 %f23, %f21;
      cvt.rzi.s32.f32 %r2, %f22;
      cvt.rzi.s32.f32 %r3, %f23;
      st.global.v2.s32 [%rd12], {%r2, %r3};"
    `);
    assembleLater(text, "sm_90", "vec_f32");
  });

  it("the simulator runs it: lanes as float32 values, the vector stores all four", () => {
    const x = Float32Array.from({ length: n * 4 }, (_, k) => k * 0.75 - 5);
    const Y = tensor.zeros([n * 4], "float32", dev);
    const S = tensor.zeros([n], "float32", dev);
    const I = tensor.zeros([n * 2], "int32", dev);
    compile(f32Kernel, { target: "cuda" })(
      tensor(x, { shape: [n * 4], dtype: "float32", device: dev }),
      Y,
      S,
      I,
    );
    // Every value here is a multiple of 0.25 below 2^10: exact in float32 at every step.
    const y = Array.from(x, (v) => v * 2 + v);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(y);
    const s = Array.from({ length: n }, (_, i) => {
      const l = y.slice(4 * i, 4 * i + 4);
      return l[0]! + l[1]! + (l[2]! + l[3]!) + l[3]!;
    });
    expect(Array.from(S.toArray() as Float32Array)).toEqual(s);
    const ints = Array.from({ length: n * 2 }, (_, k) => {
      const i = k >> 1;
      return Math.trunc(-y[4 * i + (k & 1)]!) || 0;
    });
    expect(Array.from(I.toArray() as Int32Array)).toEqual(ints);
  });

  it("float16x8 and bfloat16x8 compute with the pair instructions, one per register", () => {
    const fn = T.function(
      "vec_f16",
      { H: T.Tensor([64], "float16"), B: T.Tensor([64], "bfloat16"), F: T.Tensor([32], "float32") },
      ({ H, B, F }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 8 }) });
        const i = T.let_("i", T.cuda.thread_idx("x"));
        const h = T.let_("h", H.view_as("float16x8").get([i]));
        H.view_as("float16x8").set([i], T.ptx.vec.max(T.ptx.vec.mul(h, h), T.ptx.vec.neg(h)));
        const b = T.let_("b", B.view_as("bfloat16x4").get([i]));
        F.view_as("float32x4").set([i], T.ptx.vec.cast(T.ptx.vec.add(b, b), "float32x4"));
        const f = T.let_("f", F.view_as("float32x4").get([i.add(8).mod(8)]));
        B.view_as("bfloat16x4").set([i.add(8)], T.ptx.vec.cast(f, "bfloat16x4"));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_90" }).text;
    expect(lines(text, /\.v[24]\.|x2|shl|and\.b32/)).toMatchInlineSnapshot(`
      "ld.global.v4.b32 {%r2, %r3, %r4, %r5}, [%rd7];
      mul.rn.f16x2 %r6, %r2, %r2;
      mul.rn.f16x2 %r7, %r3, %r3;
      mul.rn.f16x2 %r8, %r4, %r4;
      mul.rn.f16x2 %r9, %r5, %r5;
      neg.f16x2 %r10, %r2;
      neg.f16x2 %r11, %r3;
      neg.f16x2 %r12, %r4;
      neg.f16x2 %r13, %r5;
      max.f16x2 %r14, %r6, %r10;
      max.f16x2 %r15, %r7, %r11;
      max.f16x2 %r16, %r8, %r12;
      max.f16x2 %r17, %r9, %r13;
      st.global.v4.b32 [%rd7], {%r14, %r15, %r16, %r17};
      ld.global.v2.b32 {%r18, %r19}, [%rd8];
      add.rn.bf16x2 %r20, %r18, %r18;
      add.rn.bf16x2 %r21, %r19, %r19;
      shl.b32 %f1, %r20, 16;
      and.b32 %f2, %r20, -65536;
      shl.b32 %f3, %r21, 16;
      and.b32 %f4, %r21, -65536;
      st.global.v4.f32 [%rd9], {%f1, %f2, %f3, %f4};
      and.b32 %r23, %r22, 7;
      ld.global.v4.f32 {%f5, %f6, %f7, %f8}, [%rd10];
      cvt.rn.bf16x2.f32 %r24, %f6, %f5;
      cvt.rn.bf16x2.f32 %r25, %f8, %f7;
      st.global.v2.b32 [%rd8+64], {%r24, %r25};"
    `);
    assembleLater(text, "sm_90", "vec_f16");
    // bfloat16 lanes add with add.rn.bf16x2: sm_90 (TX5006 below), as the pair op.
    expect(errorOf(() => compileToPtx(fn, { arch: "sm_80" })).code).toBe("TX5006");
  });

  it("shared memory: ld.shared.v4 / st.shared.v2 at an offset of whole vectors", () => {
    const fn = T.function("vec_smem", { A: T.Tensor([64], "uint32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 16 }) });
      const s = T.alloc_shared([64], "uint32");
      const i = T.let_("i", T.cuda.thread_idx("x"));
      s.view_as("uint32x4").set([i], A.view_as("uint32x4").get([i]));
      T.cuda.cta_sync();
      const v = T.let_("v", s.view_as("uint32x4").get([i.add(1).mod(16)]));
      A.view_as("uint32x2").set([i.mul(2)], T.ptx.vec.make(v.lane(1), v.lane(0)));
      A.view_as("uint32x2").set(
        [i.mul(2).add(1)],
        T.ptx.vec.make(T.ptx.vec.reduce_max(v), T.ptx.vec.reduce_min(v)),
      );
    });
    const text = compileToPtx(fn, { arch: "sm_90" }).text;
    expect(lines(text, /\.v[24]\./)).toMatchInlineSnapshot(`
      "ld.global.v4.u32 {%r3, %r4, %r5, %r6}, [%rd3];
      st.shared.v4.u32 [%r7], {%r3, %r4, %r5, %r6};
      ld.shared.v4.u32 {%r11, %r12, %r13, %r14}, [%r10];
      st.global.v2.u32 [%rd3], {%r17, %r18};
      st.global.v2.u32 [%rd3+8], {%r25, %r26};"
    `);
    assembleLater(text, "sm_90", "vec_smem");
    const a = Uint32Array.from({ length: 64 }, (_, k) => (k * 2654435761) >>> 0);
    const A = tensor(a, { shape: [64], dtype: "uint32", device: dev });
    compile(fn, { target: "cuda" })(A);
    const want = Array.from({ length: 64 }, (_, k) => {
      const i = k >> 2;
      const v = a.slice(((i + 1) % 16) * 4, ((i + 1) % 16) * 4 + 4);
      return [v[1]!, v[0]!, Math.max(...v), Math.min(...v)][k & 3]!;
    });
    expect(Array.from(A.toArray() as Uint32Array)).toEqual(want);
  });

  it("pairs are the one-register case: T.ptx.vec on float16x2 is the pair's own instruction", () => {
    const fn = T.function("vec_pair", { H: T.Tensor([64], "float16") }, ({ H }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const i = T.let_("i", T.cuda.thread_idx("x"));
      const p = T.let_("p", H.view_as("float16x2").get([i]));
      const q = T.let_("q", T.ptx.vec.fma(p, p, T.ptx.vec.broadcast(p.lane(1), 2)));
      H.view_as("float16x2").set([i], T.ptx.vec.make(q.lane(1), q.lane(0)));
    });
    const text = compileToPtx(fn, { arch: "sm_80" }).text;
    expect(lines(text, /f16x2|mov\.b32|\.u32/)).toMatchInlineSnapshot(`
      "mov.u32 %r1, %tid.x;
      ld.global.u32 %r2, [%rd3];
      mov.b32 {%h2, %h1}, %r2;
      mov.b32 {%h4, %h3}, %r2;
      mov.b32 %r3, {%h1, %h3};
      fma.rn.f16x2 %r4, %r2, %r2, %r3;
      mov.b32 {%h6, %h5}, %r4;
      mov.b32 {%h7, %h8}, %r4;
      mov.b32 %r5, {%h5, %h7};
      st.global.u32 [%rd3], %r5;"
    `);
    assembleLater(text, "sm_80", "vec_pair");
  });

  it("refuses vectors as storage, parameters, operators, casts and selects", () => {
    expect(errorOf(() => T.Tensor([4], "float32x4")).code).toBe("TX1027");
    // No vector literal: PTX has no vector immediate.
    const lit = (): unknown =>
      T.function("lit", { X: T.Tensor([8], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        X.view_as("float32x4").set([0], T.float32x4(1));
      });
    expect(errorOf(lit).code).toBe("TX1007");
    // 256-bit vectors (ld.global.v8.b32) need sm_100 and PTX 8.8: no float32x8 dtype.
    const x8 = (): unknown =>
      T.function("x8", { X: T.Tensor([8], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        X.view_as("float32x8" as never);
      });
    expect(errorOf(x8).code).toBe("TX1003");
    const param = T.function("p", { v: T.Scalar("float32x4") }, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
    });
    expect(errorOf(() => verify(param)).code).toBe("TX1027");
    const body = (f: (v: ReturnType<typeof T.ptx.vec.make>) => unknown) =>
      T.function("b", { X: T.Tensor([8], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const v = T.let_("v", X.view_as("float32x4").get([0]));
        f(v);
      });
    const codes = [
      (v: ReturnType<typeof T.ptx.vec.make>) => v.add(v),
      (v: ReturnType<typeof T.ptx.vec.make>) => v.cast("float16x4"),
      (v: ReturnType<typeof T.ptx.vec.make>) => T.if_then_else(v.lane(0).gt(0), v, v),
      (v: ReturnType<typeof T.ptx.vec.make>) => T.ptx.vec.add(v, T.ptx.vec.broadcast(1, 2)),
      (v: ReturnType<typeof T.ptx.vec.make>) => v.lane(4),
      (v: ReturnType<typeof T.ptx.vec.make>) => T.ptx.vec.cast(v, "float16x8"),
      (v: ReturnType<typeof T.ptx.vec.make>) => T.ptx.vec.broadcast(v.lane(0), 16),
    ].map((f) => errorOf(() => body(f)).code);
    expect(codes).toEqual(["TX1007", "TX1007", "TX1007", "TX2005", "TX2010", "TX2005", "TX2010"]);
  });

  it("alignment: a vector view starts on a whole vector; a vector access needs the buffer's alignment", () => {
    const at = (off: number | "sym", align?: number) =>
      T.function("al", { X: T.Tensor([64], "float32"), k: T.int32 }, ({ X, k }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const s = T.alloc_shared([64], "float32", align ? { align } : {});
        s.set([0], X.get([0]));
        const start = off === "sym" ? k.mul(4).add(2) : off;
        const v = s.as_strided({ offset: start, shape: [56], strides: [1] }).view_as("float32x4");
        X.view_as("float32x4").set([0], v.get([0]));
      });
    // Byte 8 is no multiple of 16 (PTX ISA, Vectors: an access is aligned to its size).
    expect(errorOf(() => at(2)).code).toBe("TX1014");
    // 4k + 2 elements: provably a multiple of 8 bytes only.
    expect(errorOf(() => at("sym")).code).toBe("TX1014");
    expect(() => verify(at(4))).not.toThrow();
    // A shared buffer aligned to 8 bytes cannot serve a 16-byte access.
    expect(errorOf(() => verify(at(4, 8))).code).toBe("TX1014");
  });

  it("a register array of the lane dtype takes vector loads and stores in its elements' registers", () => {
    const fn = T.function(
      "vec_regs",
      { X: T.Tensor([64], "float32"), Y: T.Tensor([64], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 8 }) });
        const i = T.let_("i", T.cuda.thread_idx("x"));
        const r = T.alloc_local([8], "float32");
        r.view_as("float32x4").set([0], X.view_as("float32x4").get([i.mul(2)]));
        r.view_as("float32x4").set([1], X.view_as("float32x4").get([i.mul(2).add(1)]));
        for (const k of [0, 5]) r.set([k], r.get([k]).mul(2));
        Y.view_as("float32x4").set([i.mul(2)], r.view_as("float32x4").get([1]));
        Y.view_as("float32x4").set([i.mul(2).add(1)], r.view_as("float32x4").get([0]));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_90" }).text;
    // No .local array: the vectors name the elements' registers %f1..%f8.
    expect(text).not.toMatch(/\.local/);
    expect(lines(text, /\.v4\.|mov\.f32 %f[1-8],|mul/)).toMatchInlineSnapshot(`
      "ld.global.v4.f32 {%f9, %f10, %f11, %f12}, [%rd5];
      mov.f32 %f1, %f9;
      mov.f32 %f2, %f10;
      mov.f32 %f3, %f11;
      mov.f32 %f4, %f12;
      ld.global.v4.f32 {%f13, %f14, %f15, %f16}, [%rd5+16];
      mov.f32 %f5, %f13;
      mov.f32 %f6, %f14;
      mov.f32 %f7, %f15;
      mov.f32 %f8, %f16;
      mul.rn.f32 %f1, %f1, 0f40000000;
      mul.rn.f32 %f6, %f6, 0f40000000;
      mov.v4.f32 {%f17, %f18, %f19, %f20}, {%f5, %f6, %f7, %f8};
      st.global.v4.f32 [%rd6], {%f17, %f18, %f19, %f20};
      mov.v4.f32 {%f21, %f22, %f23, %f24}, {%f1, %f2, %f3, %f4};
      st.global.v4.f32 [%rd6+16], {%f21, %f22, %f23, %f24};"
    `);
    assembleLater(text, "sm_90", "vec_regs");
    const x = Float32Array.from({ length: 64 }, (_, k) => k);
    const Y = tensor.zeros([64], "float32", dev);
    compile(fn, { target: "cuda" })(tensor(x, { shape: [64], dtype: "float32", device: dev }), Y);
    const want = Array.from({ length: 64 }, (_, k) => {
      const e = (k & 7) ^ 4; // the halves swapped
      return ((k & ~7) + e) * (e === 0 || e === 5 ? 2 : 1);
    });
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(want);
    // A vector past the array's elements is named at compile time: TX2006.
    const past = T.function("vec_past", { X: T.Tensor([64], "float32") }, ({ X }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const r = T.alloc_local([6], "float32");
      for (const k of T.unroll(2))
        r.view_as("float32x2").set([k.add(2)], X.view_as("float32x2").get([k]));
    });
    const e = errorOf(() => verify(past));
    expect(e.code).toBe("TX2006");
    expect(e.message).toContain(
      'access to "r" as float32x2 at vectors 2..3, but it holds 3 whole vectors of float32x2 (shape [6] of float32)',
    );
  });

  it("prints as script mode and parses back to the same function", () => {
    const text = printScriptModuleText([f32Kernel]);
    expect(text).toContain('X.flat("float32x4")');
    const back = parseScript(text, "vectors-roundtrip.ts");
    expect(structuralEqual(f32Kernel, back[0]!)).toBe(true);
  });
});
