/**
 * `n` integers in [-20, 20] from a linear congruential generator's high bits (its low bits cycle
 * with short periods), seeded by `seed`: tile-test inputs whose float32 sums (and float16
 * values) are exact, so results compare to host math with toEqual.
 */
export function smallInts(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from(
    { length: n },
    () => (((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 16) % 41) - 20,
  );
}
