// The fixture of the tests that tune in child processes (test/kernels-gemm-tune.test.ts,
// test/tune-cache-hit.test.ts): a fresh folder inside the repository (so that the children
// resolve the packages; test/.printed is gitignored), removed after the file, and ptxas off
// while the file runs (TIRX_PTXAS=off: runtime-cuda's findPtxas), so that fitting a candidate
// runs no `ptxas -v` (the counts and choices do not depend on a toolkit; the kernels are
// assembled by the other gemm tests).
import { afterAll, beforeAll } from "vitest";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository's root folder. */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A fresh folder test/.printed/`name`/run-XXXXXX for this file, removed after it, with
 * TIRX_PTXAS=off while the file runs (the previous value restored after).
 * @returns the folder's absolute path
 */
export function tuneChildDir(name: string): string {
  const work = join(repoRoot, "test", ".printed", name);
  mkdirSync(work, { recursive: true });
  const base = mkdtempSync(join(work, "run-"));
  const saved = process.env["TIRX_PTXAS"];
  beforeAll(() => {
    process.env["TIRX_PTXAS"] = "off";
  });
  afterAll(() => {
    if (saved === undefined) delete process.env["TIRX_PTXAS"];
    else process.env["TIRX_PTXAS"] = saved;
    rmSync(base, { recursive: true, force: true });
  });
  return base;
}
