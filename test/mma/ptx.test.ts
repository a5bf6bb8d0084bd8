// PTX of the tensor-core family: inline snapshots of the fragment packing, every variant
// assembled by ptxas (one merged batch per arch), the verifier's contracts at the author's
// line, and examples/gemm_mma.ts (PTX, and simulated runs with no reports at 128 × 128 × 64, at
// 72 × 136 × 40 (cp.async tail path) and at shapes whose K or N is not a multiple of 8 (element
// tail path for A, for B, or both)).
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleMerged } from "../util/ptx-merge.js";
import { gemm_mma, makeGemm } from "../../examples/gemm_mma.js";
import { uniformFrom } from "../util/lcg.js";

const lines = (text: string, ...prefixes: string[]): string =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => prefixes.some((p) => l.startsWith(p)))
    .join("\n");

/** One warp: ldmatrix (num, trans) from shared into `f`, then mma of the given variant. */
function variant(
  name: string,
  body: (S: ReturnType<typeof T.alloc_shared>, l: ReturnType<typeof T.cuda.thread_idx>) => void,
): PrimFunc {
  return T.function(name, { Y: T.Tensor([32], "float32") }, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const l = T.cuda.thread_idx("x");
    const S = T.alloc_shared([32, 8], "float16", { name: "S" });
    body(S, l);
    p.Y.set([l], T.float32(0));
  });
}

const mmaKernel = (
  shape: "m16n8k16" | "m16n8k8" | "m16n8k32",
  ab: "float16" | "bfloat16" | "float32" | "int8",
  tok: string,
  cd: "float32" | "int32",
  na: number,
  nb: number,
): PrimFunc =>
  T.function(`mma_${tok}`, { Y: T.Tensor([128], cd) }, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const l = T.cuda.thread_idx("x");
    const a = T.alloc_local([na], ab, { name: "a" });
    const b = T.alloc_local([nb], ab, { name: "b" });
    const c = T.alloc_local([4], cd, { name: "c" });
    for (let i = 0; i < na; i++) a.set([i], l.add(i).cast(ab));
    for (let i = 0; i < nb; i++) b.set([i], l.sub(i).cast(ab));
    for (let i = 0; i < 4; i++) c.set([i], l.mul(0).cast(cd));
    T.ptx.mma(shape, "row", "col", tok, tok, cd === "int32" ? "int32" : "fp32", a, 0, b, 0, c, 0);
    for (let i = 0; i < 4; i++) p.Y.set([l.mul(4).add(i)], c.get([i]));
  });

const MMAS: Record<string, PrimFunc> = {
  f16: mmaKernel("m16n8k16", "float16", "fp16", "float32", 8, 4),
  bf16: mmaKernel("m16n8k16", "bfloat16", "bf16", "float32", 8, 4),
  tf32: mmaKernel("m16n8k8", "float32", "tf32", "float32", 4, 2),
  s8: mmaKernel("m16n8k32", "int8", "int8", "int32", 16, 8),
};

const MOVES: Record<string, PrimFunc> = {};
for (const num of [1, 2, 4] as const) {
  for (const trans of [false, true]) {
    for (const op of ["ldmatrix", "stmatrix"] as const) {
      MOVES[`${op}_x${num}${trans ? "_t" : ""}`] = variant(
        `${op}_x${num}${trans ? "_t" : ""}`,
        (S, l) => {
          const f = T.alloc_local([2 * num], "float16", { name: "f" });
          for (let i = 0; i < 2 * num; i++) f.set([i], T.float16(i));
          T.ptx[op](trans, num, ".b16", f, 0, S.ptr([l, 0]));
        },
      );
    }
  }
}

describe("PTX", () => {
  it("ldmatrix unpacks its b32 registers into the fragment's halves", () => {
    expect(
      lines(compileToPtx(MOVES["ldmatrix_x2_t"]!, { arch: "sm_80" }).text, "ldmatrix", "mov.b32"),
    ).toMatchInlineSnapshot(`
      "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%r3, %r4}, [%r5];
      mov.b32 {%h1, %h2}, %r3;
      mov.b32 {%h3, %h4}, %r4;"
    `);
  });
  it("mma packs halves into b32 and uses the float32 accumulators in place", () => {
    expect(lines(compileToPtx(MMAS["f16"]!, { arch: "sm_80" }).text, "mma", "mov.b32"))
      .toMatchInlineSnapshot(`
      "mov.b32 %r12, {%h1, %h2};
      mov.b32 %r13, {%h3, %h4};
      mov.b32 %r14, {%h5, %h6};
      mov.b32 %r15, {%h7, %h8};
      mov.b32 %r16, {%h9, %h10};
      mov.b32 %r17, {%h11, %h12};
      mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r12, %r13, %r14, %r15}, {%r16, %r17}, {%f1, %f2, %f3, %f4};"
    `);
  });
  it("s8 fragments pack four bytes per register", () => {
    expect(
      lines(compileToPtx(MMAS["s8"]!, { arch: "sm_80" }).text, "mma", "bfi", "cvt.u32.u16")
        .split("\n")
        .slice(0, 9)
        .join("\n"),
    ).toMatchInlineSnapshot(`
      "cvt.u32.u16 %r29, %rs1;
      cvt.u32.u16 %r30, %rs2;
      bfi.b32 %r28, %r30, %r28, 8, 8;
      cvt.u32.u16 %r31, %rs3;
      bfi.b32 %r28, %r31, %r28, 16, 8;
      cvt.u32.u16 %r32, %rs4;
      bfi.b32 %r28, %r32, %r28, 24, 8;
      cvt.u32.u16 %r34, %rs5;
      cvt.u32.u16 %r35, %rs6;"
    `);
  });
  it("every variant assembles (ldmatrix/mma for sm_80 and sm_90, stmatrix for sm_90)", async () => {
    for (const arch of ["sm_80", "sm_90"]) {
      const fns = {
        ...MMAS,
        ...MOVES,
        gemm_mma,
        gemm_tail: makeGemm(72, 136, 40),
        gemm_odd: makeGemm(37, 45, 29),
        gemm_odd_kn: makeGemm(72, 130, 41),
        gemm_odd_k: makeGemm(72, 136, 41),
        gemm_odd_n: makeGemm(72, 130, 40),
      };
      const mods = Object.entries(fns)
        .filter(([name]) => arch === "sm_90" || !name.startsWith("stmatrix"))
        .map(([name, fn]) => ({ name, text: compileToPtx(fn, { arch }).text }));
      expect(await assembleMerged(mods, arch)).toEqual([]);
    }
  });
});

/** The code and line of the TirxError `f` throws. */
function codeOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return `${e.code}@${e.span?.line ?? "?"}`;
    throw e;
  }
  return "none";
}

describe("verifier contracts", () => {
  const body =
    (
      f: (
        S: ReturnType<typeof T.alloc_shared>,
        x: ReturnType<typeof T.alloc_local>,
        l: ReturnType<typeof T.cuda.thread_idx>,
      ) => void,
    ): (() => unknown) =>
    () =>
      T.function("bad", { Y: T.Tensor([32], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const l = T.cuda.thread_idx("x");
        const S = T.alloc_shared([32, 8], "float16", { name: "S" });
        const x = T.alloc_local([8], "float16", { name: "x" });
        f(S, x, l);
      });
  it("codes at the author's line", () => {
    const here = (): number =>
      Number(new Error().stack!.split("\n")[2]!.match(/:(\d+):\d+\)?$/)![1]);
    let line = 0;
    // A fragment that leaves its array (x4 needs 8 halves from element 4).
    expect(
      codeOf(
        body((S, x, l) => {
          line = here() + 1;
          T.ptx.ldmatrix(false, 4, ".b16", x, 4, S.ptr([l, 0]));
        }),
      ),
    ).toBe(`TX7001@${line}`);
    // A fragment of the wrong dtype (mma's C must be float32).
    expect(
      codeOf(
        body((_S, x) => {
          line = here() + 1;
          T.ptx.mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", x, 0, x, 0, x, 0);
        }),
      ),
    ).toBe(`TX7001@${line}`);
    // A row address 2 bytes into a row.
    expect(
      codeOf(
        body((S, x) => {
          line = here() + 1;
          T.ptx.ldmatrix(false, 1, ".b16", x, 0, S.ptr([0, 1]));
        }),
      ),
    ).toBe(`TX7002@${line}`);
    // A global address.
    expect(
      codeOf(
        body((_S, x, l) => {
          line = here() + 1;
          T.ptx.ldmatrix(false, 1, ".b16", x, 0, l);
        }),
      ),
    ).toBe(`TX7002@${line}`);
    // Variants outside the table.
    expect(
      codeOf(
        body((S, x, l) => {
          line = here() + 1;
          T.ptx.ldmatrix(false, 3 as 4, ".b16", x, 0, S.ptr([l, 0]));
        }),
      ),
    ).toBe(`TX7004@${line}`);
    expect(
      codeOf(
        body((_S, x) => {
          line = here() + 1;
          T.ptx.mma("m16n8k16", "row", "col", "fp16", "bf16", "fp32", x, 0, x, 0, x, 0);
        }),
      ),
    ).toBe(`TX7004@${line}`);
  });
  it("TX7003 below the instruction's sm (stmatrix sm_90 on sm_80); codegen's lowest target is sm_80", () => {
    expect(codeOf(() => compileToPtx(MOVES["stmatrix_x1"]!, { arch: "sm_80" }))).toMatch(/^TX7003/);
    expect(codeOf(() => compileToPtx(MOVES["ldmatrix_x1"]!, { arch: "sm_80" }))).toBe("none");
  });
});

describe("examples/gemm_mma.ts", () => {
  it("has mma.sync.aligned.m16n8k16 and ldmatrix, no .local, a 3-stage wait_group 1", () => {
    const text = compileToPtx(gemm_mma, { arch: "sm_90" }).text;
    expect(text.match(/mma\.sync\.aligned\.m16n8k16\.row\.col\.f32\.f16\.f16\.f32/g)?.length).toBe(
      32,
    );
    expect(text.match(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/g)?.length).toBe(8);
    expect(text.match(/ldmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16/g)?.length).toBe(4);
    expect(text).toContain("cp.async.wait_group 1");
    expect(text).not.toMatch(/\.local/);
  });
  it("swizzles its shared tiles: the ldmatrix and cp.async addresses XOR, no padding", () => {
    const text = compileToPtx(gemm_mma, { arch: "sm_90" }).text;
    // One XOR per distinct (kk, row/column-in-tile) ldmatrix address and per cp.async atom.
    expect(text.match(/xor\.b32/g)?.length).toBeGreaterThanOrEqual(8);
    expect(text).toMatch(/\.shared \.align 512 \.b8 smem_As\[24576\]/);
    expect(text).toMatch(/\.shared \.align 2048 \.b8 smem_Bs\[24576\]/);
  });
  it("keeps the 4096³ main loop lean: no div/rem, and the prefetch reuses the prologue's swizzled offsets", () => {
    const all = compileToPtx(makeGemm(4096, 4096, 4096), { arch: "sm_90" })
      .text.split("\n")
      .map((l) => l.trim());
    const mma = all.findIndex((l) => l.startsWith("mma.sync"));
    let head = mma;
    while (!/^\$L__loop\d+:$/.test(all[head]!)) head--;
    const n = /\d+/.exec(all[head]!)![0];
    const body = all.slice(head, all.indexOf(`$L__loop_end${n}:`));
    // ptxas expands div/rem by an immediate into a generic division (I2F, MUFU.RCP, F2I): the
    // stage index k % 3 must be a multiply-high, the chunk row/column shifts and masks.
    expect(body.filter((l) => /^(div|rem)\./.test(l))).toEqual([]);
    // The guarded prefetch (up to the first commit) computes no swizzle: the prologue did.
    const prefetch = body.slice(0, body.indexOf("cp.async.commit_group;"));
    expect(prefetch.filter((l) => /^cp\.async\.cg/.test(l))).toHaveLength(4);
    expect(prefetch.filter((l) => /^xor\./.test(l))).toEqual([]);
  });
  it.each([
    [37, 45, 29, 0, 0],
    [72, 130, 41, 0, 0],
    [72, 136, 41, 0, 1],
    [72, 130, 40, 1, 0],
  ])(
    "%i × %i × %i: an operand whose rows are not 16-byte aligned loads float16 elements (A by cp.async: %i, B: %i)",
    (m, n, k, aChunked, bChunked) => {
      const text = compileToPtx(makeGemm(m, n, k), { arch: "sm_80" }).text;
      // The prologue copies stages - 1 = 2 K-tiles (only those that exist) and the main loop one.
      const copies = Math.min(2, Math.ceil(k / 32)) + 1;
      // 128 × 32 elements of A and 32 × 128 of B per K-tile: 16 each per thread of 256.
      const elements = copies * 16 * (2 - aChunked - bChunked);
      expect(text.match(/ld\.global\.b16/g)?.length ?? 0).toBe(elements);
      expect(text.match(/st\.shared\.b16/g)?.length ?? 0).toBe(elements);
      // Two 16-byte chunks per thread for each operand copied by cp.async.
      expect(text.match(/cp\.async\.cg\.shared\.global/g)?.length ?? 0).toBe(
        copies * 2 * (aChunked + bChunked),
      );
      expect(text.match(/mma\.sync\.aligned\.m16n8k16/g)?.length).toBe(32);
    },
  );
  it("throws for a dimension that is not a positive integer", () => {
    expect(() => makeGemm(0, 8, 8)).toThrow(/positive integer m, n, k, got 0, 8, 8/);
    expect(() => makeGemm(8, 8.5, 8)).toThrow(/positive integer/);
  });
  it.each([
    [128, 128, 64],
    [72, 136, 40],
    [37, 45, 29],
    [72, 130, 41],
    [72, 136, 41],
    [72, 130, 40],
  ])(
    "runs %i × %i × %i on the simulator with no reports, within the stated bound of float64",
    (m, n, k) => {
      const rnd = uniformFrom(3);
      const A = simTensor(Array.from({ length: m * k }, rnd), { shape: [m, k], dtype: "float16" });
      const B = simTensor(Array.from({ length: k * n }, rnd), { shape: [k, n], dtype: "float16" });
      const C = simZeros([m, n], "float32");
      const r = runSim(verify(makeGemm(m, n, k)), [A, B, C], { hazards: "collect" });
      expect(r.reports).toEqual([]);
      const a = A.toArray() as ArrayLike<number>;
      const b = B.toArray() as ArrayLike<number>;
      const c = C.toArray() as ArrayLike<number>;
      let worst = 0;
      for (let i = 0; i < m; i++) {
        for (let j = 0; j < n; j++) {
          let s = 0;
          let mag = 0;
          for (let q = 0; q < k; q++) {
            s += a[i * k + q]! * b[q * n + j]!;
            mag += Math.abs(a[i * k + q]! * b[q * n + j]!);
          }
          worst = Math.max(worst, Math.abs(c[i * n + j]! - s) / mag);
        }
      }
      // The simulator rounds once per mma (⌈K / 16⌉ float32 roundings of partial sums).
      expect(worst).toBeLessThanOrEqual(Math.ceil(k / 16) * 2 ** -24);
      expect(worst).toBeGreaterThan(0);
    },
  );
});
