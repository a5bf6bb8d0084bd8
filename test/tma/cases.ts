// The TMA cases run by test/tma/sim.test.ts (simulator against the JS model) and
// test/gpu/tma.test.ts (GPU against the model and the simulator, bit for bit).
import type { DType, PrimFunc, TmaSwizzle } from "@tirx-ts/core";
import { tmaLoad2d, tmaLoad3d, tmaMulticast, tmaStore2d } from "../kernels/tma.js";
import { boxOf } from "./reference.js";

export interface TmaCase {
  readonly name: string;
  readonly fn: PrimFunc;
  readonly inputs: readonly { data: number[]; shape: number[]; dtype: DType }[];
  readonly out: { shape: number[]; dtype: DType };
  /** The output the JS model predicts. */
  expected(): number[];
  /** The simulator cannot run it (no case needs this since clusters run there). */
  readonly gpuOnly?: boolean;
}

const ramp = (n: number, mod: number): number[] =>
  Array.from({ length: n }, (_, i) => (i % mod) + 1);

function load2d(
  name: string,
  rows: number,
  cols: number,
  box: [number, number],
  dtype: "float16" | "float32",
  swizzle: TmaSwizzle = "none",
): TmaCase {
  const a = ramp(rows * cols, 2000);
  const [br, bc] = box;
  const gx = Math.ceil(cols / bc);
  const gy = Math.ceil(rows / br);
  return {
    name: `2-D ${dtype} load ${rows}×${cols}, box ${br}×${bc}${swizzle === "none" ? "" : `, ${swizzle} swizzle`}`,
    fn: tmaLoad2d({ name, rows, cols, box, dtype, swizzle }),
    inputs: [{ data: a, shape: [rows, cols], dtype }],
    out: { shape: [gy * br, gx * bc], dtype },
    expected() {
      // Read through the buffer's swizzle layout, the box reads back plain.
      const out = new Array<number>(gy * br * gx * bc).fill(0);
      for (let by = 0; by < gy; by++)
        for (let bx = 0; bx < gx; bx++) {
          const t = boxOf(a, [rows, cols], [by * br, bx * bc], box);
          for (let i = 0; i < br; i++)
            for (let j = 0; j < bc; j++)
              out[(by * br + i) * gx * bc + bx * bc + j] = t[i * bc + j]!;
        }
      return out;
    },
  };
}

export const TMA_CASES: readonly TmaCase[] = [
  load2d("tma2d_oob", 100, 72, [32, 32], "float16"),
  load2d("tma2d_swz128", 64, 128, [16, 64], "float16", "128B"),
  load2d("tma2d_swz64", 40, 64, [16, 32], "float16", "64B"),
  load2d("tma2d_f32_swz32", 24, 20, [16, 8], "float32", "32B"),
  {
    name: "3-D float32 load 5×20×24, box 2×8×8",
    fn: tmaLoad3d({ name: "tma3d_oob", shape: [5, 20, 24], box: [2, 8, 8] }),
    inputs: [{ data: ramp(5 * 20 * 24, 100000), shape: [5, 20, 24], dtype: "float32" }],
    out: { shape: [6, 24, 24], dtype: "float32" },
    expected() {
      const a = this.inputs[0]!.data;
      const exp = new Array<number>(6 * 24 * 24).fill(0);
      for (let z = 0; z < 3; z++)
        for (let y = 0; y < 3; y++)
          for (let x = 0; x < 3; x++) {
            const t = boxOf(a, [5, 20, 24], [z * 2, y * 8, x * 8], [2, 8, 8]);
            for (let e = 0; e < 128; e++) {
              const [dz, dy, dx] = [Math.floor(e / 64), Math.floor(e / 8) % 8, e % 8];
              exp[(z * 2 + dz) * 576 + (y * 8 + dy) * 24 + x * 8 + dx] = t[e]!;
            }
          }
      return exp;
    },
  },
  {
    name: "2-D float32 store 50×40, box 16×16 (out-of-bounds elements not written)",
    fn: tmaStore2d({ name: "tma_store", rows: 50, cols: 40, box: [16, 16] }),
    inputs: [],
    out: { shape: [50, 40], dtype: "float32" },
    expected: () => Array.from({ length: 50 * 40 }, (_, e) => Math.floor(e / 40) * 1000 + (e % 40)),
  },
  {
    name: "2-CTA cluster multicast of two 16×64 halves",
    fn: tmaMulticast("tma_multicast"),
    inputs: [{ data: ramp(32 * 64, 2000), shape: [32, 64], dtype: "float16" }],
    out: { shape: [64, 64], dtype: "float16" },
    expected() {
      const a = this.inputs[0]!.data;
      return [...a, ...a];
    },
  },
];
