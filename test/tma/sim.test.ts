// TMA on the simulator: every case of cases.ts (loads with out-of-bounds fill, swizzled writes
// read back through the buffer's layout, a store that clips) equals the JS model with no reports;
// the hazards of TMA destinations; cluster registers; what the simulator refuses.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { TMA_CASES } from "./cases.js";
import { simCase } from "./sim-run.js";
import { rawLoad, rawLoadExpected, ramp } from "../util/tma-symbolic-kernels.js";

const LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";

/**
 * One CTA loads the [16, 32] box at `coords` (default (0, 0)) of A [16, 32] float32, then reads
 * the tile (before its mbarrier's phase completes unless `waitFirst`).
 */
function early(name: string, waitFirst: boolean, coords: readonly number[] = [0, 0]): PrimFunc {
  return T.function(
    name,
    { A: T.Tensor([16, 32], "float32"), B: T.Tensor([128], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const tile = T.alloc_shared([16, 32], "float32", { name: "tile", align: 128 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [16, 32] });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 16 * 32 * 4);
        T.cuda.tile.apply(T.ptx[LOAD], tile, A, {
          tensor_map: map,
          coords: [...coords],
          mbar: bar.sub(0),
        });
      });
      if (waitFirst) T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      B.set([tid], tile.get([tid.floordiv(32), tid.floormod(32)]));
      if (!waitFirst) T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    },
  );
}

describe("TMA on the simulator", () => {
  for (const c of TMA_CASES.filter((x) => !x.gpuOnly)) {
    it(`${c.name} equals the model with no reports`, () => {
      const r = simCase(c);
      expect(r.reports).toEqual([]);
      expect(r.out).toEqual(c.expected());
    });
  }

  it("reports a read of the TMA destination before its mbarrier phase completes (TX6007)", () => {
    const a = Array.from({ length: 512 }, (_, i) => i);
    const run = (fn: PrimFunc) =>
      runSim(
        verify(fn),
        [simTensor(a, { shape: [16, 32], dtype: "float32" }), simZeros([128], "float32")],
        { hazards: "collect" },
      );
    expect(run(early("tma_ok", true)).reports).toEqual([]);
    const bad = run(early("tma_early", false)).reports;
    expect(bad.length).toBeGreaterThan(0);
    expect(bad.map((e) => (isTirxError(e) ? e.code : "?"))).toContain("TX6007");
  });

  it("reports a copy whose innermost coordinate is not a multiple of 16 bytes (TX6031 at run time, TX4023 at build when constant), which the GPU faults on", () => {
    // A [8, 40] float32, the [16, 32] box of rawLoad at row 2 and column c0 (scalar arguments):
    // 4 (16 bytes) is legal, 1 and 6 (4 and 24 bytes) are not (an illegal instruction on the
    // H200).
    const [m, n, r0] = [8, 40, 2];
    const a = ramp(m * n);
    const run = (c0: number) => {
      const out = simZeros([16, 32], "float32");
      const A = simTensor(a, { shape: [m, n], dtype: "float32" });
      const r = runSim(verify(rawLoad), [m, n, r0, c0, A, out], { hazards: "collect" });
      return { reports: r.reports, out: Array.from(out.toArray() as ArrayLike<number>) };
    };
    const ok = run(4);
    expect(ok.reports).toEqual([]);
    expect(ok.out).toEqual(rawLoadExpected(m, n, r0, 4));
    for (const c0 of [1, 6]) {
      const codes = run(c0).reports.map((e) => (isTirxError(e) ? e.code : "?"));
      expect(codes[0]).toBe("TX6031");
    }
    // A constant coordinate is refused when the kernel is verified.
    expect(() => verify(early("tma_inner_4", true, [0, 4]))).not.toThrow();
    let code = "";
    try {
      verify(early("tma_inner_1", true, [0, 1]));
    } catch (e) {
      code = isTirxError(e) ? e.message : String(e);
    }
    expect(code).toMatch(
      /^TX4023 \[tma\/coords\] the innermost coordinate 1 is 4 bytes of float32/,
    );
  });

  it("computes cluster registers from %ctaid and the cluster dims", () => {
    const fn = T.function("cluster_regs", { B: T.Tensor([8, 6], "int32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [4, 2], block: 32, cluster: [2, 1, 1] }),
      });
      const cta = T.cuda.block_idx("y").mul(4).add(T.cuda.block_idx("x"));
      T.if_(T.cuda.thread_idx("x").eq(0), () => {
        B.set([cta, 0], T.cuda.cluster_ctarank());
        B.set([cta, 1], T.cuda.cluster_nctarank());
        B.set([cta, 2], T.cuda.cluster_cta_idx("x"));
        B.set([cta, 3], T.cuda.cluster_idx("x"));
        B.set([cta, 4], T.cuda.cluster_grid_dim("x"));
        B.set([cta, 5], T.cuda.cluster_idx("y"));
      });
    });
    const o = simZeros([8, 6], "int32");
    expect(runSim(verify(fn), [o], { hazards: "collect" }).reports).toEqual([]);
    const want: number[] = [];
    for (let y = 0; y < 2; y++)
      for (let x = 0; x < 4; x++) want.push(x % 2, 2, x % 2, Math.floor(x / 2), 2, y);
    expect(Array.from(o.toArray() as ArrayLike<number>)).toEqual(want);
  });

  it("reports a tensor store of shared bytes written without fence.proxy.async (TX6015)", () => {
    const fn = T.function("tma_store_nofence", { B: T.Tensor([16, 16], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const tile = T.alloc_shared([16, 16], "float32", { name: "tile", align: 128 });
      const map = T.tensormap_encode_tiled(B, { box: [16, 16] });
      for (const k of T.range(8)) tile.flat().set([k.mul(32).add(tid)], T.float32(1));
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(
          T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"],
          B,
          tile,
          { tensor_map: map, coords: [0, 0] },
        );
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    });
    const r = runSim(verify(fn), [simZeros([16, 16], "float32")], { hazards: "collect" });
    expect(r.reports.map((e) => (isTirxError(e) ? e.code : "?"))).toContain("TX6015");
  });

  it("a tensor store of 16 rows not waited for at exit is one copy in TX6017, not one per row", () => {
    const fn = T.function("tma_store_nowait", { B: T.Tensor([16, 16], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const tile = T.alloc_shared([16, 16], "float32", { name: "tile", align: 128 });
      const map = T.tensormap_encode_tiled(B, { box: [16, 16] });
      for (const k of T.range(8)) tile.flat().set([k.mul(32).add(tid)], T.float32(1));
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(
          T.ptx["cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group"],
          B,
          tile,
          { tensor_map: map, coords: [0, 0] },
        );
        T.ptx.cp.async_.bulk.commit_group();
      });
    });
    const r = runSim(verify(fn), [simZeros([16, 16], "float32")], { hazards: "collect" });
    expect(r.reports.map((e) => e.code)).toEqual(["TX6017"]);
    expect(r.reports[0]!.message).toMatch(/exits with 1 shared → global bulk copy not waited for/);
  });

  it('refuses oob_fill "nan" loads (TX2010: the driver does not document the NaN)', () => {
    const fn = T.function(
      "tma_nan",
      { A: T.Tensor([16, 32], "float32"), B: T.Tensor([1], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tile = T.alloc_shared([16, 32], "float32", { name: "tile", align: 128 });
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        const map = T.tensormap_encode_tiled(A, { box: [16, 32], oob_fill: "nan" });
        T.if_(T.cuda.thread_idx("x").eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 2048);
          T.cuda.tile.apply(T.ptx[LOAD], tile, A, {
            tensor_map: map,
            coords: [8, 0],
            mbar: bar.sub(0),
          });
        });
        B.set([0], T.float32(0));
      },
    );
    expect(() =>
      runSim(verify(fn), [simZeros([16, 32], "float32"), simZeros([1], "float32")]),
    ).toThrow(/TX2010/);
  });
});
