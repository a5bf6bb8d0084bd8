// The per-process caches of built kernels that the library calls keep (attention's and gemm's
// builds, gemm's padding and scale kernels): a Map by a key of the sizes, emptied whole when it
// reaches its bound, so that a process calling at many sizes does not grow without end.

/**
 * `cache`'s entry for `key`, built by `make` when missing; the cache is cleared first when it
 * already holds `limit` entries (default 256). `make`'s errors propagate and nothing is kept.
 * @example const fn = cached(BUILT, JSON.stringify(sizes), () => makeFlashAttention(sizes));
 */
export function cached<V>(cache: Map<string, V>, key: string, make: () => V, limit = 256): V {
  let hit = cache.get(key);
  if (hit === undefined) {
    hit = make();
    if (cache.size >= limit) cache.clear();
    cache.set(key, hit);
  }
  return hit;
}
