// cuTensorMapEncodeTiled's arguments for a tensor map (no driver needed): dims, byte strides,
// box and element strides in the driver's innermost-first order, and cuda.h's enum values.
import { describe, expect, it } from "vitest";
import { mkBuffer, mkTensorMap, mkVar, TirxError } from "@tirx-ts/core";
import { tensorMapArgs } from "../src/index.js";

describe("tensorMapArgs", () => {
  it("reverses a 3-D float16 tensor's dims, strides and box into innermost-first order", () => {
    const A = mkBuffer("A", [5, 20, 24], "float16", "global");
    const a = tensorMapArgs(
      mkTensorMap({
        buffer: A,
        box: [2, 8, 16],
        elementStrides: [1, 2, 1],
        swizzle: "32B",
        l2Promotion: "128B",
        oobFill: "nan",
      }),
    );
    expect(a.dataType).toBe(6); // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
    expect(a.rank).toBe(3);
    expect([...a.globalDim]).toEqual([24n, 20n, 5n]);
    expect([...a.globalStrides]).toEqual([48n, 960n]); // 24·2, 20·24·2 bytes
    expect([...a.boxDim]).toEqual([16, 8, 2]);
    expect([...a.elementStrides]).toEqual([1, 2, 1]);
    expect([a.interleave, a.swizzle, a.l2Promotion, a.oobFill]).toEqual([0, 1, 2, 1]);
  });

  it("encodes bfloat16 and int8 tensors (int8 as UINT8) and a 1-D tensor's single stride slot", () => {
    const bf = mkBuffer("B", [64, 64], "bfloat16", "global");
    const m = (buffer: typeof bf, box: number[]) =>
      mkTensorMap({
        buffer,
        box,
        elementStrides: box.map(() => 1),
        swizzle: "128B",
        l2Promotion: "none",
        oobFill: "none",
      });
    const b = tensorMapArgs(m(bf, [64, 64]));
    expect([b.dataType, b.swizzle]).toEqual([9, 3]);
    const v = tensorMapArgs(m(mkBuffer("V", [256], "int8", "global"), [64]));
    expect([v.dataType, v.rank, [...v.globalDim], v.globalStrides.length]).toEqual([
      0,
      1,
      [256n],
      1,
    ]);
  });

  it("takes a symbolic tensor's dims and strides from the launch shape; a bad stride is TX4024", () => {
    const A = mkBuffer("A", [mkVar("m", "int32"), mkVar("n", "int32")], "float32", "global");
    const map = mkTensorMap({
      buffer: A,
      box: [16, 32],
      elementStrides: [1, 1],
      swizzle: "none",
      l2Promotion: "none",
      oobFill: "none",
    });
    const a = tensorMapArgs(map, [40, 36]);
    expect([...a.globalDim]).toEqual([36n, 40n]);
    expect([...a.globalStrides]).toEqual([144n]); // 36·4 bytes
    expect([...a.boxDim]).toEqual([32, 16]);
    let err: unknown;
    try {
      tensorMapArgs(map, [8, 6]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TirxError);
    expect((err as TirxError).code).toBe("TX4024");
    expect((err as TirxError).message).toContain("stride of 24 bytes");
  });
});
