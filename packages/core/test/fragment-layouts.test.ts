// The built-in fragment layouts, element by element. Each operand matrix is filled with
// distinct values (row · cols + col + 1); the layout places every element at (thread, slot);
// the values each thread then holds must be the ones the PTX ISA's fragment formulas give it
// (written out below from the ISA, groupID = lane >> 2, threadID_in_group = lane % 4), and the
// ones the simulator's mapping gives it (ops/mma/layout.ts `fragmentCoord`, which mma.sync and
// wgmma use on the simulator and which was checked on an H200). Every slot is hit exactly once.
import { describe, expect, it } from "vitest";
import {
  applyLayout,
  FRAGMENT_SHAPE,
  fragmentCoord,
  groupLayout,
  layoutSpan,
  MMA_VARIANTS,
  mmaSyncOperandLayout,
  mmaSyncOperandShape,
  showTileLayout,
  TirxError,
  WGMMA_NS,
  wgmmaAccCount,
  wgLocalLayout,
  wgmmaOperandLayout,
  wgmmaOperandShape,
  type FragmentKind,
  type MmaOperand,
  type MmaSyncShape,
  type TileLayout,
} from "../src/index.js";

type Coord = [number, number];

/**
 * PTX ISA 9.7.14.5 "Matrix Fragments for mma.m16n8k16 / .m16n8k8 / .m16n8k32", the row and col
 * of element i of a lane's fragment (written from the ISA's formulas, not from the product).
 */
const PTX: Record<MmaSyncShape, Record<MmaOperand, (lane: number, i: number) => Coord>> = {
  m16n8k16: {
    // .f16/.bf16 A: row = groupID for a0,a1,a4,a5, groupID + 8 for a2,a3,a6,a7;
    // col = threadID_in_group·2 + (i & 1) for i < 4, + 8 for i ≥ 4.
    A: (l, i) => [(l >> 2) + (i % 4 < 2 ? 0 : 8), (l % 4) * 2 + (i & 1) + (i < 4 ? 0 : 8)],
    // B: row = threadID_in_group·2 + (i & 1) for i < 2, + 8 for i ≥ 2; col = groupID.
    B: (l, i) => [(l % 4) * 2 + (i & 1) + (i < 2 ? 0 : 8), l >> 2],
    // C/D: row = groupID for c0,c1, groupID + 8 for c2,c3; col = threadID_in_group·2 + (i & 1).
    C: (l, i) => [(l >> 2) + (i < 2 ? 0 : 8), (l % 4) * 2 + (i & 1)],
  },
  m16n8k8: {
    // .tf32 A: row = groupID for a0,a2, groupID + 8 for a1,a3; col = threadID_in_group for
    // a0,a1, + 4 for a2,a3.
    A: (l, i) => [(l >> 2) + (i === 1 || i === 3 ? 8 : 0), (l % 4) + (i >= 2 ? 4 : 0)],
    // B: row = threadID_in_group for b0, + 4 for b1; col = groupID.
    B: (l, i) => [(l % 4) + (i === 1 ? 4 : 0), l >> 2],
    C: (l, i) => [(l >> 2) + (i < 2 ? 0 : 8), (l % 4) * 2 + (i & 1)],
  },
  m16n8k32: {
    // .s8 A: row = groupID for a0..a3 and a8..a11, + 8 for a4..a7 and a12..a15;
    // col = threadID_in_group·4 + (i & 3) for i < 8, + 16 for i ≥ 8.
    A: (l, i) => [
      (l >> 2) + ((i >> 2) % 2 === 1 ? 8 : 0),
      (l % 4) * 4 + (i & 3) + (i < 8 ? 0 : 16),
    ],
    // B: row = threadID_in_group·4 + (i & 3) for i < 4, + 16 for i ≥ 4; col = groupID.
    B: (l, i) => [(l % 4) * 4 + (i & 3) + (i < 4 ? 0 : 16), l >> 2],
    // .s32 C/D: as the float C.
    C: (l, i) => [(l >> 2) + (i < 2 ? 0 : 8), (l % 4) * 2 + (i & 1)],
  },
};

/** The simulator's fragment kind of each (shape, operand). */
const SIM_KIND: Record<MmaSyncShape, Record<MmaOperand, FragmentKind>> = {
  m16n8k16: { A: "a.m16n8k16", B: "b.m16n8k16", C: "c.m16n8" },
  m16n8k8: { A: "a.m16n8k8.tf32", B: "b.m16n8k8.tf32", C: "c.m16n8" },
  m16n8k32: { A: "a.m16n8k32.s8", B: "b.m16n8k32.s8", C: "c.m16n8" },
};

/**
 * What each thread holds when a rows × cols matrix of distinct values (r·cols + c + 1) is laid
 * out by `layout` over thread axis `axis` with `threads` threads: `held[thread][slot]`; every
 * (thread, slot) written exactly once.
 */
function distribute(
  layout: TileLayout,
  rows: number,
  cols: number,
  axis: "laneid" | "tid_in_wg",
  threads: number,
): number[][] {
  expect(groupLayout(layout, [rows, cols]).seps.length).toBe(3);
  const slots = layoutSpan(layout, "m");
  expect(slots * threads).toBe(rows * cols);
  const held = Array.from({ length: threads }, () => new Array<number>(slots).fill(0));
  const bad: string[] = [];
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      // The linear index r·cols + c is the coordinate (r, c) of the grouped shape.
      const at = applyLayout(layout, r * cols + c);
      const t = at[axis]!;
      const m = at.m!;
      if (Object.keys(at).length !== 2) bad.push(`(${r}, ${c}) names other axes`);
      else if (!(t >= 0 && t < threads && m >= 0 && m < slots)) bad.push(`(${r}, ${c}) outside`);
      else if (held[t]![m] !== 0) bad.push(`(${r}, ${c}) reuses thread ${t} slot ${m}`);
      else held[t]![m] = r * cols + c + 1;
    }
  }
  held.forEach((row, t) => {
    if (!row.every((v) => v > 0)) bad.push(`thread ${t} has an empty slot`);
  });
  expect(bad).toEqual([]);
  // The shape path agrees with the linear one.
  expect(applyLayout(layout, [rows - 1, cols - 1], [rows, cols])).toEqual(
    applyLayout(layout, rows * cols - 1),
  );
  return held;
}

describe("mma.sync fragment layouts against the PTX ISA tables", () => {
  const combos = MMA_VARIANTS.flatMap((v) => [
    { shape: v.shape, operand: "A" as const, dtype: v.abDtype },
    { shape: v.shape, operand: "B" as const, dtype: v.abDtype },
    { shape: v.shape, operand: "C" as const, dtype: v.cdDtype },
  ]);

  it("covers every mma.sync variant of the op table (shape, A/B dtype, C dtype)", () => {
    expect(combos.length).toBe(3 * MMA_VARIANTS.length);
    expect(new Set(MMA_VARIANTS.map((v) => `${v.shape}.${v.abDtype}`))).toEqual(
      new Set(["m16n8k16.float16", "m16n8k16.bfloat16", "m16n8k8.float32", "m16n8k32.int8"]),
    );
  });

  for (const { shape, operand, dtype } of combos) {
    it(`${shape} ${operand} (${dtype})`, () => {
      const layout = mmaSyncOperandLayout(operand, shape, dtype);
      const [rows, cols] = mmaSyncOperandShape(operand, shape);
      const kind = SIM_KIND[shape][operand];
      expect([rows, cols]).toEqual([FRAGMENT_SHAPE[kind].rows, FRAGMENT_SHAPE[kind].cols]);
      const held = distribute(layout, rows, cols, "laneid", 32);
      expect(held[0]!.length).toBe(FRAGMENT_SHAPE[kind].perLane);
      for (let lane = 0; lane < 32; lane++) {
        held[lane]!.forEach((v, i) => {
          const [r, c] = PTX[shape][operand](lane, i);
          expect(v).toBe(r * cols + c + 1); // the PTX ISA's element
          const [sr, sc] = fragmentCoord(kind, lane, i);
          expect(v).toBe(sr * cols + sc + 1); // the simulator's element
        });
      }
    });
  }

  it("rejects a dtype, shape or operand the op table does not have (TX1026)", () => {
    const code = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        return e instanceof TirxError ? e.code : "other";
      }
      return "none";
    };
    expect(code(() => mmaSyncOperandLayout("A", "m16n8k16", "float32"))).toBe("TX1026");
    // A float16 C of m16n8k16 is taken (the .f16 accumulator); no mma.sync has a bfloat16 C.
    expect(code(() => mmaSyncOperandLayout("C", "m16n8k16", "bfloat16"))).toBe("TX1026");
    expect(code(() => mmaSyncOperandLayout("A", "m16n8k64" as never, "int8"))).toBe("TX1026");
    expect(code(() => mmaSyncOperandLayout("D" as never, "m16n8k16", "float32"))).toBe("TX1026");
    expect(code(() => wgmmaOperandLayout("D", 12, "float32"))).toBe("TX1026");
    expect(code(() => wgmmaOperandLayout("D", 64, "float16"))).toBe("TX1026");
    expect(code(() => wgmmaOperandLayout("A", 64, "float32"))).toBe("TX1026");
  });

  it("prints in TIRx notation", () => {
    expect(showTileLayout(mmaSyncOperandLayout("C", "m16n8k16", "float32"))).toBe(
      "S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]",
    );
  });
});

/**
 * PTX ISA 9.7.15.5.1.1.1 "Matrix Fragments for wgmma.mma_async.m64nNk16" (Figures 148, 149):
 * warp w = tid_in_wg / 32 of the warpgroup holds rows 16w..16w+15. Accumulator D (.f32, N/2
 * elements): row = 16w + groupID for d_i with i % 4 < 2, + 8 otherwise;
 * col = threadID_in_group·2 + (i & 1) + 8·(i >> 2). Register A (.f16/.bf16, 8 elements): the
 * m16n8k16 A fragment of the warp's 16 rows.
 */
const wgmmaD = (tid: number, i: number): Coord => {
  const w = tid >> 5;
  const l = tid & 31;
  return [16 * w + (l >> 2) + (i % 4 < 2 ? 0 : 8), (l % 4) * 2 + (i & 1) + 8 * (i >> 2)];
};
const wgmmaA = (tid: number, i: number): Coord => {
  const [r, c] = PTX.m16n8k16.A(tid & 31, i);
  return [16 * (tid >> 5) + r, c];
};

describe("wgmma register fragments (warpgroup of 128 threads) against the PTX ISA", () => {
  it(`accumulator D of every m64nNk16 N (${WGMMA_NS.length} shapes)`, () => {
    for (const n of WGMMA_NS) {
      const layout = wgmmaOperandLayout("D", n, "float32");
      const [rows, cols] = wgmmaOperandShape("D", n);
      const held = distribute(layout, rows, cols, "tid_in_wg", 128);
      expect(held[0]!.length).toBe(wgmmaAccCount(n));
      const bad: string[] = [];
      for (let tid = 0; tid < 128; tid++) {
        held[tid]!.forEach((v, i) => {
          const [r, c] = wgmmaD(tid, i);
          if (v !== r * cols + c + 1) bad.push(`N ${n} thread ${tid} d${i}: PTX ISA`);
          // The simulator's accumulator (compile/wgmma.ts): the m16n8 C fragment of i & 3,
          // 8·(i >> 2) columns on, rows 16·warp on.
          const [sr, sc] = fragmentCoord("c.m16n8", tid & 31, i & 3);
          if (v !== (16 * (tid >> 5) + sr) * cols + 8 * (i >> 2) + sc + 1) {
            bad.push(`N ${n} thread ${tid} d${i}: simulator`);
          }
        });
      }
      expect(bad).toEqual([]);
    }
  });

  for (const dtype of ["float16", "bfloat16"] as const) {
    it(`register A (${dtype}, 64 x 16)`, () => {
      const layout = wgmmaOperandLayout("A", 64, dtype);
      const held = distribute(layout, 64, 16, "tid_in_wg", 128);
      expect(held[0]!.length).toBe(8);
      for (let tid = 0; tid < 128; tid++) {
        held[tid]!.forEach((v, i) => {
          const [r, c] = wgmmaA(tid, i);
          expect(v).toBe(r * 16 + c + 1);
          const [sr, sc] = fragmentCoord("a.m16n8k16", tid & 31, i);
          expect(v).toBe((16 * (tid >> 5) + sr) * 16 + sc + 1);
        });
      }
    });
  }

  it("TIRx's wg_local_layout: one row per thread of the warpgroup", () => {
    const l = wgLocalLayout(4);
    expect(showTileLayout(l)).toBe("S[(128, 4) : (1@tid_in_wg, 1)]");
    expect(applyLayout(l, [37, 2])).toEqual({ m: 2, tid_in_wg: 37 });
  });
});
