// PTX of TMA copies: the tensor-map parameter and its addressing as nvcc emits them for a
// `const __grid_constant__ CUtensorMap` parameter (`.param .align 128 .b8 p[128]`, then
// `mov.b64` + `cvta.param.u64`), the instruction forms (coordinates innermost first), and every
// module assembled by ptxas for sm_90a (queued, one merged batch per file).
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { T } from "@tirx-ts/dsl";
import { assembleLater } from "../util/ptxas-deferred.js";
import { tmaLoad2d, tmaLoad3d, tmaMulticast, tmaStore2d } from "../kernels/tma.js";
import type { PrimFunc } from "@tirx-ts/core";

const build = (fn: PrimFunc, arch = "sm_90a") => {
  const m = compileToPtx(fn, { arch });
  assembleLater(m.text, arch, m.entry);
  return m;
};
const lines = (text: string, ...keys: string[]): string =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => keys.some((k) => l.includes(k)))
    .join("\n");

/** One CTA, thread 0 issues `body` after an mbarrier init; A [64, 64] float16. */
function oneCopy(
  name: string,
  body: (o: {
    A: ReturnType<typeof T.alloc_shared>;
    tile: ReturnType<typeof T.alloc_shared>;
    bar: ReturnType<typeof T.alloc_shared>;
  }) => void,
  cluster?: [number, number, number],
): PrimFunc {
  return T.function(name, { A: T.Tensor([64, 64], "float16") }, ({ A }) => {
    T.device_entry({
      launch: T.cuda.LaunchConfig({
        grid: cluster ? [2, 1] : 1,
        block: 32,
        ...(cluster ? { cluster } : {}),
      }),
    });
    const tile = T.alloc_shared([32, 64], "float16", { name: "tile", align: 1024 });
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    T.if_(T.cuda.thread_idx("x").eq(0), () => body({ A: A as never, tile, bar }));
  });
}

describe("TMA PTX", () => {
  it("declares the map as a 128-byte grid-constant parameter and addresses it generically", () => {
    const m = build(tmaLoad2d({ name: "tma2d", rows: 100, cols: 72, box: [32, 32] }));
    expect(m.tensorMaps.map((x) => x.name)).toEqual(["A_tmap"]);
    expect(
      lines(m.text, ".param", "cvta.param", "tma2d_param_2", "cp.async.bulk.tensor", ".version"),
    ).toMatchInlineSnapshot(`
        ".version 8.0
        .param .u64 tma2d_param_0,
        .param .u64 tma2d_param_1,
        .param .align 128 .b8 tma2d_param_2[128]
        ld.param.u64 %rd1, [tma2d_param_0];
        ld.param.u64 %rd3, [tma2d_param_1];
        mov.b64 %rd5, tma2d_param_2;
        cvta.param.u64 %rd6, %rd5;
        cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r4], [%rd6, {%r6, %r7}], [%r5];"
      `);
  });

  it("emits 3-D coordinates innermost first and the store form", () => {
    const l3 = build(tmaLoad3d({ name: "tma3d", shape: [5, 20, 24], box: [2, 8, 8] }));
    expect(lines(l3.text, "cp.async.bulk.tensor", "%ctaid")).toMatchInlineSnapshot(`
      "mov.u32 %r2, %ctaid.x;
      mov.u32 %r3, %ctaid.y;
      mov.u32 %r4, %ctaid.z;
      cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r5], [%rd6, {%r7, %r8, %r9}], [%r6];"
    `);
    const st = build(tmaStore2d({ name: "tma_st", rows: 50, cols: 40, box: [16, 16] }));
    expect(lines(st.text, "cp.async.bulk")).toMatchInlineSnapshot(`
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%rd4, {%r19, %r20}], [%r4];
      cp.async.bulk.commit_group;
      cp.async.bulk.wait_group 0;"
    `);
  });

  it("emits multicast, cache hint, shared::cta, prefetch and a predicate", () => {
    const k = oneCopy(
      "tma_forms",
      ({ A, tile, bar }) => {
        const map = T.tensormap_encode_tiled(A as never, { box: [32, 64] });
        const pol = T.uint64(0);
        const c = [T.int32(0), T.int32(32)];
        T.cuda.tile.apply(
          T.ptx[
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint"
          ],
          tile,
          A as never,
          {
            tensor_map: map,
            coords: c,
            mbar: bar.sub(0),
            cta_mask: T.uint16(3),
            cache_policy: pol,
          },
        );
        T.cuda.tile.apply(
          T.ptx["cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes"],
          tile,
          A as never,
          { tensor_map: map, coords: c, mbar: bar.sub(0), pred: T.cuda.block_idx("x").eq(0) },
        );
        T.cuda.tile.apply(T.ptx["prefetch.tensormap"], A as never, A as never, {
          tensor_map: map,
        });
        T.cuda.tile.apply(
          T.ptx["cp.async.bulk.prefetch.tensor.2d.L2.global.tile"],
          A as never,
          A as never,
          {
            tensor_map: map,
            coords: c,
          },
        );
      },
      [2, 1, 1],
    );
    const m = build(k);
    expect(m.version).toBe("8.6");
    expect(lines(m.text, "cp.async.bulk", "cluster", "prefetch.tensormap")).toMatchInlineSnapshot(`
      ".explicitcluster
      .reqnctapercluster 2, 1, 1
      cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster.L2::cache_hint [%r1], [%rd4, {%r4, %r5}], [%r2], %rs1, %rd5;
      @%p2 cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes [%r1], [%rd4, {%r7, %r8}], [%r2];
      prefetch.tensormap [%rd4];
      cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%rd4, {%r9, %r10}];"
    `);
  });

  it("emits cluster registers, the cluster barrier and the cluster directives", () => {
    const m = build(tmaMulticast("tma_mc"));
    expect(lines(m.text, "cluster", ".version")).toMatchInlineSnapshot(`
      ".version 8.0
      .explicitcluster
      .reqnctapercluster 2, 1, 1
      fence.mbarrier_init.release.cluster;
      barrier.cluster.arrive;
      barrier.cluster.wait;
      mov.u32 %r6, %cluster_ctarank;
      mov.u32 %r8, %cluster_ctarank;
      cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r9], [%rd6, {%r5, %r7}], [%r4], %rs1;
      barrier.cluster.arrive;
      barrier.cluster.wait;"
    `);
    const regs = T.function("cluster_regs", { B: T.Tensor([16], "int32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 2], block: 32, cluster: [2, 2, 1] }),
      });
      B.set([0], T.cuda.cluster_nctarank());
      B.set([1], T.cuda.cluster_cta_idx("y"));
      B.set([2], T.cuda.cluster_dim("z"));
      B.set([3], T.cuda.cluster_idx("x"));
      B.set([4], T.cuda.cluster_grid_dim("y"));
      T.ptx.barrier.cluster.arrive_relaxed();
      T.ptx.barrier.cluster.wait();
    });
    expect(lines(build(regs, "sm_90").text, "cluster", ".version")).toMatchInlineSnapshot(`
      ".version 8.0
      .visible .entry cluster_regs(
      .param .u64 cluster_regs_param_0
      .explicitcluster
      .reqnctapercluster 2, 2, 1
      ld.param.u64 %rd1, [cluster_regs_param_0];
      mov.u32 %r1, %cluster_nctarank;
      mov.u32 %r2, %cluster_ctaid.y;
      mov.u32 %r3, %cluster_nctaid.z;
      mov.u32 %r4, %clusterid.x;
      mov.u32 %r5, %nclusterid.y;
      barrier.cluster.arrive.relaxed;
      barrier.cluster.wait;"
    `);
  });

  it("emits mapa and the remote mbarrier arrive of a cluster", () => {
    const k = T.function("remote", { B: T.Tensor([1], "int32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: 2, block: 32, cluster: [2, 1, 1] }),
      });
      const bars = T.alloc_shared([2], "uint64", { name: "bars" });
      const peer = T.cuda.cluster_ctarank().bitxor(1);
      T.ptx.mbarrier.arrive_remote(T.ptx.mapa(bars.ptr([1]), peer));
      B.set([0], T.int32(0));
    });
    expect(lines(build(k).text, "mapa", "mbarrier", "cluster_ctarank")).toMatchInlineSnapshot(`
      "mov.u32 %r3, %cluster_ctarank;
      mapa.shared::cluster.u32 %r5, %r2, %r4;
      mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r5];"
    `);
  });
});
