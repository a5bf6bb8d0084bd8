// The 8-bit T.vectorized kernels (test/kernels/byte-vectors.ts) on the simulator, against a
// computation on the host, on edge and pseudo-random inputs.
import { describe, expect, it } from "vitest";
import { verify, type DType, type PrimFunc } from "@tirx-ts/core";
import { SimTensor, runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import {
  BYTE_COPY_SHAPES,
  BYTE_DTYPES,
  byteCopy,
  byteCopyLength,
  byteInputs,
  byteRegisters,
  byteRegistersRef,
  byteStaged,
  byteStagedRef,
  byteWiden,
  int32Inputs,
  maskedSelect,
} from "./kernels/byte-vectors.js";

type Input = SimTensor | { data: number[]; dtype: DType };

/** Run `fn` on the simulator with `inputs` then zeroed outputs; the outputs' elements. */
const run = (fn: PrimFunc, inputs: Input[], outs: { n: number; dtype: DType }[]): number[][] => {
  const ins = inputs.map((x) =>
    x instanceof SimTensor ? x : simTensor(x.data, { shape: [x.data.length], dtype: x.dtype }),
  );
  const os = outs.map((o) => simZeros([o.n], o.dtype));
  runSim(verify(fn), [...ins, ...os]);
  return os.map((o) => Array.from(o.toArray() as ArrayLike<number>, Number));
};

/** `x` wrapped to the 8-bit integer `dtype`, as C converts; bool: x ≠ 0. */
const narrow = (x: number, dtype: "int8" | "uint8" | "bool"): number =>
  dtype === "bool" ? (x !== 0 ? 1 : 0) : dtype === "uint8" ? x & 0xff : (x << 24) >> 24;

describe("8-bit vectorized loops on the simulator", () => {
  it("copies at every alignment give the input back, element by element", () => {
    let seed = 1;
    for (const dtype of BYTE_DTYPES) {
      for (const s of BYTE_COPY_SHAPES) {
        const n = byteCopyLength(s);
        const A = byteInputs(dtype, n, seed++);
        const [B] = run(byteCopy(dtype, s), [{ data: A, dtype }], [{ n, dtype }]);
        const want = new Array<number>(n).fill(0);
        for (let t = 0; t < s.rows; t++)
          for (let v = 0; v < s.w; v++)
            want[t * s.stride + s.storeShift + v] = A[t * s.stride + s.loadShift + v]!;
        expect(B, `${dtype} ${JSON.stringify(s)}`).toEqual(want);
      }
    }
  });

  it("bool bytes other than 0 and 1 load as true and store as 1", () => {
    const s = BYTE_COPY_SHAPES[0]!;
    const n = byteCopyLength(s);
    const raw = Uint8Array.from({ length: n }, (_, i) => [0, 1, 2, 0x80, 0xff, 0x10][i % 6]!);
    const [B] = run(byteCopy("bool", s), [new SimTensor(raw, [n], "bool")], [{ n, dtype: "bool" }]);
    expect(B).toEqual(Array.from(raw, (b, i) => (i < s.rows * s.w && b !== 0 ? 1 : 0)));
  });

  it("arithmetic through shared memory wraps like the dtype", () => {
    for (const dtype of BYTE_DTYPES) {
      for (const w of [16, 8, 4, 2]) {
        const n = 32 * w;
        const A = byteInputs(dtype, n, 100 + w);
        const [B] = run(byteStaged(dtype, w), [{ data: A, dtype }], [{ n, dtype }]);
        expect(B, `${dtype} x${w}`).toEqual(A.map((a, i) => byteStagedRef(dtype, a, i)));
      }
    }
  });

  it("loads widen with their sign; int32 narrows to the low byte (bool: ≠ 0)", () => {
    for (const dtype of BYTE_DTYPES) {
      const n = 32 * 16;
      const A = byteInputs(dtype, n, 7);
      const C = int32Inputs(n, 8);
      const [F, B] = run(
        byteWiden(dtype, 16),
        [
          { data: A, dtype },
          { data: C, dtype: "int32" },
        ],
        [
          { n, dtype: "float32" },
          { n, dtype },
        ],
      );
      expect(F, dtype).toEqual(A);
      expect(B, dtype).toEqual(C.map((c) => narrow(c, dtype)));
    }
  });

  it("through a register array, read back in reverse", () => {
    for (const dtype of BYTE_DTYPES) {
      const A = byteInputs(dtype, 32 * 16, 11);
      const [B] = run(byteRegisters(dtype), [{ data: A, dtype }], [{ n: 32 * 16, dtype }]);
      const want = A.map((_, i) => {
        const row = Math.floor(i / 16) * 16;
        return byteRegistersRef(dtype, A.slice(row, row + 16), i % 16);
      });
      expect(B, dtype).toEqual(want);
    }
  });

  it("a bool mask of single bytes beside float32 vectors", () => {
    const M = byteInputs("bool", 32 * 5 + 4, 9);
    const A = Array.from({ length: 128 }, (_, i) => i / 4 - 7);
    const [F] = run(
      maskedSelect(),
      [
        { data: M, dtype: "bool" },
        { data: A, dtype: "float32" },
      ],
      [{ n: 128, dtype: "float32" }],
    );
    expect(F).toEqual(A.map((a, i) => (M[Math.floor(i / 4) * 5 + (i % 4)] ? a : 0)));
  });
});
