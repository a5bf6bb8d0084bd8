// redux.sync (PTX ISA, redux.sync; CUDA __reduce_*_sync, sm_80): the PTX of each operation
// (inline snapshot, assembled by ptxas), the float32 forms refused (sm_100a only), and the
// simulator's member-mask rule on a half-warp mask. The values of every op × dtype are checked
// by the differential test (test/diff/warp-cases.ts).
import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "../util/ptxas-deferred.js";
import { errorOf } from "../util/error-of.js";

/** Lanes `lo`.. of each warp reduce X with mask `mask` into Y; the others store 0. */
function halfWarp(mask: number, lo: number): PrimFunc {
  return T.function(
    "redux_half",
    { X: T.Tensor([64], "int32"), Y: T.Tensor([64], "int32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      T.if_(tid.floormod(32).lt(lo), () =>
        Y.set([tid], T.cuda.__reduce_max_sync(mask, X.get([tid]))),
      );
    },
  );
}

describe("redux.sync", () => {
  it("one instruction per op, .s32/.u32 for add/min/max and .b32 for the bit operations", () => {
    const fn = T.function(
      "redux_all",
      { A: T.Tensor([32], "int32"), B: T.Tensor([32], "uint32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const a = A.get([tid]);
        const b = B.get([tid]);
        const s = T.cuda.__reduce_add_sync(0xffffffff, a);
        const m = T.cuda.__reduce_min_sync(0xffffffff, b);
        const x = T.cuda.__reduce_max_sync(0xffffffff, a);
        const n = T.cuda.__reduce_and_sync(0xffffffff, b);
        const o = T.cuda.__reduce_or_sync(0xffffffff, a);
        const r = T.cuda.__reduce_xor_sync(0xffffffff, b);
        A.set([tid], s.add(x).add(o));
        B.set([tid], m.add(n).add(r));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_80" }).text;
    assembleLater(text, "sm_80", "redux_all");
    expect(
      text
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l.startsWith("redux")),
    ).toMatchInlineSnapshot(`
      [
        "redux.sync.add.s32 %r3, %r2, 4294967295;",
        "redux.sync.min.u32 %r5, %r4, 4294967295;",
        "redux.sync.max.s32 %r7, %r6, 4294967295;",
        "redux.sync.and.b32 %r9, %r8, 4294967295;",
        "redux.sync.or.b32 %r11, %r10, 4294967295;",
        "redux.sync.xor.b32 %r13, %r12, 4294967295;",
      ]
    `);
  });

  it("float32 min/max are refused (sm_100a only, TX2005), as is a 64-bit value", () => {
    const f = errorOf(() =>
      T.function("rf", { A: T.Tensor([32], "float32") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.cuda.__reduce_max_sync(0xffffffff, A.get([0]));
      }),
    );
    expect(f.code).toBe("TX2005");
    expect(f.message).toContain("sm_100a");
    const g = errorOf(() =>
      T.function("rg", { A: T.Tensor([32], "int64") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.cuda.__reduce_add_sync(0xffffffff, A.get([0]));
      }),
    );
    expect(g.code).toBe("TX2005");
  });

  it("a half-warp mask reduces the member lanes; a lane outside the mask that executes it is TX6011", () => {
    const x = Int32Array.from({ length: 64 }, (_, i) => (((i * 2654435761) >>> 0) % 1000) - 500);
    const y = simZeros([64], "int32");
    const r = runSim(
      verify(halfWarp(0xffff, 16)),
      [simTensor(x, { shape: [64], dtype: "int32" }), y],
      { hazards: "collect" },
    );
    expect(r.reports).toEqual([]);
    const want = Array.from({ length: 64 }, (_, i) => {
      if (i % 32 >= 16) return 0;
      const base = i - (i % 32);
      return Math.max(...Array.from(x.subarray(base, base + 16)));
    });
    expect(Array.from(y.toArray() as Int32Array)).toEqual(want);
    const bad = runSim(
      verify(halfWarp(0xffff, 17)),
      [simTensor(x, { shape: [64], dtype: "int32" }), simZeros([64], "int32")],
      { hazards: "collect" },
    );
    expect(bad.reports.map((e) => e.code)).toContain("TX6011");
  });
});
