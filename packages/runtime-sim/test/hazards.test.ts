import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { simTensor, simZeros } from "@tirx-ts/runtime-sim";
import type { TirxError } from "@tirx-ts/core";
import { lineOf, simCollect, simThrows } from "./helpers.js";

// Each buggy kernel marks the offending line with `// @<code>` and the other access with `// @other`.
const here = import.meta.url;
const f16 = (rows: number, cols = 8) =>
  simTensor(
    Float32Array.from({ length: rows * cols }, (_, i) => i),
    { shape: [rows, cols], dtype: "float16" },
  );
const cp = T.ptx["cp.async.ca.shared.global"]!;

/** `e` is a `code` report on the line marked `at`, its first note (if `other`) on the line marked `other`. */
function expectReport(e: TirxError, code: string, at: string, other?: string): void {
  expect([e.code, e.span?.line]).toEqual([code, lineOf(here, at)]);
  if (other !== undefined) expect(e.notes[0]?.span?.line).toBe(lineOf(here, other));
}

describe("hazard reports: code, offending line, note with the other line", () => {
  it("TX6001: reading shared bytes before the cp.async that targets them was waited for", () => {
    const k = T.function(
      "early_read",
      { A: T.Tensor([32, 8], "float16"), B: T.Tensor([32, 8], "float16") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32, 8], "float16");
        T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 }); // @other6001
        T.ptx.cp.async_.commit_group();
        B.set([tid, 0], s.get([tid, 0])); // @TX6001
        T.ptx.cp.async_.wait_group(0);
      },
    );
    const e = simThrows(k, [f16(32), simZeros([32, 8], "float16")]);
    expectReport(e, "TX6001", "// @TX6001", "// @other6001");
  });

  it("TX6001: writing shared bytes a pending cp.async targets", () => {
    const k = T.function("early_write", { A: T.Tensor([32, 8], "float16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32, 8], "float16");
      T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 });
      s.set([tid, 3], T.float16(1)); // @W6001
      T.ptx.cp.async_.wait_all();
    });
    const e = simThrows(k, [f16(32)]);
    expectReport(e, "TX6001", "// @W6001");
  });

  it("TX6002: writing global bytes a pending cp.async reads", () => {
    const k = T.function("src_clobber", { A: T.Tensor([32, 8], "float16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32, 8], "float16");
      T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 }); // @other6002
      T.ptx.cp.async_.commit_group();
      A.set([tid, 0], T.float16(0)); // @TX6002
      T.ptx.cp.async_.wait_group(0);
    });
    const e = simThrows(k, [f16(32)]);
    expectReport(e, "TX6002", "// @TX6002", "// @other6002");
  });

  it("TX6003: reading another thread's shared store with no cta_sync between", () => {
    const k = T.function("no_sync", { B: T.Tensor([64], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "int32");
      s.set([tid], tid); // @other6003
      B.set([tid], s.get([tid.add(1).floormod(64)])); // @TX6003
    });
    const e = simThrows(k, [simZeros([64], "int32")]);
    expectReport(e, "TX6003", "// @TX6003", "// @other6003");
  });

  it("TX6003: reading another thread's completed cp.async without a barrier (seed without cta_sync)", () => {
    const k = T.function(
      "no_barrier",
      { A: T.Tensor([128, 32], "float16"), B: T.Tensor([128, 32], "float16") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const shared = T.alloc_shared([128, 32], "float16");
        const src = A.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
        const dst = shared.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
        // @copy (the next line)
        T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, dst, src, {
          chunk_bytes: 16,
          scope: "cta",
        });
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        for (const j of T.range(32)) B.set([tid, j], shared.get([T.sub(127, tid), j])); // @mirror
      },
    );
    const e = simThrows(k, [simZeros([128, 32], "float16"), simZeros([128, 32], "float16")]);
    expectReport(e, "TX6003", "// @mirror", "// @copy");
  });

  it("TX6003: global memory races within one CTA and across CTAs are reported", () => {
    const k = T.function(
      "global_race",
      { B: T.Tensor([64], "int32"), C: T.Tensor([64], "int32") },
      ({ B, C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const g = T.cuda.block_idx("x");
        B.set([g.mul(32).add(tid)], tid); // @G6013
        C.set([tid], B.get([T.sub(63, g.mul(32).add(tid))])); // @G6003
      },
    );
    // CTA 1 reads bytes CTA 0 wrote: CTAs of one launch are not ordered, so it is a race; and
    // CTA 1 writes the bytes of B that CTA 0 read (write-after-read across CTAs).
    const reports = simCollect(k, [simZeros([64], "int32"), simZeros([64], "int32")]);
    expect(reports.map((r) => [r.code, r.span?.line])).toEqual([
      ["TX6013", lineOf(here, "// @G6013")],
      ["TX6003", lineOf(here, "// @G6003")],
      ["TX6014", lineOf(here, "// @G6003")],
    ]);
    expect(reports[0]!.message).toMatch(
      /thread \(\d+, 0, 0\) of CTA \(1, 0, 0\) writes global "B" .* which thread \(\d+, 0, 0\) of CTA \(0, 0, 0\) read/,
    );
    expect(reports[0]!.notes[0]?.span?.line).toBe(lineOf(here, "// @G6003"));
    expect(reports[1]!.message).toMatch(
      /CTA \(1, 0, 0\) reads .* which thread \(\d+, 0, 0\) of CTA \(0, 0, 0\) wrote/,
    );
    const k2 = T.function(
      "global_race2",
      { B: T.Tensor([64], "int32"), C: T.Tensor([64], "int32") },
      ({ B, C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const g = T.cuda.block_idx("x");
        B.set([g.mul(32).add(tid)], tid);
        C.set([g.mul(32).add(tid)], B.get([g.mul(32).add(T.sub(31, tid))])); // @G2
      },
    );
    const e = simThrows(k2, [simZeros([64], "int32"), simZeros([64], "int32")]);
    expectReport(e, "TX6003", "// @G2");
  });

  it("TX6004: reading shared memory nothing wrote", () => {
    const k = T.function("uninit", { B: T.Tensor([32], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "float32"); // @alloc
      s.set([tid], T.float32(1));
      T.cuda.cta_sync();
      B.set([tid], s.get([tid.add(32)])); // @TX6004
    });
    const e = simThrows(k, [simZeros([32], "float32")]);
    expectReport(e, "TX6004", "// @TX6004", "// @alloc");
  });

  it("TX6005: an out-of-bounds access the verifier cannot see (runtime index)", () => {
    const k = T.function("oob", { A: T.Tensor([16], "int32"), n: T.int32 }, ({ A, n }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      A.set([n], 7); // @TX6005
    });
    const e = simThrows(k, [simZeros([16], "int32"), 16]);
    expectReport(e, "TX6005", "// @TX6005");
    const a = simZeros([16], "int32");
    expect(simCollect(k, [a, 15])).toEqual([]);
    expect(a.toArray()[15]).toBe(7);
  });

  it("TX6008: two cp.async in one group writing the same shared bytes", () => {
    const k = T.function("overlap", { A: T.Tensor([64, 8], "float16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32, 8], "float16");
      T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 }); // @first
      T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid.add(32), ":"), { chunk_bytes: 16 }); // @TX6008
      T.ptx.cp.async_.wait_all();
    });
    const e = simThrows(k, [f16(64)]);
    expectReport(e, "TX6008", "// @TX6008", "// @first");
  });

  it("TX6009: a cta_sync that only some threads reach", () => {
    const k = T.function("divergent", { B: T.Tensor([64], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      T.if_(tid.lt(32), () => {
        T.cuda.cta_sync(); // @TX6009
      });
      B.set([tid], tid);
    });
    const e = simThrows(k, [simZeros([64], "int32")]);
    expectReport(e, "TX6009", "// @TX6009");
    expect(e.message).toMatch(/32 of the 64 threads/);
  });

  it("collect mode records every kind once per site and finishes the launch", () => {
    const k = T.function(
      "many",
      { A: T.Tensor([32, 8], "float16"), B: T.Tensor([32], "float16") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32, 8], "float16");
        const u = T.alloc_shared([32], "float16");
        T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 });
        T.ptx.cp.async_.commit_group();
        B.set([tid], s.get([tid, 0])); // @C1
        B.set([tid], u.get([tid])); // @C2
        T.ptx.cp.async_.wait_group(0);
        B.set([tid], s.get([tid, 1])); // @C3
      },
    );
    const b = simZeros([32], "float16");
    const reports = simCollect(k, [f16(32), b]);
    // Both CTAs write the same B elements: CTA 1's first store races with CTA 0's last (TX6014);
    // its later stores follow its own first one (only the last writer of a byte is kept).
    expect(reports.map((r) => [r.code, r.span?.line])).toEqual([
      ["TX6001", lineOf(here, "// @C1")],
      ["TX6004", lineOf(here, "// @C2")],
      ["TX6014", lineOf(here, "// @C1")],
    ]);
    expect(reports[2]!.notes[0]?.span?.line).toBe(lineOf(here, "// @C3"));
    expect(Array.from(b.toArray() as Float32Array)).toEqual(
      Array.from({ length: 32 }, (_, i) => i * 8 + 1),
    );
  });

  it("renders a report with the author's code frame", () => {
    const k = T.function("render", { B: T.Tensor([32], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const s = T.alloc_shared([32], "float32");
      B.set([T.cuda.thread_idx("x")], s.get([T.cuda.thread_idx("x")])); // @render
    });
    const text = simThrows(k, [simZeros([32], "float32")]).render();
    expect(text).toMatch(/error TX6004 \[hazard\/uninitialized-shared\]/);
    expect(text).toContain("// @render");
  });
});
