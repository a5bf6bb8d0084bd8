// Hand-made kernels on the fast paths' edges where the fast ways DO match the reference today:
// a vector-loop run of shared accesses spanning two CTAs of a cluster (one buffer filling each
// CTA's window), a bulk copy and a cp.async tile in one CTA (disjoint and overlapping), and a
// double-buffered cp.async pipeline (wait_group 1) with its synchronizations left out one at a time.
import { describe, expect, it } from "vitest";
import type { KernelArg, PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { simTensor, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { same } from "./util/same-outcome.js";

const WAYS: readonly SimOptions[] = [
  { jitAfter: 0 },
  {},
  { rangeChecks: false, jitAfter: Infinity },
];
const pat = "(r w t v) -> w t r v";
const cpAsync = T.ptx["cp.async.ca.shared.global"]!;
const bulkLoad = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!;
const f32 = (n: number) => (): KernelArg[] => [
  simTensor(
    Array.from({ length: n }, (_, i) => i),
    { shape: [n], dtype: "float32" },
  ),
  simZeros([n], "float32"),
];

describe("cluster: a run of shared accesses across two CTAs' windows", () => {
  const k = (sync: boolean, racy: boolean): PrimFunc =>
    T.function(
      `span_${sync}_${racy}`,
      { A: T.Tensor([512], "float32"), B: T.Tensor([512], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 64, cluster: [2, 1, 1] }) });
        const tid = T.cuda.thread_idx("x");
        const r = T.let_("r", T.cuda.block_idx("x"));
        const s = T.alloc_shared([256], "float32");
        // CTA 0 uses elements 192..255, CTA 1 elements 0..63: consecutive bytes of the Machine.
        const base = T.let_("base", r.mul(-192).add(192));
        s.set([tid.add(base)], A.get([tid.add(r.mul(64))]));
        if (sync) T.cuda.cta_sync();
        B.set(
          [tid.add(r.mul(64))],
          s.get([racy ? tid.add(base).add(1).floormod(256) : tid.add(base)]),
        );
        s.set([tid.add(base)], A.get([tid.add(r.mul(64)).add(128)]));
        T.cuda.cta_sync();
        B.set([tid.add(r.mul(64)).add(128)], s.get([tid.add(base)]));
      },
    );
  for (const sync of [true, false]) {
    for (const racy of [false, true]) {
      it(`sync ${sync}, racy ${racy}`, () => {
        same(k(sync, racy), f32(512), [0, 2], ["collect", "throw"], WAYS);
      });
    }
  }
});

describe("bulk copy and cp.async tile in one CTA", () => {
  for (const overlap of [false, true]) {
    it(`overlap ${overlap}`, () => {
      const k = T.function(
        `bulk_cp_${overlap}`,
        { A: T.Tensor([1024], "float32"), B: T.Tensor([1024], "float32") },
        ({ A, B }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
          const tid = T.cuda.thread_idx("x");
          const s = T.alloc_shared([512], "float32");
          const bar = T.alloc_shared([1], "uint64");
          T.if_(tid.eq(0), () => {
            T.ptx.mbarrier.init(bar.sub(0), 1);
            T.ptx.fence.mbarrier_init();
          });
          T.cuda.cta_sync();
          T.if_(tid.eq(0), () => {
            T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 1024);
            T.cuda.tile.apply(bulkLoad, s.sub("0:256"), A.sub("0:256"), {
              chunk_bytes: 1024,
              mbar: bar.sub(0),
            });
          });
          const sz = { r: 2, w: 2, t: 32, v: 1 };
          const dst = overlap ? s.sub("128:256") : s.sub("256:384");
          T.cuda.tile.apply(cpAsync, dst.rearrange(pat, sz), A.sub("512:640").rearrange(pat, sz), {
            chunk_bytes: 4,
            scope: "cta",
          });
          T.ptx.cp.async_.wait_all();
          T.ptx.mbarrier.try_wait(bar.sub(0), 0);
          T.cuda.cta_sync();
          B.set([tid], s.get([tid.add(200)]));
          B.set([tid.add(64)], s.get([tid.add(300)]));
        },
      );
      const r = same(k, f32(1024), [0, 2], ["collect", "throw"], WAYS);
      expect(r.length > 0).toBe(overlap);
    });
  }
});

describe("double-buffered cp.async pipeline (wait_group 1)", () => {
  // 0: correct; 1: no commit; 2: wait_group 0; 3: no cta_sync before the reads.
  for (const bug of [0, 1, 2, 3]) {
    it(`variant ${bug}`, () => {
      const k = T.function(
        `pipe_${bug}`,
        { A: T.Tensor([1024], "float32"), B: T.Tensor([1024], "float32") },
        ({ A, B }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
          const tid = T.cuda.thread_idx("x");
          const s = T.alloc_shared([2, 128], "float32");
          const sz = { r: 1, w: 2, t: 32, v: 2 };
          const issue = (i: PrimExpr) =>
            T.cuda.tile.apply(
              cpAsync,
              s.sub(i.floormod(2), ":").rearrange(pat, sz),
              A.rearrange("(i r w t v) -> i w t r v", { i: 8, ...sz }).sub(i),
              { chunk_bytes: 8, scope: "cta" },
            );
          issue(T.int32(0));
          T.ptx.cp.async_.commit_group();
          for (const i of T.range(8)) {
            T.if_(i.add(1).lt(8), () => issue(i.add(1)));
            if (bug !== 1) T.ptx.cp.async_.commit_group();
            T.ptx.cp.async_.wait_group(bug === 2 ? 0 : 1);
            if (bug !== 3) T.cuda.cta_sync();
            B.set([i.mul(128).add(tid)], s.get([i.floormod(2), tid.add(1).floormod(128)]));
            B.set([i.mul(128).add(tid).add(64)], s.get([i.floormod(2), tid.add(65).floormod(128)]));
            T.cuda.cta_sync();
          }
        },
      );
      const r = same(k, f32(1024), [0, 2], ["collect", "throw"], WAYS);
      expect(r.length > 0).toBe(bug === 1 || bug === 3);
    });
  }
});
