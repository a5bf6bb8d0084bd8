import { TirxError } from "../diagnostics.js";
import type { LaunchConfig } from "../ir/stmt.js";
import type { Span } from "../span.js";

/** The most CTAs a cluster may hold without the non-portable opt-in (CUDA Programming Guide, "Thread Block Clusters"). */
export const MAX_CLUSTER_CTAS = 8;

/**
 * Check the cluster dims of a launch: positive integers, at most {@link MAX_CLUSTER_CTAS} CTAs,
 * and a static grid that is a whole number of clusters along each axis.
 * @throws TirxError TX4025. Source: CUDA Programming Guide, "Thread Block Clusters";
 *   PTX ISA ".reqnctapercluster".
 */
export function checkCluster(l: LaunchConfig, span?: Span): void {
  const c = l.cluster;
  if (!c) return;
  if (c.length !== 3 || c.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new TirxError(
      "TX4025",
      `cluster dims must be three positive integers, got (${c.join(", ")})`,
      span,
    );
  }
  const ctas = c[0] * c[1] * c[2];
  if (ctas > MAX_CLUSTER_CTAS) {
    throw new TirxError(
      "TX4025",
      `a cluster of (${c.join(", ")}) holds ${ctas} CTAs; at most ${MAX_CLUSTER_CTAS} are portable`,
      span,
    );
  }
  l.grid.forEach((g, k) => {
    if (typeof g !== "number") {
      throw new TirxError(
        "TX4025",
        "a cluster launch needs a static grid (runtime grid extents cannot be checked against the cluster)",
        span,
      );
    }
    if (g % c[k]! !== 0) {
      throw new TirxError(
        "TX4025",
        `grid ${"xyz"[k]} = ${g} is not a multiple of the cluster's ${c[k]}`,
        span,
      );
    }
  });
}
