import type { F32Seq } from "./f32-seq.js";

/**
 * The accurate float32 transcendentals as {@link F32Seq} programs (range reduction, a polynomial
 * evaluated with `fma.rn`, exact scaling by a power of two), after fdlibm's `e_expf.c`/`e_logf.c`
 * methods. Every step is an IEEE-exact float32 operation, so the simulator runs the same program
 * bit for bit. Error bounds: see the records in `transcendental.ts`.
 */

const F = Math.fround;
const LN2 = Math.LN2;
const LN2_HI = F(LN2);
const LN2_LO = F(LN2 - LN2_HI);
const LOG2E_HI = F(Math.LOG2E);
const LOG2E_LO = F(Math.LOG2E - LOG2E_HI);
/** Taylor coefficients 1/k! of e^r, k = 7 down to 2; |r| ≤ 0.35 leaves < 2^-27 relative. */
const EXP_C = [5040, 720, 120, 24, 6, 2].map((k) => F(1 / k));
/** 2/(2k+1), k = 4 down to 1: log(1+f) = f - f²/2 + s(f²/2 + R), s = f/(2+f), R = Σ z^k·2/(2k+1), z = s². */
const LOG_C = [9, 7, 5, 3].map((k) => F(2 / k));

/** e^r for |r| ≤ 0.35: Horner with fma, the last step `r·p + 1` rounding once. */
function expPoly<V, I, P>(o: F32Seq<V, I, P>, r: V): V {
  let p = o.f(EXP_C[0]!);
  for (const c of EXP_C.slice(1)) p = o.fma(p, r, o.f(c));
  p = o.fma(p, r, o.f(1));
  return o.fma(p, r, o.f(1));
}

/** p·2^n for an integral float32 n in [-150, 128] and p in [0.5, 2]: two exact-factor products, one rounding. */
function scale<V, I, P>(o: F32Seq<V, I, P>, p: V, n: V): V {
  const k = o.toInt(n);
  const k1 = o.ishr(k, 1);
  const k2 = o.isub(k, k1);
  const s1 = o.fromBits(o.ishl(o.iadd(k1, 127), 23));
  const s2 = o.fromBits(o.ishl(o.iadd(k2, 127), 23));
  return o.mul(o.mul(p, s1), s2);
}

/** NaN operands pass through. */
const keepNan = <V, I, P>(o: F32Seq<V, I, P>, x: V, y: V): V => o.sel(o.nan(x), x, y);

/** 2^x: n = rni(x), f = x - n exact, 2^f = e^(f·ln2). */
export function exp2Seq<V, I, P>(o: F32Seq<V, I, P>, x: V): V {
  const xc = o.min(o.max(x, o.f(-150)), o.f(128));
  const n = o.rni(xc);
  const f = o.sub(xc, n);
  const r = o.fma(f, o.f(LN2_HI), o.mul(f, o.f(LN2_LO)));
  return keepNan(o, x, scale(o, expPoly(o, r), n));
}

/** e^x: n = rni(x·log2 e), r = x - n·ln2 (Cody–Waite, two fma steps), e^x = e^r·2^n. */
export function expSeq<V, I, P>(o: F32Seq<V, I, P>, x: V): V {
  const xc = o.min(o.max(x, o.f(-104)), o.f(89));
  const n = o.rni(o.mul(xc, o.f(LOG2E_HI)));
  const neg = o.sub(o.f(0), n);
  const r = o.fma(neg, o.f(LN2_LO), o.fma(neg, o.f(LN2_HI), xc));
  return keepNan(o, x, scale(o, expPoly(o, r), n));
}

/** x = m·2^e with m in [√½, √2), f = m - 1 exact; log(1+f) as fdlibm. Returns e (float32) and log(1+f). */
function logParts<V, I, P>(o: F32Seq<V, I, P>, x: V): { e: V; lp: V } {
  const sub = o.lt(x, o.f(2 ** -126));
  const xs = o.sel(sub, o.mul(x, o.f(2 ** 23)), x);
  const b = o.bits(xs);
  const m0 = o.fromBits(o.ior(o.iand(b, 0x7fffff), 0x3f800000));
  const big = o.gt(m0, o.f(F(Math.SQRT2)));
  const m = o.sel(big, o.mul(m0, o.f(0.5)), m0);
  let e = o.isub(o.ishr(b, 23), 127);
  e = o.iadd(e, o.seli(big, 1, 0));
  e = o.iadd(e, o.seli(sub, -23, 0));
  const f = o.sub(m, o.f(1));
  const s = o.div(f, o.add(f, o.f(2)));
  const z = o.mul(s, s);
  let t = o.f(LOG_C[0]!);
  for (const c of LOG_C.slice(1)) t = o.fma(z, t, o.f(c));
  const R = o.mul(z, t);
  const hfsq = o.mul(o.mul(o.f(0.5), f), f);
  const lp = o.sub(f, o.sub(hfsq, o.mul(s, o.add(hfsq, R))));
  return { e: o.toF(e), lp };
}

/** IEEE special values of log: NaN for x < 0 or NaN, -inf at ±0, +inf at +inf. */
function logSpecials<V, I, P>(o: F32Seq<V, I, P>, x: V, y: V): V {
  let r = o.sel(o.eq(x, o.f(0)), o.f(-Infinity), y);
  r = o.sel(o.lt(x, o.f(0)), o.f(NaN), r);
  r = o.sel(o.eq(x, o.f(Infinity)), x, r);
  return keepNan(o, x, r);
}

/** log(x) = e·ln2 + log(1+f), the e·ln2 terms by fma (ln2 split in two float32). */
export function logSeq<V, I, P>(o: F32Seq<V, I, P>, x: V): V {
  const { e, lp } = logParts(o, x);
  const y = o.fma(e, o.f(LN2_HI), o.fma(e, o.f(LN2_LO), lp));
  return logSpecials(o, x, y);
}

/** log2(x) = e + log(1+f)·log2 e (log2 e split in two float32). */
export function log2Seq<V, I, P>(o: F32Seq<V, I, P>, x: V): V {
  const { e, lp } = logParts(o, x);
  const y = o.add(e, o.fma(lp, o.f(LOG2E_HI), o.mul(lp, o.f(LOG2E_LO))));
  return logSpecials(o, x, y);
}

/** 1/sqrt(x) as `sqrt.rn` then `div.rn` (two roundings). */
export function rsqrtSeq<V, I, P>(o: F32Seq<V, I, P>, x: V): V {
  return o.div(o.f(1), o.sqrt(x));
}
