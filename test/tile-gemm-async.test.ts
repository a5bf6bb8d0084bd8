// T.tile.wg.gemm_async (wgmma SS and RS from the operands' layouts) on the simulated device
// against a float64 product within wgmma's bound (test/util/gemm-async-kernels.ts), with the
// simulator's hazard checks on; its PTX (descriptors and wgmma lines) as an inline snapshot and
// assembled by ptxas for sm_90a; the same wgmma/descriptor instructions as the instruction-level
// inner loop of examples/gemm_hopper.ts; FlashAttention's head dim 128 operands as 64-wide column
// blocks loaded by TMA (S = Q·Kᵀ SS, O += P·V RS with V MN-major); each TX2022 dispatch failure.
import { describe, expect, it } from "vitest";
import { T, explainTile, sim } from "tirx-ts";
import { type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { makeGemmHopper } from "../examples/gemm_hopper.js";
import { gemmAsyncKernel, runGemmAsync, type GemmAsyncCase } from "./util/gemm-async-kernels.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();

function ptxOf(fn: PrimFunc): string {
  const text = compileToPtx(fn, { arch: "sm_90a" }).text;
  assembleLater(text, "sm_90a", fn.name);
  return text;
}

/**
 * The wgmma and descriptor lines of a PTX text (the encodings, and the moves and 32-bit adds of
 * `wgmma.advance_descriptor` that step a descriptor's low word), registers renamed by first use.
 */
function wgmmaLines(ptx: string): string[] {
  const names = new Map<string, string>();
  return ptx
    .split("\n")
    .map((l) => l.trim())
    .filter((l) =>
      /^(wgmma\.|or\.b64|shr\.u32|cvt\.u64\.u32|mov\.b64|add\.u32|and\.b32 .*262143)/.test(l),
    )
    .map((l) =>
      (l.startsWith("wgmma.") ? l.replace(/\{[^}]*\}/g, "{acc}") : l).replace(
        /%[a-z]+\d+/g,
        (r) => {
          if (!names.has(r)) names.set(r, `%r${names.size}`);
          return names.get(r)!;
        },
      ),
    );
}

/**
 * The PTX of a kernel's first wgmma group: from its first descriptor encoding (the `and` of a
 * shared address into the start field, before the fence) to its commit.
 */
function region(ptx: string): string {
  const fence = ptx.indexOf("wgmma.fence");
  const first = ptx.search(/and\.b32 %r\d+, %r\d+, 262143;/);
  const start = first >= 0 && first < fence ? ptx.lastIndexOf("\n", first) : fence;
  return ptx.slice(start, ptx.indexOf("wgmma.commit_group", fence) + 40);
}

const CASES: readonly GemmAsyncCase[] = [
  {
    name: "ga_ss_f16_128_mn_a",
    M: 64,
    N: 16,
    K: 64,
    dtype: "float16",
    swizzle: "128B",
    aMNMajor: true,
  },
  { name: "ga_ss_bf16_64", M: 64, N: 8, K: 32, dtype: "bfloat16", swizzle: "64B", overwrite: true },
  {
    name: "ga_ss_bf16_mn_m128",
    M: 128,
    N: 16,
    K: 16,
    dtype: "bfloat16",
    swizzle: "32B",
    bKMajor: false,
    overwrite: true,
  },
  { name: "ga_rs_f16_64", M: 64, N: 8, K: 32, dtype: "float16", swizzle: "64B", rs: true },
  // FlashAttention at head dim 128: S = Q · Kᵀ with Q [64, 128] and K [64, 128] K-major, and
  // O += P · V with P in registers and V [64, 128] MN-major, each as two 64-wide column blocks
  // loaded by TMA.
  {
    name: "ga_ss_f16_hd128",
    M: 64,
    N: 64,
    K: 128,
    dtype: "float16",
    swizzle: "128B",
    blocked: true,
  },
  {
    name: "ga_rs_bf16_pv128",
    M: 64,
    N: 128,
    K: 64,
    dtype: "bfloat16",
    swizzle: "128B",
    rs: true,
    bKMajor: false,
    blocked: true,
  },
];

/** The PTX of each of CASES, as the simulator test compiled it. */
const casePtx = new Map<string, string>();

describe("T.tile.wg.gemm_async on the simulator", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s within 2^-20·Σ|a·b|", (_, c) => {
    const fn = gemmAsyncKernel(c);
    casePtx.set(c.name, ptxOf(fn));
    expect(runGemmAsync(c, dev, fn)).toBeLessThanOrEqual(1);
  });

  it("a k-tile loop with a runtime accum (kt > 0) keeps the group's wait the author's", () => {
    const c: GemmAsyncCase = {
      name: "ga_ktiles",
      M: 64,
      N: 16,
      K: 32,
      dtype: "float16",
      swizzle: "32B",
    };
    const fn = T.function(
      c.name,
      {
        A: T.Tensor([64, 32], "float16"),
        B: T.Tensor([16, 32], "float16"),
        C: T.Tensor([64, 16], "float32"),
      },
      ({ A, B, C }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const swz = { layout: T.swizzle_mode("32B"), align: 256 };
        const sA = T.alloc_shared([2, 64, 16], "float16", swz);
        const sB = T.alloc_shared([2, 16, 16], "float16", swz);
        for (let j = 0; j < 2; j++) {
          T.tile.wg.copy_async(sA.sub(j), A.sub(":", `${16 * j}:${16 * j + 16}`));
          T.tile.wg.copy_async(sB.sub(j), B.sub(":", `${16 * j}:${16 * j + 16}`));
        }
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.ptx.fence.proxy_async();
        T.cuda.cta_sync();
        const acc = T.alloc_local([64, 16], "float32", {
          layout: T.layout.wgmma_operand_layout("D", 16, "float32"),
        });
        for (const kt of T.range(2)) {
          T.tile.wg.gemm_async(acc, sA.sub(kt), sB.sub(kt), { transB: true, accum: kt.gt(0) });
          T.ptx.wgmma.wait_group(0);
        }
        T.tile.wg.copy(C, acc);
      },
    );
    expect(explainTile(fn).find((l) => l.includes("gemm_async"))).toMatch(
      /wgmma m64n16k16 ×1 .*; scale-d of the first k step is accum\) then commit_group; the wait is the author's/,
    );
    ptxOf(fn);
    expect(runGemmAsync(c, dev, fn)).toBeLessThanOrEqual(1);
  });

  it("explains the instructions and descriptors it chose", () => {
    const lines = CASES.map((c) =>
      explainTile(gemmAsyncKernel(c))
        .find((l) => l.includes("gemm_async"))!
        .replace(/^\S+ /, ""),
    );
    expect(lines).toMatchInlineSnapshot(`
      [
        "T.tile.wg.gemm_async → wgmma.fence, wgmma m64n16k16 ×4 (SS: A MN-major, 128B swizzle: SBO 1024 B, k16 step +2048 B; B K-major, 128B swizzle: SBO 1024 B, k16 step +32 B) then commit_group; the wait is the author's",
        "T.tile.wg.gemm_async → wgmma.fence, wgmma m64n8k16 ×2 (SS: A K-major, 64B swizzle: SBO 512 B, k16 step +32 B; B K-major, 64B swizzle: SBO 512 B, k16 step +32 B; scale-d 0 on the first k step) then commit_group; the wait is the author's",
        "T.tile.wg.gemm_async → wgmma.fence, wgmma m64n16k16 ×2 (SS: A K-major, 32B swizzle: SBO 256 B, k16 step +32 B; B MN-major, 32B swizzle: SBO 256 B, k16 step +512 B; 2 × 1 blocks of C; scale-d 0 on the first k step) then commit_group; the wait is the author's",
        "T.tile.wg.gemm_async → wgmma.fence, wgmma m64n8k16 ×2 (RS: A from registers a S[(4, 2, 8, 4, 4, 2) : (32@tid_in_wg, 2, 4@tid_in_wg, 4, 1@tid_in_wg, 1)]; B K-major, 64B swizzle: SBO 512 B, k16 step +32 B) then commit_group; the wait is the author's",
        "T.tile.wg.gemm_async → wgmma.fence, wgmma m64n64k16 ×8 (SS: A K-major, 128B swizzle: SBO 1024 B, k16 step +32 B, K in 2 blocks of 64 (+8192 B); B K-major, 128B swizzle: SBO 1024 B, k16 step +32 B, K in 2 blocks of 64 (+8192 B)) then commit_group; the wait is the author's",
        "T.tile.wg.gemm_async → wgmma.fence, wgmma m64n128k16 ×4 (RS: A from registers a S[(4, 2, 8, 8, 4, 2) : (32@tid_in_wg, 2, 4@tid_in_wg, 4, 1@tid_in_wg, 1)]; B MN-major, 128B swizzle: LBO 8192 B, SBO 1024 B, k16 step +2048 B, N in 2 blocks of 64) then commit_group; the wait is the author's",
      ]
    `);
  });

  it("PTX: descriptors from the view, fence, one wgmma per k16 step, commit; no wait", () => {
    const c = CASES[0]!;
    const ptx = ptxOf(gemmAsyncKernel(c));
    const body = region(ptx);
    const lines = wgmmaLines(body);
    expect(lines.filter((l) => l.startsWith("wgmma.mma_async"))).toHaveLength(4);
    expect(body).not.toContain("wgmma.wait_group");
    // A's and B's descriptors, encoded once before the fence; the first k16 step's wgmma, the
    // second step's descriptors (each one's low word + its start's distance in 16-byte units),
    // and the commit.
    expect([...lines.slice(0, 17), lines[lines.length - 1]]).toMatchInlineSnapshot(`
      [
        "and.b32 %r0, %r1, 262143;",
        "shr.u32 %r0, %r0, 4;",
        "cvt.u64.u32 %r2, %r0;",
        "or.b64 %r2, %r2, 0x4000004000400000;",
        "and.b32 %r3, %r4, 262143;",
        "shr.u32 %r3, %r3, 4;",
        "cvt.u64.u32 %r5, %r3;",
        "or.b64 %r5, %r5, 0x4000004000010000;",
        "wgmma.fence.sync.aligned;",
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {acc}, %r2, %r5, %r6, 1, 1, 1, 0;",
        "mov.b64 {%r7, %r8}, %r2;",
        "add.u32 %r7, %r7, 128;",
        "mov.b64 %r9, {%r7, %r8};",
        "mov.b64 {%r10, %r11}, %r5;",
        "add.u32 %r10, %r10, 2;",
        "mov.b64 %r12, {%r10, %r11};",
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {acc}, %r9, %r12, %r13, 1, 1, 1, 0;",
        "wgmma.commit_group.sync.aligned;",
      ]
    `);
  });
});

describe("gemm_async over 64-wide column blocks (FlashAttention head dim 128)", () => {
  /**
   * The k16 steps' start addresses past their block's first (the descriptor adds, in bytes) and
   * the descriptor fields (or.b64) of a gemm_async.
   */
  const steps = (c: GemmAsyncCase): { adds: number[]; fields: string[] } => {
    const ptx = casePtx.get(c.name) ?? ptxOf(gemmAsyncKernel(c));
    const body = region(ptx);
    return {
      adds: [...body.matchAll(/add\.u32 %r\d+, %r\d+, (\d+);/g)].map((m) => 16 * Number(m[1])),
      fields: [
        ...new Set([...body.matchAll(/or\.b64 %rd\d+, %rd\d+, (0x[0-9a-f]+);/g)].map((m) => m[1]!)),
      ],
    };
  };

  it("S = Q·Kᵀ: each k16 step's descriptor starts in its K block (+8192 B past k 64); P·V: LBO 8192 between V's N blocks", () => {
    const ss = steps(CASES.find((c) => c.name === "ga_ss_f16_hd128")!);
    const pv = steps(CASES.find((c) => c.name === "ga_rs_bf16_pv128")!);
    // A and B alike: k 16, 32, 48 at +32, +64, +96 B; k 64.. in the second block, +8192 B on.
    expect(ss).toMatchInlineSnapshot(`
      {
        "adds": [
          32,
          32,
          64,
          64,
          96,
          96,
          8192,
          8192,
          8224,
          8224,
          8256,
          8256,
          8288,
          8288,
        ],
        "fields": [
          "0x4000004000010000",
        ],
      }
    `);
    expect(pv).toMatchInlineSnapshot(`
      {
        "adds": [
          2048,
          4096,
          6144,
        ],
        "fields": [
          "0x4000004002000000",
        ],
      }
    `);
  });

  /** gemm_async(C [64, n], A, B) with A and B made by `make` (float16, 128B swizzle). */
  const blockedMisuse =
    (make: () => { a: Sh; b: Sh; transB: boolean }, n = 64) =>
    (): unknown =>
      T.function("bad_blocks", { X: T.Tensor([1], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const C = T.alloc_local([64, n], "float32", {
          layout: T.layout.wgmma_operand_layout("D", n, "float32"),
        });
        const { a, b, transB } = make();
        T.tile.wg.gemm_async(C, a, b, { transB });
      });
  const swz = { layout: T.swizzle_mode("128B"), align: 1024 } as const;
  const tx2022 = (f: () => unknown): string => {
    const e = errorOf(f);
    expect(e.code).toBe("TX2022");
    return e.message.replace(/ \(at [^)]*\)$/, "");
  };

  it("TX2022: K blocks 68 rows apart put k 64 at row 4 of a swizzle atom", () => {
    const m = tx2022(
      blockedMisuse(() => {
        const sA = T.alloc_shared([2, 68, 64], "float16", { name: "sA", ...swz });
        const sB = T.alloc_shared([2, 64, 64], "float16", { name: "sB", ...swz });
        return {
          a: sA.sub(":", "0:64").rearrange("b r c -> r b c"),
          b: sB.rearrange("b r c -> r b c"),
          transB: true,
        };
      }),
    );
    expect(m).toMatch(
      /A's rows \[0\.\.\] k 64 start 512 bytes into a 1024-byte swizzle atom of sA \(row 4\)/,
    );
  });

  it("TX2022: V's N blocks 68 rows apart need an LBO off the swizzle atom", () => {
    const m = tx2022(
      blockedMisuse(() => {
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...swz });
        const sV = T.alloc_shared([2, 68, 64], "float16", { name: "sV", ...swz });
        // B = V [K = 64, N = 128]: its N blocks 68 rows (8704 B) apart.
        return { a: sA, b: sV.sub(":", "0:64").rearrange("b k c -> k b c"), transB: false };
      }, 128),
    );
    expect(m).toMatchInlineSnapshot(
      `"TX2022 [tile/dispatch] T.tile.wg.gemm_async: no wgmma descriptor reads B (sV view [64, 2, 64] strides [64, 4352, 1], 128B swizzle): the MN-major 128B swizzle descriptor would need LBO 8704 B, not a multiple of the 1024-byte swizzle atom (each 64-wide column block must start at row 0 of an atom); nearest that works: an MN-major B [64, 64] float16 tile with T.swizzle_mode("128B") and align 1024 (k rows of one 128-byte swizzle row) ("64B" / "32B" take 32 / 16 columns); N = 128 as 64-wide column blocks: a buffer [2, 64, 64] read as s.rearrange("b k c -> k b c")"`,
    );
  });

  it("TX2022: blocks interleaved row by row ([K, 2, 64]) name the misplaced element", () => {
    const m = tx2022(
      blockedMisuse(() => {
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...swz });
        const sV = T.alloc_shared([64, 2, 64], "float16", { name: "sV", ...swz });
        return { a: sA, b: sV, transB: false };
      }, 128),
    );
    expect(m).toMatchInlineSnapshot(
      `"TX2022 [tile/dispatch] T.tile.wg.gemm_async: no wgmma descriptor reads B (sV view [64, 2, 64] strides [128, 64, 1], 128B swizzle): element (0, 1) of B lies 256 bytes from the operand's start, where an MN-major 128B swizzle descriptor (LBO 128, SBO 2048) reads byte 128; nearest that works: an MN-major B [64, 64] float16 tile with T.swizzle_mode("128B") and align 1024 (k rows of one 128-byte swizzle row) ("64B" / "32B" take 32 / 16 columns); N = 128 as 64-wide column blocks: a buffer [2, 64, 64] read as s.rearrange("b k c -> k b c")"`,
    );
  });
});

const STAGES = 4;

/**
 * The consumer's inner loop of examples/gemm_hopper.ts (one 128 × 64 A stage and one 256 × 64 B
 * stage, 128B-swizzled, consumer `cw` taking rows 64·cw..), at the instruction level or as one
 * gemm_async.
 */
function hopperInner(tile: boolean, accum = false): PrimFunc {
  return T.function(
    tile ? `inner_tile${accum ? "_acc" : ""}` : "inner_ptx",
    { C: T.Tensor([256], "float32") },
    ({ C }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: 1,
          block: 256,
          dynamic_shared_bytes: STAGES * (128 + 256) * 64 * 2,
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const swz = { align: 1024, layout: T.swizzle_mode("128B"), dynamic: true } as const;
      const sA = T.alloc_shared([STAGES, 128, 64], "float16", { name: "sA", ...swz });
      const sB = T.alloc_shared([STAGES, 256, 64], "float16", { name: "sB", ...swz });
      const cw = T.let_("cw", tid.floordiv(128));
      for (const st of T.range(STAGES)) {
        if (tile) {
          const acc = T.alloc_local([64, 256], "float32", {
            name: "acc",
            layout: T.layout.wgmma_operand_layout("D", 256, "float32"),
          });
          const rows = sA.sub(st).rearrange("(c r) k -> c r k", { c: 2 }).sub(cw);
          T.tile.wg.gemm_async(acc, rows, sB.sub(st), {
            transB: true,
            accum,
          });
          T.ptx.wgmma.wait_group(0);
          C.set([tid], acc.get([0, 0]));
        } else {
          const acc = T.alloc_local([128], "float32", { name: "acc" });
          T.ptx.wgmma.fence();
          for (let kk = 0; kk < 4; kk++) {
            const da = T.ptx.wgmma.encode_matrix_descriptor(
              sA.ptr([st, cw.mul(64), kk * 16]),
              16,
              1024,
              3,
            );
            const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([st, 0, kk * 16]), 16, 1024, 3);
            T.ptx.wgmma.mma_async("m64n256k16", "float16", acc, 0, da, db, {
              scale_d: kk === 0 ? 0 : 1,
            });
          }
          T.ptx.wgmma.commit_group();
          T.ptx.wgmma.wait_group(0);
          C.set([tid], acc.get([0]));
        }
      }
    },
  );
}

describe("gemm_async against the instruction-level gemm_hopper", () => {
  /**
   * What the wgmmas read, whichever way the descriptors are made: the wgmma instructions
   * (registers elided), the descriptor fields (or.b64), and each k16 step's start past the
   * first, in bytes. The instruction level encodes a descriptor per step from its start address
   * (add.s32 of the byte offset); gemm_async encodes each block's first and adds the distance in
   * 16-byte units to its low word (wgmma.advance_descriptor: add.u32 between two mov.b64).
   */
  const facts = (b: string) => ({
    wgmma: b
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l.startsWith("wgmma"))
      .map((l) => l.replace(/\{[^}]*\}/g, "{acc}").replace(/%[a-z]+\d+/g, "%x")),
    fields: [
      ...new Set([...b.matchAll(/or\.b64 %rd\d+, %rd\d+, (0x[0-9a-f]+);/g)].map((m) => m[1])),
    ],
    steps: [
      ...[...b.matchAll(/add\.s32 %r\d+, %r\d+, (\d+);/g)].map((m) => Number(m[1])),
      ...[...b.matchAll(/add\.u32 %r\d+, %r\d+, (\d+);/g)].map((m) => 16 * Number(m[1])),
    ],
  });

  it("the same descriptors and wgmma instructions (4 × m64n256k16, SBO 1024, +32 B a k16 step)", () => {
    const tile = facts(region(ptxOf(hopperInner(true))));
    const hand = facts(region(ptxOf(hopperInner(false))));
    expect(tile).toEqual(hand);
    expect(tile.wgmma.filter((l) => l.startsWith("wgmma.mma_async"))).toHaveLength(4);
    expect(tile.steps).toEqual([32, 32, 64, 64, 96, 96]);
  });

  it("the same as examples/gemm_hopper.ts's consumer: descriptor fields, k16 address steps, wgmmas", () => {
    const example = region(
      compileToPtx(makeGemmHopper({ m: 128, n: 256, k: 64, ctas: 1 }), { arch: "sm_90a" }).text,
    );
    const tile = region(ptxOf(hopperInner(true, true)));
    expect(facts(tile)).toEqual(facts(example));
    expect(facts(tile).steps).toEqual([32, 32, 64, 64, 96, 96]);
  });
});

type Sh = ReturnType<typeof T.alloc_shared>;

/**
 * A kernel of one gemm_async call: shared A [64, 64] and B [N = 64, K = 64] float16, 128B
 * swizzle, C the D layout, then `call` replaces the plain `T.tile.wg.gemm_async(C, sA, sB,
 * { transB: true })`.
 */
function misuse(
  call: (t: { C: ReturnType<typeof T.alloc_local>; sA: Sh; sB: Sh }) => void,
  opts: {
    arch?: string;
    align?: number;
    aShape?: [number, number];
    swizzle?: "128B" | "none";
  } = {},
): () => unknown {
  return () =>
    T.function("bad", { X: T.Tensor([1], "float32") }, () => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }),
        ...(opts.arch ? { arch: opts.arch } : {}),
      });
      const sw =
        opts.swizzle === "none"
          ? {}
          : { layout: T.swizzle_mode("128B"), align: opts.align ?? 1024 };
      const sA = T.alloc_shared(opts.aShape ?? [64, 64], "float16", { name: "sA", ...sw });
      const sB = T.alloc_shared([64, 64], "float16", { name: "sB", ...sw });
      const C = T.alloc_local([64, 64], "float32", {
        name: "C",
        layout: T.layout.wgmma_operand_layout("D", 64, "float32"),
      });
      call({ C, sA, sB });
    });
}

describe("gemm_async dispatch errors (TX2022)", () => {
  const msg = (f: () => unknown): string => {
    const e = errorOf(f);
    expect(e.code).toBe("TX2022");
    return e.message;
  };

  it("scope: a warp (or CTA) is not a warpgroup", () => {
    // The record serves wg only (its scopes, the README table's column): the surface refuses.
    expect(
      msg(misuse(({ C, sA, sB }) => T.tile.warp.gemm_async(C, sA, sB, { transB: true }))),
    ).toMatch(
      /T\.tile\.warp\.gemm_async: gemm_async runs at wg scope only.*nearest that works: T\.tile\.wg\.gemm_async \(at /,
    );
  });

  it("target below sm_90a", () => {
    expect(
      msg(
        misuse(({ C, sA, sB }) => T.tile.wg.gemm_async(C, sA, sB, { transB: true }), {
          arch: "sm_80",
        }),
      ),
    ).toMatch(/needs sm_90a; the target is sm_80/);
  });

  it("C not in the accumulator layout names the element", () => {
    const m = msg(() =>
      T.function("bad_c", { X: T.Tensor([1], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const swz = { layout: T.swizzle_mode("128B"), align: 1024 };
        const sA = T.alloc_shared([64, 64], "float16", swz);
        const sB = T.alloc_shared([64, 64], "float16", swz);
        const C = T.alloc_local([64, 64], "float32", { layout: T.layout.wg_local_layout(64, 64) });
        T.tile.wg.gemm_async(C, sA, sB, { transB: true });
      }),
    );
    expect(m).toMatch(
      /C must be a grid of wgmma m64n64k16 accumulator \(D\) fragments: element \[0, 2\] of C is at thread 0 slot 2, but .* at thread 1 slot 0/,
    );
    expect(m).toMatch(/wgmma_tile_layout\("D", 64, 64, "float32"\)/);
  });

  it("a 128B-swizzled K-major row that is not 64 float16 wide", () => {
    const m = msg(
      misuse(
        ({ C, sA, sB }) => T.tile.wg.gemm_async(C, sA, sB.sub(":", "0:32"), { transB: true }),
        {
          aShape: [64, 32],
        },
      ),
    );
    expect(m).toMatch(
      /no wgmma descriptor reads A \(sA view \[64, 32\] strides \[32, 1\], 128B swizzle\): element \(1, 0\) of A lies 64 bytes from the operand's start, where a K-major 128B swizzle descriptor \(LBO 16, SBO 512\) reads byte 128/,
    );
    expect(m).toMatch(
      /nearest that works: a K-major A \[64, 64\] float16 tile with T.swizzle_mode\("128B"\)/,
    );
  });

  it("no swizzle: a row-major view holds no core matrices", () => {
    const m = msg(
      misuse(({ C, sA, sB }) => T.tile.wg.gemm_async(C, sA, sB, { transB: true }), {
        swizzle: "none",
      }),
    );
    expect(m).toMatch(/no wgmma descriptor reads A .*no swizzle/);
  });

  it("an inner stride of 2", () => {
    const m = msg(
      misuse(({ C, sB }) => {
        const wide = T.alloc_shared([64, 64], "float16", {
          layout: T.swizzle_mode("128B"),
          align: 1024,
        });
        T.tile.wg.gemm_async(C, wide.sub(":", "0:64:2"), sB.sub(":", "0:32"), { transB: true });
      }),
    );
    expect(m).toMatch(/no wgmma descriptor reads A/);
  });

  it("a start off a 16-byte boundary", () => {
    const m = msg(
      misuse(({ C, sA, sB }) =>
        T.tile.wg.gemm_async(C, sA.sub(":", "4:36"), sB.sub(":", "0:32"), { transB: true }),
      ),
    );
    expect(m).toMatch(/A's rows \[0\.\.\] k 0 start 8 bytes past a 16-byte boundary of sA/);
  });

  it("a start past row 0 of its swizzle atom", () => {
    const m = msg(
      misuse(
        ({ C, sA, sB }) => T.tile.wg.gemm_async(C, sA.sub("4:68", ":"), sB, { transB: true }),
        {
          aShape: [72, 64],
        },
      ),
    );
    expect(m).toMatch(
      /A's rows \[0\.\.\] k 0 start 512 bytes into a 1024-byte swizzle atom of sA \(row 4\)/,
    );
  });

  it("A and B of two dtypes", () => {
    const m = msg(
      misuse(({ C, sA }) => {
        const b16 = T.alloc_shared([64, 64], "bfloat16", {
          layout: T.swizzle_mode("128B"),
          align: 1024,
        });
        T.tile.wg.gemm_async(C, sA, b16, { transB: true });
      }),
    );
    expect(m).toMatch(/one dtype; A is float16, B bfloat16/);
  });

  it("C of more than 128 float32 per thread (a register array's limit)", () => {
    const m = msg(() =>
      T.function("bad_big", { X: T.Tensor([1], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const swz = { layout: T.swizzle_mode("32B"), align: 256 };
        const sA = T.alloc_shared([64, 16], "float16", swz);
        const sB = T.alloc_shared([512, 16], "float16", swz);
        const C = T.alloc_local([64, 512], "float32", {
          layout: T.layout.wgmma_tile_layout("D", 64, 512, "float32"),
        });
        T.tile.wg.gemm_async(C, sA, sB, { transB: true });
      }),
    );
    expect(m).toMatch(/C \[64, 512\] is 256 float32 per thread; .* at most 128 elements/);
  });

  it("an accum that is not a bool", () => {
    const m = msg(
      misuse(({ C, sA, sB }) => T.tile.wg.gemm_async(C, sA, sB, { transB: true, accum: 2 })),
    );
    expect(m).toMatch(/option accum must be true, false or a bool expression, got 2/);
  });

  it("shapes that disagree", () => {
    const m = msg(
      misuse(({ C, sA, sB }) => T.tile.wg.gemm_async(C, sA, sB.sub("0:32", ":"), { transB: true })),
    );
    expect(m).toMatch(
      /C \[64, 64\] \+= A \[64, 64\] · B \[64, 32\] \(B read as \[N, K\]\): M, N and K must agree/,
    );
  });
});
