// Deferred assembly: tests that produce PTX queue each module here as they build it, and the
// setup file (test/util/ptxas-setup.ts) assembles the whole queue of a test file in merged
// batches once its tests have run, failing the file with ptxas's message when a module is
// refused. One ptxas run per ~64 modules instead of one per module.
import { assembleAll, type PtxJob } from "../conformance/ptxas-pool.js";

const KEY = Symbol.for("tirx-ts.test.ptxas-queue");

function queue(): PtxJob[] {
  const g = globalThis as { [KEY]?: PtxJob[] };
  return (g[KEY] ??= []);
}

/** Queue `text` for `ptxas -arch=<arch>` at the end of the current test file. */
export function assembleLater(text: string, arch: string, name = "module"): void {
  queue().push({ name, text, arch });
}

/**
 * Assemble every queued module (and empty the queue).
 * @throws Error listing every module ptxas refused, with its messages.
 */
export async function assembleQueued(): Promise<number> {
  const jobs = queue().splice(0);
  if (jobs.length === 0) return 0;
  const failures = await assembleAll(jobs);
  if (failures.length > 0) {
    throw new Error(
      `ptxas refused ${failures.length} of ${jobs.length} modules:\n${failures.map((f) => f.message).join("\n\n")}`,
    );
  }
  return jobs.length;
}
