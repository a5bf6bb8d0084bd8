/**
 * The launch stub: a few lines of C (`LAUNCH_SHIM_C`, launch-shim-source.ts), compiled at first
 * use with the host C compiler into the binary cache and loaded with koffi, that make a queued
 * launch one FFI call (`tirx_launch`) and a launch + synchronize one too (`tirx_launch_sync`),
 * where koffi alone takes one call per driver function (cuLaunchKernelEx, cuCtxSynchronize; CUDA
 * Driver API). Triton builds its launcher the same way. Without a compiler, or with
 * `TIRX_LAUNCH_SHIM=off`, launches take the koffi path: nothing here throws, and nothing prints
 * unless `TIRX_DEBUG` is set (then why the stub is not used, on stderr).
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  accessSync,
  constants,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { binaryCacheDir } from "./disk-cache.js";
import { koffi } from "./driver.js";
import { LAUNCH_SHIM_C } from "./launch-shim-source.js";

/** Added by `tirx_launch_sync` to the CUresult of a failed cuCtxSynchronize (a launch's is below it). */
export const SYNC_FAILED = 1 << 20;

/**
 * Bytes of a launch record, in memory that never moves: the driver table
 * ({@link LaunchShim.driverTable}) at 0, the `const CUlaunchConfig *` at 8, the CUfunction at 16,
 * kernelParams at 24 (the stub's `tirx_launch_record`).
 */
export const LAUNCH_RECORD_BYTES = 32;

/** The loaded stub, initialized for one driver library. */
export interface LaunchShim {
  /** The shared library that was loaded. */
  readonly path: string;
  /** Address of the driver's entry points (cuLaunchKernelEx, cuCtxSynchronize), for records. */
  readonly driverTable: bigint;
  /** `tirx_launch(record)`: cuLaunchKernelEx of the record; the CUresult. */
  readonly launch: (record: bigint) => number;
  /**
   * `tirx_launch_sync(record)`: cuLaunchKernelEx, then cuCtxSynchronize when it succeeded; 0, the
   * launch's CUresult, or the synchronize's plus {@link SYNC_FAILED}.
   */
  readonly launchSync: (record: bigint) => number;
}

/** A C compiler: the command (an absolute path) and the arguments `CC` gave before the file's. */
export interface CCompiler {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * The C compiler to build the stub with: `CC` (split at spaces, its command found on `PATH` unless
 * it names a path), else `cc`, else `gcc` on `PATH`; undefined when none is an executable file. A
 * `CC` that names none is undefined too (not `cc`: the environment said which compiler).
 */
export function findCCompiler(env: NodeJS.ProcessEnv = process.env): CCompiler | undefined {
  const cc = env["CC"]?.trim();
  const [command, ...args] = cc ? cc.split(/\s+/) : [];
  const names = command ? [command] : ["cc", "gcc"];
  for (const name of names) {
    const found = name.includes("/") ? executable(name) : onPath(name, env["PATH"] ?? "");
    if (found) return { command: found, args: command ? args : [] };
  }
  return undefined;
}

function executable(path: string): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile() ? path : undefined;
  } catch {
    return undefined;
  }
}

function onPath(name: string, path: string): string | undefined {
  for (const dir of path.split(delimiter)) {
    const found = dir ? executable(join(dir, name)) : undefined;
    if (found) return found;
  }
  return undefined;
}

/** Options of {@link buildLaunchShim}. */
export interface BuildOptions {
  /** Environment read for `CC`, `PATH` and the cache settings (default: `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Directory of the built library (default: the binary cache, `binaryCacheDir`). */
  readonly dir?: string;
}

/**
 * The stub's shared library, built unless the cache holds it: named by a hash of the C source,
 * the compiler and the platform, compiled with `-O2 -shared -fPIC ... -ldl` to a temporary name
 * and renamed, so that processes building it at once never see half a file. With the disk cache
 * off (`TIRX_CACHE=off`) it is built in a new temporary directory (`temporary`: the caller removes
 * it once loaded). `built` says whether the compiler ran. Undefined when it cannot be built (no
 * compiler, a compile error, no directory to write); never throws.
 * @internal exported for tests.
 */
export function buildLaunchShim(
  opts: BuildOptions = {},
): { path: string; built: boolean; temporary: boolean } | undefined {
  const env = opts.env ?? process.env;
  let temporary: string | undefined;
  try {
    const cc = findCCompiler(env);
    if (!cc) return fail(env, "no C compiler (CC, cc or gcc)");
    const key = createHash("sha256")
      .update([LAUNCH_SHIM_C, cc.command, ...cc.args, process.platform, process.arch].join("\0"))
      .digest("hex")
      .slice(0, 24);
    const cached = opts.dir ?? binaryCacheDir(env);
    const dir = cached ?? (temporary = mkdtempSync(join(tmpdir(), "tirx-launch-shim-")));
    const path = join(dir, `launch-shim-${key}.so`);
    if (cached && isFile(path)) return { path, built: false, temporary: false };
    mkdirSync(dir, { recursive: true });
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
    try {
      // The source on stdin: what is compiled is what was hashed.
      const flags = ["-O2", "-shared", "-fPIC", "-x", "c", "-o", tmp, "-", "-x", "none", "-ldl"];
      execFileSync(cc.command, [...cc.args, ...flags], {
        input: LAUNCH_SHIM_C,
        stdio: ["pipe", "pipe", "pipe"],
        env,
        timeout: 120_000,
      });
      renameSync(tmp, path);
    } finally {
      rmSync(tmp, { force: true });
    }
    return { path, built: true, temporary: temporary !== undefined };
  } catch (e) {
    if (temporary) rmSync(temporary, { recursive: true, force: true });
    return fail(env, `build failed: ${(e as Error).message}`);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function fail(env: NodeJS.ProcessEnv, why: string): undefined {
  if (env["TIRX_DEBUG"]) process.stderr.write(`tirx-ts: launch stub not used: ${why}\n`);
  return undefined;
}

/** The stub's functions, loaded once per process; null when it could not be built or loaded. */
let loaded:
  | {
      path: string;
      init: (library: string, table: bigint) => number;
      launch: (record: bigint) => number;
      launchSync: (record: bigint) => number;
    }
  | null
  | undefined;
/** The stub initialized per driver library; undefined where init failed. */
const shims = new Map<string, LaunchShim | undefined>();

function load(): typeof loaded {
  const lib = buildLaunchShim();
  if (!lib) return null;
  try {
    const k = koffi();
    const so = k.load(lib.path);
    return {
      path: lib.path,
      init: so.func("tirx_shim_init", "int", ["const char *", "void *"]) as (
        library: string,
        table: bigint,
      ) => number,
      launch: so.func("tirx_launch", "int", ["void *"]) as (record: bigint) => number,
      launchSync: so.func("tirx_launch_sync", "int", ["void *"]) as (record: bigint) => number,
    };
  } catch (e) {
    // A cached file that does not load (another machine's, a damaged disk): the next process rebuilds.
    if (!lib.temporary) rmSync(lib.path, { force: true });
    fail(process.env, `loading ${lib.path} failed: ${(e as Error).message}`);
    return null;
  } finally {
    // dlopen keeps the library mapped: a temporary build's directory can go now.
    if (lib.temporary) rmSync(dirname(lib.path), { recursive: true, force: true });
  }
}

/**
 * The launch stub for the driver library `library` (the `library` of the `CudaDriver` that
 * launches: `TIRX_LIBCUDA` or libcuda.so.1), built and loaded on the first call of the process
 * and initialized once per library (dlopen, dlsym of cuLaunchKernelEx and cuCtxSynchronize);
 * both outcomes are remembered, failure included. Undefined when `TIRX_LAUNCH_SHIM=off` (read at
 * each call), or when the stub cannot be built, loaded or initialized: the caller launches
 * through koffi. Never throws.
 */
export function launchShim(library: string): LaunchShim | undefined {
  if (process.env["TIRX_LAUNCH_SHIM"] === "off") return undefined;
  if (shims.has(library)) return shims.get(library);
  if (loaded === undefined) {
    try {
      loaded = load();
    } catch (e) {
      loaded = null; // a cache file that could not be removed, say
      fail(process.env, (e as Error).message);
    }
  }
  let shim: LaunchShim | undefined;
  if (loaded) {
    try {
      const table = koffi().alloc("uint8_t", 16) as bigint;
      const code = loaded.init(library, table);
      if (code === 0) {
        const { path, launch, launchSync } = loaded;
        shim = { path, driverTable: table, launch, launchSync };
      } else {
        koffi().free(table);
        fail(process.env, `tirx_shim_init(${library}) returned ${code}`);
      }
    } catch (e) {
      fail(process.env, `tirx_shim_init(${library}) failed: ${(e as Error).message}`);
    }
  }
  shims.set(library, shim);
  return shim;
}
