import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { rowCopyKernel, seedKernel } from "./kernels.js";

// hazards: "off" skips the per-byte bookkeeping (for measuring its cost) but computes the same.
describe('hazards: "off"', () => {
  const x = Float32Array.from({ length: 4096 }, (_, i) => i % 97);

  it("gives the same bytes as tracked runs, and later tracked launches still report", () => {
    const vf = verify(seedKernel);
    const a = simTensor(x, { shape: [128, 32], dtype: "float16" });
    const on = simZeros([128, 32], "float16");
    const off = simZeros([128, 32], "float16");
    expect(runSim(vf, [a, on]).reports).toEqual([]);
    expect(runSim(vf, [a, off], { hazards: "off" }).reports).toEqual([]);
    expect(Buffer.from(off.toBytes()).equals(Buffer.from(on.toBytes()))).toBe(true);
    expect(Buffer.from(off.toBytes()).equals(Buffer.from(a.toBytes()))).toBe(true);
  });

  it("skips race reports that tracking makes; pooled shadow arrays stay right across launches", () => {
    const racy = T.function("racy_off", { O: T.Tensor([64], "int32") }, ({ O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "int32");
      s.set([tid], tid);
      O.set([tid], s.get([tid.add(1).floormod(64)])); // no cta_sync: TX6003 when tracked
    });
    const vf = verify(racy);
    const codes = (hazards: "collect" | "off") =>
      runSim(vf, [simZeros([64], "int32")], { hazards }).reports.map((r) => r.code);
    expect(codes("collect")).toEqual(["TX6003"]);
    expect(codes("off")).toEqual([]);
    expect(codes("collect")).toEqual(["TX6003"]);
    // A clean kernel over reused (pooled) global shadow arrays reports nothing, launch after launch.
    const n = 256;
    const rc = verify(rowCopyKernel(n, 64));
    const big = Float32Array.from({ length: n * n }, (_, i) => i);
    for (const hazards of ["collect", "off", "collect"] as const) {
      const a = simTensor(big, { shape: [n, n], dtype: "float32" });
      const b = simZeros([n, n], "float32");
      expect(runSim(rc, [a, b], { hazards }).reports).toEqual([]);
      expect(Buffer.from(b.toBytes()).equals(Buffer.from(a.toBytes()))).toBe(true);
    }
  });
});
