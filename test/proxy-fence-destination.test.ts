// The async proxy's writes need a proxy fence after generic-proxy writes of the same bytes, as its
// reads do (PTX ISA, fence.proxy.async: "accessing the same memory location across multiple
// proxies needs a cross-proxy fence"): a bulk store or bulk reduction into global bytes this CTA
// wrote with plain stores, or a bulk load into shared bytes written with plain stores, with no
// fence.proxy.async covering that state space on a causality path is TX6015. And a runtime
// mbarrier.try_wait parity other than 0 or 1 is TX6032 (PTX ISA, mbarrier.try_wait: "the valid
// values of phaseParity operand are 0 and 1").
import { describe, expect, it } from "vitest";
import { simCodes } from "./util/sim-codes.js";
import { T } from "tirx-ts";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { runSim, simZeros } from "@tirx-ts/runtime-sim";

const STORE = "cp.async.bulk.global.shared::cta.bulk_group";
const RED = "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32";
const LOAD = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes";

describe("a bulk store or reduction onto global bytes written through the generic proxy", () => {
  /** B written by plain stores, then a bulk store or reduction of S into it, fenced or not. */
  const kernel = (op: typeof STORE | typeof RED, fence: "all" | "shared::cta") =>
    T.function(
      `g_${fence === "all" ? "f" : "n"}_${op === RED ? "red" : "st"}`,
      { B: T.Tensor([64], "float32") },
      ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const S = T.alloc_shared([64], "float32");
        B.set([tid], T.float32(3));
        S.set([tid], T.float32(1));
        T.ptx.fence.proxy_async(fence);
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          T.cuda.tile.apply(T.ptx[op], B, S, { chunk_bytes: 256 });
          T.ptx.cp.async_.bulk.commit_group();
          T.ptx.cp.async_.bulk.wait_group(0);
        });
      },
    );
  const B = () => [simZeros([64], "float32")];

  it("with fence.proxy.async over all state spaces: no report", () => {
    for (const op of [STORE, RED] as const) {
      expect(simCodes(kernel(op, "all"), B)).toEqual([[], [], []]);
    }
  });

  it("with the shared-memory fence only: TX6015 naming the write", () => {
    for (const op of [STORE, RED] as const) {
      for (const c of simCodes(kernel(op, "shared::cta"), B)) expect(c).toEqual(["TX6015"]);
    }
    const r = runSim(verify(kernel(RED, "shared::cta")), B() as never, { hazards: "collect" });
    expect(r.reports[0]!.message).toMatch(
      /issues a bulk reduction \(async proxy\) updating global "B" byte 0, which thread \(0, 0, 0\) wrote through the generic proxy/,
    );
  });
});

describe("a bulk load into shared bytes written through the generic proxy", () => {
  const kernel = (fence: boolean) =>
    T.function(
      fence ? "s_fenced" : "s_unfenced",
      { A: T.Tensor([64], "float32"), B: T.Tensor([64], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const S = T.alloc_shared([64], "float32");
        const bar = T.alloc_shared([1], "uint64");
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        S.set([tid], T.float32(7));
        if (fence) T.ptx.fence.proxy_async();
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 256);
          T.cuda.tile.apply(T.ptx[LOAD], S, A, { chunk_bytes: 256, mbar: bar.sub(0) });
        });
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        B.set([tid], S.get([tid]));
      },
    );
  const AB = () => [simZeros([64], "float32"), simZeros([64], "float32")];

  it("fenced: no report; unfenced: TX6015", () => {
    expect(simCodes(kernel(true), AB)).toEqual([[], [], []]);
    for (const c of simCodes(kernel(false), AB)) expect(c).toContain("TX6015");
  });
});

describe("mbarrier.try_wait's phase parity", () => {
  const kernel = T.function("parity", { n: T.int32 }, ({ n }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64");
    T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 32));
    T.cuda.cta_sync();
    T.ptx.mbarrier.arrive(bar.sub(0));
    T.ptx.mbarrier.try_wait(bar.sub(0), n);
  });

  it("the completed phase's parity 0 is taken; 2 (a phase index passed whole) is TX6032", () => {
    expect(simCodes(kernel, () => [0], [0])).toEqual([[]]);
    expect(simCodes(kernel, () => [2], [0])[0]).toContain("TX6032");
  });
});
