// Broadcasting in the elementwise tile primitives (a per-row [64, 1] operand against a [64, n]
// tile in the wgmma accumulator layout, read from the thread's own registers) and select's
// function-of-the-indices condition (the causal mask), as a FlashAttention consumer warpgroup
// uses them: one online-softmax step on the simulated device against host math (max, sub, mul
// and the scaled fma exact: integer inputs and a power-of-two scale; exp2 within the 2 ulp the
// transcendental tests allow; the row sum within its reordering bound), the mask exactly, ptxas
// on the PTX, and the TX2022 messages of layouts that do not broadcast in registers.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor } from "tirx-ts";
import { type TirxError } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { intsFrom } from "./util/lcg.js";

const dev = sim();
const f = Math.fround;
const ROWS = 64;
const COLS = 32;
const SCALE = 0.5;

/** S's layout: the wgmma accumulator fragments of a 64 × 32 float32 tile. */
const sLayout = () => T.layout.wgmma_tile_layout("D", ROWS, COLS, "float32");
/** The per-row [64, 1] layout T.tile.wg.max(m, S, 1) writes: S's row iters, replicated over its 4 column lanes. */
const rowLayout = () =>
  T.TileLayout(T.S([4, 2, 8, 1], ["32@tid_in_wg", 1, "4@tid_in_wg", 1]), T.R([4], ["1@tid_in_wg"]));

/** Integers in [-8, 8] (every max, difference and scaled value exact in float32). */
function ints(n: number, seed: number): Float32Array {
  return Float32Array.from({ length: n }, intsFrom(seed, -8, 8));
}

/** The message without its " (at file:line:col)" suffix (the checkout's path). */
const msg = (e: TirxError): string => e.message.replace(/ \(at [^()]*\)$/, "");

const ulp = (w: number): number => 2 ** (Math.floor(Math.log2(Math.abs(w))) - 23);
const near = (g: number, w: number, ulps: number): boolean =>
  g === f(w) || Math.abs(g - w) <= ulps * ulp(w);

/**
 * One online-softmax step at wg scope: mNew = max(rowmax(S), mOld); P = 2^(S·c − mNew·c) (fma
 * with a broadcast row); l = rowsum(P); corr = 2^(mOld·c − mNew·c); O·corr (broadcast); and
 * S − mNew (broadcast sub). Outputs P, O·corr, S − mNew, and the rows mNew, l, corr.
 */
const softmaxStep = T.function(
  "online_softmax_step",
  {
    X: T.Tensor([ROWS, COLS], "float32"),
    M0: T.Tensor([ROWS], "float32"),
    O: T.Tensor([ROWS, COLS], "float32"),
    P: T.Tensor([ROWS, COLS], "float32"),
    OC: T.Tensor([ROWS, COLS], "float32"),
    Z: T.Tensor([ROWS, COLS], "float32"),
    R: T.Tensor([3, ROWS], "float32"),
  },
  ({ X, M0, O, P, OC, Z, R }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const S = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
    const Acc = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
    const mOld = T.alloc_local([ROWS, 1], "float32", { layout: rowLayout() });
    const mNew = T.alloc_local([ROWS, 1], "float32", { layout: rowLayout() });
    const negM = T.alloc_local([ROWS, 1], "float32", { layout: rowLayout() });
    const l = T.alloc_local([ROWS, 1], "float32", { layout: rowLayout() });
    const corr = T.alloc_local([ROWS, 1], "float32", { layout: rowLayout() });
    T.tile.wg.copy(S, X);
    T.tile.wg.copy(mOld, M0);
    T.tile.wg.max(mNew, S, 1);
    T.tile.wg.maximum(mNew, mNew, mOld);
    T.tile.wg.mul(negM, mNew, -SCALE);
    T.tile.wg.fma(corr, mOld, SCALE, negM);
    T.tile.wg.exp2(corr, corr);
    T.tile.wg.sub(Acc, S, mNew);
    T.tile.wg.copy(Z, Acc);
    T.tile.wg.fma(S, S, SCALE, negM);
    T.tile.wg.exp2(S, S);
    T.tile.wg.sum(l, S, 1);
    T.tile.wg.copy(P, S);
    T.tile.wg.copy(Acc, O);
    T.tile.wg.mul(Acc, Acc, corr);
    T.tile.wg.copy(OC, Acc);
    T.tile.wg.copy(R.sub(0), mNew);
    T.tile.wg.copy(R.sub(1), l);
    T.tile.wg.copy(R.sub(2), corr);
  },
);

/** The causal mask of a diagonal block: S[i][j] = j > i + off ? -inf : S[i][j]. */
const causal = T.function(
  "causal_mask",
  { X: T.Tensor([ROWS, COLS], "float32"), Y: T.Tensor([ROWS, COLS], "float32"), off: T.int32 },
  ({ X, Y, off }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const S = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
    T.tile.wg.copy(S, X);
    T.tile.wg.select(S, ([i, j]) => j.gt(i.add(off)), -Infinity, S);
    T.tile.wg.copy(Y, S);
  },
);

describe("broadcast operands of the elementwise primitives", () => {
  it("an online-softmax step on the wgmma D layout matches host math", () => {
    const x = ints(ROWS * COLS, 7);
    const m0 = ints(ROWS, 3);
    const o = ints(ROWS * COLS, 5);
    const k = compile(softmaxStep, { target: "cuda" });
    const t = {
      X: tensor(x, { shape: [ROWS, COLS], dtype: "float32", device: dev }),
      M0: tensor(m0, { shape: [ROWS], dtype: "float32", device: dev }),
      O: tensor(o, { shape: [ROWS, COLS], dtype: "float32", device: dev }),
      P: tensor.zeros([ROWS, COLS], "float32", dev),
      OC: tensor.zeros([ROWS, COLS], "float32", dev),
      Z: tensor.zeros([ROWS, COLS], "float32", dev),
      R: tensor.zeros([3, ROWS], "float32", dev),
    };
    k(t.X, t.M0, t.O, t.P, t.OC, t.Z, t.R);
    const p = t.P.toArray() as Float32Array;
    const oc = t.OC.toArray() as Float32Array;
    const z = t.Z.toArray() as Float32Array;
    const r = t.R.toArray() as Float32Array;
    for (const v of Object.values(t)) v.dispose();
    const bad: string[] = [];
    for (let i = 0; i < ROWS; i++) {
      const row = Array.from(x.subarray(i * COLS, (i + 1) * COLS));
      const m = Math.max(...row, m0[i]!);
      if (r[i] !== m) bad.push(`mNew[${i}] ${r[i]} != ${m}`);
      const c = r[2 * ROWS + i]!;
      if (!near(c, 2 ** (m0[i]! * SCALE - m * SCALE), 2)) bad.push(`corr[${i}] ${c}`);
      let exact = 0;
      let gotSum = 0;
      for (let j = 0; j < COLS; j++) {
        const at = i * COLS + j;
        // exp2 (ex2-based, not .approx): 2 ulp, as test/tile-primitives.test.ts bounds it.
        if (!near(p[at]!, 2 ** (x[at]! * SCALE - m * SCALE), 2)) bad.push(`P[${i}][${j}] ${p[at]}`);
        if (z[at] !== f(x[at]! - m)) bad.push(`Z[${i}][${j}] ${z[at]}`);
        if (oc[at] !== f(o[at]! * c)) bad.push(`OC[${i}][${j}] ${oc[at]} (corr ${c})`);
        exact += p[at]!;
        gotSum = r[ROWS + i]!;
      }
      // A float32 sum of 32 terms in another order: within 32 ulp of the exact sum of the terms.
      if (Math.abs(gotSum - exact) > COLS * ulp(exact)) bad.push(`l[${i}] ${gotSum} vs ${exact}`);
    }
    expect(bad.slice(0, 8)).toEqual([]);
  });

  it("reads the broadcast operand from its own register: PTX, ptxas, explain", () => {
    assembleLater(compileToPtx(softmaxStep, { arch: "sm_90a" }).text, "sm_90a", "softmax_step");
    const fn = T.function(
      "broadcast_sub",
      { X: T.Tensor([ROWS, COLS], "float32"), M: T.Tensor([ROWS], "float32") },
      ({ X, M }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const S = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
        const m = T.alloc_local([ROWS, 1], "float32", { layout: rowLayout() });
        T.tile.wg.copy(S, X);
        T.tile.wg.copy(m, M);
        T.tile.wg.sub(S, S, m);
        T.tile.wg.copy(X, S);
      },
    );
    const ptx = compileToPtx(fn, { arch: "sm_90a" }).text;
    assembleLater(ptx, "sm_90a", fn.name);
    // dst's 16 slots: the first row of each 8 × 8 block (slot digit 2 = 0) reads m's slot 0
    // (%f17), the row 8 below (digit 1) m's slot 1 (%f18).
    expect(ptx.match(/sub\.rn\.f32[^;]+;/g)).toMatchInlineSnapshot(`
      [
        "sub.rn.f32 %f1, %f1, %f17;",
        "sub.rn.f32 %f2, %f2, %f17;",
        "sub.rn.f32 %f5, %f5, %f17;",
        "sub.rn.f32 %f6, %f6, %f17;",
        "sub.rn.f32 %f9, %f9, %f17;",
        "sub.rn.f32 %f10, %f10, %f17;",
        "sub.rn.f32 %f13, %f13, %f17;",
        "sub.rn.f32 %f14, %f14, %f17;",
        "sub.rn.f32 %f3, %f3, %f18;",
        "sub.rn.f32 %f4, %f4, %f18;",
        "sub.rn.f32 %f7, %f7, %f18;",
        "sub.rn.f32 %f8, %f8, %f18;",
        "sub.rn.f32 %f11, %f11, %f18;",
        "sub.rn.f32 %f12, %f12, %f18;",
        "sub.rn.f32 %f15, %f15, %f18;",
        "sub.rn.f32 %f16, %f16, %f18;",
      ]
    `);
    expect(explainTile(fn)[2]).toMatch(/T\.tile\.wg\.sub → per-thread loop, 16 slots/);
  });
});

describe("broadcast dispatch errors (TX2022)", () => {
  const kernel = (mk: () => void) =>
    errorOf(() =>
      T.function("bad_broadcast", { X: T.Tensor([ROWS, COLS], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        mk();
      }),
    );

  it("a row vector over other threads names the element, its thread and the layout that works", () => {
    const e = kernel(() => {
      const s = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
      const m = T.alloc_local([ROWS, 1], "float32", {
        layout: T.TileLayout(T.S([ROWS, 1], ["1@tid_in_wg", 1])),
      });
      T.tile.wg.sub(s, s, m);
    });
    expect(e.code).toBe("TX2022");
    expect(msg(e)).toMatchInlineSnapshot(
      `"TX2022 [tile/dispatch] T.tile.wg.sub: b (m [64, 1] S[(64, 1) : (1@tid_in_wg, 1)]) broadcasts along dim 1 of dst s [64, 32] S[(4, 2, 8, 4, 4, 2) : (32@tid_in_wg, 2, 4@tid_in_wg, 4, 1@tid_in_wg, 1)], which needs each thread to hold the b element of every dst element it holds (same indices, 0 in the broadcast dims): dst element [16, 0] is held by the thread with tid_in_wg = 32 (dst's iter 4:32@tid_in_wg of dim 0), where b has the iter 64:1@tid_in_wg of dim 0; nearest that works: T.alloc_local([64, 1], "float32") laid out as S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg] (what T.tile.wg.max(m, s, 1) writes)"`,
    );
  });

  it("a row vector that does not replicate over the row's 4 lanes", () => {
    const e = kernel(() => {
      const s = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
      const m = T.alloc_local([ROWS, 1], "float32", {
        layout: T.TileLayout(T.S([4, 2, 8, 1], ["32@tid_in_wg", 1, "4@tid_in_wg", 1])),
      });
      T.tile.wg.mul(s, s, m);
    });
    expect(e.code).toBe("TX2022");
    expect(msg(e)).toMatchInlineSnapshot(
      `"TX2022 [tile/dispatch] T.tile.wg.mul: b (m [64, 1] S[(4, 2, 8, 1) : (32@tid_in_wg, 1, 4@tid_in_wg, 1)]) broadcasts along dim 1 of dst s [64, 32] S[(4, 2, 8, 4, 4, 2) : (32@tid_in_wg, 2, 4@tid_in_wg, 4, 1@tid_in_wg, 1)], which needs each thread to hold the b element of every dst element it holds (same indices, 0 in the broadcast dims): dst element [0, 2] is held by the thread with tid_in_wg = 1, which holds no b element of its row: b must replicate over 4:1@tid_in_wg; nearest that works: T.alloc_local([64, 1], "float32") laid out as S[(4, 2, 8) : (32@tid_in_wg, 1, 4@tid_in_wg)] + R[4 : 1@tid_in_wg] (what T.tile.wg.max(m, s, 1) writes)"`,
    );
  });

  it("a shape that does not broadcast, and rank 1 against rank 2, mention broadcasting", () => {
    const e = kernel(() => {
      const s = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
      const m = T.alloc_local([ROWS, 2], "float32");
      T.tile.wg.add(s, s, m);
    });
    expect(e.code).toBe("TX2022");
    expect(msg(e)).toMatchInlineSnapshot(
      `"TX2022 [tile/dispatch] T.tile.wg.add: b (m [64, 2] S[(64, 2) : (2, 1)]) must have dst's shape [64, 32], or broadcast to it: the same rank, each dim dst's extent or 1; nearest that works: b allocated as [64, 32] with T.layout.wgmma_tile_layout("D", 64, 32, "float32") (dst's), or T.tile.permute_layout into it; a per-row operand as [64, 1]"`,
    );
    const r1 = kernel(() => {
      const s = T.alloc_local([ROWS, COLS], "float32", { layout: sLayout() });
      const m = T.alloc_local([ROWS], "float32", {
        layout: T.TileLayout(
          T.S([4, 2, 8], ["32@tid_in_wg", 1, "4@tid_in_wg"]),
          T.R([4], ["1@tid_in_wg"]),
        ),
      });
      T.tile.wg.add(s, s, m);
    });
    expect(r1.message).toMatch(/the same rank, each dim dst's extent or 1/);
  });
});

describe("select with a function of the indices", () => {
  it("the causal mask of a diagonal block matches host math for several offsets", () => {
    const x = ints(ROWS * COLS, 11);
    const k = compile(causal, { target: "cuda" });
    const X = tensor(x, { shape: [ROWS, COLS], dtype: "float32", device: dev });
    const Y = tensor.zeros([ROWS, COLS], "float32", dev);
    for (const off of [0, -5, 13]) {
      k(X, Y, off);
      const y = Y.toArray() as Float32Array;
      const want = Float32Array.from(x, (v, at) =>
        at % COLS > Math.floor(at / COLS) + off ? -Infinity : v,
      );
      expect(Array.from(y)).toEqual(Array.from(want));
    }
    X.dispose();
    Y.dispose();
    assembleLater(compileToPtx(causal, { arch: "sm_90a" }).text, "sm_90a", causal.name);
  });
});

describe("at thread scope (per-thread tiles, default layouts)", () => {
  it("a row and a column broadcast, and a mask of the indices, match host math", () => {
    const fn = T.function(
      "thread_broadcast",
      {
        X: T.Tensor([4, 8], "float32"),
        Rw: T.Tensor([4, 1], "float32"),
        Cl: T.Tensor([1, 8], "float32"),
        Y: T.Tensor([4, 8], "float32"),
      },
      ({ X, Rw, Cl, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const x = T.alloc_local([4, 8], "float32");
        const r = T.alloc_local([4, 1], "float32");
        const c = T.alloc_local([1, 8], "float32");
        T.tile.copy(x, X);
        T.tile.copy(r, Rw);
        T.tile.copy(c, Cl);
        T.tile.mul(x, x, r);
        T.tile.sub(x, x, c);
        T.tile.select(x, ([i, j]) => j.lt(i), 0, x);
        T.tile.copy(Y, x);
      },
    );
    const x = ints(32, 2);
    const rw = ints(4, 9);
    const cl = ints(8, 4);
    const k = compile(fn, { target: "cuda" });
    const ts = [
      tensor(x, { shape: [4, 8], dtype: "float32", device: dev }),
      tensor(rw, { shape: [4, 1], dtype: "float32", device: dev }),
      tensor(cl, { shape: [1, 8], dtype: "float32", device: dev }),
      tensor.zeros([4, 8], "float32", dev),
    ] as const;
    k(...ts);
    const y = Array.from(ts[3].toArray() as Float32Array);
    for (const t of ts) t.dispose();
    const want = Array.from(x, (v, at) => {
      const i = Math.floor(at / 8);
      const j = at % 8;
      return j < i ? 0 : f(f(v * rw[i]!) - cl[j]!);
    });
    expect(y).toEqual(want);
  });

  it("a broadcast operand that is a sub-view at a slot offset (r.sub(1) of r [2, 4, 1]) reads its own slots", () => {
    const fn = T.function(
      "thread_broadcast_sub",
      {
        X: T.Tensor([4, 3], "float32"),
        R: T.Tensor([2, 4, 1], "float32"),
        Y: T.Tensor([4, 3], "float32"),
      },
      ({ X, R, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const x = T.alloc_local([4, 3], "float32");
        const r = T.alloc_local([2, 4, 1], "float32");
        T.tile.copy(x, X);
        T.tile.copy(r, R);
        // r.sub(1) is r's slots 4..7: a [4, 1] column broadcast along x's 3 columns.
        T.tile.add(x, x, r.sub(1));
        T.tile.copy(Y, x);
      },
    );
    const x = ints(12, 5);
    const rv = ints(8, 6);
    const ts = [
      tensor(x, { shape: [4, 3], dtype: "float32", device: dev }),
      tensor(rv, { shape: [2, 4, 1], dtype: "float32", device: dev }),
      tensor.zeros([4, 3], "float32", dev),
    ] as const;
    compile(fn, { target: "cuda" })(...ts);
    const y = Array.from(ts[2].toArray() as Float32Array);
    for (const t of ts) t.dispose();
    expect(y).toEqual(Array.from(x, (v, at) => v + rv[4 + Math.floor(at / 3)]!));
  });
});
