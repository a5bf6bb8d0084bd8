import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { rowCopyKernel, seedKernel } from "./kernels.js";
import { lineOf } from "./helpers.js";

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

describe("shadow counts made at first need", () => {
  const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"]!;
  /** Thread 0 stores the same shared tile to B twice; `wait` completes the first before the second. */
  const twice = (wait: boolean) =>
    T.function(`store_twice_${wait}`, { B: T.Tensor([64], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "float32");
      s.set([tid], T.float32(1));
      s.set([tid.add(32)], T.float32(2));
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(store, B, s, { chunk_bytes: 256 });
        T.ptx.cp.async_.bulk.commit_group();
        if (wait) T.ptx.cp.async_.bulk.wait_group(0);
        // @second
        T.cuda.tile.apply(store, B, s, { chunk_bytes: 256 });
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    });

  it("a bulk store over bytes a pending bulk store writes is TX6007 at the second store", () => {
    const r = runSim(verify(twice(false)), [simZeros([64], "float32")], { hazards: "collect" });
    expect(r.reports.map((e) => e.code)).toEqual(["TX6007"]);
    expect(r.reports[0]!.message).toContain("pending shared → global bulk copy writes");
    expect(r.reports[0]!.span?.line).toBe(lineOf(import.meta.url, "// @second"));
  });

  it("no report once the first store completed", () => {
    const b = simZeros([64], "float32");
    expect(runSim(verify(twice(true)), [b], { hazards: "collect" }).reports).toEqual([]);
    expect(Array.from(b.toArray() as Float32Array).slice(30, 34)).toEqual([1, 1, 2, 2]);
  });
});
