// T.tile primitives (core/src/tile) on the simulated device against references computed here:
// bit for bit for exact ops (IEEE add/sub/mul/div/fma/sqrt/reciprocal, casts, reductions in the
// order the records document), within the op record's bound for the rest; random and edge
// inputs; every run without a hazard report (the simulator throws on the first); every kernel's
// PTX assembled by ptxas. Also: dispatch errors (TX2022) name the requirement and the nearest
// layout, and explainTile says what each call chose.
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { fma32, roundF16 } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { uniformFrom } from "./util/lcg.js";

const f = Math.fround;
const dev = sim();

/** Deterministic inputs: edge values first, then uniform in [-8, 8). */
function inputs(n: number, seed: number): Float32Array {
  const edges = [0, -0, 1, -1, Infinity, -Infinity, NaN, 1e-40, -3e38, 0.5, 2, -88, 100];
  const rnd = uniformFrom(seed, -8, 8);
  return Float32Array.from({ length: n }, (_, i) =>
    i < edges.length && seed % 2 === 1 ? edges[i]! : rnd(),
  );
}

function run(
  fn: PrimFunc,
  ins: Float32Array[],
  shapes: number[][],
  out: number[],
  dtype = "float32",
): Float32Array {
  assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", fn.name);
  const k = compile(fn, { target: "cuda" });
  const ts = ins.map((x, i) =>
    tensor(x, { shape: shapes[i]!, dtype: dtype as "float32", device: dev }),
  );
  const o = tensor.zeros(out, "float32", dev);
  k(...ts, o);
  const got = o.toArray() as Float32Array;
  for (const t of [...ts, o]) t.dispose();
  return got;
}

const same = (g: number, w: number): boolean =>
  Object.is(g, w) || (Number.isNaN(g) && Number.isNaN(w));
const ulp = (w: number): number => {
  const a = Math.abs(w);
  if (a < 2 ** -126) return 2 ** -149;
  return 2 ** (Math.floor(Math.log2(a)) - 23);
};
const near = (g: number, w: number, ulps: number): boolean =>
  same(g, f(w)) || (Number.isFinite(w) && Math.abs(g - w) <= ulps * ulp(w));

// [4, 64] over 2 warps: dim 0 in each thread's 4 slots, dim 1 over (warp, lane).
const ROWS_L = () => T.TileLayout(T.S([4, 2, 32], [1, "1@warpid", "1@laneid"]));
const ELEMENTWISE = [
  "add",
  "sub",
  "mul",
  "fdiv",
  "fma",
  "maximum",
  "minimum",
  "sqrt",
  "reciprocal",
  "exp2",
  "exp",
  "log2",
  "silu",
  "select",
  "fill",
  "zero",
  "cast",
  "addScalar",
] as const;

describe("elementwise primitives", () => {
  const fn = T.function(
    "tile_elementwise",
    {
      A: T.Tensor([4, 64], "float32"),
      B: T.Tensor([4, 64], "float32"),
      O: T.Tensor([ELEMENTWISE.length, 4, 64], "float32"),
    },
    ({ A, B, O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
      const b = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
      const t = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
      const h = T.alloc_local([4, 64], "float16", { layout: ROWS_L() });
      T.tile.cta.copy(a, A);
      T.tile.cta.copy(b, B);
      ELEMENTWISE.forEach((op, k) => {
        const c = T.tile.cta;
        if (op === "fma") c.fma(t, a, b, a);
        else if (op === "sqrt" || op === "reciprocal" || op === "exp2" || op === "exp") c[op](t, a);
        else if (op === "log2") c.log2(t, a, { approx: true });
        else if (op === "silu") c.silu(t, a);
        else if (op === "select") c.select(t, T.cuda.thread_idx("x").lt(32), a, b);
        else if (op === "fill") c.fill(t, 2.5);
        else if (op === "zero") c.zero(t);
        else if (op === "cast") {
          c.cast(h, a);
          c.cast(t, h);
        } else if (op === "addScalar") c.add(t, a, 1.5);
        else c[op](t, a, b);
        T.tile.cta.copy(O.sub(k), t);
      });
    },
  );

  it("every op against its reference on random and edge inputs", () => {
    const A = inputs(256, 1);
    const B = inputs(256, 2);
    const got = run(
      fn,
      [A, B],
      [
        [4, 64],
        [4, 64],
      ],
      [ELEMENTWISE.length, 4, 64],
    );
    const bad: string[] = [];
    ELEMENTWISE.forEach((op, k) => {
      for (let i = 0; i < 256; i++) {
        const a = A[i]!;
        const b = B[i]!;
        const g = got[k * 256 + i]!;
        const col = i % 64;
        let ok: boolean;
        switch (op) {
          case "add":
            ok = same(g, f(a + b));
            break;
          case "sub":
            ok = same(g, f(a - b));
            break;
          case "mul":
            ok = same(g, f(a * b));
            break;
          case "fdiv":
            ok = same(g, f(a / b));
            break;
          case "fma":
            ok = same(g, fma32(a, b, a));
            break;
          case "maximum":
            ok = Number.isNaN(a) ? same(g, b) : Number.isNaN(b) ? same(g, a) : g === Math.max(a, b);
            break;
          case "minimum":
            ok = Number.isNaN(a) ? same(g, b) : Number.isNaN(b) ? same(g, a) : g === Math.min(a, b);
            break;
          case "sqrt":
            ok = same(g, f(Math.sqrt(a)));
            break;
          case "reciprocal":
            ok = same(g, f(1 / a));
            break;
          case "exp2":
            ok = near(g, 2 ** a, 2);
            break;
          case "exp":
            ok = near(g, Math.exp(a), 2);
            break;
          // lg2.approx: the simulator rounds the exact value; the op record's bound is 2 ulp.
          case "log2":
            ok = near(g, Math.log2(a), 2) || (a > 0 && a < 2 ** -126);
            break;
          case "silu":
            ok =
              near(g, a / (1 + Math.exp(-a)), 4) ||
              (Number.isNaN(a) && Number.isNaN(g)) ||
              Math.abs(a) === Infinity;
            break;
          case "select":
            ok = same(g, col < 32 ? a : b);
            break;
          case "fill":
            ok = g === 2.5;
            break;
          case "zero":
            ok = Object.is(g, 0);
            break;
          case "cast":
            ok = same(g, roundF16(a));
            break;
          case "addScalar":
            ok = same(g, f(a + 1.5));
            break;
        }
        if (!ok) bad.push(`${op}[${i}]: a=${a} b=${b} got ${g}`);
      }
    });
    expect(bad.slice(0, 10)).toEqual([]);
  });

  it("explainTile: one line per call, the per-thread slot loop", () => {
    const lines = explainTile(fn);
    expect(lines.length).toBe(2 + ELEMENTWISE.length * 2 + 1);
    expect(lines[2]).toMatch(
      /^tile-primitives\.test\.ts:\d+ T\.tile\.cta\.add → per-thread loop, 4 slots .*S\[\(4, 2, 32\) : \(1, 1@warpid, 1@laneid\)\]$/,
    );
    expect(lines[0]).toMatch(/scalar ld\.global ×4 per thread/);
  });
});

describe("copy", () => {
  // 512 float32 over 64 threads, 4 contiguous per vector, two vectors per thread.
  const L = () => T.TileLayout(T.S([2, 64, 4], ["4@m", "1@tid", "1@m"]));
  const copyFn = (dtype: "float32" | "float16") =>
    T.function(
      `tile_copy_${dtype}`,
      { X: T.Tensor([512], dtype), Y: T.Tensor([512], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const r = T.alloc_local([512], dtype, { layout: L() });
        const w = T.alloc_local([512], "float32", { layout: L() });
        T.tile.cta.copy(r, X);
        T.tile.cta.cast(w, r);
        T.tile.cta.copy(Y, w);
      },
    );

  it("vectorized: 16-byte float32 and 8-byte float16 vectors, bit for bit", () => {
    for (const dt of ["float32", "float16"] as const) {
      const fn = copyFn(dt);
      const X = inputs(512, 3);
      const got = run(fn, [X], [[512]], [512], dt);
      const want = dt === "float16" ? X.map(roundF16) : X;
      expect([...got].every((g, i) => same(g, want[i]!))).toBe(true);
      const text = compileToPtx(fn, { arch: "sm_80" }).text;
      expect(text).toMatch(
        dt === "float32" ? /ld\.global\.v4\./ : /ld\.global\.v2\.b32|ld\.global\.v4\.b16/,
      );
      expect(text).toMatch(/st\.global\.v4\./);
      expect(text).not.toMatch(/\.local/);
      expect(explainTile(fn)[0]).toMatch(/ld\.global vectors of (16|8) B/);
    }
  });

  it("a replicated tile is stored by one replica: no write races", () => {
    const fn = T.function(
      "tile_copy_replica",
      { X: T.Tensor([8], "float32"), Y: T.Tensor([8], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const r = T.alloc_local([8], "float32", {
          layout: T.TileLayout(T.S([8]), T.R([64], ["1@tid"])),
        });
        T.tile.cta.copy(r, X);
        T.tile.cta.mul(r, r, 2);
        T.tile.cta.copy(Y, r);
      },
    );
    const X = inputs(8, 4);
    const got = run(fn, [X], [[8]], [8]);
    expect([...got]).toEqual([...X].map((x) => f(x * 2)));
  });
});

/** The butterfly of `vals` (one per lane) with masks `masks`, as shfl.sync.bfly computes it. */
function butterfly(
  vals: number[],
  masks: number[],
  op: (a: number, b: number) => number,
): number[] {
  let v = [...vals];
  for (const m of masks) v = v.map((x, l) => op(x, v[l ^ m]!));
  return v;
}

describe("reductions follow the layout", () => {
  const add = (a: number, b: number) => f(a + b);
  const red = T.function(
    "tile_reduce",
    { A: T.Tensor([4, 64], "float32"), R: T.Tensor([12], "float32"), C: T.Tensor([64], "float32") },
    ({ A, R, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
      const rowL = T.TileLayout(T.S([4, 1]), T.R([2, 32], ["1@warpid", "1@laneid"]));
      const rs = T.alloc_local([4, 1], "float32", { layout: rowL });
      const cs = T.alloc_local([1, 64], "float32", {
        layout: T.TileLayout(T.S([1, 2, 32], [1, "1@warpid", "1@laneid"])),
      });
      T.tile.cta.copy(a, A);
      T.tile.cta.sum(rs, a, 1);
      T.tile.cta.copy(R.sub(T.slice(0, 4)), rs);
      T.tile.cta.max(rs, a, 1);
      T.tile.cta.copy(R.sub(T.slice(4, 8)), rs);
      T.tile.cta.min(rs, a, 1);
      T.tile.cta.copy(R.sub(T.slice(8, 12)), rs);
      T.tile.sum(cs, a, 0);
      T.tile.cta.copy(C, cs);
    },
  );

  it("across slots, lanes and warps: sums bit for bit in the documented order", () => {
    const A = inputs(256, 6);
    assembleLater(compileToPtx(red, { arch: "sm_80" }).text, "sm_80", "tile_reduce");
    const k = compile(red, { target: "cuda" });
    const ta = tensor(A, { shape: [4, 64], dtype: "float32", device: dev });
    const tr = tensor.zeros([12], "float32", dev);
    const tc = tensor.zeros([64], "float32", dev);
    k(ta, tr, tc);
    const got = tr.toArray() as Float32Array;
    for (const t of [ta, tr, tc]) t.dispose();
    for (let r = 0; r < 4; r++) {
      const row = Array.from({ length: 64 }, (_, c) => A[r * 64 + c]!);
      const warps = [0, 1].map(
        (w) => butterfly(row.slice(w * 32, w * 32 + 32), [16, 8, 4, 2, 1], add)[0]!,
      );
      expect(got[r]).toBe(add(warps[0]!, warps[1]!));
      expect(got[4 + r]).toBe(Math.max(...row));
      expect(got[8 + r]).toBe(Math.min(...row));
    }
    const lines = explainTile(red);
    expect(lines[1]).toMatch(
      /T\.tile\.cta\.sum → warp shfl\.sync\.bfly ×5 \+ shared scratch \(2 warps\) \+ bar\.sync: reduces axis 1/,
    );
    expect(lines[7]).toMatch(/T\.tile\.sum → 4 slots in-thread \(2 accumulators\): reduces axis 0/);
  });

  it("within a thread: two accumulators over the slots, from 0", () => {
    const A = inputs(256, 8);
    assembleLater(compileToPtx(red, { arch: "sm_80" }).text, "sm_80", "tile_reduce");
    const k = compile(red, { target: "cuda" });
    const ta = tensor(A, { shape: [4, 64], dtype: "float32", device: dev });
    const tr = tensor.zeros([12], "float32", dev);
    const tc = tensor.zeros([64], "float32", dev);
    k(ta, tr, tc);
    const got = tc.toArray() as Float32Array;
    for (let c = 0; c < 64; c++) {
      const x = [0, 1, 2, 3].map((r) => A[r * 64 + c]!);
      const want = add(add(add(0, x[0]!), x[2]!), add(add(0, x[1]!), x[3]!));
      expect(same(got[c]!, want), `col ${c}`).toBe(true);
    }
    for (const t of [ta, tr, tc]) t.dispose();
  });

  it("a warp reduction over the lane bits of the axis (an mma-like layout)", () => {
    // [8, 8]: rows on lane bits 4..16, columns on lane bits 1..2 and two slots.
    const L = T.TileLayout(T.S([8, 4, 2], ["4@laneid", "1@laneid", 1]));
    const D = T.TileLayout(T.S([8, 1], ["4@laneid", 1]), T.R([4], ["1@laneid"]));
    const fn = T.function(
      "tile_warp_reduce",
      { A: T.Tensor([8, 8], "float32"), Y: T.Tensor([16], "float32") },
      ({ A, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([8, 8], "float32", { layout: L });
        const d = T.alloc_local([8, 1], "float32", { layout: D });
        T.tile.warp.copy(a, A);
        T.tile.warp.sum(d, a, 1);
        T.tile.warp.copy(Y.sub(T.slice(0, 8)), d);
        T.tile.warp.max(d, a, 1);
        T.tile.warp.copy(Y.sub(T.slice(8, 16)), d);
      },
    );
    const A = inputs(64, 10);
    const got = run(fn, [A], [[8, 8]], [16]);
    for (let r = 0; r < 8; r++) {
      const lanes = [0, 1, 2, 3].map((t) =>
        add(add(0, A[r * 8 + 2 * t]!), add(0, A[r * 8 + 2 * t + 1]!)),
      );
      const want = butterfly(lanes, [2, 1], add)[0]!;
      expect(same(got[r]!, want), `row ${r}`).toBe(true);
      expect(got[8 + r]).toBe(Math.max(...A.slice(r * 8, r * 8 + 8)));
    }
    expect(explainTile(fn)[1]).toMatch(
      /2 slots in-thread \(2 accumulators\) \+ warp shfl\.sync\.bfly ×2: reduces axis 1/,
    );
  });
});

describe("dispatch explains itself (TX2022)", () => {
  const kernel = (body: () => void, block = 64): PrimFunc =>
    T.function("k", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
      body();
    });

  it("elementwise operands with different layouts name dst's layout", () => {
    const e = errorOf(() =>
      kernel(() => {
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        // Rows in every other slot: another map (S[(4, 64) : (1, 1@tid)] is ROWS_L's own).
        const b = T.alloc_local([4, 64], "float32", {
          layout: T.TileLayout(T.S([4, 64], [2, "1@tid"])),
        });
        T.tile.cta.add(a, a, b);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /b \(.*\) must have dst's shape and layout.*nearest that works: b allocated as \[4, 64\] with S\[\(4, 2, 32\)/,
    );
    expect(e.span?.file).toMatch(/tile-primitives\.test\.ts$/);
  });

  it("a scope too narrow for the layout names the scope that serves it", () => {
    const lanes = errorOf(() =>
      kernel(() => {
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        T.tile.warp.add(a, a, 1);
      }),
    );
    expect(lanes.message).toMatch(
      /spreads over warpid \(the iter 2 : 1@warpid\), beyond the threads of one warp: a warp-scope primitive's layouts bind only laneid; nearest that works: T\.tile\.cta\.add/,
    );
    const warps = errorOf(() =>
      kernel(() => {
        const a = T.alloc_local([64], "float32", { layout: T.TileLayout(T.S([64], ["1@tid"])) });
        const d = T.alloc_local([1], "float32", {
          layout: T.TileLayout(T.S([1]), T.R([64], ["1@tid"])),
        });
        T.tile.sum(d, a, 0);
      }),
    );
    expect(warps.message).toMatch(
      /spreads over warps, so the reduction needs shared scratch and a barrier of the warps; nearest that works: T\.tile\.wg\.sum for warps of one warpgroup, T\.tile\.cta\.sum across the CTA/,
    );
  });

  it("a reduction's dst must replicate over the reduced threads: the message gives the layout", () => {
    const e = errorOf(() =>
      kernel(() => {
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        const d = T.alloc_local([4, 1], "float32");
        T.tile.cta.sum(d, a, 1);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /nearest that works: T\.alloc_local\(\[4, 1\], "float32"\) laid out as S\[4 : 1\] \+ R\[\(2, 32\) : \(1@warpid, 1@laneid\)\] \(or the shape \[4\] without the reduced dim\)/,
    );
  });

  it("copy moves bits: a dtype change is a cast", () => {
    const e = errorOf(() =>
      T.function("k", { X: T.Tensor([64], "float16") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const a = T.alloc_local([64], "float32", { layout: T.TileLayout(T.S([64], ["1@tid"])) });
        T.tile.cta.copy(a, X);
      }),
    );
    expect(e.message).toMatch(/copy moves bits.*nearest that works: T\.tile\.cast/);
  });
});

describe("threads a layout leaves unnamed", () => {
  const laneCopy = (explicit: boolean, block: number) =>
    T.function(
      `tile_unnamed_${explicit ? "r" : "i"}_${block}`,
      { X: T.Tensor([32, 8], "float32"), Y: T.Tensor([32, 8], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
        const a = T.alloc_local([32, 8], "float32", {
          layout: T.TileLayout(
            explicit
              ? `S[(32, 8) : (1@laneid, 1)] + R[${block / 32} : 1@warpid]`
              : "S[(32, 8) : (1@laneid, 1)]",
          ),
        });
        T.tile.cta.copy(a, X);
        T.tile.cta.mul(a, a, 2);
        T.tile.cta.copy(Y, a);
      },
    );

  it("are implicit replicas: one warp stores, as with an explicit R[... @warpid]", () => {
    const X = inputs(256, 5);
    for (const block of [128, 256]) {
      const got = run(laneCopy(false, block), [X], [[32, 8]], [32, 8]);
      expect([...got].every((g, i) => same(g, f(X[i]! * 2)))).toBe(true);
      const ptx = (fn: PrimFunc) =>
        compileToPtx(fn, { arch: "sm_80" }).text.replace(/tile_unnamed_\w+/g, "K");
      expect(ptx(laneCopy(false, block))).toBe(ptx(laneCopy(true, block)));
    }
  });

  it("a layout bound to warps 0..3 in a 256-thread block stays as it was", () => {
    const fn = T.function(
      "tile_warps03",
      { X: T.Tensor([128], "float32"), Y: T.Tensor([128], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
        const a = T.alloc_local([128], "float32", {
          layout: T.TileLayout(T.S([4, 32], ["1@warpid", "1@laneid"])),
        });
        T.tile.cta.copy(a, X);
        T.tile.cta.copy(Y, a);
      },
    );
    const X = inputs(128, 6);
    const got = run(fn, [X], [[128]], [128]);
    expect([...got].every((g, i) => same(g, X[i]!))).toBe(true);
  });
});

describe("tiles without a layout and mixed dtypes (TX2022)", () => {
  const kernel = (body: () => void): PrimFunc =>
    T.function("k", { X: T.Tensor([128, 8], "float32") }, ({ X }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
      body.call(undefined);
      void X;
    });

  it("a tile without a TileLayout is per-thread: a cta/warp/wg primitive refuses it", () => {
    for (const scope of ["cta", "warp", "wg"] as const) {
      const e = errorOf(() =>
        T.function("k", { X: T.Tensor([128, 8], "float32") }, ({ X }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
          const a = T.alloc_local([128, 8], "float32");
          T.tile[scope].copy(a, X);
        }),
      );
      expect(e.code).toBe("TX2022");
      expect(e.message).toMatch(
        /has no TileLayout, so it is per-thread.*nearest that works: .*TileLayout.*the thread scope T\.tile\.copy/,
      );
    }
    // The thread scope keeps taking it.
    expect(() =>
      T.function("k", { X: T.Tensor([8], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([8], "float32");
        T.tile.copy(a, X);
      }),
    ).not.toThrow();
  });

  it("a reduction's dst and src share one dtype", () => {
    const e = errorOf(() =>
      kernel(() => {
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        const o = T.alloc_local([4, 1], "float16", {
          layout: T.TileLayout(T.S([4]), T.R([2, 32], ["1@warpid", "1@laneid"])),
        });
        T.tile.cta.sum(o, a, 1);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/dst o is float16, src a float32.*nearest that works: T\.tile\.cast/);
  });

  it("elementwise register operands share one dtype (scalars convert; cast converts)", () => {
    const e = errorOf(() =>
      kernel(() => {
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        const b = T.alloc_local([4, 64], "float16", { layout: ROWS_L() });
        T.tile.cta.add(a, a, b);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/dst a is float32, b b float16.*nearest that works: T\.tile\.cast b/);
    expect(() =>
      kernel(() => {
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        const b = T.alloc_local([4, 64], "float16", { layout: ROWS_L() });
        T.tile.cta.cast(a, b);
        T.tile.cta.add(a, a, 1.5);
      }),
    ).not.toThrow();
  });
});

describe("examples/tile/softmax.ts", () => {
  it("uses the instructions of examples/softmax.ts: ld/st.global.v4, shfl.sync.bfly, ex2.approx; no .local", async () => {
    const { softmax } = await import("../examples/tile/softmax.js");
    const text = compileToPtx(softmax, { arch: "sm_90" }).text;
    assembleLater(text, "sm_90", "tile_softmax");
    expect(text.match(/shfl\.sync\.bfly\.b32/g)?.length).toBe(10);
    expect(text).toContain("ex2.approx.ftz.f32");
    expect(text).toContain("ld.global.v4.b32");
    expect(text).toContain("st.global.v4.b32");
    expect(text).not.toMatch(/\.local/);
    // 1 / sum is computed once, not per element.
    expect(text.match(/div\.rn\.f32/g)?.length).toBe(1);
  });
});

describe("tirx build --explain", () => {
  it("prints one comment line per T.tile call before the PTX", async () => {
    const { main } = await import("../packages/tirx-ts/src/cli.js");
    let out = "";
    const code = await main(["build", "examples/tile/softmax.ts", "--explain"], {
      out: (s: string) => void (out += s),
      err: () => undefined,
    });
    expect(code).toBe(0);
    expect(out.split("\n")[5]).toMatch(
      /^\/\/ softmax\.ts:\d+ T\.tile\.cta\.sum → 8 slots in-thread \(2 accumulators\) \+ warp shfl\.sync\.bfly ×5 \+ shared scratch \(8 warps\) \+ bar\.sync: reduces axis 0 of S\[\(1, 256, 8\) : \(8, 1@tid, 1\)\]$/,
    );
    expect(out).toContain(".entry softmax");
  });
});

describe("permute_layout", () => {
  it("across threads through shared scratch, and within a thread, bit for bit", () => {
    const rowsOfThreads = T.TileLayout(T.S([4, 16, 4], ["16@tid", "1@tid", 1]));
    const fn = T.function(
      "tile_permute",
      { A: T.Tensor([4, 64], "float32"), O: T.Tensor([4, 64], "float32") },
      ({ A, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        const b = T.alloc_local([4, 64], "float32", { layout: rowsOfThreads });
        T.tile.cta.copy(a, A);
        T.tile.cta.permute_layout(b, a);
        T.tile.cta.copy(O, b);
      },
    );
    const A = inputs(256, 12);
    expect([...run(fn, [A], [[4, 64]], [4, 64])].every((g, i) => same(g, A[i]!))).toBe(true);
    expect(explainTile(fn)[1]).toMatch(
      /T\.tile\.cta\.permute_layout → shared scratch \(1024 B\) \+ bar\.sync: S\[\(4, 2, 32\)/,
    );
    expect(explainTile(fn)[2]).toMatch(/st\.global vectors of 16 B/);

    const one = T.function(
      "tile_permute_local",
      { A: T.Tensor([4, 8], "float32"), O: T.Tensor([4, 8], "float32") },
      ({ A, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const a = T.alloc_local([4, 8], "float32");
        const b = T.alloc_local([4, 8], "float32", { layout: T.TileLayout(T.S([4, 8], [1, 4])) });
        T.tile.copy(a, A);
        T.tile.permute_layout(b, a);
        T.tile.copy(O, b);
      },
    );
    const B = inputs(32, 14);
    expect([...run(one, [B], [[4, 8]], [4, 8])].every((g, i) => same(g, B[i]!))).toBe(true);
    const e = errorOf(() =>
      T.function("k", {}, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const a = T.alloc_local([4, 64], "float32", { layout: ROWS_L() });
        const b = T.alloc_local([4, 64], "float32", { layout: rowsOfThreads });
        T.tile.permute_layout(b, a);
      }),
    );
    expect(e.message).toMatch(/nearest that works: T\.tile\.cta\.permute_layout/);
  });
});

describe("errors name the primitive as the author called it", () => {
  const body = (f: () => void) => () =>
    T.function("k", { X: T.Tensor([32], "float32") }, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      f();
    });
  const lanes = () => T.TileLayout("S[32 : 1@laneid]");

  it("a select condition written (j) => … instead of ([j]) => … is TX1002 saying so", () => {
    const e = errorOf(
      body(() => {
        const f = T.alloc_local([32], "float32", { layout: lanes() });
        T.tile.warp.fill(f, 0);
        T.tile.warp.select(f, ((j: any) => j.lt(16)) as never, f, -Infinity);
      }),
    );
    expect(e.code).toBe("TX1002");
    expect(e.message).toMatch(
      /T\.tile\.warp\.select: cond's function threw .*it takes dst's indices as one array .*\(\[i, j\]\) => j\.lt\(i\)/,
    );
    expect(e.span?.file).toMatch(/tile-primitives\.test\.ts$/);
  });

  it("a reduction of a bool tile is TX2022 at the call, suggesting a cast to int32", () => {
    const e = errorOf(
      body(() => {
        const f = T.alloc_local([1, 32], "bool", {
          layout: T.TileLayout("S[(1, 32) : (1, 1@laneid)]"),
        });
        const d = T.alloc_local([1, 1], "bool", {
          layout: T.TileLayout("S[(1, 1) : (1, 1)] + R[32 : 1@laneid]"),
        });
        T.tile.warp.fill(f, true as never);
        T.tile.warp.sum(d, f, 1);
      }),
    );
    expect([e.code, e.message]).toEqual([
      "TX2022",
      expect.stringMatching(/sum of bool tile f.*cast into an int32 tile first/),
    ]);
    expect(e.span?.file).toMatch(/tile-primitives\.test\.ts$/);
  });

  it("an operand of the wrong kind names T.tile.warp.gemm, not T.tile.gemm", () => {
    const e = errorOf(
      body(() => {
        const c = T.alloc_local([16, 8], "float32", {
          layout: T.layout.mma_sync_tile_layout("C", "m16n8k16", "float32", 16, 8),
        });
        T.tile.warp.gemm(c, 1 as never, 2 as never);
      }),
    );
    expect(e.message).toMatch(/\] T\.tile\.warp\.gemm: A must be a tile/);
  });
});
