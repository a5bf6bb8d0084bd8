import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { lineOf, simCollect } from "./helpers.js";

// Three or more concurrent readers of a byte: a write ordered after some of them but not all is
// still a write-after-read (TX6013) naming the reader it is not ordered with.
const here = import.meta.url;

/**
 * Shared: lanes 0 of warps 0, 1, 2 read s[0]; warps 0, 2 and 3 meet at bar.sync 1, 96; thread 96
 * then writes s[0]: ordered after the readers of warps 0 and 2, not after warp 1's (`all` lets
 * warp 1 take part too, with count 128: no race).
 */
function sharedReaders(all: boolean): PrimFunc {
  return T.function(
    all ? "three_readers_synced" : "three_readers",
    { B: T.Tensor([128], "int32") },
    ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "int32");
      T.if_(tid.lt(32), () => s.set([tid], tid));
      T.cuda.cta_sync();
      T.if_(tid.floormod(32).eq(0).and(tid.lt(96)), () => B.set([tid], s.get([0]))); // @sh-read
      if (all) T.cuda.bar_sync(1, 128);
      else T.if_(tid.lt(32).or(tid.ge(64)), () => T.cuda.bar_sync(1, 96));
      T.if_(tid.eq(96), () => s.set([0], T.int32(7))); // @sh-write
    },
  );
}

/** Global: the same pattern on B[0] of a tensor the kernel writes. */
const globalReaders: PrimFunc = T.function(
  "three_global_readers",
  { B: T.Tensor([32], "int32"), C: T.Tensor([128], "int32") },
  ({ B, C }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    T.if_(tid.floormod(32).eq(0).and(tid.lt(96)), () => C.set([tid], B.get([0]))); // @gl-read
    T.if_(tid.lt(32).or(tid.ge(64)), () => T.cuda.bar_sync(1, 96));
    T.if_(tid.eq(96), () => B.set([0], T.int32(7))); // @gl-write
  },
);

/**
 * The one race of a kernel above: warp 3 writes after warp 1 reads (TX6013 at the write), or,
 * where the schedule runs warp 1's read after the write (warp 1 does not wait at the barrier),
 * the read finds the write (TX6003 at the read); both name both lines.
 */
function raceOf(code: string, kind: "sh" | "gl"): [string, number, number] {
  const w = lineOf(here, `// @${kind}-write`);
  const r = lineOf(here, `// @${kind}-read`);
  return code === "TX6003" ? ["TX6003", r, w] : ["TX6013", w, r];
}

describe("write-after-read with three concurrent readers", () => {
  it("shared: the race names the reader of warp 1, on every schedule", () => {
    const vf = verify(sharedReaders(false));
    for (let seed = 0; seed < 6; seed++) {
      const { reports } = runSim(vf, [simZeros([128], "int32")], {
        hazards: "collect",
        simSeed: seed,
      });
      expect(
        reports.map((r) => [r.code, r.span?.line, r.notes[0]?.span?.line]),
        `seed ${seed}`,
      ).toEqual([raceOf(reports[0]!.code, "sh")]);
      expect(reports[0]!.message).toMatch(
        reports[0]!.code === "TX6013"
          ? /thread \(96, 0, 0\) of CTA \(0, 0, 0\) writes shared "\w+" bytes 0\.\.3, which thread \(32, 0, 0\) read/
          : /thread \(32, 0, 0\) of CTA \(0, 0, 0\) reads shared "\w+" bytes 0\.\.3, which thread \(96, 0, 0\) wrote/,
      );
    }
  });

  it("shared: when every reader takes part in the barrier, no report", () => {
    expect(simCollect(sharedReaders(true), [simZeros([128], "int32")])).toEqual([]);
  });

  it("global: the race names the reader of warp 1, on every schedule", () => {
    const vf = verify(globalReaders);
    for (let seed = 0; seed < 6; seed++) {
      const b = simTensor(
        Int32Array.from({ length: 32 }, (_, i) => i),
        {
          shape: [32],
          dtype: "int32",
        },
      );
      const { reports } = runSim(vf, [b, simZeros([128], "int32")], {
        hazards: "collect",
        simSeed: seed,
      });
      expect(
        reports.map((r) => [r.code, r.span?.line, r.notes[0]?.span?.line]),
        `seed ${seed}`,
      ).toEqual([raceOf(reports[0]!.code, "gl")]);
      expect(reports[0]!.message).toMatch(
        reports[0]!.code === "TX6013"
          ? /thread \(96, 0, 0\) of CTA \(0, 0, 0\) writes global "B" bytes 0\.\.3, which thread \(32, 0, 0\) read/
          : /thread \(32, 0, 0\) of CTA \(0, 0, 0\) reads global "B" bytes 0\.\.3, which thread \(96, 0, 0\) wrote/,
      );
    }
  });
});

describe("a read of never-written shared memory is still a read (TX6004, then TX6013)", () => {
  // Each thread writes S[tid] and reads S[(tid + 32) % 128] with no barrier: whichever warp
  // runs first, the pair of lines is reported as a race.
  const k = T.function("seedrace", { O: T.Tensor([128], "int32") }, ({ O }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const S = T.alloc_shared([128], "int32", { name: "S" });
    S.set([tid], tid); // @seed-write
    O.set([tid], S.get([tid.add(32).floormod(128)])); // @seed-read
  });

  it("every seed 0..9 gives TX6003 or TX6013 naming both lines in collect mode", () => {
    const vf = verify(k);
    const w = lineOf(here, "// @seed-write");
    const r = lineOf(here, "// @seed-read");
    for (let seed = 0; seed < 10; seed++) {
      const { reports } = runSim(vf, [simZeros([128], "int32")], {
        hazards: "collect",
        simSeed: seed,
      });
      const races = reports
        .filter((x) => x.code === "TX6003" || x.code === "TX6013")
        .map((x) => [x.code, x.span?.line, x.notes[0]?.span?.line]);
      expect(races.length, `seed ${seed}`).toBeGreaterThan(0);
      for (const x of races) {
        expect(x).toEqual(x[0] === "TX6003" ? ["TX6003", r, w] : ["TX6013", w, r]);
      }
      const unwritten = reports.find((x) => x.code === "TX6004");
      if (unwritten) expect(unwritten.message).toMatch(/if another thread writes it later/);
    }
  });
});
