import { TirxError } from "../diagnostics.js";
import type { LaunchConfig } from "../ir/stmt.js";
import type { Span } from "../span.js";

/** The most CTAs a cluster may hold without the non-portable opt-in (CUDA Programming Guide, "Thread Block Clusters"). */
export const MAX_CLUSTER_CTAS = 8;

/**
 * Check the cluster dims of a launch: positive integers, at most {@link MAX_CLUSTER_CTAS} CTAs,
 * and a static grid that is a whole number of clusters along each axis. Malformed dims are one
 * error and end the check; the CTA count and each grid axis are independent errors, each
 * `report`ed.
 * @throws TirxError only what `report` throws (a `DiagnosticLog` at its limit); the errors are
 *   TX4025 at `span`. Source: CUDA Programming Guide, "Thread Block Clusters"; PTX ISA
 *   ".reqnctapercluster".
 */
export function checkCluster(l: LaunchConfig, report: (e: TirxError) => void, span?: Span): void {
  const c = l.cluster;
  if (!c) return;
  if (c.length !== 3 || c.some((n) => !Number.isInteger(n) || n <= 0)) {
    return report(
      new TirxError(
        "TX4025",
        `cluster dims must be three positive integers, got (${c.join(", ")})`,
        span,
      ),
    );
  }
  const ctas = c[0] * c[1] * c[2];
  if (ctas > MAX_CLUSTER_CTAS) {
    report(
      new TirxError(
        "TX4025",
        `a cluster of (${c.join(", ")}) holds ${ctas} CTAs; at most ${MAX_CLUSTER_CTAS} are portable`,
        span,
      ),
    );
  }
  l.grid.forEach((g, k) => {
    if (typeof g !== "number") {
      report(
        new TirxError(
          "TX4025",
          "a cluster launch needs a static grid (runtime grid extents cannot be checked against the cluster)",
          span,
        ),
      );
    } else if (g % c[k]! !== 0) {
      report(
        new TirxError(
          "TX4025",
          `grid ${"xyz"[k]} = ${g} is not a multiple of the cluster's ${c[k]}`,
          span,
        ),
      );
    }
  });
}
