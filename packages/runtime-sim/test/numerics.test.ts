import { describe, expect, it } from "vitest";
import { f16round } from "@petamoriken/float16";
import { float32ToBfloat16Bits, verify, type DType, type HostArray } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";

/**
 * One thread loads `inputs` (of `inDt`) and stores `n` results of `body` (of `outDt`):
 * x(i) is input i as an expression.
 */
function calc(
  inDt: DType,
  inputs: readonly (number | bigint)[],
  outDt: DType,
  n: number,
  body: (x: (i: number) => PrimExpr) => PrimExpr[],
): HostArray {
  const k = T.function(
    "calc",
    { A: T.Tensor([inputs.length], inDt), B: T.Tensor([n], outDt) },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      body((i) => A.get([i])).forEach((e, j) => B.set([j], e));
    },
  );
  const b = simZeros([n], outDt);
  runSim(verify(k), [
    simTensor(inputs as ArrayLike<number>, { shape: [inputs.length], dtype: inDt }),
    b,
  ]);
  return b.toArray();
}

describe("float arithmetic rounds like the GPU", () => {
  it("float32 rounds after every operation (Math.fround)", () => {
    const out = calc("float32", [0.1, 0.2, 16777216, 1, 3], "float32", 4, (x) => [
      x(0).add(x(1)),
      x(2).add(x(3)),
      x(3).div(x(4)),
      x(0).mul(x(1)).sub(x(3)),
    ]);
    const f = Math.fround;
    expect(Array.from(out as Float32Array)).toEqual([
      f(f(0.1) + f(0.2)),
      16777216,
      f(1 / 3),
      f(f(f(0.1) * f(0.2)) - 1),
    ]);
    expect(out[0]).not.toBe(0.1 + 0.2);
  });

  it("float16 rounds to nearest even and overflows to infinity", () => {
    const out = calc("float16", [2048, 1, 3, 65504, 16, 15, 0.1], "float16", 6, (x) => [
      x(0).add(x(1)), // 2049 is a tie: even 2048
      x(0).add(x(2)), // 2051 is a tie: even 2052
      x(3).add(x(4)), // 65520 is a tie: rounds up to 65536 = inf
      x(3).add(x(5)), // 65519 → 65504
      x(6).mul(x(6)),
      x(6).div(x(2)),
    ]);
    const h = f16round;
    expect(Array.from(out as Float32Array)).toEqual([
      2048,
      2052,
      Infinity,
      65504,
      h(h(0.1) * h(0.1)),
      h(h(0.1) / 3),
    ]);
  });

  it("bfloat16 arithmetic and casts round to nearest even from the exact value", () => {
    const out = calc(
      "float64",
      [1 + 2 ** -8 + 2 ** -30, 1 + 2 ** -8, 3.14159, 1 + 2 ** -7, 2 ** -8],
      "bfloat16",
      4,
      (x) => [
        x(0).cast("bfloat16"), // above the tie only by 2^-30, which float32 would drop: rounds up
        x(1).cast("bfloat16"), // a tie: even (1)
        x(2).cast("bfloat16"),
        x(3).cast("bfloat16").add(x(4).cast("bfloat16")), // 1 + 3·2^-8 is a tie: even 1 + 2^-6
      ],
    );
    expect(Array.from(out as Float32Array)).toEqual([1 + 2 ** -7, 1, 3.140625, 1 + 2 ** -6]);
  });

  it("float16 casts from float64 round once (no double rounding through float32)", () => {
    const out = calc(
      "float64",
      [1 + 2 ** -11 + 2 ** -40, 65519.99, 1e-8, -1e-9],
      "float16",
      4,
      (x) => [0, 1, 2, 3].map((i) => x(i).cast("float16")),
    );
    const v = Array.from(out as Float32Array);
    expect(v.slice(0, 3)).toEqual([1 + 2 ** -10, 65504, 2 ** -24 * Math.round(1e-8 / 2 ** -24)]);
    expect(Object.is(v[3], -0)).toBe(true);
  });

  it("stores float16/bfloat16 with the bits core's host encoding gives", () => {
    const xs = [0.1, -2.5e-5, 1234.567, 6.1e-5, -0, 70000, 3.3e38];
    const h = calc("float32", xs, "float16", xs.length, (x) =>
      xs.map((_, i) => x(i).cast("float16")),
    );
    expect(Array.from(h as Float32Array)).toEqual(xs.map((v) => f16round(Math.fround(v))));
    const b = calc("float32", xs, "bfloat16", xs.length, (x) =>
      xs.map((_, i) => x(i).cast("bfloat16")),
    );
    const dv = new DataView(new ArrayBuffer(4));
    const expected = xs.map((v) => {
      dv.setUint32(0, float32ToBfloat16Bits(Math.fround(v)) << 16);
      return dv.getFloat32(0);
    });
    expect(Array.from(b as Float32Array)).toEqual(expected);
  });
});

describe("casts behave like PTX cvt", () => {
  it("float → int truncates toward zero and saturates; NaN → 0", () => {
    const xs = [3.7, -3.7, 1e10, -1e10, NaN, 300.5, -5];
    const i32 = calc("float32", xs, "int32", 7, (x) => xs.map((_, i) => x(i).cast("int32")));
    expect(Array.from(i32 as Int32Array)).toEqual([3, -3, 2147483647, -2147483648, 0, 300, -5]);
    const u8 = calc("float32", xs, "uint8", 7, (x) => xs.map((_, i) => x(i).cast("uint8")));
    expect(Array.from(u8 as Uint8Array)).toEqual([3, 0, 255, 0, 0, 255, 0]);
    const i64 = calc("float64", [-1e30, 1e30, -7.9], "int64", 3, (x) =>
      [0, 1, 2].map((i) => x(i).cast("int64")),
    );
    expect(Array.from(i64 as BigInt64Array)).toEqual([-(2n ** 63n), 2n ** 63n - 1n, -7n]);
  });

  it("int → float rounds to nearest even, also from 64-bit integers", () => {
    const f = calc("int32", [16777217, 16777219, 65519, 65520], "float32", 2, (x) => [
      x(0).cast("float32"),
      x(1).cast("float32"),
    ]);
    expect(Array.from(f as Float32Array)).toEqual([16777216, 16777220]);
    const h = calc("int32", [65519, 65520, -65536], "float16", 3, (x) =>
      [0, 1, 2].map((i) => x(i).cast("float16")),
    );
    expect(Array.from(h as Float32Array)).toEqual([65504, Infinity, -Infinity]);
    // 2^60 + 2^36 + 1: float32's tie at 2^36 is broken upward by the last bit (Number() would lose it).
    const g = calc("int64", [2n ** 60n + 2n ** 36n + 1n], "float32", 1, (x) => [
      x(0).cast("float32"),
    ]);
    expect(Array.from(g as Float32Array)).toEqual([2 ** 60 + 2 ** 37]);
  });

  it("int → int keeps the low bits after sign- or zero-extension", () => {
    const out = calc("int32", [-1, 300, -129], "int64", 3, (x) => [
      x(0).cast("int64"),
      x(1).cast("int8").cast("int64"),
      x(2).cast("uint8").cast("int64"),
    ]);
    expect(Array.from(out as BigInt64Array)).toEqual([-1n, 44n, 127n]);
    const u = calc("int32", [-1], "uint64", 1, (x) => [x(0).cast("uint64")]);
    expect(Array.from(u as BigUint64Array)).toEqual([2n ** 64n - 1n]);
  });
});

describe("integers wrap at their width", () => {
  it("int32, int8, int16, uint8, uint32", () => {
    expect(
      Array.from(
        calc("int32", [2147483647, 65536], "int32", 2, (x) => [
          x(0).add(1),
          x(1).mul(x(1)),
        ]) as Int32Array,
      ),
    ).toEqual([-2147483648, 0]);
    expect(
      Array.from(
        calc("int8", [127, -128], "int8", 3, (x) => [
          x(0).add(1),
          x(1).sub(1),
          x(0).mul(x(0)),
        ]) as Int8Array,
      ),
    ).toEqual([-128, 127, 1]);
    expect(
      Array.from(calc("int16", [300], "int16", 1, (x) => [x(0).mul(x(0))]) as Int16Array),
    ).toEqual([90000 - 65536]);
    expect(
      Array.from(
        calc("uint8", [0, 200], "uint8", 2, (x) => [x(0).sub(1), x(1).add(x(1))]) as Uint8Array,
      ),
    ).toEqual([255, 144]);
    expect(
      Array.from(
        calc("uint32", [0, 4000000000], "uint32", 3, (x) => [
          x(0).sub(1),
          x(1).add(x(1)),
          x(1).mul(x(1)),
        ]) as Uint32Array,
      ),
    ).toEqual([
      4294967295,
      Number(8000000000n % 2n ** 32n),
      Number((4000000000n * 4000000000n) % 2n ** 32n),
    ]);
  });

  it("int64 and uint64 (BigInt)", () => {
    const i = calc("int64", [2n ** 63n - 1n, 3037000500n], "int64", 2, (x) => [
      x(0).add(1n),
      x(1).mul(x(1)),
    ]);
    expect(Array.from(i as BigInt64Array)).toEqual([
      -(2n ** 63n),
      BigInt.asIntN(64, 3037000500n * 3037000500n),
    ]);
    const u = calc("uint64", [0n, 2n ** 64n - 1n], "uint64", 2, (x) => [
      x(0).sub(1n),
      x(1).add(x(1)),
    ]);
    expect(Array.from(u as BigUint64Array)).toEqual([2n ** 64n - 1n, 2n ** 64n - 2n]);
  });

  it("div/mod truncate, floordiv/floormod floor", () => {
    const r = calc("int32", [-7, 2, 7, -2], "int32", 8, (x) => [
      x(0).div(x(1)),
      x(0).mod(x(1)),
      x(0).floordiv(x(1)),
      x(0).floormod(x(1)),
      x(2).div(x(3)),
      x(2).mod(x(3)),
      x(2).floordiv(x(3)),
      x(2).floormod(x(3)),
    ]);
    expect(Array.from(r as Int32Array)).toEqual([-3, -1, -4, 1, -3, 1, -4, -1]);
    const b = calc("int64", [-7n, 2n], "int64", 4, (x) => [
      x(0).div(x(1)),
      x(0).mod(x(1)),
      x(0).floordiv(x(1)),
      x(0).floormod(x(1)),
    ]);
    expect(Array.from(b as BigInt64Array)).toEqual([-3n, -1n, -4n, 1n]);
  });

  it("shifts and bitwise operators", () => {
    const r = calc("int32", [-16, 1, 40, 0x0f0f], "int32", 6, (x) => [
      x(0).shr(2),
      x(1).shl(31),
      x(1).shl(x(2)),
      x(0).shr(x(2)),
      x(3).bitand(0xff),
      x(3).bitxor(-1),
    ]);
    expect(Array.from(r as Int32Array)).toEqual([-4, -2147483648, 0, -1, 0x0f, ~0x0f0f]);
    const u = calc("uint32", [0x80000000], "uint32", 1, (x) => [x(0).shr(4)]);
    expect(Array.from(u as Uint32Array)).toEqual([0x08000000]);
  });
});
