// Table-driven: a small kernel per dtype and operator, assembled by ptxas for sm_80 and sm_90.
import { describe, expect, it } from "vitest";
import {
  DTYPES as ALL_DTYPES,
  binary,
  cast,
  compare,
  floatImm,
  ifThenElse,
  intImm,
  isFloat,
  isFloat8,
  isLaneValue,
  logical,
  not,
  type BinaryOp,
  type CompareOp,
  type DType,
  type Expr,
} from "@tirx-ts/core";
import { build } from "./util/assemble.js";

/**
 * The scalar dtypes: the packed pairs (float16x2, bfloat16x2) and the vectors take no operator, comparison, cast
 * or immediate here (TX1007); their ops are records (test/packed-pairs.test.ts).
 */
const DTYPES = ALL_DTYPES.filter((dt) => !isLaneValue(dt));
import { kernel, launch, load, store, tensor, tidx } from "./util/build.js";

const BINARY_OPS: BinaryOp[] = [
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "floordiv",
  "floormod",
  "min",
  "max",
  "bitand",
  "bitor",
  "bitxor",
  "shl",
  "shr",
];
const COMPARE_OPS: CompareOp[] = ["eq", "ne", "lt", "le", "gt", "ge"];
const isHalf = (dt: DType) => dt === "float16" || dt === "bfloat16";

/**
 * Which operators a dtype has: arithmetic on numbers, bit operators on integers and bool, none on
 * float8 (PTX has no float8 arithmetic: TX1007, test/fp8-host.test.ts).
 */
function defined(op: BinaryOp, dt: DType): boolean {
  if (isFloat8(dt)) return false;
  if (dt === "bool") return op === "bitand" || op === "bitor" || op === "bitxor";
  if (isFloat(dt)) return !["bitand", "bitor", "bitxor", "shl", "shr"].includes(op);
  return true;
}

/** out[tid] = f(a[tid], b[tid]) over 32 elements. */
function elementwise(name: string, inDt: DType, outDt: DType, f: (a: Expr, b: Expr) => Expr) {
  const A = tensor("a", [32], inDt);
  const B = tensor("b", [32], inDt);
  const C = tensor("c", [32], outDt);
  return kernel(name, [A, B, C], launch(32), [
    store(C, [tidx], f(load(A, [tidx]), load(B, [tidx]))),
  ]);
}

const cases = DTYPES.flatMap((dt) =>
  BINARY_OPS.filter((op) => defined(op, dt)).map((op) => [dt, op] as const),
);

describe("binary operators", () => {
  it.each(cases)("%s %s", (dt, op) => {
    const mod = build(elementwise(`${op}_${dt}`, dt, dt, (a, b) => binary(op, a, b)));
    if (isHalf(dt) && !op.startsWith("bit")) {
      // 16-bit floats compute in f32 and round back once.
      expect(mod.text).toMatch(dt === "float16" ? /cvt\.rn\.f16\.f32/ : /cvt\.rn\.bf16\.f32/);
    }
  });

  it("picks the PTX instruction and rounding for each family", () => {
    const text = (dt: DType, op: BinaryOp) =>
      build(elementwise(`k`, dt, dt, (a, b) => binary(op, a, b))).text;
    expect(text("float32", "add")).toContain("add.rn.f32");
    expect(text("float64", "div")).toContain("div.rn.f64");
    expect(text("int32", "mul")).toContain("mul.lo.s32");
    expect(text("uint64", "div")).toContain("div.u64");
    expect(text("int32", "mod")).toContain("rem.s32");
    expect(text("int16", "shr")).toMatch(/shr\.s16 %rs\d+, %rs\d+, %r\d+;/);
    expect(text("uint32", "shr")).toContain("shr.u32");
    expect(text("int64", "shl")).toMatch(
      /cvt\.u32\.s64 (%r\d+), %rd\d+;[\s\S]*shl\.b64 %rd\d+, %rd\d+, \1;/,
    );
    expect(text("bool", "bitxor")).toContain("xor.pred");
    // 8-bit results are re-extended from their low byte.
    expect(text("int8", "add")).toMatch(
      /add\.s16 (%rs\d+), %rs\d+, %rs\d+;\n\tcvt\.s16\.s8 \1, \1;/,
    );
    expect(text("uint8", "mul")).toMatch(
      /mul\.lo\.u16 (%rs\d+), %rs\d+, %rs\d+;\n\tcvt\.u16\.u8 \1, \1;/,
    );
    expect(text("int8", "add")).toContain("ld.global.s8");
    expect(text("int8", "add")).toContain("st.global.s8");
    // floor division: signed integers correct the truncated quotient; unsigned ones need not.
    expect(text("int32", "floordiv")).toMatch(/div\.s32[\s\S]*rem\.s32[\s\S]*sub\.s32/);
    expect(text("uint32", "floordiv")).not.toContain("rem.");
    // The float division family is the exact long division of the significands (no div.rn/cvt).
    expect(text("float32", "floordiv")).toMatch(/\$L__rem_loop\d+:[\s\S]*sub\.s32[\s\S]*bra/);
    expect(text("float32", "floordiv")).toContain("cvt.rn.f32.f64");
    expect(text("float64", "floormod")).toMatch(/clz\.b64[\s\S]*add\.rn\.f64/);
    expect(text("float32", "mod")).not.toContain("cvt.rzi");
    const half = text("float16", "add");
    expect(half.match(/cvt\.f32\.f16/g)).toHaveLength(2);
    expect(half).toContain("add.rn.f32");
    expect(half).toContain("ld.global.b16 %h");
    const bf = text("bfloat16", "mul");
    expect(bf).toMatch(
      /cvt\.u32\.u16 (%r\d+), %h\d+;\n\tshl\.b32 \1, \1, 16;\n\tmov\.b32 %f\d+, \1;/,
    );
    expect(bf).toContain("mul.rn.f32");
  });

  it("refuses bit operators on floats with TX1007 (when the expression is built)", () => {
    expect(() =>
      build(elementwise("k", "float32", "float32", (a, b) => binary("bitand", a, b))),
    ).toThrow(/TX1007/);
    expect(() =>
      build(elementwise("k", "float16", "float16", (a, b) => binary("shl", a, b))),
    ).toThrow(/TX1007/);
  });
});

describe("comparisons, logic and select", () => {
  const cmpCases = DTYPES.filter((dt) => !isFloat8(dt)).flatMap((dt) =>
    COMPARE_OPS.map((op) => [dt, op] as const),
  );
  it.each(cmpCases)("%s %s", (dt, op) => {
    const mod = build(elementwise(`${op}_${dt}`, dt, "bool", (a, b) => compare(op, a, b)));
    // bool is a byte in memory: 1 or 0.
    expect(mod.text).toMatch(/selp\.u16 (%rs\d+), 1, 0, %p\d+;\n\tst\.global\.u8 \[%rd\d+\], \1;/);
    if (op === "ne" && isFloat(dt)) expect(mod.text).toContain("setp.neu.f");
  });

  it.each(DTYPES)("if_then_else on %s", (dt) => {
    // float8 compares after a cast to float32 (sm_89+ for the conversion).
    const wide = (x: Expr): Expr => (isFloat8(dt) ? cast("float32", x) : x);
    const mod = build(
      elementwise(`sel_${dt}`, dt, dt, (a, b) => ifThenElse(compare("ne", wide(a), wide(b)), a, b)),
      isFloat8(dt) ? { arch: "sm_90" } : undefined,
    );
    if (dt !== "bool") expect(mod.text).toMatch(/selp\.(b16|b32|b64|f32|f64) /);
    else expect(mod.text).toContain("or.pred");
  });

  it("and, or, not on bools", () => {
    const mod = build(
      elementwise("logic", "bool", "bool", (a, b) =>
        logical("or", logical("and", a, not(b)), not(a)),
      ),
    );
    for (const ins of ["and.pred", "or.pred", "not.pred", "ld.global.u8", "setp.ne.u16"])
      expect(mod.text).toContain(ins);
  });
});

describe("casts", () => {
  // float64 → float8 is refused when the cast is built (TX1007: it would round twice); a
  // conversion into or out of float8 needs sm_89 (PTX 8.1) or sm_90.
  const pairs = DTYPES.flatMap((from) =>
    DTYPES.filter((to) => to !== from && !(from === "float64" && isFloat8(to))).map(
      (to) => [from, to] as const,
    ),
  );
  it.each(pairs)("%s -> %s", (from, to) => {
    build(
      elementwise(`cast_${from}_${to}`, from, to, (a) => cast(to, a)),
      isFloat8(from) || isFloat8(to) ? { arch: "sm_90" } : undefined,
    );
  });

  it("uses the rounding each conversion needs", () => {
    const text = (from: DType, to: DType) =>
      build(elementwise("k", from, to, (a) => cast(to, a))).text;
    expect(text("float32", "float16")).toContain("cvt.rn.f16.f32");
    expect(text("float64", "float32")).toContain("cvt.rn.f32.f64");
    expect(text("float32", "float64")).toMatch(/cvt\.f64\.f32 /);
    expect(text("float16", "float32")).toMatch(/cvt\.f32\.f16 /);
    expect(text("float32", "int32")).toContain("cvt.rzi.s32.f32");
    expect(text("float16", "uint8")).toContain("cvt.rzi.u8.f16");
    expect(text("int32", "float32")).toContain("cvt.rn.f32.s32");
    expect(text("uint64", "float64")).toContain("cvt.rn.f64.u64");
    expect(text("float32", "bfloat16")).toContain("cvt.rn.bf16.f32");
    expect(text("int32", "int8")).toContain("cvt.s8.s32");
    expect(text("uint8", "int64")).toContain("cvt.s64.u8");
    expect(text("int32", "uint32")).toMatch(/mov\.b32 %r\d+, %r\d+;/);
    expect(text("int32", "bool")).toContain("setp.ne.s32");
    expect(text("float32", "bool")).toContain("setp.neu.f32");
    expect(text("bool", "float32")).toMatch(/selp\.f32 %f\d+, 0f3F800000, 0f00000000, %p\d+;/);
    expect(text("bool", "float16")).toMatch(/selp\.b16 %h\d+, 0x3C00, 0x0000/);
    expect(text("bool", "bfloat16")).toMatch(/selp\.b16 %h\d+, 0x3F80, 0x0000/);
    // bfloat16 to anything but float32 goes through float32 (sm_80 has no direct cvt).
    expect(text("bfloat16", "int32")).toMatch(/shl\.b32[\s\S]*cvt\.rzi\.s32\.f32/);
    expect(text("float16", "bfloat16")).toMatch(/cvt\.f32\.f16[\s\S]*cvt\.rn\.bf16\.f32/);
    // float8 through the packed cvt forms; other dtypes through float16 / float32.
    const f8 = (from: DType, to: DType) =>
      build(
        elementwise("k", from, to, (a) => cast(to, a)),
        { arch: "sm_90" },
      ).text;
    expect(f8("float32", "float8_e4m3")).toMatch(
      /cvt\.rn\.satfinite\.e4m3x2\.f32 (%rs\d+), (%f\d+), \2;[\s\S]*st\.global\.b8 \[%rd\d+\], \1;/,
    );
    expect(f8("float16", "float8_e5m2")).toMatch(
      /mov\.b32 (%r\d+), \{(%h\d+), \2\};\n\tcvt\.rn\.satfinite\.e5m2x2\.f16x2 %rs\d+, \1;/,
    );
    expect(f8("float8_e4m3", "float16")).toMatch(
      /ld\.global\.b8 (%rs\d+)[\s\S]*cvt\.rn\.f16x2\.e4m3x2 (%r\d+), \1;\n\tmov\.b32 \{%h\d+, %h\d+\}, \2;/,
    );
    expect(f8("int32", "float8_e5m2")).toMatch(/cvt\.rn\.f32\.s32[\s\S]*e5m2x2\.f32/);
    expect(f8("float8_e5m2", "int8")).toMatch(/e5m2x2[\s\S]*cvt\.f32\.f16[\s\S]*cvt\.rzi\.s8\.f32/);
    expect(() => f8("float64", "float8_e4m3")).toThrow(/TX1007/);
    expect(() =>
      build(
        elementwise("k", "float32", "float8_e4m3", (a) => cast("float8_e4m3", a)),
        { arch: "sm_80" },
      ),
    ).toThrow(/TX5006/);
  });
});

describe("constants", () => {
  // float8 has no arithmetic to take an immediate (its literals: test/fp8-cvt.test.ts).
  it.each(DTYPES.filter((dt) => dt !== "bool" && !isFloat8(dt)))("immediates of %s", (dt) => {
    const c = isFloat(dt) ? floatImm(1.5, dt) : intImm(dt.startsWith("u") ? 200 : -3, dt);
    const mod = build(
      elementwise(`imm_${dt}`, dt, dt, (a) => binary(isFloat(dt) ? "mul" : "add", a, c)),
    );
    if (dt === "float32") expect(mod.text).toContain("0f3FC00000");
    if (dt === "float64") expect(mod.text).toContain("0d3FF8000000000000");
    if (dt === "float16") expect(mod.text).toMatch(/mov\.b16 %h\d+, 0x3E00;/);
    if (dt === "bfloat16") expect(mod.text).toContain("0x3FC0");
    if (dt === "int8") expect(mod.text).toMatch(/add\.s16 %rs\d+, %rs\d+, -3;/);
  });

  it("64-bit constants keep every bit", () => {
    const mod = build(
      elementwise("wide", "uint64", "uint64", (a) =>
        binary("bitxor", a, intImm(0xffff_ffff_ffff_fff0n, "uint64")),
      ),
    );
    expect(mod.text).toContain("xor.b64 %rd");
    expect(mod.text).toContain("0xFFFFFFFFFFFFFFF0");
    const neg = build(
      elementwise("wide", "int64", "int64", (a) => binary("add", a, intImm(-(2n ** 40n), "int64"))),
    );
    expect(neg.text).toContain("-1099511627776");
  });

  it("stores constants and bool constants", () => {
    const C = tensor("c", [4], "bool");
    const F = tensor("f", [4], "float16");
    const mod = build(
      kernel("consts", [C, F], launch(4), [
        store(C, [tidx], intImm(1, "bool")),
        store(F, [tidx], floatImm(-2, "float16")),
      ]),
    );
    expect(mod.text).toMatch(/mov\.pred %p\d+, 1;/);
    expect(mod.text).toContain("0xC000");
    for (const [dt, v] of [
      ["int8", -3],
      ["uint8", 200],
      ["int16", -300],
      ["int64", -5],
      ["float32", 0.5],
      ["float64", -0.25],
    ] as const) {
      const T = tensor("t", [4], dt);
      const value = isFloat(dt) ? floatImm(v, dt) : intImm(v, dt);
      const m = build(kernel(`const_${dt}`, [T], launch(4), [store(T, [tidx], value)]));
      expect(m.text).toMatch(/st\.global\.\w+ \[%rd\d+\], [-\w]+;/);
    }
  });
});
