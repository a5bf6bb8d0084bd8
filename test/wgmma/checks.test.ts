// The wgmma checks of the descriptor and fence contracts (PTX ISA, wgmma: Matrix Descriptor
// Format, Shared Memory Matrix Layout, wgmma.fence), each at the author's line:
// - TX7007 (verifier, at the descriptor's `tile.ptr`): a descriptor into a tile of another dtype,
//   a start off a 16-byte boundary, LBO/SBO that do not describe the tile's row-major layout;
// - TX7011 (verifier, at the mma_async): a wgmma.mma_async before any wgmma.fence;
// - TX6026 / TX6018 (simulator, at the mma_async): what a runtime start or a descriptor kept in a
//   register hides from the verifier (a start on row 1 of a swizzle atom, a tile of another dtype,
//   a layout mismatch; an operand footprint that leaves its tile);
// - TX6027 (simulator, at the mma_async, with a note at the write): accumulator or A-fragment
//   registers written by an ordinary store or an ldmatrix after the warp's last wgmma.fence;
//   TX6023 (at the write): an ldmatrix into the A fragment of a wgmma not yet retired.
// And the kernels the checks must leave alone, run for their values: tiles laid out in core
// matrices or in halves of N (no row-major claim), a raw byte tile read through a float16 view,
// a mma_async under an `if` that a fence in the loop orders.
// Lines are found through the `// @name` markers at the ends of the lines below.
import { describe, expect, it } from "vitest";
import { markers } from "../util/markers.js";
import { isTirxError, verify, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { T, type TileView } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { fillOnes, storeAccumulators } from "./fragment.js";

const { at } = markers(import.meta.url);

/** `CODE@line` of a diagnostic (the file too when it is not this one). */
function tag(e: TirxError): string {
  const s = e.span;
  if (!s) return `${e.code}@?`;
  return `${e.code}@${/checks\.test\.ts$/.test(s.file) ? "" : `${s.file}:`}${s.line}`;
}

/** The lines of a diagnostic's notes that point into this file. */
const noteLines = (e: TirxError): number[] =>
  e.notes.flatMap((n) => (n.span && /checks\.test\.ts$/.test(n.span.file) ? [n.span.line] : []));

/** The TirxError that building (and verifying) a kernel throws, or undefined. */
function failure(build: () => PrimFunc): TirxError | undefined {
  try {
    verify(build());
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  return undefined;
}

const desc = T.ptx.wgmma.encode_matrix_descriptor;
const mma = T.ptx.wgmma.mma_async;
const SWZ = { align: 1024, layout: T.swizzle_mode("128B") } as const;

/** A one-warpgroup kernel around `body` (checked when it is built and verified). */
const kernel = (body: () => void): PrimFunc =>
  T.function("wgcheck", {}, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    body();
  });

type Idx = ReturnType<typeof T.cuda.thread_idx>;
type Tile = ReturnType<typeof T.alloc_shared>;
interface Ctx {
  readonly tid: Idx;
  /** [64, 64] float16, 128B-swizzled, filled. */
  readonly sA: Tile;
  /** [16, 64] float16, 128B-swizzled, filled. */
  readonly sB: Tile;
  /** 8 float32 accumulators per thread, zeroed before `body`. */
  readonly acc: ReturnType<typeof T.alloc_local>;
}

/**
 * The simulator's reports (collected) for one warpgroup that fills sA and sB, fences the async
 * proxy, zeroes its accumulators and runs `body` (the fence and wgmmas), then commits and waits.
 */
function simReports(body: (c: Ctx) => void): readonly TirxError[] {
  const fn = kernel(() => {
    const tid = T.cuda.thread_idx("x");
    const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ }); // @simSA
    const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ }); // @simSB
    fillOnes(tid, sA, sB);
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    const acc = T.alloc_local([8], "float32", { name: "acc" });
    for (let i = 0; i < 8; i++) acc.set([i], T.float32(0));
    body({ tid, sA, sB, acc });
    T.ptx.wgmma.commit_group();
    T.ptx.wgmma.wait_group(0);
  });
  return runSim(verify(fn), [], { hazards: "collect" }).reports;
}

/** A runtime value (the verifier cannot fold it) equal to `v` in every thread. */
const runtime = (tid: Idx, v: number) => tid.floordiv(1000).add(v);

interface GemmCtx {
  readonly tid: Idx;
  readonly A: TileView;
  readonly B: TileView;
  /** n / 2 float32 accumulators per thread. */
  readonly acc: ReturnType<typeof T.alloc_local>;
  /** Every (r, k) of a rows × K operand, spread over the warpgroup's 128 threads. */
  each(rows: number, f: (r: Idx, k: Idx) => void): void;
  /** The tiles' stores made visible to the async proxy (fence.proxy_async, then a CTA barrier). */
  publish(): void;
}

/**
 * D (64 × n, float32) = A (64 × K) · Bᵀ (B n × K, float16) by one warpgroup: `body` lays A and B
 * out in its tiles, publishes them and issues the fence and the wgmmas into `acc`; then the
 * group is committed and waited, and D's fragment stored (element 4j + i at row
 * 16·warp + lane/4 (+8 for i ≥ 2), column 8j + 2·(lane % 4) + i % 2). Run on the simulator
 * (verified first) with multiples of 1/8, every sum exact in float32: the reports, D and the
 * host's A·Bᵀ.
 */
function gemm(n: number, K: number, body: (c: GemmCtx) => void) {
  const fn = T.function(
    "wggemm",
    {
      A: T.Tensor([64, K], "float16"),
      B: T.Tensor([n, K], "float16"),
      D: T.Tensor([64, n], "float32"),
    },
    ({ A, B, D }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const acc = T.alloc_local([n / 2], "float32", { name: "acc" });
      // The wgmmas accumulate (scale-d 1): D starts from zeroed registers (TX6028 otherwise).
      for (let i = 0; i < n / 2; i++) acc.set([i], T.float32(0));
      const each = (rows: number, f: (r: Idx, k: Idx) => void) => {
        for (const i of T.range((rows * K) / 128)) {
          const e = tid.add(i.mul(128));
          f(e.floordiv(K), e.mod(K));
        }
      };
      const publish = () => {
        T.ptx.fence.proxy_async();
        T.cuda.cta_sync();
      };
      body({ tid, A, B, acc, each, publish });
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
      storeAccumulators(D, acc, tid, n);
    },
  );
  const val = (i: number, s: number) => (((i * 37 + s) % 17) - 8) / 8;
  const a = Array.from({ length: 64 * K }, (_, i) => val(i, 3));
  const b = Array.from({ length: n * K }, (_, i) => val(i, 11));
  const d = simZeros([64, n], "float32");
  const { reports } = runSim(
    verify(fn),
    [
      simTensor(a, { shape: [64, K], dtype: "float16" }),
      simTensor(b, { shape: [n, K], dtype: "float16" }),
      d,
    ],
    { hazards: "collect" },
  );
  const want: number[] = [];
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < n; j++) {
      let s = 0;
      for (let k = 0; k < K; k++) s += a[i * K + k]! * b[j * K + k]!;
      want.push(Math.fround(s));
    }
  }
  return { reports, got: Array.from(d.toArray() as ArrayLike<number>), want };
}

describe("TX7007: the descriptor against its tile (verifier)", () => {
  it("a float32 tile read as float16 A is refused at the descriptor, with a note at the tile", () => {
    const e = failure(() =>
      kernel(() => {
        const sF = T.alloc_shared([64, 32], "float32", { name: "sF", ...SWZ }); // @f32Alloc
        const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
        const acc = T.alloc_local([8], "float32", { name: "acc" });
        T.ptx.wgmma.fence();
        const da = desc(sF.ptr([0, 0]), 16, 1024, 3); // @f32Desc
        const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
        mma("m64n16k16", "float16", acc, 0, da, db);
      }),
    );
    expect(e && tag(e)).toBe(`TX7007@${at("f32Desc")}`);
    expect(e!.text).toMatch(/reads A as float16, but its descriptor points into "sF" of float32/);
    expect(noteLines(e!)).toEqual([at("f32Alloc")]);
  });

  it("a swizzled start evidently off row 0 of its atom is refused at the descriptor", () => {
    // sA.ptr([9, 0]): byte 128 of a 1024-byte 128B atom (row 1); also at row 8·kk + 1.
    for (const k of [false, true]) {
      const e = failure(() =>
        kernel(() => {
          const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
          const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
          const acc = T.alloc_local([8], "float32", { name: "acc" });
          T.ptx.wgmma.fence();
          for (const kk of T.unroll(2)) {
            const da = desc(sA.ptr([k ? kk.mul(8).add(1) : 9, 0]), 16, 1024, 3); // @row1Desc
            mma("m64n16k16", "float16", acc, 0, da, desc(sB.ptr([0, 0]), 16, 1024, 3));
          }
        }),
      );
      expect(e && tag(e)).toBe(`TX7007@${at("row1Desc")}`);
      expect(e!.text).toMatch(/starts 128 bytes into a 1024-byte swizzle atom of "sA" \(row 1\)/);
    }
  });

  it("a bfloat16 tile read as float16 B is refused at B's descriptor", () => {
    const e = failure(() =>
      kernel(() => {
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
        const sH = T.alloc_shared([16, 64], "bfloat16", { name: "sH", ...SWZ }); // @bf16Alloc
        const acc = T.alloc_local([8], "float32", { name: "acc" });
        T.ptx.wgmma.fence();
        const da = desc(sA.ptr([0, 0]), 16, 1024, 3);
        const db = desc(sH.ptr([0, 0]), 16, 1024, 3); // @bf16Desc
        mma("m64n16k16", "float16", acc, 0, da, db);
      }),
    );
    expect(e && tag(e)).toBe(`TX7007@${at("bf16Desc")}`);
    expect(e!.text).toMatch(/reads B as float16, but its descriptor points into "sH" of bfloat16/);
    expect(noteLines(e!)).toEqual([at("bf16Alloc")]);
  });

  /** A's descriptor into a 128B-swizzled [64, 64] float16 tile at `start`, with `sbo`. */
  const withA = (start: (tid: Idx) => [Idx | number, Idx | number], sbo: number) =>
    failure(() =>
      kernel(() => {
        const tid = T.cuda.thread_idx("x");
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
        const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
        const acc = T.alloc_local([8], "float32", { name: "acc" });
        const [r, k] = start(tid);
        T.ptx.wgmma.fence();
        const da = desc(sA.ptr([r, k]), 16, sbo, 3); // @withADesc
        const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
        mma("m64n16k16", "float16", acc, 0, da, db);
      }),
    );

  it("a start 8 bytes past a 16-byte boundary (element offset ≡ 4 mod 8) is refused", () => {
    const e = withA(() => [0, 4], 1024);
    expect(e && tag(e)).toBe(`TX7007@${at("withADesc")}`);
    expect(e!.text).toMatch(/starts 8 bytes past a 16-byte boundary \("sA" element offset ≡ 4/);
    // Evident through a runtime row too: row·64 + 4 ≡ 4 (mod 8).
    const r = withA((tid) => [runtime(tid, 0), 4], 1024);
    expect(r && tag(r)).toBe(`TX7007@${at("withADesc")}`);
    expect(r!.text).toMatch(/≡ 4 mod 8/);
  });

  it("SBO 512 for a 128B-swizzled [64, 64] float16 tile is refused, naming SBO 1024", () => {
    const e = withA(() => [0, 0], 512);
    expect(e && tag(e)).toBe(`TX7007@${at("withADesc")}`);
    expect(e!.text).toMatch(/\(LBO 16, SBO 512, K-major\) does not describe the layout of "sA"/);
    expect(e!.text).toMatch(/SBO is 1024/);
  });

  it("LBO 16, SBO 1024, mode 3 into the 128B-swizzled [64, 64] float16 tile raises nothing", () => {
    expect(withA(() => [0, 0], 1024)).toBeUndefined();
    expect(withA(() => [0, 48], 1024)).toBeUndefined();
    expect(withA((tid) => [runtime(tid, 0), 16], 1024)).toBeUndefined();
  });
});

describe("TX7007 / TX6026: tiles that are not a row-major [M/N, K] or [K, M/N] tile", () => {
  // Each kernel with its descriptors in the open (judged by the verifier, TX7007) and kept in
  // registers (judged by the simulator only, TX6026).
  for (const inReg of [false, true]) {
    const keep = (d: ReturnType<typeof desc>) => (inReg ? T.local_scalar("uint64", d) : d);
    const how = inReg ? "descriptors in registers" : "descriptors in the open";

    it(`A and B in core matrices ([k/8][row][k%8], no swizzle): m64n16k16 (${how})`, () => {
      const { reports, got, want } = gemm(16, 16, ({ A, B, acc, each, publish }) => {
        // Core matrix (r/8, k/8), 8 rows of 16 bytes, at (k/8)·LBO + (r/8)·SBO, SBO = 128.
        const sA = T.alloc_shared([2, 64, 8], "float16", { name: "sA" });
        const sB = T.alloc_shared([2, 16, 8], "float16", { name: "sB" });
        each(64, (r, k) => sA.set([k.floordiv(8), r, k.mod(8)], A.get([r, k])));
        each(16, (n, k) => sB.set([k.floordiv(8), n, k.mod(8)], B.get([n, k])));
        publish();
        const da = keep(desc(sA.ptr([0, 0, 0]), 1024, 128, 0));
        const db = keep(desc(sB.ptr([0, 0, 0]), 256, 128, 0));
        T.ptx.wgmma.fence();
        mma("m64n16k16", "float16", acc, 0, da, db);
      });
      expect(reports).toEqual([]);
      expect(got).toEqual(want);
    });

    it(`MN-major B, N = 128 in two 64-wide halves ([n/64][k][n%64], 128B): m64n128k16 (${how})`, () => {
      const { reports, got, want } = gemm(128, 16, ({ A, B, acc, each, publish }) => {
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
        // Atoms of 8 k-rows × 64 n, 8-deep k groups at SBO 1024, the half n ≥ 64 at LBO 2048.
        const sB = T.alloc_shared([2, 16, 64], "float16", { name: "sB", ...SWZ });
        each(64, (r, k) => sA.set([r, k], A.get([r, k])));
        each(128, (n, k) => sB.set([n.floordiv(64), k, n.mod(64)], B.get([n, k])));
        publish();
        const da = keep(desc(sA.ptr([0, 0]), 16, 1024, 3));
        const db = keep(desc(sB.ptr([0, 0, 0]), 2048, 1024, 3));
        T.ptx.wgmma.fence();
        mma("m64n128k16", "float16", acc, 0, da, db, { trans_b: 1 });
      });
      expect(reports).toEqual([]);
      expect(got).toEqual(want);
    });

    it(`A in a raw uint8 tile through its float16 view: m64n16k16 × 4 (${how})`, () => {
      const { reports, got, want } = gemm(16, 64, ({ A, B, acc, each, publish }) => {
        const raw = T.alloc_shared([64, 128], "uint8", { name: "raw", ...SWZ });
        const sA = raw.view_as("float16");
        const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
        each(64, (r, k) => sA.set([r, k], A.get([r, k])));
        each(16, (n, k) => sB.set([n, k], B.get([n, k])));
        publish();
        T.ptx.wgmma.fence();
        for (let kk = 0; kk < 4; kk++) {
          // Step kk starts at float16 element 16·kk of the view: 32·kk bytes into the row.
          const da = keep(desc(sA.ptr([0, 16 * kk]), 16, 1024, 3));
          const db = keep(desc(sB.ptr([0, 16 * kk]), 16, 1024, 3));
          mma("m64n16k16", "float16", acc, 0, da, db, { scale_d: kk > 0 });
        }
      });
      expect(reports).toEqual([]);
      expect(got).toEqual(want);
    });
  }
});

describe("TX7011: a wgmma.mma_async before any wgmma.fence (verifier)", () => {
  const body = (fenceFirst: boolean, fenceAfter: boolean) => () =>
    kernel(() => {
      const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
      const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
      const acc = T.alloc_local([8], "float32", { name: "acc" });
      if (fenceFirst) T.ptx.wgmma.fence();
      for (const kk of T.unroll(4)) {
        const da = desc(sA.ptr([0, kk.mul(16)]), 16, 1024, 3);
        const db = desc(sB.ptr([0, kk.mul(16)]), 16, 1024, 3);
        mma("m64n16k16", "float16", acc, 0, da, db, { scale_d: kk.gt(0) }); // @fenceMma
        if (fenceAfter) T.ptx.wgmma.fence();
      }
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
    });

  it("is refused at the mma_async", () => {
    const e = failure(body(false, false));
    expect(e && tag(e)).toBe(`TX7011@${at("fenceMma")}`);
    expect(e!.text).toMatch(/no T\.ptx\.wgmma\.fence\(\) before it/);
  });

  it("a fence later in the loop body does not order the first iteration", () => {
    const e = failure(body(false, true));
    expect(e && tag(e)).toBe(`TX7011@${at("fenceMma")}`);
  });

  it("raises nothing when the fence comes first", () => {
    expect(failure(body(true, false))).toBeUndefined();
  });
});

describe("TX7011 / TX6027: a mma_async under an `if`, fenced by the loop (verifier, simulator)", () => {
  /** `for k { if (k > 0) mma_async; fence }`: every issued mma_async follows a fence. */
  const guarded = (fence: boolean) =>
    simReports(({ sA, sB, acc }) => {
      for (const k of T.range(4)) {
        T.if_(k.gt(0), () => {
          const da = desc(sA.ptr([0, 0]), 16, 1024, 3);
          const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
          mma("m64n16k16", "float16", acc, 0, da, db); // @guardedMma
        });
        if (fence) T.ptx.wgmma.fence();
      }
    });

  it("passes the verifier and runs with no reports", () => {
    expect(guarded(true)).toEqual([]);
  });

  it("without the fence the verifier leaves it; the simulator reports no wgmma.fence (TX6027)", () => {
    const rs = guarded(false);
    expect(rs.map(tag)).toEqual([`TX6027@${at("guardedMma")}`]);
    expect(rs[0]!.text).toMatch(/with no wgmma\.fence before it/);
  });
});

describe("TX6026: a runtime descriptor against its tile (simulator)", () => {
  it("a runtime start on row 1 of a swizzle atom passes the verifier and is reported", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      const da = desc(sA.ptr([runtime(tid, 1), 0]), 16, 1024, 3);
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, da, db); // @row1Mma
    });
    expect(rs.map(tag)).toEqual([`TX6026@${at("row1Mma")}`]);
    expect(rs[0]!.text).toMatch(/descriptor of A starts \d+ bytes into a 1024-byte swizzle atom/);
    expect(rs[0]!.text).toMatch(/of "sA" \(row 1\)/);
  });

  it("a runtime start 8 rows in (row 0 of the next atom) is fine", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      const da = desc(sA.ptr([0, 16]), 16, 1024, 3);
      const db = desc(sB.ptr([runtime(tid, 8), 16]), 16, 1024, 3);
      mma("m64n8k16", "float16", acc, 0, da, db);
    });
    expect(rs).toEqual([]);
  });

  it("a runtime offset that runs from a float16 tile into a float32 one: another dtype", () => {
    const rs = simReports(({ tid, sB, acc }) => {
      // sX (1 KiB) ends where sF starts (both 1024-aligned, after sA and sB).
      const sX = T.alloc_shared([8, 64], "float16", { name: "sX", ...SWZ });
      const sF = T.alloc_shared([64, 32], "float32", { name: "sF", ...SWZ }); // @rtF32Alloc
      void sF;
      T.ptx.wgmma.fence();
      const da = desc(sX.ptr([runtime(tid, 8), 0]), 16, 1024, 3);
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, da, db); // @rtF32Mma
    });
    expect(rs.map(tag)).toEqual([`TX6026@${at("rtF32Mma")}`]);
    expect(rs[0]!.text).toMatch(/reads A as float16, but its descriptor points into shared "sF"/);
    expect(noteLines(rs[0]!)).toEqual([at("rtF32Alloc")]);
  });

  it("a descriptor kept in a register with SBO 512: the layout mismatch, naming SBO 1024", () => {
    const rs = simReports(({ sA, sB, acc }) => {
      const da = T.local_scalar("uint64", desc(sA.ptr([0, 0]), 16, 512, 3));
      T.ptx.wgmma.fence();
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, da, db); // @regSboMma
    });
    expect(rs.map(tag)).toEqual([`TX6026@${at("regSboMma")}`]);
    expect(rs[0]!.text).toMatch(
      /\(LBO 16, SBO 512, K-major\) does not describe the layout of "sA"/,
    );
    expect(rs[0]!.text).toMatch(/SBO is 1024/);
  });
});

describe("TX6018: an operand footprint that leaves its tile (simulator)", () => {
  it("A from a runtime row 32 of a [64, 64] tile: 64 rows do not fit", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      const da = desc(sA.ptr([runtime(tid, 32), 0]), 16, 1024, 3);
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, da, db); // @oobAMma
    });
    expect(rs.map(tag)).toEqual([`TX6018@${at("oobAMma")}`]);
    // Warp 2 of the warpgroup reads A's rows 32..47, the tile's rows 64..79.
    expect(rs[0]!.text).toMatch(
      /warp 2 .*A element \(32, 0\) lies at shared byte \d+, which leaves "sA"/,
    );
    expect(noteLines(rs[0]!)).toEqual([at("simSA")]);
  });

  it("B of 16 rows from a runtime row 8 of a [16, 64] tile", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      const da = desc(sA.ptr([0, 0]), 16, 1024, 3);
      const db = desc(sB.ptr([runtime(tid, 8), 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, da, db); // @oobBMma
    });
    expect(rs.map(tag)).toEqual([`TX6018@${at("oobBMma")}`]);
    expect(rs[0]!.text).toMatch(/B element \(8, 0\) .* leaves "sB"/);
    expect(noteLines(rs[0]!)).toEqual([at("simSB")]);
  });
});

describe("TX6027: registers written after the last wgmma.fence (simulator)", () => {
  it("an accumulator stored after the fence: reported at the mma_async, noted at the store", () => {
    const rs = simReports(({ sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      acc.set([3], T.float32(2)); // @accWrite
      const da = desc(sA.ptr([0, 0]), 16, 1024, 3);
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, da, db); // @accMma
    });
    expect(rs.map(tag)).toEqual([`TX6027@${at("accMma")}`]);
    expect(rs[0]!.text).toMatch(
      /wrote acc\[3\] \(accumulator\) after the warp's last wgmma\.fence/,
    );
    expect(noteLines(rs[0]!)).toEqual([at("accWrite")]);
  });

  it("an A fragment stored after the fence (A from registers)", () => {
    const rs = simReports(({ sB, acc }) => {
      const a = T.alloc_local([8], "float16", { name: "a" });
      T.ptx.wgmma.fence();
      for (let i = 0; i < 8; i++) a.set([i], T.float16(1)); // @fragWrite
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, a, db); // @fragMma
    });
    expect(rs.map(tag)).toEqual([`TX6027@${at("fragMma")}`]);
    expect(rs[0]!.text).toMatch(/wrote a\[0\] \(A fragment\) after the warp's last wgmma\.fence/);
    expect(noteLines(rs[0]!)).toEqual([at("fragWrite")]);
  });

  it("no report when a fence follows the writes", () => {
    const rs = simReports(({ sB, acc }) => {
      const a = T.alloc_local([8], "float16", { name: "a" });
      T.ptx.wgmma.fence();
      acc.set([3], T.float32(2));
      for (let i = 0; i < 8; i++) a.set([i], T.float16(1));
      T.ptx.wgmma.fence();
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, a, db);
    });
    expect(rs).toEqual([]);
  });

  /**
   * The row address lane l of warp w gives `ldmatrix .x4` for its A fragment (rows 16w.., k
   * 0..15 of sA): matrix j is rows 8·(j % 2).. at k 8·⌊j / 2⌋, the order of a0..a7.
   */
  const aRow = (tid: Idx, sA: Tile) => {
    const l = tid.mod(32);
    return sA.ptr([tid.floordiv(32).mul(16).add(l.mod(16)), l.floordiv(16).mul(8)]);
  };

  it("an A fragment loaded by ldmatrix after the fence: noted at the ldmatrix", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      const a = T.alloc_local([8], "float16", { name: "a" });
      const src = aRow(tid, sA);
      T.ptx.wgmma.fence();
      T.ptx.ldmatrix(false, 4, ".b16", a, 0, src); // @ldmWrite
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, a, db); // @ldmMma
    });
    expect(rs.map(tag)).toEqual([`TX6027@${at("ldmMma")}`]);
    expect(rs[0]!.text).toMatch(/wrote a\[0\] \(A fragment\) after the warp's last wgmma\.fence/);
    expect(noteLines(rs[0]!)).toEqual([at("ldmWrite")]);
  });

  it("no report when the fence follows the ldmatrix", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      const a = T.alloc_local([8], "float16", { name: "a" });
      T.ptx.ldmatrix(false, 4, ".b16", a, 0, aRow(tid, sA));
      T.ptx.wgmma.fence();
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, a, db);
    });
    expect(rs).toEqual([]);
  });

  it("TX6023: an ldmatrix into the A fragment of a wgmma not yet retired, at the ldmatrix", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      const a = T.alloc_local([8], "float16", { name: "a" });
      const src = aRow(tid, sA);
      T.ptx.ldmatrix(false, 4, ".b16", a, 0, src);
      T.ptx.wgmma.fence();
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, a, db); // @liveMma
      T.ptx.wgmma.commit_group();
      T.ptx.ldmatrix(false, 4, ".b16", a, 0, src); // @liveLdm
    });
    expect(rs.map(tag)).toEqual([`TX6023@${at("liveLdm")}`]);
    expect(rs[0]!.text).toMatch(
      /writes a\[0\], in the A fragment of a wgmma\.mma_async that no wgmma\.wait_group has retired/,
    );
    expect(noteLines(rs[0]!)).toEqual([at("liveMma")]);
  });

  it("a fence that no thread executes passes the verifier; the mma_async has none before it", () => {
    const rs = simReports(({ tid, sA, sB, acc }) => {
      T.if_(tid.lt(0), () => T.ptx.wgmma.fence());
      const da = desc(sA.ptr([0, 0]), 16, 1024, 3);
      const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
      mma("m64n16k16", "float16", acc, 0, da, db); // @unfencedMma
    });
    expect(rs.map(tag)).toEqual([`TX6027@${at("unfencedMma")}`]);
    expect(rs[0]!.text).toMatch(/with no wgmma\.fence before it/);
  });
});
