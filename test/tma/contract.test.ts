// cuTensorMapEncodeTiled's contract (CUDA Driver API) as one check (core tensor-map-contract.ts):
// each rule on the driver's own arguments, a static violation refused at build by the verifier,
// a launch-time one (a misaligned tensor address) refused at launch by the simulator and before
// the driver by the CUDA runtime. Expected values come from each case's own numbers.
import { describe, expect, it } from "vitest";
import {
  isTirxError,
  mkBuffer,
  mkTensorMap,
  tensorMapEncoding,
  tensorMapViolation,
  verify,
  type TensorMapEncoding,
  type TmaOobFill,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { encodeTensorMap, tensorMapArgs } from "@tirx-ts/runtime-cuda";
import { runSim, SimTensor, simZeros } from "@tirx-ts/runtime-sim";
import { boxOf } from "./reference.js";

/** A valid encoding: float32 [64, 32] (innermost first: dims 32, 64), box 8 × 16, 64B swizzle. */
const BASE: TensorMapEncoding = {
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

const violation = (over: Partial<TensorMapEncoding>) =>
  tensorMapViolation("m", { ...BASE, ...over });

describe("tensorMapViolation: each rule of cuTensorMapEncodeTiled", () => {
  it("accepts the base encoding, the largest dim (2^32) and stride (2^40 - 16)", () => {
    expect(violation({})).toBeUndefined();
    expect(violation({ globalDim: [32, 2 ** 32] })).toBeUndefined();
    const big = 2n ** 40n - 16n;
    expect(violation({ globalStrides: [big], globalDim: [32, 2] })).toBeUndefined();
  });

  // [what, the change, code, a value the message names]
  const cases: [string, Partial<TensorMapEncoding>, string, string][] = [
    ["an unknown data type", { dataType: 13 }, "TX4024", "tensorDataType 13"],
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
  for (const [what, over, code, named] of cases) {
    it(`${code}: ${what}`, () => {
      const v = violation(over);
      expect(v?.code).toBe(code);
      expect(v?.message).toContain(named);
      expect(v?.message).toContain("cuTensorMapEncodeTiled");
    });
  }

  it("a NaN fill of each float data type is accepted", () => {
    const BYTES: Record<number, number> = { 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4 };
    for (const [dataType, bytes] of Object.entries(BYTES)) {
      const e = { dataType: Number(dataType), oobFill: 1, globalStrides: [32 * bytes], swizzle: 3 };
      expect(violation(e)).toBeUndefined();
    }
  });

  it("core's encoding of a map is runtime-cuda's cuTensorMapEncodeTiled arguments", () => {
    const map = mkTensorMap({
      buffer: mkBuffer("A", [5, 20, 24], "float16", "global"),
      box: [2, 8, 16],
      elementStrides: [1, 2, 1],
      swizzle: "32B",
      l2Promotion: "128B",
      oobFill: "nan",
    });
    const e = tensorMapEncoding(map);
    const a = tensorMapArgs(map);
    expect([e.dataType, e.rank, e.interleave, e.swizzle, e.l2Promotion, e.oobFill]).toEqual([
      a.dataType,
      a.rank,
      a.interleave,
      a.swizzle,
      a.l2Promotion,
      a.oobFill,
    ]);
    expect(Array.from(e.globalDim, (d) => BigInt(d!))).toEqual([...a.globalDim]);
    expect(Array.from(e.globalStrides, (d) => BigInt(d!))).toEqual([...a.globalStrides]);
    expect(Array.from(e.boxDim)).toEqual([...a.boxDim]);
    expect(Array.from(e.elementStrides)).toEqual([...a.elementStrides]);
    expect(tensorMapViolation(map.name, e)).toBeUndefined();
  });
});

const LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
const R = 16;
const C = 16;
const BOX = [8, 8] as const;

/** One TMA load of the [8, 8] box at (0, 0) of A [16, 16] (dtype, oob_fill), copied to B [8, 8]. */
function load(dtype: "float32" | "int32", oob: TmaOobFill) {
  return T.function(
    `contract_${dtype}_${oob}`,
    { A: T.Tensor([R, C], dtype), B: T.Tensor([...BOX], dtype) },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const tile = T.alloc_shared([...BOX], dtype, { name: "tile", align: 128 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [...BOX], oob_fill: oob });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), BOX[0] * BOX[1] * 4);
        T.cuda.tile.apply(T.ptx[LOAD], tile, A, {
          tensor_map: map,
          coords: [0, 0],
          mbar: bar.sub(0),
        }); // @load
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      const i = tid.floordiv(BOX[1]);
      const j = tid.floormod(BOX[1]);
      B.set([i, j], tile.get([i, j]));
    },
  );
}

function error(f: () => unknown) {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

/** A float32 sim tensor of A's values whose storage starts `offset` bytes into its ArrayBuffer. */
function tensorAt(offset: number, values: Float32Array): SimTensor {
  const raw = new Uint8Array(offset + values.byteLength);
  const storage = raw.subarray(offset);
  storage.set(new Uint8Array(values.buffer));
  return new SimTensor(storage, [R, C], "float32");
}

describe("the contract at build and at launch", () => {
  it('build: oob_fill "nan" on an int32 tensor is TX4029 at the copy; on float32 it verifies', () => {
    const e = error(() => verify(load("int32", "nan")));
    expect(e.code).toBe("TX4029");
    expect(e.message).toContain("INT32");
    expect(e.span?.file).toMatch(/contract\.test\.ts$/);
    expect(() => verify(load("float32", "nan"))).not.toThrow();
  });

  it("launch (simulator): a tensor 4 bytes past a 16-byte boundary is TX4027; at 16 bytes it copies the box", () => {
    const a = Float32Array.from({ length: R * C }, (_, k) => (k % 97) - 40);
    const vf = verify(load("float32", "none"));
    const MIS = 4;
    const e = error(() => runSim(vf, [tensorAt(MIS, a), simZeros([...BOX], "float32")]));
    expect(e.code).toBe("TX4027");
    expect(e.message).toContain(`${MIS} bytes past a 16-byte boundary`);
    expect(e.notes.map((n) => n.message).join("\n")).toContain(`(${MIS})`);
    const b = simZeros([...BOX], "float32");
    expect(runSim(vf, [tensorAt(16, a), b], { hazards: "collect" }).reports).toEqual([]);
    expect(Array.from(b.toArray() as Float32Array)).toEqual(boxOf(a, [R, C], [0, 0], [...BOX]));
  });

  it("launch (CUDA runtime): encodeTensorMap refuses a misaligned pointer before the driver", () => {
    const map = mkTensorMap({
      buffer: mkBuffer("A", [R, C], "float32", "global"),
      box: [...BOX],
      elementStrides: [1, 1],
      swizzle: "none",
      l2Promotion: "none",
      oobFill: "none",
    });
    const ptr = 0x7f0000001008n;
    const e = error(() => encodeTensorMap(map, ptr, 0n));
    expect(e.code).toBe("TX4027");
    expect(e.message).toContain(`0x${ptr.toString(16)}`);
  });
});
