import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { TirxError, mkBuffer, type DType, type DeviceTensor, type Param } from "@tirx-ts/core";
import { ARG_SLOT_BYTES, argLayout, packArgs, ptxParamType } from "../src/index.js";

let nextId = 1000;
const scalar = (name: string, dtype: DType): Param => ({
  kind: "scalar",
  name,
  var: { kind: "Var", name, id: nextId++, dtype },
});
const tensorParam = (name: string, dtype: DType, shape: number[]): Param => ({
  kind: "buffer",
  name,
  buffer: mkBuffer(name, shape, dtype, "global"),
});

const fakeDevice = { kind: "cuda" as const, name: "fake" };
function fakeTensor(dtype: DType, shape: number[], ptr: bigint): DeviceTensor & { ptr: bigint } {
  return {
    device: fakeDevice,
    shape,
    dtype,
    nbytes: 0,
    ptr,
    toArray: () => [],
    toBytes: () => new Uint8Array(),
    dispose: () => {},
  };
}
const pointerOf = (t: DeviceTensor): bigint => (t as DeviceTensor & { ptr: bigint }).ptr;

function pack(params: Param[], args: Parameters<typeof packArgs>[1]): DataView {
  const view = new DataView(new ArrayBuffer(params.length * ARG_SLOT_BYTES));
  new Uint8Array(view.buffer).fill(0xcc);
  packArgs(params, args, view, pointerOf);
  return view;
}

describe("argument layout", () => {
  it("gives tensors a .u64 slot and scalars their own PTX type", () => {
    const params = [
      tensorParam("A", "float16", [128, 32]),
      scalar("flag", "bool"),
      scalar("n", "int32"),
      scalar("m", "uint64"),
      scalar("alpha", "float32"),
      scalar("h", "float16"),
      scalar("b", "bfloat16"),
      scalar("d", "float64"),
      scalar("c", "int8"),
    ];
    expect(argLayout(params).map((s) => `${s.name}:${s.ptxType}:${s.bytes}@${s.offset}`)).toEqual([
      "A:u64:8@0",
      "flag:u8:1@8",
      "n:s32:4@16",
      "m:u64:8@24",
      "alpha:f32:4@32",
      "h:b16:2@40",
      "b:b16:2@48",
      "d:f64:8@56",
      "c:s8:1@64",
    ]);
    expect(ptxParamType(scalar("u", "uint32"))).toBe("u32");
  });
});

describe("argument packing", () => {
  it("writes device pointers and scalar bits little-endian, clearing each slot", () => {
    const params = [
      tensorParam("A", "float32", [4]),
      scalar("flag", "bool"),
      scalar("n", "int32"),
      scalar("m", "uint64"),
      scalar("alpha", "float32"),
      scalar("h", "float16"),
      scalar("b", "bfloat16"),
      scalar("k", "int64"),
    ];
    const v = pack(params, [
      fakeTensor("float32", [4], 0x7f00_1234_5600n),
      true,
      -7,
      0xffff_ffff_ffff_fffen,
      1.5,
      1,
      1,
      -2,
    ]);
    expect(v.getBigUint64(0, true)).toBe(0x7f00_1234_5600n);
    expect(v.getBigUint64(8, true)).toBe(1n);
    expect(v.getInt32(16, true)).toBe(-7);
    expect(v.getUint32(20, true)).toBe(0);
    expect(v.getBigUint64(24, true)).toBe(0xffff_ffff_ffff_fffen);
    expect(v.getFloat32(32, true)).toBe(1.5);
    expect(v.getUint16(40, true)).toBe(0x3c00); // float16 1.0
    expect(v.getUint16(48, true)).toBe(0x3f80); // bfloat16 1.0
    expect(v.getBigInt64(56, true)).toBe(-2n);
  });

  it("accepts bigint for 32-bit and boolean for numeric scalars", () => {
    const params = [scalar("n", "uint32"), scalar("x", "float32"), scalar("f", "bool")];
    const v = pack(params, [4000000000n, true, 0]);
    expect(v.getUint32(0, true)).toBe(4000000000);
    expect(v.getFloat32(8, true)).toBe(1);
    expect(v.getUint8(16)).toBe(0);
  });

  it("refuses a fractional integer scalar (TX5005)", () => {
    const err = (() => {
      try {
        pack([scalar("n", "int32")], [1.5]);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(TirxError);
    expect((err as TirxError).code).toBe("TX5005");
    expect((err as TirxError).text).toBe(
      'argument 0 ("n") is an int32 scalar; 1.5 is not an integer',
    );
    // At the caller's line (this file), not at no place at all.
    expect((err as TirxError).span?.file).toBe(fileURLToPath(import.meta.url));
  });

  it("refuses an integer outside its dtype (TX5005)", () => {
    expect(() => pack([scalar("n", "int32")], [2 ** 31])).toThrow(
      /outside \[-2147483648, 2147483647\]/,
    );
    expect(() => pack([scalar("n", "uint8")], [-1])).toThrow(/TX5005/);
    expect(() => pack([scalar("n", "uint64")], [1n << 64n])).toThrow(/TX5005/);
  });

  it("refuses a scalar where a tensor is expected and vice versa (TX5005)", () => {
    expect(() => pack([tensorParam("A", "int32", [1])], [3])).toThrow(/TX5005.*must be a tensor/);
    expect(() => pack([scalar("n", "int32")], [fakeTensor("int32", [1], 1n)])).toThrow(
      /TX5005.*pass a number/,
    );
  });

  it("lets pointerOf refuse a tensor", () => {
    const refuse = (): bigint => {
      throw new TirxError("TX5004", "elsewhere");
    };
    const view = new DataView(new ArrayBuffer(8));
    expect(() =>
      packArgs([tensorParam("A", "int32", [1])], [fakeTensor("int32", [1], 1n)], view, refuse),
    ).toThrow(/TX5004/);
  });
});
