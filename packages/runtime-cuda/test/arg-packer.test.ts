// The launch fast path's argument packer writes exactly the bytes of the general `packArgs`, and
// raises the same errors (no GPU needed: the buffer comes from koffi, scalars only).
import fc from "fast-check";
import { expect, test } from "vitest";
import type { DType, KernelArg, Param } from "@tirx-ts/core";
import { ARG_SLOT_BYTES, packArgs } from "../src/args.js";
import { ArgPacker } from "../src/launch.js";
import type { CudaDevice } from "../src/device.js";

const DTYPES: DType[] = ["int32", "uint32", "float32", "float64", "int64", "int8", "bool"];
let id = 9000;
const scalar = (dtype: DType, i: number): Param => ({
  kind: "scalar",
  name: `s${i}`,
  var: { kind: "Var", name: `s${i}`, id: id++, dtype },
});
const noTensors = (): bigint => {
  throw new Error("no tensors here");
};

function outcome(f: () => void, view: DataView): string {
  try {
    f();
    return Array.from(new Uint8Array(view.buffer, view.byteOffset, view.byteLength)).join(",");
  } catch (e) {
    return `throws ${(e as { code?: string }).code ?? String(e)}`;
  }
}

test("scalar packing agrees with packArgs byte for byte (300 random parameter lists)", () => {
  const value = fc.oneof(
    fc.integer(),
    fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
    fc.integer({ min: 0, max: 2 ** 32 - 1 }),
    fc.double(),
    fc.constantFrom(2 ** 32, -(2 ** 31) - 1, 0.5, NaN, -0, Infinity),
    fc.bigInt({ min: -(1n << 40n), max: 1n << 40n }),
    fc.boolean(),
  );
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom(...DTYPES), value), { minLength: 1, maxLength: 6 }),
      (spec) => {
        const params = spec.map(([d], i) => scalar(d, i));
        const args = spec.map(([, v]) => v) as KernelArg[];
        const packer = new ArgPacker(params, {} as CudaDevice);
        try {
          // Stale bytes from an earlier launch must not show through.
          const v = packer.values;
          new Uint8Array(v.buffer, v.byteOffset, v.byteLength).fill(0xff);
          const fast = outcome(() => packer.pack(args), packer.values);
          const view = new DataView(new ArrayBuffer(params.length * ARG_SLOT_BYTES));
          new Uint8Array(view.buffer).fill(0xff);
          const general = outcome(() => packArgs(params, args, view, noTensors), view);
          expect(fast).toBe(general);
        } finally {
          packer.free();
        }
      },
    ),
    { seed: 0x5eed, numRuns: 300 },
  );
});
