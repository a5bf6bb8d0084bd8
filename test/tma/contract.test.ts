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
import { BASE, CONTRACT_CASES } from "./contract-cases.js";
import { boxOf } from "./reference.js";

const violation = (over: Partial<TensorMapEncoding>) =>
  tensorMapViolation("m", { ...BASE, ...over });

describe("tensorMapViolation: each rule of cuTensorMapEncodeTiled", () => {
  it("accepts the base encoding, the largest dim (2^32) and stride (2^40 - 16)", () => {
    expect(violation({})).toBeUndefined();
    expect(violation({ globalDim: [32, 2 ** 32] })).toBeUndefined();
    const big = 2n ** 40n - 16n;
    expect(violation({ globalStrides: [big], globalDim: [32, 2] })).toBeUndefined();
  });

  for (const { what, over, code, named } of CONTRACT_CASES) {
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
