// Assemble many PTX modules with ptxas in few processes: the modules of one -arch are merged into
// modules of up to CHUNK entries (each entry renamed so names never clash, module-scope lines
// kept once), a few ptxas processes run at a time (ptxas takes one input file per run; a CI
// machine has 2 cores), and a merged module that ptxas refuses is assembled again module by
// module, so every failure names its own module. Failures carry ptxas's message and the
// numbered PTX. A module this ptxas already accepted (test/util/ptxas-accepted.ts) is skipped.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPtxas } from "../util/ptxas.js";
import { acceptedKey, recordAccepted, wasAccepted } from "../util/ptxas-accepted.js";

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

/** Modules per merged ptxas input. */
const CHUNK = 64;

const numbered = (text: string): string =>
  text
    .split("\n")
    .map((l, i) => `${String(i + 1).padStart(4)}  ${l}`)
    .join("\n");

const HEADER = /^\s*(\.version|\.target|\.address_size)\b.*$/gm;

/** Version of a module's `.version` line as a comparable number (major * 100 + minor). */
function versionOf(text: string): number {
  const v = /\.version (\d+)\.(\d+)/.exec(text);
  return v ? Number(v[1]) * 100 + Number(v[2]) : 0;
}

/**
 * One module holding the entries of `mods` (all for one target): the highest `.version`, each
 * entry and its parameters renamed `t<k>_<name>`, module-scope declarations (the extern dynamic
 * shared array) once.
 */
export function mergeModules(mods: readonly { text: string }[]): string {
  const version = Math.max(...mods.map((m) => versionOf(m.text)));
  const target = /\.target (\S+)/.exec(mods[0]!.text)?.[1] ?? "sm_80";
  const globals = new Set<string>();
  const bodies = mods.map((m, k) => {
    let text = m.text.replace(HEADER, "");
    const entry = /\.entry\s+([A-Za-z_$][\w$]*)\s*\(/.exec(text)?.[1];
    if (entry) {
      const renamed = `t${k}_${entry}`;
      text = text
        .split(`${entry}_param_`)
        .join(`${renamed}_param_`)
        .replace(`.entry ${entry}(`, `.entry ${renamed}(`);
    }
    return text.replace(/^\.extern .*$/gm, (line) => {
      globals.add(line);
      return "";
    });
  });
  return [
    `.version ${Math.floor(version / 100)}.${version % 100}`,
    `.target ${target}`,
    ".address_size 64",
    ...globals,
    ...bodies,
  ].join("\n");
}

/**
 * Run ptxas on every job (merged as above) with at most `concurrency` processes, but a job this
 * ptxas already accepted; resolves with the jobs ptxas refused (empty when all assembled).
 * @throws Error when ptxas is not installed (tests must fail loudly, never skip).
 */
export async function assembleAll(jobs: readonly PtxJob[], concurrency = 2): Promise<PtxFailure[]> {
  const ptxas = findPtxas();
  if (!ptxas) throw new Error("ptxas not found at /usr/local/bin/ptxas or on PATH");
  const dir = mkdtempSync(join(tmpdir(), "tirx-ptxas-pool-"));
  let files = 0;
  const run = (text: string, arch: string): Promise<{ code: number; out: string }> => {
    const file = join(dir, `m${files++}.ptx`);
    writeFileSync(file, text);
    return new Promise((resolve) => {
      execFile(
        ptxas,
        [`-arch=${arch}`, file, "-o", `${file}.cubin`],
        { encoding: "utf8", maxBuffer: 64 << 20 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
          resolve({ code, out: `${stderr}${stdout}${err && code === 1 ? err.message : ""}` });
        },
      );
    });
  };
  // The jobs not accepted before, in chunks of one arch and one .target (merging needs one target).
  const keys = new Map<PtxJob, string | undefined>();
  const groups = new Map<string, PtxJob[]>();
  for (const j of jobs) {
    const k = acceptedKey(ptxas, j.text, j.arch);
    if (wasAccepted(k)) continue;
    keys.set(j, k);
    const key = `${j.arch} ${/\.target (\S+)/.exec(j.text)?.[1] ?? ""}`;
    const g = groups.get(key) ?? [];
    g.push(j);
    groups.set(key, g);
  }
  const chunks: PtxJob[][] = [];
  for (const g of groups.values())
    for (let k = 0; k < g.length; k += CHUNK) chunks.push(g.slice(k, k + CHUNK));
  const failures: PtxFailure[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < chunks.length) {
      const chunk = chunks[next++]!;
      const arch = chunk[0]!.arch;
      const merged = chunk.length === 1 ? chunk[0]!.text : mergeModules(chunk);
      if ((await run(merged, arch)).code === 0) {
        for (const job of chunk) recordAccepted(keys.get(job));
        continue;
      }
      for (const job of chunk) {
        const r = await run(job.text, arch);
        if (r.code === 0) recordAccepted(keys.get(job));
        else {
          failures.push({
            name: job.name,
            arch,
            message: `ptxas -arch=${arch} refused ${job.name}:\n${r.out}\n${numbered(job.text)}`,
          });
        }
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, () => worker()));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return failures;
}
