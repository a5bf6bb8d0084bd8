// Every operand built from a view counts the view's elements and is turned into the buffer's
// elements by one helper (core's `bufferElementOffset`): mbarrier operands given as views of
// another dtype, tile-pattern mbar parameters, and `ptr` of narrower views whose offsets are
// runtime expressions provably on a whole buffer element.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";

/** The line of the caller of `here()` plus `d`. */
function here(d = 0): number {
  return Number(new Error().stack!.split("\n")[2]!.match(/:(\d+):\d+\)?$/)![1]) + d;
}

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return isTirxError(e) ? `${e.code}@${e.span?.line ?? "?"}: ${e.message}` : String(e);
  }
  return undefined;
};

const kernel = (body: () => void, block = 32): PrimFunc =>
  T.function("k", {}, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
    body();
  });

describe("an mbarrier operand given as a view of another dtype", () => {
  const barrierKernel = (sub: number, viaPtr: boolean): PrimFunc =>
    kernel(() => {
      const tid = T.cuda.thread_idx("x");
      const bars = T.alloc_shared([4], "uint64", { name: "bars" });
      const v = bars.view_as("uint32").sub(sub);
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(viaPtr ? v.ptr() : v, 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive(bars.sub(1)));
      T.ptx.mbarrier.try_wait(bars.sub(1), 0);
    });

  it("uint32 element 2 is bars[1] (byte 8), as a view and as its ptr", () => {
    for (const viaPtr of [false, true]) {
      const fn = barrierKernel(2, viaPtr);
      const init = compileToPtx(fn, { arch: "sm_90a" })
        .text.split("\n")
        .find((l) => l.includes("mbarrier.init"))!;
      expect(init).toMatch(/\+8\]/);
      expect(runSim(verify(fn), [], { hazards: "collect" }).reports).toEqual([]);
    }
  });

  it("uint32 element 1 (byte 4) is refused at the author's line (TX4011, TX1014 for ptr)", () => {
    let line = 0;
    const err = code(() =>
      kernel(() => {
        const bars = T.alloc_shared([4], "uint64", { name: "bars" });
        line = here(1);
        T.ptx.mbarrier.init(bars.view_as("uint32").sub(1), 1);
      }),
    );
    expect(err).toMatch(new RegExp(`^TX4011@${line}: .*whole uint64 element.*1 more than`));
    const err2 = code(() =>
      kernel(() => {
        const bars = T.alloc_shared([4], "uint64", { name: "bars" });
        line = here(1);
        T.ptx.mbarrier.init(bars.view_as("uint32").sub(1).ptr(), 1);
      }),
    );
    expect(err2).toMatch(new RegExp(`^TX1014@${line}: `));
  });

  it("a uint64 view of a uint8 buffer is refused, saying views of other buffers are not mbarriers", () => {
    let line = 0;
    const err = code(() =>
      kernel(() => {
        const raw = T.alloc_shared([16], "uint8", { name: "raw", align: 8 });
        line = here(1);
        T.ptx.mbarrier.init(raw.view_as("uint64").sub(0), 1);
      }),
    );
    expect(err).toMatch(new RegExp(`^TX4011@${line}: .*uint64 view of a buffer of another dtype`));
  });

  it("the mbar of a bulk copy (tile pattern) counts the view's elements too", () => {
    const fn = T.function(
      "bulk",
      { A: T.Tensor([64], "float32"), O: T.Tensor([64], "float32") },
      ({ A, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([64], "float32", { name: "s", align: 128 });
        const bars = T.alloc_shared([2], "uint64", { name: "bars" });
        const bar1 = bars.view_as("uint32").sub(2);
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bars.sub(1), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bars.sub(1), 256);
          T.cuda.tile.apply(
            T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"],
            s,
            A,
            { chunk_bytes: 256, mbar: bar1 },
          );
        });
        T.ptx.mbarrier.try_wait(bars.sub(1), 0);
        O.set([tid], s.get([tid]));
      },
    );
    const a = Array.from({ length: 64 }, (_, i) => i);
    const o = simZeros([64], "float32");
    const r = runSim(verify(fn), [simTensor(a, { shape: [64], dtype: "float32" }), o], {
      hazards: "collect",
    });
    expect(r.reports).toEqual([]);
    expect(Array.from(o.toArray() as Float32Array)).toEqual(a);
  });
});

describe("ptr of a narrower view at a runtime offset", () => {
  it("accepts offsets provably on a whole buffer element and addresses them exactly", () => {
    // ldmatrix x4 of a 16×16 float16 tile held in uint32 words, row addresses from the lane.
    const fn = T.function(
      "ldm",
      { A: T.Tensor([16, 16], "float16"), O: T.Tensor([32, 8], "float16") },
      ({ A, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const lane = T.cuda.thread_idx("x");
        const t = T.alloc_shared([16, 8], "uint32", { name: "raw", align: 128 }).view_as("float16");
        for (const i of T.range(8)) {
          const e = lane.add(i.mul(32));
          t.set([e.floordiv(16), e.mod(16)], A.get([e.floordiv(16), e.mod(16)]));
        }
        T.cuda.cta_sync();
        const f = T.alloc_local([8], "float16", { name: "f" });
        const r = lane.mod(8).add(lane.floordiv(8).mod(2).mul(8));
        T.ptx.ldmatrix(false, 4, ".b16", f, 0, t.ptr([r, lane.floordiv(16).mul(8)]));
        for (const i of T.unroll(8)) O.set([lane, i], f.get([i]));
      },
    );
    const a = Array.from({ length: 256 }, (_, i) => i);
    const o = simZeros([32, 8], "float16");
    const rep = runSim(verify(fn), [simTensor(a, { shape: [16, 16], dtype: "float16" }), o], {
      hazards: "collect",
    });
    expect(rep.reports).toEqual([]);
    const got = o.toArray() as Float32Array;
    let bad = 0;
    for (let l = 0; l < 32; l++) {
      for (let i = 0; i < 8; i++) {
        const j = i >> 1;
        const row = 8 * (j % 2) + (l >> 2);
        const col = 8 * (j >> 1) + 2 * (l % 4) + (i & 1);
        if (got[l * 8 + i] !== a[row * 16 + col]) bad++;
      }
    }
    expect(bad).toBe(0);
  });

  it("accepts k·16 columns and wg·64 rows of a swizzled uint32 tile viewed as float16", () => {
    expect(
      code(() =>
        kernel(() => {
          const tid = T.cuda.thread_idx("x");
          const wg = T.let_("wg", tid.floordiv(128));
          const sA = T.alloc_shared([128, 32], "uint32", {
            name: "rawA",
            align: 1024,
            layout: T.swizzle_mode("128B"),
          }).view_as("float16");
          for (const kk of T.unroll(4)) {
            T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0, kk.mul(16)]), 16, 1024, 3);
          }
          T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([wg.mul(64), 0]), 16, 1024, 3);
          T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([tid, tid.shl(1)]), 16, 1024, 3);
        }, 256),
      ),
    ).toBeUndefined();
  });

  it("refuses offsets not provably a whole buffer element (TX1014 at the author's line)", () => {
    let line = 0;
    const err = code(() =>
      kernel(() => {
        const tid = T.cuda.thread_idx("x");
        const t = T.alloc_shared([16, 8], "uint32", { name: "raw" }).view_as("float16");
        line = here(1);
        t.ptr([0, tid]);
      }),
    );
    expect(err).toMatch(new RegExp(`^TX1014@${line}: .*not provably a multiple of 2`));
    const err2 = code(() =>
      kernel(() => {
        const tid = T.cuda.thread_idx("x");
        const t = T.alloc_shared([16, 8], "uint32", { name: "raw" }).view_as("float16");
        line = here(1);
        t.ptr([tid, tid.mul(4).add(3)]);
      }),
    );
    expect(err2).toMatch(new RegExp(`^TX1014@${line}: .*1 more than a multiple of 2`));
  });
});
