import { describe, expect, it } from "vitest";
import { type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { simTensor, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { lineOf, simCollect, simThrows } from "./helpers.js";

// Bulk copies keep their shadow state as one record per copy (lazy uniform ranges,
// exec/shared-shadow.ts and exec/global-shadow.ts); these kernels mix them with element accesses of the same bytes, so
// a report needs the record of one byte out of a copy's range.
const here = import.meta.url;
const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!;
const store = T.ptx["cp.async.bulk.global.shared::cta.bulk_group"]!;
const f32 = (n: number): SimTensor =>
  simTensor(
    Float32Array.from({ length: n }, (_, i) => i + 1),
    { shape: [n], dtype: "float32" },
  );

/**
 * Thread 0 of each CTA loads A (1 KiB) into shared memory and bulk-stores it to B; then
 * `variant`: "two-ctas" runs it in 2 CTAs (both store B); "element-read" has CTA 1 read B[100]
 * instead of storing; "war" has thread 1 write shared element 70 after the store read it, with
 * no cta_sync; "clean" is one CTA that waits and syncs before thread 1 writes element 70.
 */
function kernel(variant: "two-ctas" | "element-read" | "war" | "clean"): PrimFunc {
  return T.function(
    `interval_${variant.replace("-", "_")}`,
    { A: T.Tensor([256], "float32"), B: T.Tensor([256], "float32") },
    ({ A, B }) => {
      const grid = variant === "two-ctas" || variant === "element-read" ? 2 : 1;
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const s = T.alloc_shared([256], "float32");
      const bar = T.alloc_shared([1], "uint64");
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 1024);
        T.cuda.tile.apply(load, s, A, { chunk_bytes: 1024, mbar: bar.sub(0) });
      });
      // Every thread observes the load's phase (so its guard lets them access the tile).
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      if (variant === "element-read") {
        T.if_(cta.eq(0).and(tid.eq(0)), () => {
          T.cuda.tile.apply(store, B, s, { chunk_bytes: 1024 }); // @er-store
          T.ptx.cp.async_.bulk.commit_group();
          T.ptx.cp.async_.bulk.wait_group(0);
        });
        T.if_(cta.eq(1).and(tid.eq(0)), () => {
          s.set([0], B.get([100])); // @er-read
        });
        return;
      }
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(store, B, s, { chunk_bytes: 1024 }); // @store
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group_read(0);
      });
      if (variant === "clean") T.cuda.cta_sync();
      if (variant === "war" || variant === "clean") {
        T.if_(tid.eq(1), () => s.set([70], T.float32(5))); // @war-write
      }
      T.if_(tid.eq(0), () => T.ptx.cp.async_.bulk.wait_group(0));
    },
  );
}

describe("interval shadow state of bulk copies", () => {
  it("TX6014: two CTAs bulk-store the same global bytes; both lines are the store", () => {
    const e = simThrows(kernel("two-ctas"), [f32(256), simZeros([256], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6014", lineOf(here, "// @store")]);
    expect(e.message).toMatch(/thread \(0, 0, 0\) of CTA \(1, 0, 0\) writes \(bulk copy\)/);
    expect(e.message).toMatch(/which thread \(0, 0, 0\) of CTA \(0, 0, 0\) wrote/);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @store"));
  });

  it("TX6003: an element read of one byte range inside another CTA's bulk store", () => {
    const e = simThrows(kernel("element-read"), [f32(256), simZeros([256], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6003", lineOf(here, "// @er-read")]);
    expect(e.message).toMatch(/reads global "B" bytes 400\.\.403/);
    expect(e.message).toMatch(/thread \(0, 0, 0\) of CTA \(0, 0, 0\) wrote/);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @er-store"));
  });

  it("TX6013: a thread writes an element the bulk store of another thread read, unordered", () => {
    const e = simThrows(kernel("war"), [f32(256), simZeros([256], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6013", lineOf(here, "// @war-write")]);
    expect(e.message).toMatch(
      /thread \(1, 0, 0\) of CTA \(0, 0, 0\) writes shared "\w+" bytes 280\.\.283/,
    );
    expect(e.message).toMatch(/which thread \(0, 0, 0\) read/);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @store"));
  });

  it("with a cta_sync between the store's read and the write: no report, B = A", () => {
    const a = f32(256);
    const b = simZeros([256], "float32");
    expect(simCollect(kernel("clean"), [a, b])).toEqual([]);
    expect(Array.from(b.toArray() as Float32Array)).toEqual(
      Array.from(a.toArray() as Float32Array),
    );
  });
});

/**
 * An element write of B materialises the block of B's writer records around it; then a bulk
 * store by thread 0 records its 1 KiB inside that block as one entry, and thread 2 writes an
 * element of it with no synchronization: the element's check must read the store's entry, not
 * the per-byte arrays of the block materialised before it.
 */
function blockThenBulk(): PrimFunc {
  return T.function(
    "interval_block_then_bulk",
    { A: T.Tensor([256], "float32"), B: T.Tensor([2, 256], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([256], "float32");
      const bar = T.alloc_shared([1], "uint64");
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 1024);
        T.cuda.tile.apply(load, s, A, { chunk_bytes: 1024, mbar: bar.sub(0) });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      T.if_(tid.eq(1), () => B.set([1, 44], T.float32(7)));
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(store, B.sub(0, ":"), s, { chunk_bytes: 1024 }); // @bb-store
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
      T.if_(tid.eq(2), () => B.set([0, 25], T.float32(9))); // @bb-write
    },
  );
}

describe("global writer records: a bulk store inside an already materialised block", () => {
  it("TX6014: the element write after it names the bulk store", () => {
    const e = simThrows(blockThenBulk(), [f32(256), simZeros([2, 256], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6014", lineOf(here, "// @bb-write")]);
    expect(e.message).toMatch(
      /thread \(2, 0, 0\) of CTA \(0, 0, 0\) writes global "B" bytes 100\.\.103/,
    );
    expect(e.message).toMatch(/which thread \(0, 0, 0\) wrote/);
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @bb-store"));
  });
});
