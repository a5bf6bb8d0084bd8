// The rules of cuTensorMapEncodeTiled as cases on the driver's own arguments, for
// test/tma/contract.test.ts (core's tensorMapViolation) and test/gpu/tensor-map-contract.test.ts
// (the driver itself against it).
import type { DiagnosticCode, TensorMapEncoding } from "@tirx-ts/core";

/** A valid encoding: float32 [64, 32] (innermost first: dims 32, 64), box 8 × 16, 64B swizzle. */
export const BASE: TensorMapEncoding = {
  dataType: 7, // FLOAT32
  rank: 2,
  globalAddress: 0x1000n,
  globalDim: [32, 64],
  globalStrides: [32 * 4],
  boxDim: [16, 8],
  elementStrides: [1, 1],
  interleave: 0,
  swizzle: 2, // 64B
  l2Promotion: 0,
  oobFill: 0,
};

/** One broken rule: what, the change to BASE, the code, a value the message names. */
export interface ContractCase {
  readonly what: string;
  readonly over: Partial<TensorMapEncoding>;
  readonly code: DiagnosticCode;
  readonly named: string;
  /**
   * The check may be stricter than the driver here (the driver may take it): an inner element
   * stride other than 1 (ignored by TMA), the CUDA 12.8 packed data types and 128B_ATOM
   * swizzles (not written by tirx-ts), a stride smaller than the dims inside it (the driver's
   * padding formula; whether it checks is not documented), and 32B interleave with a swizzle
   * other than 32B (the driver's documentation forbids it; the CUDA 13.0 driver on an H200
   * encodes 64B, test/gpu/tensor-map-contract.test.ts).
   */
  readonly stricter?: boolean;
}

const TABLE: [string, Partial<TensorMapEncoding>, DiagnosticCode, string][] = [
  ["an unknown data type", { dataType: 99 }, "TX4024", "tensorDataType 99"],
  [
    "a packed data type (13: 16U4_ALIGN8B, CUDA 12.8)",
    { dataType: 13 },
    "TX4024",
    "tensorDataType 13",
  ],
  ["rank 0", { rank: 0 }, "TX4024", "tensorRank is 0"],
  ["rank 6", { rank: 6 }, "TX4024", "tensorRank is 6"],
  ["rank 2 with interleave", { interleave: 1 }, "TX4024", "at least 3 with interleave"],
  ["an address 8 bytes past 16", { globalAddress: 0x1008n }, "TX4027", "0x1008"],
  [
    "an address 16- but not 32-byte aligned with 32B interleave",
    {
      rank: 3,
      interleave: 2,
      swizzle: 1,
      globalAddress: 0x1010n,
      globalDim: [32, 64, 2],
      globalStrides: [128, 128 * 64],
      boxDim: [8, 8, 1],
      elementStrides: [1, 1, 1],
    },
    "TX4027",
    "not 32-byte aligned",
  ],
  ["a zero dim", { globalDim: [32, 0] }, "TX4024", "globalDim of dim 1 (tensor axis 0) is 0"],
  ["a dim above 2^32", { globalDim: [32, 2 ** 32 + 1] }, "TX4024", `is ${2 ** 32 + 1}`],
  ["a stride of 136 bytes", { globalStrides: [136], globalDim: [34, 64] }, "TX4024", "136 bytes"],
  ["a stride of 2^40", { globalStrides: [2n ** 40n] }, "TX4024", `${2n ** 40n} bytes`],
  [
    "a stride below the row it holds",
    { globalStrides: [64] },
    "TX4024",
    `less than the ${32 * 4} bytes`,
  ],
  [
    "a 16- but not 32-byte stride with 32B interleave",
    {
      rank: 3,
      interleave: 2,
      swizzle: 1,
      globalDim: [4, 64, 2],
      globalStrides: [16, 16 * 64],
      boxDim: [4, 8, 1],
      elementStrides: [1, 1, 1],
    },
    "TX4024",
    "multiples of 32 bytes",
  ],
  ["a box of 0", { boxDim: [16, 0] }, "TX4017", "boxDim of dim 1 (tensor axis 0) is 0"],
  ["a box of 257", { boxDim: [16, 257] }, "TX4017", "is 257"],
  ["an element stride of 9", { elementStrides: [1, 9] }, "TX4017", "is 9"],
  ["an element stride of 0", { elementStrides: [1, 0] }, "TX4017", "is 0"],
  ["an inner element stride of 2", { elementStrides: [2, 1] }, "TX4017", "is 2"],
  ["an inner box of 12 bytes", { boxDim: [3, 8], swizzle: 0 }, "TX4017", `${3 * 4} bytes`],
  ["an inner box above the 64B span", { boxDim: [32, 8] }, "TX4017", `got ${32 * 4} bytes`],
  ["interleave 3", { interleave: 3 }, "TX4028", "interleave 3"],
  ["swizzle 4 (128B_ATOM_32B, not written here)", { swizzle: 4 }, "TX4028", "swizzle 4"],
  [
    "32B interleave with 64B swizzle",
    {
      rank: 3,
      interleave: 2,
      globalDim: [32, 64, 2],
      globalStrides: [128, 128 * 64],
      boxDim: [8, 8, 1],
      elementStrides: [1, 1, 1],
    },
    "TX4028",
    "got 64B",
  ],
  ["L2 promotion 4", { l2Promotion: 4 }, "TX4028", "l2Promotion 4"],
  ["oob fill 2", { oobFill: 2 }, "TX4028", "oobFill 2"],
  ["NaN fill of INT32", { dataType: 3, oobFill: 1 }, "TX4029", "got INT32"],
  ["NaN fill of UINT8 (float8 moves as UINT8)", { dataType: 0, oobFill: 1 }, "TX4029", "UINT8"],
];

const STRICTER = new Set([
  "a packed data type (13: 16U4_ALIGN8B, CUDA 12.8)",
  "a stride below the row it holds",

  "an inner element stride of 2",
  "swizzle 4 (128B_ATOM_32B, not written here)",
  "32B interleave with 64B swizzle",
]);

export const CONTRACT_CASES: readonly ContractCase[] = TABLE.map(([what, over, code, named]) => ({
  what,
  over,
  code,
  named,
  ...(STRICTER.has(what) ? { stricter: true } : {}),
}));
