// Assemble many PTX modules with ptxas, a few processes at a time (ptxas takes one input file
// per run; a CI machine has 2 cores). Failures carry ptxas's message and the numbered PTX.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPtxas } from "../util/ptxas.js";

export interface PtxJob {
  readonly name: string;
  readonly text: string;
  readonly arch: string;
}

export interface PtxFailure {
  readonly name: string;
  readonly arch: string;
  readonly message: string;
}

const numbered = (text: string): string =>
  text
    .split("\n")
    .map((l, i) => `${String(i + 1).padStart(4)}  ${l}`)
    .join("\n");

/**
 * Run `ptxas -arch=<arch>` on every job with at most `concurrency` processes; resolves with the
 * jobs ptxas refused (empty when all assembled).
 * @throws Error when ptxas is not installed (tests must fail loudly, never skip).
 */
export async function assembleAll(jobs: readonly PtxJob[], concurrency = 3): Promise<PtxFailure[]> {
  const ptxas = findPtxas();
  if (!ptxas) throw new Error("ptxas not found at /usr/local/bin/ptxas or on PATH");
  const dir = mkdtempSync(join(tmpdir(), "tirx-ptxas-pool-"));
  const failures: PtxFailure[] = [];
  let next = 0;
  const worker = async (w: number): Promise<void> => {
    while (next < jobs.length) {
      const i = next++;
      const job = jobs[i]!;
      const file = join(dir, `m${w}.ptx`);
      writeFileSync(file, job.text);
      const result = await new Promise<{ code: number; out: string }>((resolve) => {
        execFile(
          ptxas,
          [`-arch=${job.arch}`, file, "-o", join(dir, `m${w}.cubin`)],
          { encoding: "utf8" },
          (err, stdout, stderr) => {
            const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
            resolve({ code, out: `${stderr}${stdout}${err && code === 1 ? err.message : ""}` });
          },
        );
      });
      if (result.code !== 0) {
        failures.push({
          name: job.name,
          arch: job.arch,
          message: `ptxas -arch=${job.arch} refused ${job.name}:\n${result.out}\n${numbered(job.text)}`,
        });
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, (_, w) => worker(w)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return failures;
}
