// TIRx's TileLayout (shard, replica, offset over named axes): construction and its checks, the
// S/R/O notation and its round trip, grouping by a logical shape, apply / coordinates, and
// ComposeLayout. Facts from the TIRx docs ("Tensor Layout", the TileLayout reference and the
// mlc.ai "TIRx Layout API" chapter); properties with fast-check.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyComposeLayout,
  applyLayout,
  applySwizzle,
  composeLayout,
  defaultLayout,
  groupLayout,
  isTrivialLayout,
  LAYOUT_AXES,
  layoutAxisRange,
  layoutAxisValues,
  layoutCoordinates,
  layoutFromIters,
  layoutInjective,
  layoutSize,
  layoutSpan,
  parseTileLayout,
  showComposeLayout,
  showTileLayout,
  swizzleLayout,
  swizzleMode,
  tileLayout,
  TirxError,
  type LayoutAxis,
  type LayoutIter,
  type TileLayout,
} from "../src/index.js";

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e.code;
    throw e;
  }
  return "no error";
}

const FRAG = "S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)]";

describe("TileLayout construction and notation", () => {
  it("TIRx's example: S[4, 8] is contiguous row-major, and (1, 2) lands at m = 10", () => {
    const l = parseTileLayout("S[4, 8]");
    expect(l).toEqual(defaultLayout([4, 8]));
    expect(applyLayout(l, [1, 2]).m).toBe(10);
    expect(applyLayout(l, [1, 2], [4, 8]).m).toBe(10);
    expect(applyLayout(l, 10).m).toBe(10);
    expect(isTrivialLayout(l)).toBe(true);
    expect(showTileLayout(l)).toBe("S[(4, 8) : (8, 1)]");
  });

  it("the mlc.ai fragment: the same axis (laneid) twice, a bare stride on m", () => {
    const l = parseTileLayout(FRAG);
    expect(l.shard).toEqual([
      { extent: 8, stride: 4, axis: "laneid" },
      { extent: 2, stride: 1, axis: "warpid" },
      { extent: 4, stride: 1, axis: "laneid" },
      { extent: 2, stride: 1, axis: "m" },
    ]);
    expect(showTileLayout(l)).toBe(FRAG);
    // Element (g, w, t, j) is lane 4g + t of warp w, slot j.
    expect(applyLayout(l, [5, 1, 3, 1])).toEqual({ m: 1, laneid: 23, warpid: 1 });
    expect(layoutSize(l)).toBe(128);
    expect(layoutSize(l, "laneid")).toBe(32);
    expect(layoutSpan(l, "laneid")).toBe(32);
    expect(layoutSpan(l)).toBe(2);
    expect(isTrivialLayout(l)).toBe(false);
  });

  it("specs build the same layout as the notation", () => {
    const spec = tileLayout({
      shard: {
        extents: [8, 2, 4, 2],
        strides: ["4@laneid", "1@warpid", { stride: 1, axis: "laneid" }, 1],
      },
      replica: { extents: [2], strides: ["4@warpid"] },
      offset: [16, "3@laneid", -16],
    });
    const text = `${FRAG} + R[2 : 4@warpid] + O[3@laneid]`;
    expect(showTileLayout(spec)).toBe(text);
    expect(parseTileLayout(text)).toEqual(spec);
    expect(
      parseTileLayout(
        " S [ (8,2,4,2):(4 @ laneid,1@warpid,1@laneid,1) ]+R[2:4@warpid]+O[(3@laneid)]",
      ),
    ).toEqual(spec);
  });

  it("a replica gives every copy: R[2 : 4@warpid] puts each element in warps w and w + 4", () => {
    const l = parseTileLayout("S[(32, 4) : (1@laneid, 1)] + R[2 : 4@warpid] + O[1@warpid]");
    expect(layoutCoordinates(l, [7, 3])).toEqual([
      { m: 3, laneid: 7, warpid: 1 },
      { m: 3, laneid: 7, warpid: 5 },
    ]);
    expect(layoutAxisRange(l, "warpid")).toEqual({ min: 1, max: 5 });
  });

  it("rejects bad specs with TX1026", () => {
    const cases: (() => unknown)[] = [
      () => parseTileLayout("S[(0, 4)]"),
      () => parseTileLayout("S[(4, 4) : (1@lane, 1)]"),
      () => parseTileLayout("S[(4, 4) : (1)]"),
      () => parseTileLayout("R[4 : 1@laneid]"),
      () => parseTileLayout("S[4] + S[4]"),
      () => parseTileLayout("S[4] R[2 : 1@warpid]"),
      () => parseTileLayout("S[4 : 1.5]"),
      () => parseTileLayout("S[4 : 1@]"),
      () => parseTileLayout("S[4"),
      () => parseTileLayout(""),
      () => tileLayout({ shard: { extents: [2.5] } }),
      () => tileLayout({ shard: { extents: [4], strides: ["x@laneid" as never] } }),
      () => tileLayout({ shard: { extents: [4], strides: [0.5] } }),
      () => tileLayout({ shard: { extents: [4] }, offset: ["1@bx" as never] }),
      () => tileLayout(null as never),
      () => tileLayout({ shard: { extents: [2 ** 30, 2 ** 30] } }),
    ];
    for (const f of cases) expect(code(f)).toBe("TX1026");
    expect(() => parseTileLayout("S[(4, 4) : (1@lane, 1)]")).toThrow(
      /unknown axis `lane`; did you mean `laneid`\?/,
    );
  });
});

describe("groupLayout (TIRx group)", () => {
  it("groups the mma C fragment by [16, 8] without splitting", () => {
    const c = parseTileLayout("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]");
    const g = groupLayout(c, [16, 8]);
    expect(g.seps).toEqual([0, 2, 4]);
    expect(g.layout).toEqual(c);
  });

  it("splits an iter across a dim boundary, keeping the map", () => {
    const l = parseTileLayout("S[32 : 1@laneid]");
    const g = groupLayout(l, [4, 8]);
    expect(showTileLayout(g.layout)).toBe("S[(4, 8) : (8@laneid, 1@laneid)]");
    expect(g.seps).toEqual([0, 1, 2]);
    for (let x = 0; x < 32; x++) expect(applyLayout(g.layout, x)).toEqual(applyLayout(l, x));
  });

  it("extent-1 iters and dims of 1", () => {
    const l = parseTileLayout("S[(1, 4, 1, 8, 1) : (5, 8, 7, 1, 9)]");
    expect(groupLayout(l, [4, 8]).seps).toEqual([0, 3, 5]);
    expect(groupLayout(l, [1, 32]).seps).toEqual([0, 1, 5]);
  });

  it("a shape that does not group is TX1026; a coordinate outside it TX1005", () => {
    const l = parseTileLayout("S[(4, 8)]");
    expect(code(() => groupLayout(l, [16]))).toBe("TX1026");
    expect(code(() => groupLayout(l, [3, 8]))).toBe("TX1026");
    expect(code(() => groupLayout(parseTileLayout("S[(6, 4)]"), [4, 6]))).toBe("TX1026");
    expect(code(() => applyLayout(l, [4, 0]))).toBe("TX1005");
    expect(code(() => applyLayout(l, 32))).toBe("TX1005");
    expect(code(() => applyLayout(l, [1, 2, 3]))).toBe("TX1004");
  });
});

describe("ComposeLayout", () => {
  it("swizzles the memory coordinate: SwizzleLayout(3, 3, 3) over a 8 x 64 float16 tile", () => {
    const tile = defaultLayout([8, 64]);
    const sw = swizzleLayout(3, 3, 3);
    const c = composeLayout(sw, tile);
    for (let r = 0; r < 8; r++) {
      for (let k = 0; k < 64; k++) {
        expect(applyComposeLayout(c, [r, k]).m).toBe(applySwizzle(sw, r * 64 + k));
      }
    }
    // The 128B byte swizzle counted in float16 elements is the same permutation.
    const bytes = composeLayout(swizzleMode("128B"), tile, "float16");
    expect(bytes.swizzle).toEqual(sw);
    expect(showComposeLayout(c)).toBe(
      "ComposeLayout(SwizzleLayout(3, 3, 3), S[(8, 64) : (64, 1)])",
    );
    expect(code(() => composeLayout(swizzleMode("128B"), tile))).toBe("TX1016");
  });
});

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

const axisArb = fc.constantFrom<LayoutAxis>(...LAYOUT_AXES);
const iterArb = fc.record({
  extent: fc.integer({ min: 1, max: 6 }),
  stride: fc.integer({ min: -40, max: 40 }),
  axis: axisArb,
});
const offsetArb = fc.dictionary(axisArb, fc.integer({ min: -50, max: 50 }), { maxKeys: 3 });
const layoutArb = fc
  .tuple(
    fc.array(iterArb, { minLength: 0, maxLength: 5 }),
    fc.array(iterArb, { maxLength: 2 }),
    offsetArb,
  )
  .map(([s, r, o]) => layoutFromIters(s, r, o));

/**
 * A shard-only layout that is injective by construction: each axis's iters, in a random order,
 * get the compact mixed-radix strides of that order, times a random sign.
 */
const injectiveArb = fc
  .array(
    fc.record({
      extent: fc.integer({ min: 1, max: 5 }),
      axis: axisArb,
      key: fc.nat(),
      neg: fc.boolean(),
    }),
    {
      minLength: 1,
      maxLength: 5,
    },
  )
  .map((xs) => {
    const stride = new Map<number, number>();
    for (const a of LAYOUT_AXES) {
      let s = 1;
      const on = xs.map((x, i) => ({ ...x, i })).filter((x) => x.axis === a);
      on.sort((p, q) => p.key - q.key || p.i - q.i);
      for (const x of on) {
        stride.set(x.i, x.neg ? -s : s);
        s *= x.extent;
      }
    }
    const shard: LayoutIter[] = xs.map((x, i) => ({
      extent: x.extent,
      stride: stride.get(i)!,
      axis: x.axis,
    }));
    return layoutFromIters(shard);
  });

const key = (c: Readonly<Partial<Record<LayoutAxis, number>>>): string =>
  LAYOUT_AXES.map((a) => c[a] ?? 0).join(",");

describe("TileLayout properties (fast-check, seed 22)", () => {
  it("the notation round-trips: parse(show(L)) equals L", () => {
    fc.assert(
      fc.property(layoutArb, (l) => {
        expect(parseTileLayout(showTileLayout(l))).toEqual(l);
      }),
      { seed: 22, numRuns: 300 },
    );
  });

  it("apply of a shard-only injective layout is a bijection onto its image", () => {
    fc.assert(
      fc.property(injectiveArb, (l: TileLayout) => {
        const n = layoutSize(l);
        const inverse = new Map<string, number>();
        let collisions = 0;
        for (let x = 0; x < n; x++) {
          const k = key(applyLayout(l, x));
          if (inverse.has(k)) collisions++;
          inverse.set(k, x);
        }
        expect(collisions).toBe(0);
        expect(inverse.size).toBe(n);
        // apply ∘ inverse is the identity on the image.
        let wrong = 0;
        for (const [k, x] of inverse) if (key(applyLayout(l, x)) !== k) wrong++;
        expect(wrong).toBe(0);
      }),
      { seed: 22, numRuns: 100 },
    );
  });

  it("replicas give exactly product(replica extents) coordinates, each base + a replica offset", () => {
    fc.assert(
      fc.property(layoutArb, fc.nat(), (l, seed) => {
        const n = layoutSize(l);
        const x = seed % n;
        const all = layoutCoordinates(l, x);
        expect(all.length).toBe(l.replica.reduce((a, r) => a * r.extent, 1));
        expect(all[0]).toEqual(applyLayout(l, x));
        for (const c of all) {
          for (const a of LAYOUT_AXES) {
            const r = layoutAxisRange(l, a);
            const v = c[a] ?? 0;
            if (c[a] !== undefined || r.min !== r.max) {
              expect(v).toBeGreaterThanOrEqual(r.min);
              expect(v).toBeLessThanOrEqual(r.max);
            }
          }
        }
      }),
      { seed: 22, numRuns: 150 },
    );
  });

  it("grouping by a shape the extents factor into keeps every coordinate", () => {
    fc.assert(
      fc.property(injectiveArb, fc.nat(), (l, cut) => {
        const ext = l.shard.map((x) => x.extent);
        const k = cut % (ext.length + 1);
        const shape = [
          ext.slice(0, k).reduce((a, b) => a * b, 1),
          ext.slice(k).reduce((a, b) => a * b, 1),
        ];
        const g = groupLayout(l, shape);
        let wrong = 0;
        for (let x = 0; x < layoutSize(l); x++) {
          const want = key(applyLayout(l, x));
          if (key(applyLayout(g.layout, x)) !== want) wrong++;
          if (x % 7 === 0) {
            const c = [Math.floor(x / shape[1]!), x % shape[1]!];
            if (key(applyLayout(l, c, shape)) !== want) wrong++;
          }
        }
        expect(wrong).toBe(0);
      }),
      { seed: 22, numRuns: 80 },
    );
  });
  it("layoutAxisValues gives every element's coordinate on each axis, as applyLayout does", () => {
    fc.assert(
      fc.property(layoutArb, (l) => {
        const n = layoutSize(l);
        let wrong = 0;
        for (const a of LAYOUT_AXES) {
          const values = layoutAxisValues(l, a);
          expect(values.length).toBe(n);
          for (let x = 0; x < n; x++) if (values[x] !== (applyLayout(l, x)[a] ?? 0)) wrong++;
        }
        expect(wrong).toBe(0);
      }),
      { seed: 22, numRuns: 150 },
    );
  });

  it("layoutInjective reports the first collision that enumerating every coordinate finds, or none", () => {
    // Small strides (collisions common, the dense owner array) and the wide ones of layoutArb
    // (codes spread over a range too sparse for it: the Map), and injective layouts.
    const smallArb = fc
      .tuple(
        fc.array(
          fc.record({
            extent: fc.integer({ min: 1, max: 6 }),
            stride: fc.integer({ min: -3, max: 3 }),
            axis: fc.constantFrom<LayoutAxis>("m", "laneid", "warpid"),
          }),
          { minLength: 1, maxLength: 4 },
        ),
        fc.array(
          fc.record({
            extent: fc.integer({ min: 1, max: 3 }),
            stride: fc.integer({ min: -4, max: 4 }),
            axis: fc.constantFrom<LayoutAxis>("laneid", "warpid"),
          }),
          { maxLength: 2 },
        ),
      )
      .map(([s, r]) => layoutFromIters(s, r));
    const named = (l: TileLayout): LayoutAxis[] =>
      LAYOUT_AXES.filter(
        (a) =>
          a === "m" ||
          l.offset[a] !== undefined ||
          [...l.shard, ...l.replica].some((x) => x.axis === a),
      );
    let clashes = 0;
    fc.assert(
      fc.property(fc.oneof(smallArb, layoutArb, injectiveArb), (l) => {
        const axes = named(l);
        const owner = new Map<string, number>();
        let want: { a: number; b: number; at: string } | undefined;
        for (let e = 0; e < layoutSize(l) && !want; e++) {
          for (const c of layoutCoordinates(l, e)) {
            const k = axes.map((a) => c[a] ?? 0).join(",");
            const prev = owner.get(k);
            if (prev !== undefined && prev !== e) {
              want = { a: prev, b: e, at: k };
              break;
            }
            owner.set(k, e);
          }
        }
        const got = layoutInjective(l);
        if (want) clashes++;
        expect(
          got && { a: got.a, b: got.b, at: axes.map((a) => got.at[a] ?? 0).join(",") },
        ).toEqual(want);
      }),
      { seed: 22, numRuns: 400 },
    );
    // Both outcomes were drawn.
    expect(clashes).toBeGreaterThan(50);
    expect(clashes).toBeLessThan(350);
  });
});
