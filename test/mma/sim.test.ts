// Simulator semantics of ldmatrix, stmatrix and mma.sync against an independent CPU reference
// of the PTX ISA's fragment layouts (written out here from the ISA's figures, not imported),
// and the hazards of the family.
import { describe, expect, it } from "vitest";
import { verify, type DType, type PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { uniformFrom } from "../util/lcg.js";

// --- The PTX ISA's figures, as tables of (row, col) per lane and element -------------------
// "Matrix Fragments for mma.m16n8k16 with floating point type": A's a0..a7 sit at rows
// groupID (a0, a1, a4, a5) or groupID + 8 (a2, a3, a6, a7) and columns
// threadID_in_group·2 + (i & 1), plus 8 for a4..a7; B's b0..b3 at rows threadID_in_group·2 +
// (i & 1), plus 8 for b2, b3, column groupID; C/D's c0..c3 at rows groupID (c0, c1) or
// groupID + 8 (c2, c3), columns threadID_in_group·2 + (i & 1).
type Coord = (lane: number, i: number) => [number, number];
const ISA: Record<string, { coord: Coord; rows: number; cols: number; n: number }> = {
  A16: {
    rows: 16,
    cols: 16,
    n: 8,
    coord: (l, i) => [
      [0, 1, 4, 5].includes(i) ? Math.floor(l / 4) : Math.floor(l / 4) + 8,
      (l % 4) * 2 + (i % 2) + (i >= 4 ? 8 : 0),
    ],
  },
  B16: {
    rows: 16,
    cols: 8,
    n: 4,
    coord: (l, i) => [(l % 4) * 2 + (i % 2) + (i >= 2 ? 8 : 0), Math.floor(l / 4)],
  },
  C: {
    rows: 16,
    cols: 8,
    n: 4,
    coord: (l, i) => [i < 2 ? Math.floor(l / 4) : Math.floor(l / 4) + 8, (l % 4) * 2 + (i % 2)],
  },
  // m16n8k8 .tf32: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4); b0 (t, g), b1 (t+4, g).
  A8: {
    rows: 16,
    cols: 8,
    n: 4,
    coord: (l, i) => [Math.floor(l / 4) + (i === 1 || i === 3 ? 8 : 0), (l % 4) + (i >= 2 ? 4 : 0)],
  },
  B8: { rows: 8, cols: 8, n: 2, coord: (l, i) => [(l % 4) + 4 * i, Math.floor(l / 4)] },
  // m16n8k32 .s8: a0..a15 rows g (i in 0..3, 8..11) or g+8, cols 4t + (i % 4) (+16 for i >= 8);
  // b0..b7 rows 4t + (i % 4) (+16 for i >= 4), col g.
  A32: {
    rows: 16,
    cols: 32,
    n: 16,
    coord: (l, i) => [
      Math.floor(l / 4) + ((i >= 4 && i < 8) || i >= 12 ? 8 : 0),
      (l % 4) * 4 + (i % 4) + (i >= 8 ? 16 : 0),
    ],
  },
  B32: {
    rows: 32,
    cols: 8,
    n: 8,
    coord: (l, i) => [(l % 4) * 4 + (i % 4) + (i >= 4 ? 16 : 0), Math.floor(l / 4)],
  },
};

/** Every (lane, element) of a layout covers its matrix exactly once (a sanity check of the tables). */
function covers(k: keyof typeof ISA): boolean {
  const L = ISA[k]!;
  const seen = new Set<number>();
  for (let l = 0; l < 32; l++) {
    for (let i = 0; i < L.n; i++) {
      const [r, c] = L.coord(l, i);
      seen.add(r * L.cols + c);
    }
  }
  return seen.size === L.rows * L.cols && L.n * 32 === L.rows * L.cols;
}

/**
 * One warp: lane l loads its fragments of A (M × K), B (K × N) and C (M × N) from global by
 * the ISA tables above, runs T.ptx.mma, and stores D back by the C table.
 */
function mmaKernel(
  shape: "m16n8k16" | "m16n8k8" | "m16n8k32",
  ab: DType,
  cd: DType,
  la: string,
  lb: string,
  tok: [string, string],
): PrimFunc {
  const [A, B, C] = [ISA[la]!, ISA[lb]!, ISA.C!];
  return T.function(
    "mma_one",
    {
      A: T.Tensor([A.rows * A.cols], ab),
      B: T.Tensor([B.rows * B.cols], ab),
      C: T.Tensor([C.rows * C.cols], cd),
      D: T.Tensor([C.rows * C.cols], cd),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const lane = T.cuda.thread_idx("x");
      const g = lane.floordiv(4);
      const t = lane.floormod(4);
      // (row, col) of the tables as index expressions of g and t: the tables are affine in
      // floor(l / 4) and l % 4 with these constant parts.
      const at = (L: (typeof ISA)[string], i: number, cols: number): PrimExpr => {
        const [r0, c0] = L.coord(0, i);
        const [r1, c1] = L.coord(4, i); // g = 1
        const [r2, c2] = L.coord(1, i); // t = 1
        return g
          .mul(r1 - r0)
          .add(t.mul(r2 - r0))
          .add(r0)
          .mul(cols)
          .add(
            g
              .mul(c1 - c0)
              .add(t.mul(c2 - c0))
              .add(c0),
          );
      };
      const a = T.alloc_local([A.n], ab, { name: "a" });
      const b = T.alloc_local([B.n], ab, { name: "b" });
      const c = T.alloc_local([C.n], cd, { name: "c" });
      for (let i = 0; i < A.n; i++) a.set([i], p.A.get([at(A, i, A.cols)]));
      for (let i = 0; i < B.n; i++) b.set([i], p.B.get([at(B, i, B.cols)]));
      for (let i = 0; i < C.n; i++) c.set([i], p.C.get([at(C, i, C.cols)]));
      T.ptx.mma(shape, "row", "col", tok[0], tok[0], tok[1], a, 0, b, 0, c, 0);
      for (let i = 0; i < C.n; i++) p.D.set([at(C, i, C.cols)], c.get([i]));
    },
  );
}

const rnd = uniformFrom(7);

/** D = A·B + C in float64 (row-major A m×k, B k×n). */
function ref(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  c: ArrayLike<number>,
  m: number,
  n: number,
  k: number,
): number[] {
  const d: number[] = [];
  for (let i = 0; i < m; i++) {
    for (let j = 0; j < n; j++) {
      let s = c[i * n + j]!;
      for (let q = 0; q < k; q++) s += a[i * k + q]! * b[q * n + j]!;
      d.push(s);
    }
  }
  return d;
}

describe("fragment layouts", () => {
  it("the ISA tables of this file cover their matrices once", () => {
    for (const k of Object.keys(ISA)) expect([k, covers(k)]).toEqual([k, true]);
  });
});

describe("mma.sync", () => {
  const floatCase = (
    shape: "m16n8k16" | "m16n8k8",
    ab: DType,
    la: string,
    lb: string,
    tok: string,
  ): void => {
    const [A, B] = [ISA[la]!, ISA[lb]!];
    const ha = simTensor(Array.from({ length: A.rows * A.cols }, rnd), {
      shape: [A.rows * A.cols],
      dtype: ab,
    });
    const hb = simTensor(Array.from({ length: B.rows * B.cols }, rnd), {
      shape: [B.rows * B.cols],
      dtype: ab,
    });
    const hc = simTensor(Array.from({ length: 128 }, rnd), { shape: [128], dtype: "float32" });
    const hd = simZeros([128], "float32");
    const r = runSim(
      verify(mmaKernel(shape, ab, "float32", la, lb, [tok, "fp32"])),
      [ha, hb, hc, hd],
      {
        hazards: "collect",
      },
    );
    expect(r.reports).toEqual([]);
    const av = Array.from(ha.toArray() as ArrayLike<number>);
    const bv = Array.from(hb.toArray() as ArrayLike<number>);
    // tf32: the mma ignores the low 13 mantissa bits of its float32 inputs.
    const tf = (x: number): number => {
      const u = new Uint32Array(new Float32Array([x]).buffer);
      u[0] = u[0]! & 0xffffe000;
      return new Float32Array(u.buffer)[0]!;
    };
    const conv = shape === "m16n8k8" ? (xs: number[]) => xs.map(tf) : (xs: number[]) => xs;
    const want = ref(conv(av), conv(bv), hc.toArray() as ArrayLike<number>, 16, 8, A.cols);
    const got = Array.from(hd.toArray() as ArrayLike<number>);
    // The simulator's rule: the float64 sum rounded once to float32 (at most half an ulp away).
    got.forEach((x, i) =>
      expect(Math.abs(x - want[i]!)).toBeLessThanOrEqual(Math.abs(want[i]!) * 2 ** -24),
    );
    expect(got).toEqual(want.map(Math.fround));
  };
  it("m16n8k16 f16 → f32 is D = A·B + C rounded once", () =>
    floatCase("m16n8k16", "float16", "A16", "B16", "fp16"));
  it("m16n8k16 bf16 → f32", () => floatCase("m16n8k16", "bfloat16", "A16", "B16", "bf16"));
  it("m16n8k8 tf32 → f32 (inputs truncated to tf32)", () =>
    floatCase("m16n8k8", "float32", "A8", "B8", "tf32"));
  it("m16n8k32 s8 → s32 is exact and wraps", () => {
    const ri = (lo: number, hi: number): number =>
      lo + Math.floor(((rnd() + 1) / 2) * (hi - lo + 1));
    const a = Array.from({ length: 512 }, () => ri(-128, 127));
    const b = Array.from({ length: 256 }, () => ri(-128, 127));
    const c = Array.from({ length: 128 }, (_, i) => (i === 0 ? 2 ** 31 - 1 : ri(-1e6, 1e6)));
    const hd = simZeros([128], "int32");
    runSim(verify(mmaKernel("m16n8k32", "int8", "int32", "A32", "B32", ["int8", "int32"])), [
      simTensor(a, { shape: [512], dtype: "int8" }),
      simTensor(b, { shape: [256], dtype: "int8" }),
      simTensor(c, { shape: [128], dtype: "int32" }),
      hd,
    ]);
    const want = ref(a, b, c, 16, 8, 32).map((x) => x | 0);
    expect(Array.from(hd.toArray() as ArrayLike<number>)).toEqual(want);
  });
});

/**
 * ldmatrix / stmatrix reference from the PTX ISA's words: matrix j's row r is at the address of
 * lane 8j + r; a lane receives elements [lane / 4][2·(lane % 4) + h] of each matrix (with
 * .trans: [2·(lane % 4) + h][lane / 4]), h = 0, 1, in register j.
 */
function ldmatrixRef(
  S: number[][],
  num: number,
  trans: boolean,
  rowOf: (j: number, r: number) => number,
): number[][] {
  return Array.from({ length: 32 }, (_, l) => {
    const out: number[] = [];
    for (let j = 0; j < num; j++) {
      for (let h = 0; h < 2; h++) {
        const [r, c] = trans
          ? [2 * (l % 4) + h, Math.floor(l / 4)]
          : [Math.floor(l / 4), 2 * (l % 4) + h];
        out.push(S[rowOf(j, r)]![c]!);
      }
    }
    return out;
  });
}

describe("ldmatrix and stmatrix", () => {
  // Shared S is 40 rows × 8 halves; lane l points at row perm(l) (a scrambled row order).
  const perm = (l: number): number => (l * 7 + 3) % 40;
  const ldKernel = (num: 1 | 2 | 4, trans: boolean, store: boolean): PrimFunc =>
    T.function(
      "ldm",
      {
        X: T.Tensor([320], "float16"),
        Y: T.Tensor([32 * 2 * num], "float16"),
        Z: T.Tensor([320], "float16"),
      },
      (p) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const l = T.cuda.thread_idx("x");
        const S = T.alloc_shared([40, 8], "float16", { name: "S" });
        for (const r of T.unroll(2)) {
          const row = l.add(r.mul(32));
          T.if_(row.lt(40), () => {
            for (const c of T.unroll(8)) S.set([row, c], p.X.get([row.mul(8).add(c)]));
          });
        }
        T.cuda.cta_sync();
        const f = T.alloc_local([2 * num], "float16", { name: "f" });
        const addr = S.ptr([l.mul(7).add(3).floormod(40), 0]);
        T.ptx.ldmatrix(trans, num, ".b16", f, 0, addr);
        for (let i = 0; i < 2 * num; i++) p.Y.set([l.mul(2 * num).add(i)], f.get([i]));
        if (store) {
          T.cuda.cta_sync();
          for (const r of T.unroll(2)) {
            const row = l.add(r.mul(32));
            T.if_(row.lt(40), () => {
              for (const c of T.unroll(8)) S.set([row, c], T.float16(0));
            });
          }
          T.cuda.cta_sync();
          T.ptx.stmatrix(trans, num, ".b16", f, 0, addr);
          T.cuda.cta_sync();
          for (const r of T.unroll(2)) {
            const row = l.add(r.mul(32));
            T.if_(row.lt(40), () => {
              for (const c of T.unroll(8)) p.Z.set([row.mul(8).add(c)], S.get([row, c]));
            });
          }
        }
      },
    );
  for (const num of [1, 2, 4] as const) {
    for (const trans of [false, true]) {
      it(`x${num}${trans ? ".trans" : ""} distributes rows as the ISA says; stmatrix undoes it`, () => {
        const x = Array.from({ length: 320 }, (_, i) => i);
        const y = simZeros([64 * num], "float16");
        const z = simZeros([320], "float16");
        const r = runSim(
          verify(ldKernel(num, trans, true)),
          [simTensor(x, { shape: [320], dtype: "float16" }), y, z],
          {
            hazards: "collect",
          },
        );
        expect(r.reports).toEqual([]);
        const S = Array.from({ length: 40 }, (_, i) => x.slice(8 * i, 8 * i + 8));
        expect(Array.from(y.toArray() as ArrayLike<number>)).toEqual(
          ldmatrixRef(S, num, trans, (j, rr) => perm(8 * j + rr)).flat(),
        );
        // stmatrix writes back exactly the rows the addressed lanes name; others stay 0.
        const rows = new Set(Array.from({ length: 8 * num }, (_, l) => perm(l)));
        expect(Array.from(z.toArray() as ArrayLike<number>)).toEqual(
          x.map((v, i) => (rows.has(Math.floor(i / 8)) ? v : 0)),
        );
      });
    }
  }
});

describe("hazards", () => {
  it("TX6011 when only some lanes of a warp execute mma.sync; TX6018 for a misaligned row", () => {
    const k = T.function("h", { Y: T.Tensor([64], "float32") }, (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const t = T.cuda.thread_idx("x");
      const a = T.alloc_local([8], "float16", { name: "a" });
      const b = T.alloc_local([4], "float16", { name: "b" });
      const c = T.alloc_local([4], "float32", { name: "c" });
      for (let i = 0; i < 8; i++) a.set([i], T.float16(1));
      for (let i = 0; i < 4; i++) b.set([i], T.float16(1));
      for (let i = 0; i < 4; i++) c.set([i], T.float32(0));
      // Warp 0 fully, warp 1 only lanes 32..47.
      T.if_(t.lt(48), () =>
        T.ptx.mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", a, 0, b, 0, c, 0),
      );
      const S = T.alloc_shared([64, 8], "float16", { name: "S" });
      // Lane 3 of each warp points 2 bytes into its row.
      T.ptx.ldmatrix(
        false,
        1,
        ".b16",
        a,
        0,
        S.ptr([t.floormod(32), t.floormod(32).eq(3).cast("int32")]),
      );
      p.Y.set([t], c.get([0]));
    });
    const y = simZeros([64], "float32");
    const r = runSim(verify(k), [y], { hazards: "collect" });
    const codes = r.reports.map((e) => `${e.code}: ${e.message}`);
    expect(codes.filter((s) => s.startsWith("TX6011"))).toHaveLength(1);
    expect(codes.find((s) => s.startsWith("TX6011"))).toMatch(/warp 1 .*16 of the warp's lanes/);
    expect(codes.filter((s) => s.startsWith("TX6018")).length).toBeGreaterThan(0);
    // Warp 0 ran it: 16 ones · ones = 16.
    expect((y.toArray() as Float32Array)[0]).toBe(16);
  });
});
