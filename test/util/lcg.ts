// The seeded pseudo-random generator of the tests (the examples' host checks write the same
// recurrence inline, also with Math.imul): the LCG
// x' = 1103515245 · x + 12345 mod 2^32 (the C standard's example rand() constants), with the
// product taken by Math.imul. The same recurrence written with `*` on doubles is wrong: the product
// passes 2^53 and loses its low bits, so `>>> 0` (or `% 2 ** 31`) of it is no longer the LCG,
// and from most seeds the sequence falls within some 15,000 steps into a cycle of 419, 1,248 or
// 10,466 values (an attention test's K and V then repeated their rows every few dozen rows).

/**
 * The generator's states from `seed` (each call returns the next one, a uint32). The low bits of
 * an LCG modulo 2^32 have short periods (bit b repeats every 2^(b+1) steps): draw small integers
 * from the high bits (`>>> 16`), as {@link uniformFrom} does for reals by dividing by 2^32.
 * @example const next = lcg(7); next(); // 3429651764
 */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = lcgStep(s));
}

/** The state after `s` (a uint32): the recurrence itself, for {@link lcg} and {@link uniformFrom}. */
function lcgStep(s: number): number {
  return (Math.imul(s, 1103515245) + 12345) >>> 0;
}

/** A generator of reals with a bulk form: `fill(out)` stores the next out.length values. */
export interface Uniform {
  (): number;
  /** The next `out.length` values into `out`, in order (the same values as that many calls). */
  fill(out: Float32Array | Float64Array): void;
}

/**
 * Reals uniform in [lo, hi) from `seed` (default [-1, 1)): state / 2^32 scaled, float64 (the
 * caller rounds them to its dtype). `fill` writes a typed array with the recurrence inline,
 * about 15× faster than a call per element (test/gpu's operands hold up to 58 M elements).
 * @example const rnd = uniformFrom(5); rnd(); // a value in [-1, 1)
 */
export function uniformFrom(seed: number, lo = -1, hi = 1): Uniform {
  let s = seed >>> 0;
  const span = hi - lo;
  const one = (): number => {
    s = lcgStep(s);
    return lo + (s / 2 ** 32) * span;
  };
  return Object.assign(one, {
    fill(out: Float32Array | Float64Array): void {
      let t = s;
      for (let i = 0; i < out.length; i++) {
        t = lcgStep(t);
        out[i] = lo + (t / 2 ** 32) * span;
      }
      s = t;
    },
  });
}

/**
 * Integers uniform in [lo, hi] from `seed`, from the states' high 16 bits (hi − lo < 2^16).
 * @example const int = intsFrom(3, -4, 4); int(); // one of -4 … 4
 */
export function intsFrom(seed: number, lo: number, hi: number): () => number {
  const next = lcg(seed);
  return () => lo + ((next() >>> 16) % (hi - lo + 1));
}
