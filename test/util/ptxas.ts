import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { acceptedKey, recordAccepted, wasAccepted } from "./ptxas-accepted.js";

/** Where CUDA installs ptxas on every development and CI machine (the CUDA 13.0 toolchain). */
const DEFAULT_PTXAS = "/usr/local/bin/ptxas";

function executable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Path of ptxas: /usr/local/bin/ptxas, else the first `ptxas` on PATH; undefined if none. */
export function findPtxas(): string | undefined {
  if (executable(DEFAULT_PTXAS)) return DEFAULT_PTXAS;
  for (const dir of (process.env["PATH"] ?? "").split(delimiter)) {
    if (dir && executable(join(dir, "ptxas"))) return join(dir, "ptxas");
  }
  return undefined;
}

/** The PTX with line numbers, so a ptxas "line N" message can be read against it. */
function numbered(text: string): string {
  return text
    .split("\n")
    .map((l, i) => `${String(i + 1).padStart(4)}  ${l}`)
    .join("\n");
}

/**
 * Assemble `text` with `ptxas -arch=<arch>` (no GPU needed). Tests call this for every PTX
 * module they produce, so that what the code generator emits is real PTX for its target. A text
 * this ptxas already accepted for `arch` (ptxas-accepted.ts) is not assembled again.
 * @throws Error with ptxas's messages and the numbered PTX when ptxas refuses the module;
 *   Error when ptxas is not installed (tests must fail loudly, never skip).
 */
export function assemblePtx(text: string, arch: string): void {
  const ptxas = findPtxas();
  if (!ptxas) {
    throw new Error(
      `ptxas not found at ${DEFAULT_PTXAS} or on PATH; install the CUDA toolkit (13.0) to run these tests`,
    );
  }
  const key = acceptedKey(ptxas, text, arch);
  if (wasAccepted(key)) return;
  const dir = mkdtempSync(join(tmpdir(), "tirx-ptxas-"));
  try {
    const file = join(dir, "module.ptx");
    writeFileSync(file, text);
    const r = spawnSync(ptxas, [`-arch=${arch}`, file, "-o", join(dir, "module.cubin")], {
      encoding: "utf8",
    });
    if (r.error) throw new Error(`could not run ${ptxas}: ${r.error.message}`);
    if (r.status !== 0) {
      throw new Error(
        `ptxas -arch=${arch} refused the module (exit ${r.status}):\n${r.stderr}${r.stdout}\n${numbered(text)}`,
      );
    }
    recordAccepted(key);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
