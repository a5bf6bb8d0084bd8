import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { verify, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { runSim, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { lineOf } from "./helpers.js";

// Lanes of one warp storing the same bytes in one store instruction (exec/same-instruction.ts;
// docs/conformance-memory-model.md, "Stores of one instruction"). Report lines are marked
// `// @<name>`.
const here = import.meta.url;

/** Run `k` on `args` collecting hazards: [code, line] of each report, and the reports. */
function reportsOf(
  k: PrimFunc,
  args: SimTensor[],
): { at: [string, number?][]; r: readonly TirxError[] } {
  const r = runSim(verify(k), args, { hazards: "collect" }).reports;
  return { at: r.map((e) => [e.code, e.span?.line]), r };
}

/**
 * A kernel of `block` threads whose threads with `tid < active` store `value(tid)` to the word
 * `s[0]` of shared memory (in `times` executions of one statement), then thread 0 copies it to
 * `out[0]` after a cta_sync; with `second`, a second statement stores to the word again.
 */
function sharedKernel(o: {
  block: number;
  active?: number;
  value: "same" | "tid";
  times?: number;
  second?: boolean;
}): PrimFunc {
  return T.function("shared_word", { out: T.Tensor([1], "int32") }, ({ out }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: o.block }) });
    const tid = T.cuda.thread_idx("x");
    const s = T.alloc_shared([1], "int32");
    const v = o.value === "same" ? T.int32(7) : tid;
    T.if_(tid.lt(o.active ?? o.block), () => {
      for (const _ of T.range(o.times ?? 1)) {
        s.set([0], v); // @sharedStore
      }
      if (o.second) s.set([0], v); // @sharedSecond
    });
    T.cuda.cta_sync();
    T.if_(tid.eq(0), () => out.set([0], s.get([0])));
  });
}

/** As sharedKernel, to the global word `out[0]` (no copy). */
function globalKernel(o: { block: number; value: "same" | "tid"; second?: boolean }): PrimFunc {
  return T.function("global_word", { out: T.Tensor([1], "int32") }, ({ out }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: o.block }) });
    const tid = T.cuda.thread_idx("x");
    const v = o.value === "same" ? T.int32(7) : tid;
    out.set([0], v); // @globalStore
    if (o.second) out.set([0], v); // @globalSecond
  });
}

/** The highest of the lanes 0..active-1: the lane whose value the simulator keeps. */
const highestLane = (active: number): number =>
  Math.max(...Array.from({ length: active }, (_, i) => i));

describe("stores of one instruction by lanes of one warp", () => {
  it("shared: 32 lanes storing one value in one instruction is no race; the value lands", () => {
    const out = simZeros([1], "int32");
    const { at } = reportsOf(sharedKernel({ block: 32, value: "same" }), [out]);
    expect(at).toEqual([]);
    expect(out.toArray()[0]).toBe(7);
  });

  it("shared: different values in one instruction are TX6028, the highest active lane's lands", () => {
    const out = simZeros([1], "int32");
    const { at, r } = reportsOf(sharedKernel({ block: 32, active: 20, value: "tid" }), [out]);
    expect(at).toEqual([["TX6028", lineOf(here, "// @sharedStore")]]);
    expect(r[0]!.message).toMatch(/lanes 0 and 1 of one warp\) store different values \(0 and 1\)/);
    expect(out.toArray()[0]).toBe(highestLane(20));
  });

  it("shared: the same store in two warps, two statements, or two loop iterations is TX6014", () => {
    const line = lineOf(here, "// @sharedStore");
    const twoWarps = reportsOf(sharedKernel({ block: 64, value: "same" }), [
      simZeros([1], "int32"),
    ]);
    expect(twoWarps.at).toEqual([["TX6014", line]]);
    expect(twoWarps.r[0]!.message).toMatch(
      /thread \(32, 0, 0\) .* which thread \(31, 0, 0\) wrote/,
    );
    const second = reportsOf(sharedKernel({ block: 32, value: "same", second: true }), [
      simZeros([1], "int32"),
    ]);
    expect(second.at).toEqual([["TX6014", lineOf(here, "// @sharedSecond")]]);
    expect(second.r[0]!.notes[0]?.span?.line).toBe(line);
    const loop = reportsOf(sharedKernel({ block: 32, value: "same", times: 2 }), [
      simZeros([1], "int32"),
    ]);
    expect(loop.at).toEqual([["TX6014", line]]);
  });

  it("global: one value in one instruction is no race; different values TX6028; two statements TX6014", () => {
    const out = simZeros([1], "int32");
    expect(reportsOf(globalKernel({ block: 32, value: "same" }), [out]).at).toEqual([]);
    expect(out.toArray()[0]).toBe(7);
    const diff = simZeros([1], "int32");
    const d = reportsOf(globalKernel({ block: 32, value: "tid" }), [diff]);
    expect(d.at).toEqual([["TX6028", lineOf(here, "// @globalStore")]]);
    expect(diff.toArray()[0]).toBe(highestLane(32));
    const two = reportsOf(globalKernel({ block: 32, value: "same", second: true }), [
      simZeros([1], "int32"),
    ]);
    expect(two.at).toEqual([["TX6014", lineOf(here, "// @globalSecond")]]);
    const warps = reportsOf(globalKernel({ block: 64, value: "same" }), [simZeros([1], "int32")]);
    expect(warps.at).toEqual([["TX6014", lineOf(here, "// @globalStore")]]);
  });
});
