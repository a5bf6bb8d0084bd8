import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/**
 * The CUDA toolkit's `ptxas` this process compiles PTX with, when there is one: `$TIRX_PTXAS`
 * (a path; `off` disables it), else the first executable `ptxas` on `$PATH`, else
 * `$CUDA_HOME/bin/ptxas`. `undefined` when none is found: the driver's JIT compiles instead.
 * Why prefer it (as Triton ships its own ptxas): on an H200 with the CUDA 13.0 driver, the
 * driver's JIT compiled the FlashAttention kernels (which raise their consumer warpgroups to 240
 * registers with setmaxnreg) with 339–439 local-memory spill instructions that `ptxas
 * -arch=sm_90a` of the same toolkit version does not emit.
 */
export function findPtxas(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const forced = env["TIRX_PTXAS"];
  if (forced === "off") return undefined;
  const candidates = forced
    ? [forced]
    : [
        ...(env["PATH"] ?? "")
          .split(delimiter)
          .filter((d) => d !== "")
          .map((d) => join(d, "ptxas")),
        ...(env["CUDA_HOME"] ? [join(env["CUDA_HOME"], "bin", "ptxas")] : []),
      ];
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not there or not executable: the next one
    }
  }
  return undefined;
}

let version: { readonly path: string; readonly tag: string } | undefined;

/**
 * A short tag of `ptxas --version`'s release line (e.g. `ptxas13.0.88`), for cache keys: a cubin
 * from another ptxas is another key. "ptxas" when the version line cannot be read.
 */
export function ptxasTag(path: string): string {
  if (version?.path === path) return version.tag;
  const r = spawnSync(path, ["--version"], { encoding: "utf8" });
  const m = /V(\d+\.\d+\.\d+)/.exec(r.stdout ?? "");
  const tag = m ? `ptxas${m[1]}` : "ptxas";
  version = { path, tag };
  return tag;
}

/**
 * Compile `ptx` to a cubin with `ptxas -arch=<arch>` (e.g. `sm_90a`) in a temporary folder.
 * @returns the cubin bytes, or `undefined` when ptxas fails (the caller falls back to the
 *   driver's JIT, whose error log then reports the problem).
 */
export function ptxasCompile(path: string, ptx: string, arch: string): Uint8Array | undefined {
  const dir = mkdtempSync(join(tmpdir(), "tirx-ptxas-"));
  try {
    const src = join(dir, "k.ptx");
    const out = join(dir, "k.cubin");
    writeFileSync(src, ptx);
    const r = spawnSync(path, [`-arch=${arch}`, "-o", out, src], { encoding: "utf8" });
    if (r.status !== 0) return undefined;
    return new Uint8Array(readFileSync(out));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
