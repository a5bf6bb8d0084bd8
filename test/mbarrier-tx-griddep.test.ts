// The standalone mbarrier.expect_tx / mbarrier.complete_tx (PTX ISA, sm_90: the tx-count of the
// current phase without an arrival) and griddepcontrol (PTX ISA, sm_90: programmatic dependent
// launch; no-ops on the simulator, which runs launches one after another): their PTX (inline
// snapshot, assembled by ptxas), the verifier's byte matching, and the simulator's phases.
import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";

/**
 * Thread 0 stores Data into shared memory, announces `expect` bytes and arrives; thread 32
 * completes `complete` bytes; every thread waits for phase 0, then copies the shared tile out.
 */
function txKernel(expect: number, complete: number): PrimFunc {
  return T.function(
    `tx_${expect}_${complete}`,
    { Data: T.Tensor([64], "int32"), Out: T.Tensor([64], "int32") },
    ({ Data, Out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const tile = T.alloc_shared([64], "int32", { name: "tile" });
      T.ptx.griddepcontrol.wait();
      T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 1));
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        for (const i of T.serial(64)) tile.set([i], Data.get([i]));
        T.ptx.mbarrier.expect_tx(bar.sub(0), expect);
        T.ptx.mbarrier.arrive(bar.sub(0));
      });
      T.if_(tid.eq(32), () => T.ptx.mbarrier.complete_tx(bar.sub(0), complete));
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      Out.set([tid], tile.get([tid]));
      T.ptx.griddepcontrol.launch_dependents();
    },
  );
}

function run(fn: PrimFunc): { codes: string[]; out: number[] } {
  const data = Int32Array.from({ length: 64 }, (_, i) => 7 * i - 100);
  const out = simZeros([64], "int32");
  const r = runSim(verify(fn), [simTensor(data, { shape: [64], dtype: "int32" }), out], {
    hazards: "collect",
  });
  return { codes: r.reports.map((e) => e.code), out: Array.from(out.toArray() as Int32Array) };
}

describe("mbarrier.expect_tx / complete_tx and griddepcontrol", () => {
  it("PTX: the relaxed cta forms and griddepcontrol, assembled by ptxas for sm_90", () => {
    const text = compileToPtx(txKernel(64, 64), { arch: "sm_90" }).text;
    assembleLater(text, "sm_90", "tx_64_64");
    const lines = text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /^(mbarrier\.(expect|complete)_tx|griddepcontrol)/.test(l));
    expect(lines).toMatchInlineSnapshot(`
      [
        "griddepcontrol.wait;",
        "mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r2], 64;",
        "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%r2], 64;",
        "griddepcontrol.launch_dependents;",
      ]
    `);
  });

  it("the phase completes when the arrival is in and complete_tx took the announced bytes", () => {
    const r = run(txKernel(64, 64));
    expect(r.codes).toEqual([]);
    expect(r.out).toEqual(Array.from({ length: 64 }, (_, i) => 7 * i - 100));
  });

  it("too few bytes completed: the wait never ends (TX6006); too many: TX6022", () => {
    expect(run(txKernel(64, 32)).codes).toContain("TX6006");
    expect(run(txKernel(64, 128)).codes).toContain("TX6022");
  });

  it("the verifier matches expect_tx against the block's complete_tx (TX4008)", () => {
    const fn = T.function("tx_block", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.mbarrier.expect_tx(bar.sub(0), 64);
      T.ptx.mbarrier.complete_tx(bar.sub(0), 32);
    });
    const e = errorOf(() => verify(fn));
    expect(e.code).toBe("TX4008");
    expect(e.message).toContain("expect_tx announces 64 bytes");
  });

  it("all three need sm_90 (TX4007)", () => {
    const e = errorOf(() => compileToPtx(txKernel(64, 64), { arch: "sm_80" }));
    expect(e.code).toBe("TX4007");
    const g = T.function("gd", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      T.ptx.griddepcontrol.launch_dependents();
    });
    expect(errorOf(() => compileToPtx(g, { arch: "sm_80" })).code).toBe("TX4007");
  });
});
