// wgmma.mma_async, its descriptors, fence/commit/wait and setmaxnreg: simulator math against a
// float64 reference written here from the PTX ISA's figures (the m64nNk16 D fragment; K-major
// canonical shared layouts), the hazards of the async accumulators and shared operands, the
// verifier's contracts at the author's line, and the PTX (inline snapshot, ptxas for sm_90a).
import { describe, expect, it } from "vitest";
import {
  decodeMatrixDescriptor,
  encodeMatrixDescriptor,
  isTirxError,
  verify,
  type PrimFunc,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleMerged } from "../util/ptx-merge.js";
import { makeGemmHopper } from "../../examples/gemm_hopper.js";
import { storeAccumulators } from "./fragment.js";
import { intsFrom } from "../util/lcg.js";

type AB = "float16" | "bfloat16";

interface Opts {
  readonly n: number;
  readonly ab: AB;
  /** TMA-numbered swizzle of both tiles: 0 none, 2 64B, 3 128B. */
  readonly swizzle: 0 | 2 | 3;
  /** A from registers (mma.sync A fragment), loaded from shared with plain loads. */
  readonly aRegs?: boolean;
  /** Misuse: read the accumulators before wgmma.wait_group. */
  readonly readEarly?: boolean;
  /** Misuse: overwrite B's tile before wgmma.wait_group. */
  readonly overwriteEarly?: boolean;
  /** Misuse (A in registers): overwrite A's fragment before wgmma.wait_group. */
  readonly aWriteEarly?: boolean;
  readonly scaleA?: number;
}

/**
 * One warpgroup computes D (64 × n, float32) = A (64 × K) · Bᵀ (B n × K), K = 64 / 32 / 16 for
 * the 128B / 64B / no-swizzle layouts (one swizzle row of 2-byte elements; 16 for none).
 * Element (r, k) of a tile lives at logical byte (r >> 3)·SBO + (r & 7)·W + 2k (W = row bytes)
 * for swizzled tiles (the buffer's swizzle applies on access), and at
 * (r >> 3)·SBO + (k >> 3)·LBO + (r & 7)·16 + 2(k & 7) in the no-swizzle core-matrix layout.
 */
function kernel(o: Opts): { fn: PrimFunc; K: number } {
  const K = o.swizzle === 3 ? 64 : o.swizzle === 2 ? 32 : 16;
  const W = 2 * K;
  const n = o.n;
  const fn = T.function(
    `wg_${o.ab}_${n}_${o.swizzle}${o.aRegs ? "_rs" : ""}`,
    {
      A: T.Tensor([64, K], o.ab),
      B: T.Tensor([n, K], o.ab),
      D: T.Tensor([64, n], "float32"),
    },
    ({ A, B, D }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const layout =
        o.swizzle === 0 ? {} : { layout: T.swizzle_mode(o.swizzle === 3 ? "128B" : "64B") };
      // Flat tiles: byte offset / 2 of element (r, k) as above.
      const sA = T.alloc_shared([64 * K], o.ab, { name: "sA", ...layout });
      const sB = T.alloc_shared([n * K], o.ab, { name: "sB", ...layout });
      const SBO = o.swizzle === 0 ? 128 * (K / 8) : 8 * W;
      const LBO = 128;
      const at = (r: ReturnType<typeof tid.add>, k: ReturnType<typeof tid.add>) =>
        o.swizzle === 0
          ? r
              .floordiv(8)
              .mul(SBO / 2)
              .add(k.floordiv(8).mul(LBO / 2))
              .add(r.mod(8).mul(8))
              .add(k.mod(8))
          : r
              .floordiv(8)
              .mul(SBO / 2)
              .add(r.mod(8).mul(W / 2))
              .add(k);
      for (const i of T.range((64 * K) / 128)) {
        const e = tid.add(i.mul(128));
        sA.set([at(e.floordiv(K), e.mod(K))], A.get([e.floordiv(K), e.mod(K)]));
      }
      for (const i of T.range((n * K) / 128)) {
        const e = tid.add(i.mul(128));
        sB.set([at(e.floordiv(K), e.mod(K))], B.get([e.floordiv(K), e.mod(K)]));
      }
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      const acc = T.alloc_local([n / 2], "float32", { name: "acc" });
      // One 8-element A fragment per k16 step: a wgmma may read its A registers until
      // wgmma.wait_group, so the next step's fragment cannot reuse them.
      const a = T.alloc_local([8 * (K / 16)], o.ab, { name: "a" });
      const warp = tid.floordiv(32);
      const lane = tid.mod(32);
      T.ptx.wgmma.fence();
      for (let kk = 0; kk < K / 16; kk++) {
        const dB = T.ptx.wgmma.encode_matrix_descriptor(
          sB.ptr([o.swizzle === 0 ? kk * 64 : kk * 16]),
          LBO,
          SBO,
          o.swizzle,
        );
        if (o.aRegs) {
          // mma.sync's A fragment: a0,a1 (g, 2t..), a2,a3 (g+8), a4..a7 the same at k + 8.
          for (let i = 0; i < 8; i++) {
            const r = warp
              .mul(16)
              .add(lane.floordiv(4))
              .add(i % 4 >= 2 ? 8 : 0);
            const k = lane
              .mod(4)
              .mul(2)
              .add((i % 2) + (i >= 4 ? 8 : 0) + kk * 16);
            a.set([kk * 8 + i], sA.get([at(r, k)]));
          }
          // The fragment's registers were just written: a fence orders them before the wgmma
          // reads them (PTX ISA, wgmma.fence).
          T.ptx.wgmma.fence();
          T.ptx.wgmma.mma_async(`m64n${n}k16`, o.ab, acc, 0, a, dB, {
            scale_d: kk === 0 ? 0 : 1,
            a_offset: kk * 8,
          });
        } else {
          const dA = T.ptx.wgmma.encode_matrix_descriptor(
            sA.ptr([o.swizzle === 0 ? kk * 64 : kk * 16]),
            LBO,
            SBO,
            o.swizzle,
          );
          T.ptx.wgmma.mma_async(`m64n${n}k16`, o.ab, acc, 0, dA, dB, {
            scale_d: kk === 0 ? 0 : 1,
            scale_a: o.scaleA ?? 1,
          });
        }
      }
      T.ptx.wgmma.commit_group();
      if (o.aWriteEarly) a.set([0], T.float16(0).cast(o.ab));
      if (o.readEarly) {
        // The same element the thread stores below, so that only the early read is wrong.
        D.set([warp.mul(16).add(lane.floordiv(4)), lane.mod(4).mul(2)], acc.get([0]));
      }
      if (o.overwriteEarly) sB.set([tid], sB.get([tid]));
      T.ptx.wgmma.wait_group(0);
      storeAccumulators(D, acc, tid, n);
    },
  );
  return { fn, K };
}

function run(o: Opts) {
  const { fn, K } = kernel(o);
  const int = intsFrom(7, 0, 16);
  const rnd = (): number => int() / 8 - 1; // multiples of 1/8 in [-1, 1]: exact in f16 and bf16
  const av = Array.from({ length: 64 * K }, rnd);
  const bv = Array.from({ length: o.n * K }, rnd);
  const d = simZeros([64, o.n], "float32");
  const r = runSim(
    verify(fn),
    [
      simTensor(av, { shape: [64, K], dtype: o.ab }),
      simTensor(bv, { shape: [o.n, K], dtype: o.ab }),
      d,
    ],
    { hazards: "collect" },
  );
  const want: number[] = [];
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < o.n; j++) {
      let acc = 0;
      for (let k = 0; k < K; k++) acc += (o.scaleA ?? 1) * av[i * K + k]! * bv[j * K + k]!;
      want.push(Math.fround(acc));
    }
  }
  return { reports: r.reports, got: Array.from(d.toArray() as ArrayLike<number>), want };
}

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return isTirxError(e) ? `${e.code}@${e.span?.line ?? "?"}` : String(e);
  }
  return undefined;
};

/**
 * D[0] = s's descriptor at (0, 0) advanced by 2 (32 B, k 16 of a 128B-swizzled float16 tile),
 * D[1] = the descriptor encoded at (0, 16), D[2] = the one at (0, 0).
 */
const advanceKernel = (): PrimFunc =>
  T.function("advance", { D: T.Tensor([3], "uint64") }, ({ D }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
    const s = T.alloc_shared([8, 64], "float16", {
      name: "s",
      align: 1024,
      layout: T.swizzle_mode("128B"),
    });
    const d0 = T.ptx.wgmma.encode_matrix_descriptor(s.ptr([0, 0]), 16, 1024, 3);
    D.set([0], T.ptx.wgmma.advance_descriptor(d0, 2)); // + 32 B: k 16
    D.set([1], T.ptx.wgmma.encode_matrix_descriptor(s.ptr([0, 16]), 16, 1024, 3));
    D.set([2], d0);
  });

describe("wgmma descriptors", () => {
  it("pack the PTX ISA's fields and decode back", () => {
    const d = encodeMatrixDescriptor({ addr: 0x1230, ldo: 16, sdo: 1024, swizzle: 3 });
    // start 0x123 in bits 0–13, LBO 1, SBO 64 in bits 32–45, 128B = 1 in bits 62–63
    expect(d).toBe(0x123n | (1n << 16n) | (64n << 32n) | (1n << 62n));
    expect(decodeMatrixDescriptor(d)).toEqual({ addr: 0x1230, ldo: 16, sdo: 1024, swizzle: 3 });
    expect(encodeMatrixDescriptor({ addr: 0, ldo: 0, sdo: 0, swizzle: 1 }) >> 62n).toBe(3n);
  });

  it("advance_descriptor: the low word + n (16-byte units) is the encoding of the later start, on the simulator; one add.u32 in the PTX", () => {
    const fn = advanceKernel();
    const out = simZeros([3], "uint64");
    expect(runSim(verify(fn), [out], { hazards: "collect" }).reports).toEqual([]);
    const [later, encoded, first] = Array.from(out.toArray() as ArrayLike<bigint>, (x) =>
      BigInt(x),
    );
    expect(later).toBe(encoded);
    expect(decodeMatrixDescriptor(later!).addr - decodeMatrixDescriptor(first!).addr).toBe(32);
    const lines = compileToPtx(fn, { arch: "sm_90a" })
      .text.split("\n")
      .map((l) => l.trim());
    const at = lines.findIndex((l) => l.startsWith("add.u32"));
    expect(lines.slice(at - 1, at + 2).map((l) => l.replace(/%[a-z]+\d+/g, "%x")))
      .toMatchInlineSnapshot(`
      [
        "mov.b64 {%x, %x}, %x;",
        "add.u32 %x, %x, 2;",
        "mov.b64 %x, {%x, %x};",
      ]
    `);
  });
});

describe("wgmma on the simulator", () => {
  for (const o of [
    { n: 256, ab: "float16", swizzle: 3 },
    { n: 64, ab: "bfloat16", swizzle: 3, scaleA: -1 },
    { n: 24, ab: "float16", swizzle: 2 },
    { n: 8, ab: "bfloat16", swizzle: 0 },
    { n: 128, ab: "float16", swizzle: 3, aRegs: true },
  ] as Opts[]) {
    it(`m64n${o.n}k16 ${o.ab}, swizzle ${o.swizzle}${o.aRegs ? ", A in registers" : ""}`, () => {
      const { reports, got, want } = run(o);
      expect(reports).toEqual([]);
      expect(got).toEqual(want);
    });
  }

  it("reports accumulators read before wgmma.wait_group (TX6023)", () => {
    const { reports } = run({ n: 16, ab: "float16", swizzle: 3, readEarly: true });
    expect(reports.map((r) => r.code)).toEqual(["TX6023"]);
    expect(reports[0]!.message).toMatch(/acc\[0\], an accumulator of a wgmma.mma_async/);
  });

  it("reports A's registers overwritten before wgmma.wait_group (TX6023)", () => {
    const { reports } = run({ n: 16, ab: "float16", swizzle: 3, aRegs: true, aWriteEarly: true });
    expect(reports.map((r) => r.code)).toEqual(["TX6023"]);
    expect(reports[0]!.message).toMatch(/writes a\[0\], in the A fragment/);
  });

  it("reports a shared operand overwritten before wgmma.wait_group (TX6024)", () => {
    const { reports } = run({ n: 16, ab: "float16", swizzle: 3, overwriteEarly: true });
    expect(reports.map((r) => r.code)).toContain("TX6024");
  });
});

describe("wgmma contracts", () => {
  it("needs sm_90a: sm_90 is refused with TX7006 at the author's line", () => {
    const { fn } = kernel({ n: 16, ab: "float16", swizzle: 3 });
    expect(code(() => compileToPtx(fn, { arch: "sm_90" }))).toMatch(/^TX7006@\d+$/);
    expect(code(() => compileToPtx(fn, { arch: "sm_90a" }))).toBeUndefined();
  });

  const one = (body: () => void, block = 128): PrimFunc =>
    T.function("c", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
      body();
    });

  it("a descriptor's swizzle must be its buffer's (TX7007)", () => {
    const line = new Error().stack!.split("\n")[1]!.match(/:(\d+):/)![1];
    const err = code(() =>
      one(() => {
        const s = T.alloc_shared([1024], "float16", { layout: T.swizzle_mode("128B") });
        T.ptx.wgmma.encode_matrix_descriptor(s.ptr([0]), 16, 1024, 2);
      }),
    );
    expect(err).toBe(`TX7007@${Number(line) + 4}`);
    expect(
      code(() =>
        one(() => {
          const s = T.alloc_shared([1024], "float16");
          T.ptx.wgmma.encode_matrix_descriptor(s.ptr([0]), 24, 1024, 0);
        }),
      ),
    ).toMatch(/^TX7007/);
  });

  it("shapes, scales and dtypes (TX7004)", () => {
    const mk = (shape: string, dt: string, scaleA = 1) =>
      code(() =>
        one(() => {
          const acc = T.alloc_local([128], "float32");
          T.ptx.wgmma.mma_async(shape, dt, acc, 0, T.uint64(0), T.uint64(0), { scale_a: scaleA });
        }),
      );
    expect(mk("m64n260k16", "float16")).toMatch(/^TX7004/);
    expect(mk("m64n12k16", "float16")).toMatch(/^TX7004/);
    expect(mk("m64n256k16", "float32")).toMatch(/^TX7004/);
    expect(mk("m64n256k16", "float16", 0)).toMatch(/^TX7004/);
    expect(mk("m64n256k16", "bfloat16")).toBeUndefined();
    const small = code(() =>
      verify(
        one(() => {
          const acc = T.alloc_local([4], "float32");
          T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, T.uint64(0), T.uint64(0));
        }, 96),
      ),
    );
    expect(small).toMatch(/^TX7010/);
  });

  it("setmaxnreg: counts (TX7008) and the register budget of the launch (TX7009)", () => {
    expect(code(() => one(() => T.ptx.setmaxnreg(true, 236)))).toMatch(/^TX7008/);
    expect(code(() => one(() => T.ptx.setmaxnreg(false, 16)))).toMatch(/^TX7008/);
    const v = (block: number, n: number) =>
      code(() => verify(one(() => T.ptx.setmaxnreg(true, n), block)));
    expect(v(96, 232)).toMatch(/^TX7009/);
    expect(v(384, 248)).toMatch(/^TX7009/);
    expect(v(384, 240)).toBeUndefined();
    expect(v(128, 256)).toBeUndefined();
  });
});

describe("wgmma PTX", () => {
  it("lowers descriptors, the predicate of scale_d and the group ops", () => {
    const { fn } = kernel({ n: 16, ab: "bfloat16", swizzle: 3 });
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    const lines = text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /^(wgmma|\.target|\.version)/.test(l));
    expect(lines.slice(0, 4).join("\n")).toMatchInlineSnapshot(`
      ".version 8.0
      .target sm_90a
      wgmma.fence.sync.aligned;
      wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%f1, %f2, %f3, %f4, %f5, %f6, %f7, %f8}, %rd9, %rd10, %p3, 1, 1, 0, 0;"
    `);
    expect(text).toContain("or.b64");
  });

  it("assembles for sm_90a (every N for one dtype, both A sources, advance_descriptor, setmaxnreg)", async () => {
    const mods = [
      ...[8, 64, 136, 256].map((n) => kernel({ n, ab: "float16", swizzle: 3 }).fn),
      kernel({ n: 256, ab: "bfloat16", swizzle: 3, aRegs: true }).fn,
      kernel({ n: 24, ab: "bfloat16", swizzle: 2 }).fn,
      kernel({ n: 8, ab: "float16", swizzle: 0 }).fn,
      advanceKernel(),
      T.function("regs", {}, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 384 }) });
        const w = T.cuda.thread_idx("x").floordiv(128);
        T.if_(
          w.eq(0),
          () => T.ptx.setmaxnreg(false, 40),
          () => T.ptx.setmaxnreg(true, 232),
        );
      }),
    ].map((fn) => ({ name: fn.name, text: compileToPtx(fn, { arch: "sm_90a" }).text }));
    // setmaxnreg needs a register cap at entry (ptxas C7508 otherwise): .minnctapersm 1.
    expect(mods.at(-1)!.text).toMatch(/\.maxntid 384, 1, 1\n\.minnctapersm 1\n/);
    expect(mods[0]!.text).not.toContain(".minnctapersm");
    expect(await assembleMerged(mods, "sm_90a")).toEqual([]);
  }, 60_000);
});

describe("examples/gemm_hopper.ts PTX", () => {
  it("has TMA, wgmma and setmaxnreg (cluster 1) plus multicast and remote arrives (cluster 2), and assembles for sm_90a", async () => {
    const mods = ([1, 2] as const).map((cluster) => {
      const fn = makeGemmHopper({ m: 4096, n: 4096, k: 4096, ctas: 132, cluster });
      return { name: `gemm_hopper_cl${cluster}`, text: compileToPtx(fn, { arch: "sm_90a" }).text };
    });
    for (const m of mods) {
      expect(m.text).toContain("wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16");
      expect(m.text).toContain("cp.async.bulk.tensor.2d.shared::cluster.global.tile");
      expect(m.text).toMatch(
        /setmaxnreg\.dec\.sync\.aligned\.u32 40;[^]*setmaxnreg\.inc\.sync\.aligned\.u32 232;/,
      );
    }
    expect(mods[0]!.text).not.toContain("multicast");
    expect(mods[1]!.text).toContain(".reqnctapercluster 2, 1, 1");
    expect(mods[1]!.text).toContain(".multicast::cluster");
    expect(mods[1]!.text).toMatch(
      /mapa\.shared::cluster\.u32 (%r\d+), %r\d+, %r\d+;\n\tmbarrier\.arrive\.shared::cluster\.b64 _, \[\1\];/,
    );
    expect(await assembleMerged(mods, "sm_90a")).toEqual([]);
  }, 60_000);

  it("the remote arrive runs on the simulator for a one-CTA cluster (rank 0); another rank is TX6005", () => {
    const k = (rank: number): PrimFunc =>
      T.function(`remote_${rank}`, { Y: T.Tensor([1], "int32") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 1));
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive.cluster(bar.sub(0), T.uint32(rank)));
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        T.if_(tid.eq(0), () => Y.set([0], 7));
      });
    const y = simZeros([1], "int32");
    expect(runSim(verify(k(0)), [y], { hazards: "collect" }).reports).toEqual([]);
    expect(Array.from(y.toArray() as ArrayLike<number>)).toEqual([7]);
    expect(code(() => runSim(verify(k(1)), [simZeros([1], "int32")]))).toMatch(/^TX6005/);
  });
});

describe("wgmma reading a TMA destination", () => {
  /**
   * One warpgroup: TMA loads A (64 × 64) and B (16 × 64) into 128B-swizzled tiles on one
   * mbarrier, then wgmma m64n16k16 × 4 reads them; with `wait` false the consumer skips the
   * mbarrier wait, so the wgmma reads bytes whose copy has not completed.
   */
  const kernel = (wait: boolean): PrimFunc =>
    T.function(
      `tma_wgmma_${wait}`,
      {
        A: T.Tensor([64, 64], "float16"),
        B: T.Tensor([16, 64], "float16"),
        D: T.Tensor([64, 16], "float32"),
      },
      ({ A, B, D }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const swz = { align: 1024, layout: T.swizzle_mode("128B") } as const;
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...swz });
        const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...swz });
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        const mapA = T.tensormap_encode_tiled(A, { box: [64, 64], swizzle: "128B" });
        const mapB = T.tensormap_encode_tiled(B, { box: [16, 64], swizzle: "128B" });
        const load =
          T.ptx["cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"];
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), (64 + 16) * 64 * 2);
          T.cuda.tile.apply(load, sA, A, { tensor_map: mapA, coords: [0, 0], mbar: bar.sub(0) });
          T.cuda.tile.apply(load, sB, B, { tensor_map: mapB, coords: [0, 0], mbar: bar.sub(0) });
        });
        if (wait) T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        const acc = T.alloc_local([8], "float32", { name: "acc" });
        T.ptx.wgmma.fence();
        for (let kk = 0; kk < 4; kk++) {
          const da = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0, kk * 16]), 16, 1024, 3);
          const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0, kk * 16]), 16, 1024, 3);
          T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db, { scale_d: kk > 0 });
        }
        T.ptx.wgmma.commit_group();
        T.ptx.wgmma.wait_group(0);
        if (!wait) T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        storeAccumulators(D, acc, tid, 16);
      },
    );
  const data = (n: number) => Array.from({ length: n }, (_, i) => ((i * 37) % 17) / 8 - 1);

  it("computes A·Bᵀ from the TMA tiles with no reports when it waits", () => {
    const a = data(64 * 64);
    const b = data(16 * 64).reverse();
    const d = simZeros([64, 16], "float32");
    const r = runSim(
      verify(kernel(true)),
      [
        simTensor(a, { shape: [64, 64], dtype: "float16" }),
        simTensor(b, { shape: [16, 64], dtype: "float16" }),
        d,
      ],
      { hazards: "collect" },
    );
    expect(r.reports).toEqual([]);
    const want: number[] = [];
    for (let i = 0; i < 64; i++) {
      for (let j = 0; j < 16; j++) {
        let s = 0;
        for (let k = 0; k < 64; k++) s += a[i * 64 + k]! * b[j * 64 + k]!;
        want.push(Math.fround(s));
      }
    }
    expect(Array.from(d.toArray() as ArrayLike<number>)).toEqual(want);
  });

  it("reports the TMA destination read before its mbarrier phase completed (TX6007)", () => {
    const r = runSim(
      verify(kernel(false)),
      [
        simTensor(data(64 * 64), { shape: [64, 64], dtype: "float16" }),
        simTensor(data(16 * 64), { shape: [16, 64], dtype: "float16" }),
        simZeros([64, 16], "float32"),
      ],
      { hazards: "collect" },
    );
    expect(r.reports.map((e) => e.code)).toContain("TX6007");
  });
});
