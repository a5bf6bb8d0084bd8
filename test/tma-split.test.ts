// TMA box splitting (packages/core/src/tile/tma-plan.ts): a dim wider than a box (256 elements,
// or the swizzle span innermost) is cut into the widest legal boxes (each innermost box a
// multiple of 16 bytes, each box start on the swizzle atom) plus a narrower last box of its own
// tensor map, not halved into boxes that break those rules: 300 float32 columns as 256 + 44, 264
// 128B-swizzled rows as 256 + 8. Both run on the simulator against the host copy. A property
// over random extents: every accepted plan writes each element of the dst exactly once with the
// right source element (a host model of the issues' boxes), and every refusal is a TX2022 whose
// nearest suggestions, applied in turn (at most two: one per rule broken), give an accepted plan.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { compile, explainTile, sim, tensor } from "tirx-ts";
import { isTirxError, type TirxError } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { BYTES, gOf, kernel, type Case, type DT, type Sw } from "./util/split-copy-cases.js";

/** Run on the simulator: O and the host's tile of G. */
function run(c: Case): { got: number[]; want: number[] } {
  const fn = kernel(c);
  assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", fn.name);
  const dev = sim();
  const g = gOf(c);
  const G = tensor(Float32Array.from(g), { shape: [c.gR, c.gC], dtype: c.dt, device: dev });
  const O = tensor.zeros([c.R, c.C], c.dt, dev);
  compile(fn)(G, O);
  const got = Array.from(O.toArray() as ArrayLike<number>);
  const want = Array.from(
    { length: c.R * c.C },
    (_, k) => g[(c.r0 + Math.floor(k / c.C)) * c.gC + c.c0 + (k % c.C)]!,
  );
  return { got, want };
}

describe("a dim wider than a box is cut into legal boxes", () => {
  it("300 float32 columns: 256 + 44 (not 150 + 150), on the simulator", () => {
    const c: Case = {
      R: 1,
      C: 300,
      P: 300,
      gR: 1,
      gC: 320,
      r0: 0,
      c0: 8,
      dt: "float32",
      sw: "none",
    };
    expect(explainTile(kernel(c)).join("\n")).toMatch(
      /box \[1, 256\] of G_tmap\w* and a last box \[1, 44\]/,
    );
    const { got, want } = run(c);
    expect(got).toEqual(want);
  });

  it("3 rows of 300 float32: TX2022 names the 1200-byte row step and the pitch that works", () => {
    const c: Case = {
      R: 3,
      C: 300,
      P: 300,
      gR: 3,
      gC: 320,
      r0: 0,
      c0: 8,
      dt: "float32",
      sw: "none",
    };
    const e = refusal(c)!;
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/1200 bytes apart/);
    expect(e.message).toMatch(
      /T\.alloc_shared\(\[3, 320\], \.\.\.\) and the copy into its \.sub\(":", "0:300"\)/,
    );
    const { got, want } = run({ ...c, P: 320 });
    expect(got).toEqual(want);
  });

  it("264 rows under a 128B swizzle: 256 + 8 (each box on a 1024-byte atom), on the simulator", () => {
    const c: Case = {
      R: 264,
      C: 64,
      P: 64,
      gR: 264,
      gC: 64,
      r0: 0,
      c0: 0,
      dt: "float16",
      sw: "128B",
    };
    expect(explainTile(kernel(c)).join("\n")).toMatch(
      /box \[256, 64\] of G_tmap\w* and a last box \[8, 64\]/,
    );
    const { got, want } = run(c);
    expect(got).toEqual(want);
  });
});

/** The TirxError of tracing the case's kernel, or undefined when it traces. */
function refusal(c: Case): TirxError | undefined {
  try {
    kernel(c);
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  return undefined;
}

/** An int32 index expression of constants, evaluated. */
function evalInt(e: unknown): number {
  const x = e as { kind: string; op?: string; value?: number | bigint; a?: unknown; b?: unknown };
  if (x.kind === "IntImm") return Number(x.value);
  if (x.kind !== "Binary") throw new Error(`not a constant: ${x.kind}`);
  const a = evalInt(x.a);
  const b = evalInt(x.b);
  switch (x.op) {
    case "add":
      return a + b;
    case "sub":
      return a - b;
    case "mul":
      return a * b;
    case "floordiv":
      return Math.floor(a / b);
    case "floormod":
      return a - Math.floor(a / b) * b;
  }
  throw new Error(`op ${x.op}`);
}

/** Every TMA TileApply of a traced kernel. */
function tmaIssues(
  fn: ReturnType<typeof kernel>,
): { box: number[]; coords: number[]; off: number }[] {
  const out: { box: number[]; coords: number[]; off: number }[] = [];
  const seen = new Set<unknown>();
  const walk = (x: unknown): void => {
    if (typeof x !== "object" || x === null || seen.has(x)) return;
    seen.add(x);
    const o = x as Record<string, unknown>;
    if (o.kind === "TileApply" && String(o.opcode).startsWith("cp.async.bulk.tensor")) {
      const p = o.params as { tensor_map: { box: number[] }; coords: unknown[] };
      const dst = o.dst as { offset: unknown };
      out.push({
        box: [...p.tensor_map.box],
        coords: p.coords.map(evalInt),
        off: evalInt(dst.offset),
      });
      return;
    }
    for (const v of Object.values(o)) walk(v);
  };
  walk(fn);
  return out;
}

/**
 * The host model of the plan: each issue writes its box, dense row-major, from its shared offset,
 * with G's elements at its coordinates. True when every element of the dst view is written once
 * with its source element and nothing else is written.
 */
function copiesExactly(c: Case, fn: ReturnType<typeof kernel>): boolean {
  const sh = new Array<number | undefined>(c.R * c.P).fill(undefined);
  const g = gOf(c);
  for (const is of tmaIssues(fn)) {
    const [bh, bw] = is.box as [number, number];
    const [y, x] = is.coords as [number, number];
    for (let i = 0; i < bh; i++)
      for (let j = 0; j < bw; j++) {
        const k = is.off + i * bw + j;
        if (k >= sh.length || sh[k] !== undefined || y + i >= c.gR || x + j >= c.gC) return false;
        sh[k] = g[(y + i) * c.gC + x + j];
      }
  }
  for (let i = 0; i < c.R; i++)
    for (let j = 0; j < c.P; j++) {
      const k = i * c.P + j;
      const want = j < c.C ? g[(c.r0 + i) * c.gC + c.c0 + j] : undefined;
      if (sh[k] !== want) return false;
    }
  return true;
}

/** The case a refusal's nearest suggestion describes, or undefined when it names none. */
function applySuggestion(c: Case, msg: string): Case | undefined {
  const near = msg.slice(msg.indexOf("nearest that works"));
  // A box starting off 16 bytes along the innermost axis (an illegal instruction on the GPU):
  // the view from the element the suggestion names.
  const start = /starting at innermost element (\d+) instead of (\d+)/.exec(near);
  if (start) return { ...c, c0: Number(start[1]) };
  const inner = /\((\d+) instead of (\d+)\)/.exec(near);
  const pitch = /T\.alloc_shared\(\[(\d+), (\d+)\]/.exec(near);
  if (!inner && !pitch) return undefined;
  const C = inner ? Number(inner[1]) : c.C;
  const P = pitch ? Number(pitch[2]) : Math.max(c.P === c.C ? C : c.P, C);
  const unit = 16 / BYTES[c.dt];
  return { ...c, C, P, gC: Math.max(c.gC, Math.ceil((c.c0 + C) / unit) * unit) };
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    dt: fc.constantFrom<DT>("float16", "float32", "int8"),
    sw: fc.constantFrom<Sw>("none", "none", "32B", "64B", "128B"),
    R: fc.integer({ min: 1, max: 600 }),
    // One column is one element (at most 4 bytes): no TMA box, and dropped as an extent-1 dim.
    C: fc.integer({ min: 2, max: 600 }),
    pad: fc.integer({ min: 0, max: 40 }),
    r0: fc.integer({ min: 0, max: 5 }),
    c0: fc.integer({ min: 0, max: 9 }),
  })
  .map(({ dt, sw, R, C, pad, r0, c0 }): Case => {
    const eb = BYTES[dt];
    const unit = 16 / eb;
    // Swizzled: rows of one span; unswizzled: a few rows of any width.
    const w = sw === "none" ? C : { "32B": 32, "64B": 64, "128B": 128 }[sw] / eb;
    // A swizzled buffer spans whole periods of the swizzle (8 rows of the span).
    const rows = sw === "none" ? 1 + (R % 4) : 8 * (1 + (R % 75));
    const P = sw === "none" ? w + (pad % 3 === 0 ? 0 : pad) : w;
    return {
      R: rows,
      C: w,
      P,
      gR: rows + r0,
      gC: Math.ceil((w + c0) / unit) * unit,
      r0,
      c0,
      dt,
      sw,
    };
  });

describe("property: accepted plans copy exactly; a refusal's suggestion is accepted", () => {
  it("random extents, dtypes and swizzles", () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        // Each refusal names one fix; a case can break two rules (an innermost extent and its
        // start, say): at most two suggestions, applied in turn, give an accepted plan.
        let now = c;
        for (let fixes = 0; ; fixes++) {
          const e = refusal(now);
          if (!e) return copiesExactly(now, kernel(now));
          if (e.code !== "TX2022" || fixes === 2) return false;
          const next = applySuggestion(now, e.message);
          if (!next) return false;
          now = next;
        }
      }),
      { numRuns: 60, seed: 7 },
    );
  });
});
