import { createHash } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { binaryCacheDir, ensureDir, writeFileAtomically } from "@tirx-ts/runtime-cuda";

/** A value of a config: JSON (finite numbers, strings, booleans, null, arrays, plain objects). */
export type TuneValue =
  string | number | boolean | null | readonly TuneValue[] | { readonly [k: string]: TuneValue };

/** One candidate configuration of a kernel family: a plain object of JSON values, e.g. `{ bm: 128, bn: 64 }`. */
export type TuneConfig = { readonly [k: string]: TuneValue };

/**
 * Everything a tuned choice depends on, as stored in its cache file (all strings):
 * - `user`: the caller's key (`tuneKeyText(options.key)`: shape class, dtypes, …);
 * - `device`: the GPU's name as the driver reports it ("NVIDIA H200"), or "sim";
 * - `arch`: the GPU's compute capability as a target name ("sm_90"), or "sim";
 * - `driver`: the CUDA driver version (cuDriverGetVersion, "13000"), or "none" on the simulator;
 * - `target`: the PTX target the candidates are compiled for (autotune's `arch` option), or
 *   "default" (compile's default for the device);
 * - `source`: the hash of the candidate family's IR (`familyHash`).
 * The first five name the cache file; `source` is checked against the file's.
 */
export interface TuneKeyRecord {
  readonly user: string;
  readonly device: string;
  readonly arch: string;
  readonly driver: string;
  readonly target: string;
  readonly source: string;
}

/** A candidate as the cache file records it: its time (µs), or why it was pruned. */
export interface CachedCandidate {
  readonly config: TuneConfig;
  readonly us?: number;
  readonly pruned?: string;
  readonly code?: string;
  /**
   * The candidate's line of the family hash (`familyHash`: its kernel IR's structural hash, or
   * its build error), so that a later call can check one candidate without building the others.
   */
  readonly hash?: string;
  /** Registers per thread (ptxas -v) of a fitted candidate, when a ptxas was found. */
  readonly registers?: number;
  /**
   * A fitted candidate's static plus dynamic shared memory per CTA, bytes, its threads per CTA
   * (when the block is static) and the PTX target it was fitted for: with `hash` and
   * `registers`, a later call checks the cached choice against the limits without compiling it.
   */
  readonly sharedBytes?: number;
  readonly threads?: number;
  readonly target?: string;
}

/** The JSON of one cache file (`format` 1). */
export interface TuneCacheEntry {
  readonly format: 1;
  /** The kernel family's name (autotune's `name` option, else the first candidate's kernel name). */
  readonly name: string;
  readonly key: TuneKeyRecord;
  /** The chosen config and its median time, µs. */
  readonly config: TuneConfig;
  readonly us: number;
  readonly candidates: readonly CachedCandidate[];
}

/**
 * JSON text of `v` with object keys sorted at every level, so that equal configs (and keys)
 * have one spelling whatever the order their fields were written in.
 * @example canonicalJson({ b: 1, a: [2, { d: 3, c: 4 }] }); // '{"a":[2,{"c":4,"d":3}],"b":1}'
 */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v !== null && typeof v === "object") {
    const o = v as Record<string, unknown>;
    const keys = Object.keys(o).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
  }
  return JSON.stringify(v);
}

/** The hex SHA-256 of `text`. */
export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * The folder of autotune's cache files: `autotune/` beside the GPU binaries, under
 * `$TIRX_CACHE_DIR`, else `$XDG_CACHE_HOME/tirx-ts`, else `~/.cache/tirx-ts` (runtime-cuda's
 * `binaryCacheDir`); undefined under `TIRX_CACHE=off`.
 */
export function autotuneCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = binaryCacheDir(env);
  return dir === undefined ? undefined : join(dir, "autotune");
}

/**
 * The cache file of a family and key in `dir`: `<name>-<h>.json`, `name` with characters other
 * than letters, digits, `_`, `.` and `-` written as `_`, and `h` the first 16 hex digits of the
 * SHA-256 of the key's `user`, `device`, `arch`, `driver` and `target` (not `source`: a changed
 * kernel source finds the same file, is told apart by the `source` inside, and overwrites it).
 */
export function autotuneFile(dir: string, name: string, key: TuneKeyRecord): string {
  const h = sha256(canonicalJson([key.user, key.device, key.arch, key.driver, key.target]));
  return join(dir, `${name.replace(/[^\w.-]/g, "_")}-${h.slice(0, 16)}.json`);
}

/** What reading a cache file found: no file, an entry, or a file that is not one (`why`). */
export type TuneCacheRead =
  | { readonly kind: "none" }
  | { readonly kind: "entry"; readonly entry: TuneCacheEntry }
  | { readonly kind: "corrupt"; readonly why: string };

const isObject = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);

/** Why `x` is not a `TuneCacheEntry` (format 1), or undefined when it is one. */
function entryProblem(x: unknown): string | undefined {
  if (!isObject(x)) return "the file is not a JSON object";
  if (x["format"] !== 1) return `format ${JSON.stringify(x["format"])}, expected 1`;
  if (typeof x["name"] !== "string") return "no name";
  const key = x["key"];
  if (!isObject(key)) return "no key";
  for (const f of ["user", "device", "arch", "driver", "target", "source"]) {
    if (typeof key[f] !== "string") return `the key has no ${f}`;
  }
  if (!isObject(x["config"])) return "no config";
  if (typeof x["us"] !== "number" || !Number.isFinite(x["us"])) return "no time (us)";
  const cands = x["candidates"];
  if (!Array.isArray(cands) || !cands.every((c) => isObject(c) && isObject(c["config"]))) {
    return "no candidates";
  }
  return undefined;
}

/**
 * Read and check the cache file `file`: a missing file is `none`; a file that cannot be read, is
 * not a regular file (a FIFO or a device: opened without blocking and never read, since reading
 * a FIFO with no writer waits forever), is not JSON or not a format-1 entry is `corrupt` with
 * why. Never throws.
 */
export function readTuneCache(file: string): TuneCacheRead {
  let text: string;
  let fd: number | undefined;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
    if (!fstatSync(fd).isFile()) return { kind: "corrupt", why: "not a regular file" };
    text = readFileSync(fd, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { kind: "none" };
    return { kind: "corrupt", why: (e as Error).message };
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    return { kind: "corrupt", why: `not JSON (${(e as Error).message})` };
  }
  const problem = entryProblem(parsed);
  return problem === undefined
    ? { kind: "entry", entry: parsed as TuneCacheEntry }
    : { kind: "corrupt", why: problem };
}

/**
 * Write `entry` to `file` atomically (runtime-cuda's writeFileAtomically, mode 0o644): to a
 * temporary file in the same folder (created if missing), then renamed over `file`, so that a
 * concurrent reader sees the old file or the new one, never half of one.
 * @returns undefined, or the reason the file could not be written (a read-only or full disk).
 */
export function writeTuneCache(file: string, entry: TuneCacheEntry): string | undefined {
  try {
    // Bounded (runtime-cuda's ensureDir): mkdirSync's recursion loops on procfs.
    const dir = join(file, "..");
    if (!ensureDir(dir)) return `${dir} cannot be created`;
    writeFileAtomically(file, `${JSON.stringify(entry, null, 2)}\n`, 0o644);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}
