// Lanes of one warp storing to the same bytes in one store instruction (runtime-sim
// exec/store-instances.ts; docs/conformance-memory-model.md, "Stores of one instruction"): no race
// within one instance of one instruction of one warp; two warps, two statements or two loop
// iterations stay TX6014. Every kernel runs on closures (the reference) and on the fast ways
// (generated functions, deferred runs of accesses, vector loops), under lockstep and a varied
// schedule, in collect mode (and throw mode when there are reports), with the same outcome
// (test/util/first-diff.ts). Report lines are marked `// @<name>`.
import { describe, expect, it } from "vitest";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { verify, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { runSim, simTensor, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { firstDiff, REF } from "./util/first-diff.js";
import { markers } from "./util/markers.js";

const { at } = markers(import.meta.url);

/** Inputs: `A[i] = i + 1` (int32, 64 elements); outputs zero. */
const input = (): SimTensor =>
  simTensor(
    Array.from({ length: 64 }, (_, i) => i + 1),
    { shape: [64], dtype: "int32" },
  );

/**
 * The reports ([code, line]) and the output of `k` on (A, out), collecting hazards on the closures;
 * every fast way under seeds 0 and 2 must give the same outcome, in collect mode and, when there
 * are reports, in throw mode.
 */
function run(k: PrimFunc, outLen = 32): { reports: [string, number?][]; out: number[] } {
  const args = (): KernelArg[] => [input(), simZeros([outLen], "int32")];
  const a = args();
  const r = runSim(verify(k), a, { hazards: "collect", ...REF }).reports;
  const modes: ("collect" | "throw")[] = r.length > 0 ? ["collect", "throw"] : ["collect"];
  expect(firstDiff(k, args, [0, 2], modes)).toBeUndefined();
  return {
    reports: r.map((e) => [e.code, e.span?.line]),
    out: Array.from((a[1] as SimTensor).toArray(), Number),
  };
}

/**
 * `block` threads; those with `tid < active` store `value(tid)` at `s[index(tid)]` of a shared
 * int32 buffer (`times` executions of one statement, and a second statement with `second`), then
 * after a cta_sync thread i < 32 copies `s[i]` to `out[i]`.
 */
function sharedKernel(o: {
  block: number;
  index: (tid: PrimExpr) => PrimExpr;
  value: "same" | "tid" | "load";
  active?: number;
  times?: number;
  second?: boolean;
}): PrimFunc {
  return T.function(
    "shared_same",
    { A: T.Tensor([64], "int32"), out: T.Tensor([32], "int32") },
    ({ A, out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: o.block }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "int32");
      T.if_(tid.lt(32), () => s.set([tid], T.int32(0)));
      T.cuda.cta_sync();
      const v = (): PrimExpr =>
        o.value === "same" ? T.int32(7) : o.value === "tid" ? tid : A.get([tid]);
      T.if_(tid.lt(o.active ?? o.block), () => {
        for (const _ of T.range(o.times ?? 1)) {
          s.set([o.index(tid)], v()); // @sharedStore
        }
        if (o.second) s.set([o.index(tid)], v()); // @sharedSecond
      });
      T.cuda.cta_sync();
      T.if_(tid.lt(32), () => out.set([tid], s.get([tid])));
    },
  );
}

/** As sharedKernel, storing to `out[index(tid)]` directly. */
function globalKernel(o: {
  block: number;
  index: (tid: PrimExpr) => PrimExpr;
  value: "same" | "tid" | "load";
  second?: boolean;
}): PrimFunc {
  return T.function(
    "global_same",
    { A: T.Tensor([64], "int32"), out: T.Tensor([32], "int32") },
    ({ A, out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: o.block }) });
      const tid = T.cuda.thread_idx("x");
      const v = (): PrimExpr =>
        o.value === "same" ? T.int32(7) : o.value === "tid" ? tid : A.get([tid]);
      out.set([o.index(tid)], v()); // @globalStore
      if (o.second) out.set([o.index(tid)], v()); // @globalSecond
    },
  );
}

const word = (): PrimExpr => T.int32(0);
const half = (tid: PrimExpr): PrimExpr => tid.mod(16);
const halfStrided = (tid: PrimExpr): PrimExpr => tid.mod(16).mul(2);

describe("stores of one instruction by lanes of one warp", () => {
  it("shared: 32 lanes storing one value to one word is no race; the value lands", () => {
    const r = run(sharedKernel({ block: 32, index: word, value: "same" }));
    expect(r.reports).toEqual([]);
    expect(r.out[0]).toBe(7);
  });

  it("shared: different values in one instruction are no race; the highest active lane's lands", () => {
    const r = run(sharedKernel({ block: 32, index: word, value: "tid", active: 20 }));
    expect(r.reports).toEqual([]);
    expect(r.out[0]).toBe(19);
  });

  it("shared: a batched copy whose two half-warps store the same words (a run, then elements)", () => {
    // Lanes 0..15 store s[0..15] (one run of 64 bytes), lanes 16..31 the same words again.
    const contiguous = run(sharedKernel({ block: 32, index: half, value: "load" }));
    expect(contiguous.reports).toEqual([]);
    const A = (i: number): number => i + 1;
    expect(contiguous.out.slice(0, 16)).toEqual(Array.from({ length: 16 }, (_, i) => A(i + 16)));
    const strided = run(sharedKernel({ block: 32, index: halfStrided, value: "load" }));
    expect(strided.reports).toEqual([]);
    expect(strided.out.filter((_, i) => i % 2 === 0 && i < 32)).toEqual(
      Array.from({ length: 16 }, (_, i) => A(i + 16)),
    );
  });

  it("shared: the same store in two warps, two statements or two loop iterations is TX6014", () => {
    expect(run(sharedKernel({ block: 64, index: word, value: "same" })).reports).toEqual([
      ["TX6014", at("sharedStore")],
    ]);
    expect(run(sharedKernel({ block: 64, index: half, value: "load" })).reports).toEqual([
      ["TX6014", at("sharedStore")],
    ]);
    expect(
      run(sharedKernel({ block: 32, index: word, value: "same", second: true })).reports,
    ).toEqual([["TX6014", at("sharedSecond")]]);
    expect(run(sharedKernel({ block: 32, index: word, value: "same", times: 2 })).reports).toEqual([
      ["TX6014", at("sharedStore")],
    ]);
  });

  it("global: one instruction of one warp is no race (one word, a run then elements, strided)", () => {
    const one = run(globalKernel({ block: 32, index: word, value: "tid" }));
    expect(one.reports).toEqual([]);
    expect(one.out[0]).toBe(31);
    const A = (i: number): number => i + 1;
    const contiguous = run(globalKernel({ block: 32, index: half, value: "load" }));
    expect(contiguous.reports).toEqual([]);
    expect(contiguous.out.slice(0, 16)).toEqual(Array.from({ length: 16 }, (_, i) => A(i + 16)));
    const strided = run(globalKernel({ block: 32, index: halfStrided, value: "load" }));
    expect(strided.reports).toEqual([]);
  });

  it("global: two statements or two warps are TX6014", () => {
    expect(
      run(globalKernel({ block: 32, index: word, value: "same", second: true })).reports,
    ).toEqual([["TX6014", at("globalSecond")]]);
    expect(run(globalKernel({ block: 64, index: half, value: "load" })).reports).toEqual([
      ["TX6014", at("globalStore")],
    ]);
  });
});
