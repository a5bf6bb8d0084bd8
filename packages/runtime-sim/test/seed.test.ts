import { describe, expect, it } from "vitest";
import { verify, type DeviceTensor } from "@tirx-ts/core";
import {
  runSim,
  sim,
  simEmpty,
  simTensor,
  simZeros,
  SimTensor,
  POISON_BYTE,
  simCounters,
} from "@tirx-ts/runtime-sim";
import { rowCopyKernel, seedKernel } from "./kernels.js";

const x = Float32Array.from({ length: 4096 }, (_, i) => i % 97);

describe("the seed kernel (cp.async tile pattern, four 16-byte copies per thread)", () => {
  it("copies (arange(4096) % 97) as float16 through shared memory exactly", () => {
    const a = simTensor(x, { shape: [128, 32], dtype: "float16" });
    const b = simZeros([128, 32], "float16");
    const { reports } = runSim(verify(seedKernel), [a, b]);
    expect(reports).toEqual([]);
    expect(Array.from(b.toArray() as Float32Array)).toEqual(Array.from(x));
    expect(b.toBytes()).toEqual(a.toBytes());
  });

  it("reports nothing in collect mode and can be launched again", () => {
    const vf = verify(seedKernel);
    const a = simTensor(x, { shape: [128, 32], dtype: "float16" });
    for (let k = 0; k < 3; k++) {
      const b = simEmpty([128, 32], "float16");
      expect(runSim(vf, [a, b], { hazards: "collect" }).reports).toEqual([]);
      expect(b.toBytes()).toEqual(a.toBytes());
    }
  });

  it("compiles once: a warm launch reuses the closures and runs the same loop iterations", () => {
    // (Its time, cold and warm, is measured by bench/sim-speed.ts.)
    const vf = verify(seedKernel);
    const a = simTensor(x, { shape: [128, 32], dtype: "float16" });
    const b = simZeros([128, 32], "float16");
    const launch = (): { compiles: number; loopIterations: number } => {
      const before = { ...simCounters };
      runSim(vf, [a, b]);
      return {
        compiles: simCounters.compiles - before.compiles,
        loopIterations: simCounters.loopIterations - before.loopIterations,
      };
    };
    // The copy-back loop `for j in range(32)` runs its 32 iterations in lockstep for all threads.
    expect(launch()).toEqual({ compiles: 1, loopIterations: 32 });
    expect(launch()).toEqual({ compiles: 0, loopIterations: 32 });
    expect(b.toBytes()).toEqual(a.toBytes());
  });

  it("copies rows through shared memory over many CTAs", () => {
    const n = 256;
    const data = Float32Array.from({ length: n * n }, (_, i) => i * 0.25 - 7);
    const a = simTensor(data, { shape: [n, n], dtype: "float32" });
    const b = simEmpty([n, n], "float32");
    expect(runSim(verify(rowCopyKernel(n, 64)), [a, b], { hazards: "collect" }).reports).toEqual(
      [],
    );
    expect(b.toArray()).toEqual(data);
  });
});

describe("API", () => {
  it("sim() is one device object", () => {
    expect(sim()).toBe(sim());
    expect(sim()).toMatchObject({ kind: "sim", name: "sim" });
    expect(simZeros([2], "int8").device).toBe(sim());
  });

  it("sim tensors hold exact bytes; simEmpty is poisoned; dispose makes later use throw", () => {
    const t = simTensor([1, -2, 3], { shape: [3], dtype: "int16" });
    expect(t).toBeInstanceOf(SimTensor);
    expect(t.nbytes).toBe(6);
    expect(Array.from(t.toBytes())).toEqual([1, 0, 0xfe, 0xff, 3, 0]);
    expect(Array.from(simEmpty([2], "uint8").toArray() as Uint8Array)).toEqual([
      POISON_BYTE,
      POISON_BYTE,
    ]);
    t.dispose();
    expect(() => t.toArray()).toThrow(/dispose/);
  });

  it("refuses host data of the wrong size with TX5007", () => {
    expect(() => simTensor([1, 2, 3], { shape: [2, 2], dtype: "float32" })).toThrow(/TX5007/);
  });

  it("checks arguments with core's checkArgs (TX5001-TX5003)", () => {
    const vf = verify(seedKernel);
    const a = simZeros([128, 32], "float16");
    expect(() => runSim(vf, [a])).toThrow(/TX5001/);
    expect(() => runSim(vf, [a, simZeros([128, 32], "float32")])).toThrow(/TX5002/);
    expect(() => runSim(vf, [a, simZeros([32, 128], "float16")])).toThrow(/TX5003/);
  });

  it("refuses tensors of another device with TX5004", () => {
    const gpu = { kind: "cuda" as const, name: "NVIDIA H200" };
    const foreign = (t: SimTensor): DeviceTensor => ({
      device: gpu,
      shape: t.shape,
      dtype: t.dtype,
      nbytes: t.nbytes,
      toArray: () => t.toArray(),
      toBytes: () => t.toBytes(),
      dispose: () => {},
    });
    const a = simZeros([128, 32], "float16");
    const b = simZeros([128, 32], "float16");
    const vf = verify(seedKernel);
    expect(() => runSim(vf, [foreign(a), foreign(b)])).toThrow(/TX5004/);
    expect(() => runSim(vf, [a, foreign(b)])).toThrow(/TX5004/);
  });
});
