import { describe, expect, it } from "vitest";
import { verify, type PrimFunc, type TilePlan, type VerifiedFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { lineOf, simCollect } from "./helpers.js";

// Runtime contracts: ranges the verifier checks on static values (TX4012, TX4008, TX3014/TX4004),
// checked by the simulator at the statement's line when the value is only known at run time.
const here = import.meta.url;
const load = T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!;
const f32 = (n: number) =>
  simTensor(
    Float32Array.from({ length: n }, (_, i) => i + 1),
    { shape: [n], dtype: "float32" },
  );

/** Thread 0 initialises an mbarrier with the runtime `count`, arrives once and waits. */
const initCount: PrimFunc = T.function("init_count", { count: T.int32 }, ({ count }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  const tid = T.cuda.thread_idx("x");
  const bar = T.alloc_shared([1], "uint64");
  T.if_(tid.eq(0), () => {
    T.ptx.mbarrier.init(bar.sub(0), count); // @init-count
    T.ptx.mbarrier.arrive(bar.sub(0));
  });
});

/** Thread 0 announces 1024 + `extra` bytes and loads 1024 bytes on one mbarrier. */
const expectTx: PrimFunc = T.function(
  "expect_tx_runtime",
  { A: T.Tensor([256], "float32"), B: T.Tensor([256], "float32"), extra: T.int32 },
  ({ A, B, extra }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const s = T.alloc_shared([256], "float32");
    const bar = T.alloc_shared([1], "uint64");
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), extra.add(1024)); // @expect
      T.cuda.tile.apply(load, s, A, { chunk_bytes: 1024, mbar: bar.sub(0) }); // @bulk-load
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      for (const j of T.range(256)) B.set([j], s.get([j]));
    });
  },
);

/** A 16-byte cp.async per thread from A (64 float32) into shared; `off` is unused by the kernel. */
const cpAsync: PrimFunc = T.function(
  "cp_async_offset",
  { A: T.Tensor([128], "float32"), off: T.int32 },
  ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 16 }) });
    const s = T.alloc_shared([64], "float32");
    const src = A.sub(T.slice(0, 64)).rearrange("(t v) -> t v", { v: 4 });
    const dst = s.rearrange("(t v) -> t v", { v: 4 });
    // @cp-async
    T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, dst, src, {
      chunk_bytes: 16,
      scope: "thread",
    });
    T.ptx.cp.async_.commit_group();
    T.ptx.cp.async_.wait_group(0);
  },
);

describe("runtime contracts", () => {
  it.each([0, -1, 2 ** 20])("mbarrier.init count %d at run time is TX6020 at the init", (c) => {
    // The arrive after the refused init then finds no initialised mbarrier (TX6004).
    const r = simCollect(initCount, [c]);
    expect(r.map((e) => e.code)).toEqual(["TX6020", "TX6004"]);
    expect(r[0]!.span?.line).toBe(lineOf(here, "@init-count"));
    expect(r[0]!.message).toContain(`count ${c}`);
  });

  it.each([1, 2 ** 20 - 1])("mbarrier.init count %d is in range (no report)", (c) => {
    expect(simCollect(initCount, [c]).map((e) => e.code)).not.toContain("TX6020");
  });

  it("expect_tx announcing fewer bytes than land is TX6022 at the copy, noting the expect_tx", () => {
    const r = simCollect(expectTx, [f32(256), simZeros([256], "float32"), -16]);
    const e = r.find((x) => x.code === "TX6022");
    expect(e?.span?.line).toBe(lineOf(here, "@bulk-load"));
    expect(e?.notes[0]?.span?.line).toBe(lineOf(here, "@expect"));
    expect(e?.message).toContain("16 bytes more");
  });

  it("expect_tx matching the bytes runs clean and copies", () => {
    const b = simZeros([256], "float32");
    expect(simCollect(expectTx, [f32(256), b, 0])).toEqual([]);
    expect(Buffer.from(b.toBytes()).equals(Buffer.from(f32(256).toBytes()))).toBe(true);
  });

  it("a cp.async address that is not chunk-aligned at run time is TX6021 (white box)", () => {
    // The verifier refuses addresses it cannot prove aligned (TX3014), so this test swaps the
    // verified plan's source base for the runtime scalar `off`, as if the proof had failed.
    const vf = verify(cpAsync);
    const plans = vf.plans as Map<Parameters<VerifiedFunc["plans"]["get"]>[0], TilePlan>;
    const [node, plan] = [...plans][0]!;
    const off = vf.fn.params.find((p) => p.kind === "scalar")!;
    if (off.kind !== "scalar" || plan.kind !== "cp.async") throw new Error("unexpected plan");
    plans.set(node, { ...plan, src: { ...plan.src, baseBytes: off.var } });
    const r4 = runSim(vf, [f32(128), 4], { hazards: "collect" }).reports;
    expect(r4.map((e) => e.code)).toContain("TX6021");
    expect(r4.find((e) => e.code === "TX6021")!.span?.line).toBe(lineOf(here, "@cp-async"));
    expect(r4.find((e) => e.code === "TX6021")!.message).toContain("global byte offset 4");
  });
});
