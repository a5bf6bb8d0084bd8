// The float division family (mod, floormod, floordiv) against an exact reference built on BigInt
// rationals (a float is m * 2^e exactly): the simulator semantics of the op records, and the PTX
// lowering run on a small PTX interpreter, must both match it bit for bit.
import { describe, expect, it } from "vitest";
import { binaryOp, lowerFloatRem, type DType, type ThreadFn } from "@tirx-ts/core";
import { bitsF32, bitsF64, f32bits, f64bits, Recorder, runPtx } from "./util/ptx-interp.js";
import { lcg } from "../../../test/util/lcg.js";

type Kind = "mod" | "floormod" | "floordiv";
const FLOATS = ["float16", "bfloat16", "float32", "float64"] as const;
type F = (typeof FLOATS)[number];

// --- formats, written independently of core's rounding -------------------------------------
const FMT: Record<F, { p: number; emin: number; emax: number; bits: number; ebits: number }> = {
  float16: { p: 11, emin: -14, emax: 15, bits: 16, ebits: 5 },
  bfloat16: { p: 8, emin: -126, emax: 127, bits: 16, ebits: 8 },
  float32: { p: 24, emin: -126, emax: 127, bits: 32, ebits: 8 },
  float64: { p: 53, emin: -1022, emax: 1023, bits: 64, ebits: 11 },
};

/** Value of raw bits of format `f`. */
function decode(bits: bigint, f: F): number {
  const { p, bits: n, ebits } = FMT[f];
  const frac = bits & ((1n << BigInt(p - 1)) - 1n);
  const e = Number((bits >> BigInt(p - 1)) & ((1n << BigInt(ebits)) - 1n));
  const s = (bits >> BigInt(n - 1)) & 1n ? -1 : 1;
  const bias = (1 << (ebits - 1)) - 1;
  if (e === (1 << ebits) - 1) return frac ? NaN : s * Infinity;
  const m = Number(e === 0 ? frac : frac | (1n << BigInt(p - 1)));
  return s * m * 2 ** ((e === 0 ? 1 : e) - bias - (p - 1));
}

/** A finite float as [n, k]: value = n / 2^k with k = 1100 (every float is such a rational). */
const K = 1200n;
function rat(x: number): bigint {
  let n = 0n;
  let a = Math.abs(x);
  // a = sum of powers of two; peel exactly from the top. The loop starts one exponent above
  // log2's estimate of the leading bit (no higher power of two is at most a), not at 1023: the
  // ~2000 steps of every call were most of this file's time.
  const top = a > 0 ? Math.min(1023, Math.floor(Math.log2(a)) + 1) : 1023;
  for (let e = top; a > 0 && e >= -1074; e--) {
    if (a >= 2 ** e) {
      a -= 2 ** e;
      n += 1n << (K + BigInt(e));
    }
  }
  return x < 0 ? -n : n;
}

/** n / 2^K rounded once to nearest even in format f. */
function round(n: bigint, f: F): number {
  if (n === 0n) return 0;
  const { p, emin, emax } = FMT[f];
  const neg = n < 0n;
  const a = neg ? -n : n;
  const top = a.toString(2).length - 1 - Number(K); // exponent of the leading bit
  const lsb = Math.max(top, emin) - (p - 1); // exponent of the format's last place
  const sh = BigInt(lsb) + K; // n is in units of 2^-K
  let q = a >> sh;
  const rem = a - (q << sh);
  const half = 1n << (sh - 1n);
  if (rem > half || (rem === half && q % 2n === 1n)) q += 1n;
  let v = Number(q) * 2 ** lsb;
  if (v >= 2 ** (emax + 1)) v = Infinity;
  return neg ? -v : v;
}

const neg = (x: number) => x < 0 || Object.is(x, -0);
const floorDivBig = (a: bigint, b: bigint): bigint => {
  const q = a / b;
  return a % b !== 0n && a < 0n !== b < 0n ? q - 1n : q;
};

/** The exact definitions (see numeric/float-rem.ts). */
function reference(kind: Kind, a: number, b: number, f: F): number {
  if (a !== a || b !== b) return NaN;
  if (kind === "floordiv" && b === 0) return a / b;
  if (b === 0 || !Number.isFinite(a)) return NaN;
  if (!Number.isFinite(b)) {
    if (kind === "mod") return a;
    if (kind === "floormod") return a === 0 ? (neg(b) ? -0 : 0) : neg(a) !== neg(b) ? b : a;
    return a !== 0 && neg(a) !== neg(b) ? -1 : neg(a) !== neg(b) ? -0 : 0;
  }
  const na = rat(a);
  const nb = rat(b);
  if (kind === "mod") {
    const r = na - (na / nb) * nb;
    return r === 0n ? (neg(a) ? -0 : 0) : round(r, f);
  }
  const q = floorDivBig(na, nb);
  if (kind === "floormod") {
    const r = na - q * nb;
    return r === 0n ? (neg(b) ? -0 : 0) : round(r, f);
  }
  return q === 0n ? (neg(a) !== neg(b) ? -0 : 0) : round(q << K, f);
}

// --- inputs ----------------------------------------------------------------------------------
// 31-bit states (the high 31 of the generator's 32).
const next = lcg(12345);
const rnd = (): number => next() >>> 1;
const randomBits = (f: F): bigint =>
  FMT[f].bits === 64
    ? (BigInt(rnd()) << 33n) ^ (BigInt(rnd()) << 2n) ^ BigInt(rnd() & 3)
    : BigInt(rnd()) & ((1n << BigInt(FMT[f].bits)) - 1n);

function inputs(f: F, n: number): [number, number][] {
  const { p, emin, emax } = FMT[f];
  const edge = [
    0,
    -0,
    Infinity,
    -Infinity,
    NaN,
    1,
    -1,
    0.5,
    -3,
    2 ** emin,
    2 ** (emin - p + 1),
    -(2 ** (emin - p + 1)) * 3,
    (2 - 2 ** (1 - p)) * 2 ** emax,
    -(2 ** emax),
    2 ** (emin - 1),
  ];
  const out: [number, number][] = [];
  for (const a of edge) for (const b of edge) out.push([a, b]);
  while (out.length < n) {
    const a = decode(randomBits(f), f);
    const b = decode(randomBits(f), f);
    if (a !== a || b !== b) continue;
    out.push([a, b]);
    // Same magnitude range: small quotients, where floor and rounding interact most.
    out.push([a, (a * (1 + (rnd() % 15))) / 8]);
  }
  return out.map(([a, b]) => [decodeRound(a, f), decodeRound(b, f)]);
}
/** Snap a float64 to format f (inputs built by arithmetic must be values of the format). */
const decodeRound = (x: number, f: F): number =>
  x !== x || !Number.isFinite(x) || x === 0 ? x : round(rat(x), f);

const same = (x: number, y: number) => Object.is(x, y);
const show = (x: number) => (Object.is(x, -0) ? "-0" : String(x));

describe("float mod/floormod/floordiv: simulator semantics are exact", () => {
  for (const f of FLOATS) {
    it(f, () => {
      const ins = inputs(f, f === "float64" ? 1500 : 2500);
      for (const kind of ["mod", "floormod", "floordiv"] as const) {
        const fn = binaryOp(kind).sim;
        if (fn.kind !== "thread") throw new Error("thread semantics expected");
        const op = fn.make([f, f], f) as (a: number, b: number) => number;
        for (const [a, b] of ins) {
          const want = reference(kind, a, b, f);
          const got = op(a, b);
          if (!same(got, want)) {
            expect.fail(
              `${kind}(${show(a)}, ${show(b)}) on ${f}: got ${show(got)}, want ${show(want)}`,
            );
          }
        }
      }
    });
  }
});

describe("the issue's cases", () => {
  const f32 = (kind: Kind, a: number, b: number) => {
    const s = binaryOp(kind).sim as { make: (d: DType[], r: DType) => ThreadFn };
    return s.make(["float32", "float32"], "float32")(Math.fround(a), Math.fround(b));
  };
  it("gives the exact results the GPU lowering used to miss", () => {
    expect(f32("floordiv", -288148.25, -0.025021079927682877)).toBe(11516219);
    expect(f32("floormod", 213733.015625, -0.0005346030229702592)).toBe(
      Math.fround(-6.871193181723356e-5),
    );
    expect(f32("mod", 213733.015625, -0.0005346030229702592)).toBe(
      Math.fround(0.00046589109115302563),
    );
    const h = binaryOp("mod").sim as { make: (d: DType[], r: DType) => ThreadFn };
    expect(Object.is(h.make(["float16", "float16"], "float16")(-57, 0.5), -0)).toBe(true);
  });
});

describe("float mod/floormod/floordiv: the PTX lowering, interpreted, is exact", () => {
  for (const f of ["float32", "float64"] as const) {
    it(f, () => {
      const toBits = f === "float32" ? f32bits : f64bits;
      const fromBits = f === "float32" ? bitsF32 : bitsF64;
      const ins = inputs(f, f === "float64" ? 300 : 1200);
      for (const kind of ["mod", "floormod", "floordiv"] as const) {
        const rec = new Recorder();
        lowerFloatRem(kind, rec, "%d", "%a", "%b", f);
        for (const [a, b] of ins) {
          const regs = runPtx(rec.lines, { "%a": toBits(a), "%b": toBits(b) });
          const got = fromBits(regs.get("%d")!);
          const want = reference(kind, a, b, f);
          if (!same(got, want)) {
            expect.fail(
              `PTX ${kind}(${show(a)}, ${show(b)}) on ${f}: got ${show(got)}, want ${show(want)}`,
            );
          }
        }
      }
    });
  }
  it("reproduces the issue's float32 cases", () => {
    const run = (kind: Kind, a: number, b: number) => {
      const rec = new Recorder();
      lowerFloatRem(kind, rec, "%d", "%a", "%b", "float32");
      const r = runPtx(rec.lines, { "%a": f32bits(a), "%b": f32bits(b) });
      return bitsF32(r.get("%d")!);
    };
    expect(run("floordiv", -288148.25, -0.025021079927682877)).toBe(11516219);
    expect(run("floormod", 213733.015625, -0.0005346030229702592)).toBe(
      Math.fround(-6.871193181723356e-5),
    );
    expect(run("mod", 213733.015625, -0.0005346030229702592)).toBe(
      Math.fround(0.00046589109115302563),
    );
  });
});
