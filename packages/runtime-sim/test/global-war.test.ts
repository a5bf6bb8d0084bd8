import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { lineOf, simCollect, simThrows } from "./helpers.js";

// Write-after-read on global memory (TX6013): reads of tensors the kernel may write are recorded
// (exec/global-shadow.ts), so a later unordered write by another thread or CTA is reported with
// both threads and both lines.
const here = import.meta.url;
const i32 = (n: number): SimTensor =>
  simTensor(
    Int32Array.from({ length: n }, (_, i) => i),
    { shape: [n], dtype: "int32" },
  );

/** Thread t of 64 reads B[(t + 32) % 64] into C, then writes B[t]; `sync` puts a cta_sync between. */
function neighbours(sync: boolean): PrimFunc {
  return T.function(
    sync ? "neighbours_synced" : "neighbours",
    { B: T.Tensor([64], "int32"), C: T.Tensor([64], "int32") },
    ({ B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      C.set([tid], B.get([tid.add(32).floormod(64)])); // @nb-read
      if (sync) T.cuda.cta_sync();
      B.set([tid], tid.mul(2)); // @nb-write
    },
  );
}

describe("TX6013 on global memory", () => {
  it("within a CTA: a write after another warp's unordered read names both threads and lines", () => {
    const e = simThrows(neighbours(false), [i32(64), simZeros([64], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6013", lineOf(here, "// @nb-write")]);
    expect(e.message).toMatch(
      /thread \(0, 0, 0\) of CTA \(0, 0, 0\) writes global "B" bytes 0\.\.3, which thread \(32, 0, 0\) read/,
    );
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @nb-read"));
  });

  it("a cta_sync between the reads and the writes orders them: no report, the result is exact", () => {
    const b = i32(64);
    const c = simZeros([64], "int32");
    expect(simCollect(neighbours(true), [b, c])).toEqual([]);
    expect(Array.from(c.toArray() as Int32Array)).toEqual(
      Array.from({ length: 64 }, (_, t) => (t + 32) % 64),
    );
  });

  it("the race is reported on every schedule (RAW or WAR, whichever access comes second)", () => {
    const vf = verify(neighbours(false));
    const lines = [lineOf(here, "// @nb-read"), lineOf(here, "// @nb-write")].sort();
    for (let seed = 0; seed < 8; seed++) {
      const { reports } = runSim(vf, [i32(64), simZeros([64], "int32")], {
        hazards: "collect",
        simSeed: seed,
      });
      expect(reports.length, `seed ${seed}`).toBeGreaterThan(0);
      const r = reports[0]!;
      expect(["TX6003", "TX6013"]).toContain(r.code);
      expect([r.span?.line, r.notes[0]?.span?.line].sort()).toEqual(lines);
    }
  });

  it("across CTAs: CTA 1 writes what CTA 0 read (no ordering between CTAs)", () => {
    const k = T.function(
      "cross_cta_war",
      { B: T.Tensor([32], "int32"), C: T.Tensor([32], "int32") },
      ({ B, C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const g = T.cuda.block_idx("x");
        T.if_(g.eq(0), () => C.set([tid], B.get([tid]))); // @x-read
        T.if_(g.eq(1), () => B.set([tid], tid)); // @x-write
      },
    );
    const e = simThrows(k, [i32(32), simZeros([32], "int32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6013", lineOf(here, "// @x-write")]);
    expect(e.message).toMatch(
      /thread \(0, 0, 0\) of CTA \(1, 0, 0\) writes global "B" bytes 0\.\.3, which thread \(0, 0, 0\) of CTA \(0, 0, 0\) read/,
    );
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @x-read"));
  });

  it("a cp.async source read, completed, then overwritten by another thread without a barrier", () => {
    const k = T.function(
      "cp_async_war",
      { A: T.Tensor([32, 4], "float32"), B: T.Tensor([32, 4], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([32, 4], "float32");
        const src = A.rearrange("(w t) v -> w t v", { w: 1, t: 32 });
        const dst = s.rearrange("(w t) v -> w t v", { w: 1, t: 32 });
        // @cp-read
        T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, dst, src, {
          chunk_bytes: 16,
          scope: "cta",
        });
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        A.set([tid.add(1).floormod(32), 0], T.float32(0)); // @cp-write
        B.set([tid, 0], s.get([tid, 0]));
      },
    );
    const a = simTensor(
      Float32Array.from({ length: 128 }, (_, i) => i),
      { shape: [32, 4], dtype: "float32" },
    );
    const e = simThrows(k, [a, simZeros([32, 4], "float32")]);
    expect([e.code, e.span?.line]).toEqual(["TX6013", lineOf(here, "// @cp-write")]);
    expect(e.message).toMatch(
      /thread \(0, 0, 0\) of CTA \(0, 0, 0\) writes global "A" bytes 16\.\.19, which thread \(1, 0, 0\) read/,
    );
    expect(e.notes[0]?.span?.line).toBe(lineOf(here, "// @cp-read"));
  });
});
