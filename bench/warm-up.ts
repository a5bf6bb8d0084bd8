// The time-based warm-up of bench/gemm-sweep.ts and bench/attention.ts: a kernel launched for a
// few hundred milliseconds before it is timed, so that the GPU's clocks are back up after an idle
// stretch (our own build, the peers' process). A few warm-up launches were not enough on the H200
// (bench/results/attention-warmup-2026-12-04.md).

/**
 * Calls `launch` in batches of `batch` (each followed by `synchronize`) until at least `ms`
 * milliseconds of wall time have passed. Throws whatever `launch` or `synchronize` throws.
 */
export function warmUpFor(
  launch: () => void,
  synchronize: () => void,
  ms: number,
  batch: number,
): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    for (let i = 0; i < batch; i++) launch();
    synchronize();
  }
}
