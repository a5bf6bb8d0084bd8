/**
 * The launch stub: a few lines of C (`LAUNCH_SHIM_C`, launch-shim-source.ts), compiled at first
 * use with the host C compiler into the binary cache and loaded with koffi, that make a queued
 * launch one FFI call (`tirx_launch`) and a launch + synchronize one too (`tirx_launch_sync`),
 * where koffi alone takes one call per driver function (cuLaunchKernelEx, cuCtxSynchronize; CUDA
 * Driver API). Triton builds its launcher the same way. Without a compiler, or with
 * `TIRX_LAUNCH_SHIM=off`, launches take the koffi path: nothing here throws, and nothing prints
 * unless `TIRX_DEBUG` is set (then why the stub is not used, on stderr).
 *
 * The cache holds, per key (a hash of the C source, the compiler, its flags and the platform):
 * `launch-shim-<key>.so`, the library (mode 0o755), and `launch-shim-<key>.so.sha256`, the
 * SHA-256 of its bytes (mode 0o644), each written to a temporary name, fsync'ed and renamed, the
 * library first. A cached library is loaded only when
 * - the cache directory is owned by the current user (or root) and not writable by others (a
 *   shared, world-writable directory such as /tmp is not used at all: the stub is then built in
 *   a private temporary directory, as with `TIRX_CACHE=off`, and loaded from there);
 * - the library and its checksum file are regular files owned by the current user (or root) and
 *   writable by no one else (`process.getuid`; not checked where it does not exist);
 * - the library's bytes hash to the checksum file's digest (a truncated or zero-filled file, from
 *   a crash or a partial copy, makes dlopen fault: it is never handed to dlopen).
 * The checks are made on an open file descriptor, and the library is loaded through that
 * descriptor (`/proc/self/fd/N`, Linux), so that the file checked is the file loaded. A cached
 * library that fails a check, or does not load, is deleted with its checksum file and built again.
 * Processes that build at once each install a whole file; one that finds the library before its
 * checksum file deletes it and builds too.
 *
 * A library that builds but does not load (a `CC` for another architecture, a cache on a noexec
 * mount) is not installed: `launch-shim-<key>.failed`, holding the reason, is written beside it,
 * and later processes with the same key fall back to koffi without running the compiler
 * (`TIRX_DEBUG` prints the reason and the marker's path: delete it to try again). A fresh build
 * that loads removes the marker; a temporary build (`TIRX_CACHE=off`, an untrusted directory)
 * writes none.
 *
 * The compiler runs with `CC`'s flags first, then `-fno-sanitize=all -fvisibility=default
 * -fno-lto` (a sanitizer's runtime must be loaded before everything else, and a library built
 * with `-fsanitize=address` aborts the process at dlopen; hidden symbols cannot be looked up; an
 * LTO build depends on the linker plugin). It is killed (SIGKILL) after
 * {@link BUILD_TIMEOUT_MS}; processes it started itself (cc1, as, ld) may outlive it.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import {
  binaryCacheDir,
  ensureDir,
  foreignOwner,
  modeOf,
  readCacheFile,
  untrustedFile,
  writeFileAtomically,
} from "./disk-cache.js";
import { koffi } from "./driver.js";
import { LAUNCH_SHIM_C } from "./launch-shim-source.js";

/** `tirx_launch_sync`'s result when cuLaunchKernelEx failed (its CUresult at {@link RECORD_RESULT_OFFSET}). */
export const LAUNCH_FAILED = 1;

/** `tirx_launch_sync`'s result when cuCtxSynchronize failed (its CUresult at {@link RECORD_RESULT_OFFSET}). */
export const SYNC_FAILED = 2;

/**
 * Bytes of a launch record, in memory that never moves: the driver table
 * ({@link LaunchShim.driverTable}) at 0, the `const CUlaunchConfig *` at 8, the CUfunction at 16,
 * kernelParams at 24, the CUresult of a failed `tirx_launch_sync` (int32) at 32, 4 unused bytes
 * (the stub's `tirx_launch_record`).
 */
export const LAUNCH_RECORD_BYTES = 40;

/** Where `tirx_launch_sync` writes the failed call's CUresult (int32), bytes into a record. */
export const RECORD_RESULT_OFFSET = 32;

/**
 * How long the compiler may run, in milliseconds, before it is killed (SIGKILL) and the launches
 * take the koffi path; the first launch of a process waits that long at most.
 */
export const BUILD_TIMEOUT_MS = 30_000;

/** The loaded stub, initialized for one driver library. */
export interface LaunchShim {
  /** The shared library that was loaded (for a temporary build, a path since removed). */
  readonly path: string;
  /** Address of the driver's entry points (cuLaunchKernelEx, cuCtxSynchronize), for records. */
  readonly driverTable: bigint;
  /** `tirx_launch(record)`: cuLaunchKernelEx of the record; the CUresult. */
  readonly launch: (record: bigint) => number;
  /**
   * `tirx_launch_sync(record)`: cuLaunchKernelEx, then cuCtxSynchronize when it succeeded; 0 when
   * both succeeded, else {@link LAUNCH_FAILED} or {@link SYNC_FAILED}, with the failed call's
   * CUresult written into the record at {@link RECORD_RESULT_OFFSET}.
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

/**
 * The compiler's arguments after `CC`'s own (GCC and Clang accept them all): the last of
 * conflicting flags wins, so these undo a `CC` with a sanitizer, hidden visibility or LTO. The
 * source comes on stdin, so that what is compiled is what was hashed.
 */
function compilerFlags(out: string): string[] {
  return [
    "-O2",
    "-shared",
    "-fPIC",
    "-fno-sanitize=all",
    "-fvisibility=default",
    "-fno-lto",
    "-x",
    "c",
    "-o",
    out,
    "-",
    "-x",
    "none",
    "-ldl",
  ];
}

/** Options of {@link buildLaunchShim}. */
export interface BuildOptions {
  /** Environment read for `CC`, `PATH`, `TIRX_DEBUG` and the cache settings (default: `process.env`). */
  readonly env?: NodeJS.ProcessEnv;
  /** Directory of the built library (default: the binary cache, `binaryCacheDir`). */
  readonly dir?: string;
  /** @internal for tests: the compiler's time limit, milliseconds (default {@link BUILD_TIMEOUT_MS}). */
  readonly timeoutMs?: number;
}

/** The stub's three functions, bound with koffi. */
interface ShimFunctions {
  readonly init: (library: string, table: bigint) => number;
  readonly launch: (record: bigint) => number;
  readonly launchSync: (record: bigint) => number;
}

/** A loaded stub library: where it was, whether the compiler ran, and its functions. */
export interface ShimLibrary extends ShimFunctions {
  /** The library loaded (for a temporary build, a path since removed). */
  readonly path: string;
  /** Whether the compiler ran (false: the cached library was loaded). */
  readonly built: boolean;
  /** Whether it was built in a temporary directory (`TIRX_CACHE=off`, or an untrusted cache). */
  readonly temporary: boolean;
}

/**
 * The stub's shared library, loaded (dlopen(3), through koffi) from the cache, or built and
 * loaded: the rules of this module's header (checksum, ownership, failure marker). With the disk
 * cache off (`TIRX_CACHE=off`), or a cache directory that is not trusted, it is built in a new
 * temporary directory, removed once loaded. Undefined when it cannot be built or loaded (no
 * compiler, a compile error or timeout, a library that does not load, a failure marker); never
 * throws.
 * @internal exported for tests.
 */
export function buildLaunchShim(opts: BuildOptions = {}): ShimLibrary | undefined {
  const env = opts.env ?? process.env;
  let temporary: string | undefined;
  try {
    const cc = findCCompiler(env);
    if (!cc) {
      const named = env["CC"]?.trim();
      // A CC that is set is the compiler to use: no fall back to cc or gcc.
      return fail(
        env,
        named
          ? `CC=${named} is not an executable C compiler (CC, when set, is the only one tried)`
          : "no C compiler (CC unset; neither cc nor gcc on PATH)",
      );
    }
    const key = createHash("sha256")
      .update(
        [
          LAUNCH_SHIM_C,
          cc.command,
          ...cc.args,
          ...compilerFlags(""),
          process.platform,
          process.arch,
        ].join("\0"),
      )
      .digest("hex")
      .slice(0, 24);
    const name = `launch-shim-${key}.so`;
    // Absolute: dlopen(3) looks a name without a slash up on the library path, not in the cwd.
    let dir: string | undefined = opts.dir ?? binaryCacheDir(env);
    let writable = false;
    if (dir !== undefined) {
      dir = resolve(dir);
      const why = untrustedDirectory(dir);
      if (why) {
        note(env, `not using the cache directory ${dir} (${why}): building in a private one`);
        dir = undefined;
      } else {
        writable = canWrite(dir);
      }
    }
    if (dir !== undefined) {
      const path = join(dir, name);
      const marker = markerOf(path);
      const reason = readMarker(marker);
      if (reason !== undefined) {
        return fail(
          env,
          `${path} built before but did not load (${reason}); delete ${marker} to build it again`,
        );
      }
      const cached = openCached(path);
      if (typeof cached === "number") {
        try {
          return { path, built: false, temporary: false, ...openFunctions(cached, path) };
        } catch (e) {
          note(env, `${path} did not load (${(e as Error).message}): building it again`);
        }
      } else if (cached !== "missing") {
        note(env, `${path} not used (${cached}): building it again`);
      }
      if (cached !== "missing" && writable) removeCached(path);
    }
    const buildDir =
      dir !== undefined && writable
        ? dir
        : (temporary = mkdtempSync(join(tmpdir(), "tirx-launch-shim-")));
    const path = join(buildDir, name);
    // In a private directory no other process renames: the file's own name.
    const tmp =
      temporary === undefined
        ? `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`
        : path;
    try {
      execFileSync(cc.command, [...cc.args, ...compilerFlags(tmp)], {
        input: LAUNCH_SHIM_C,
        stdio: ["pipe", "pipe", "pipe"],
        env,
        timeout: opts.timeoutMs ?? BUILD_TIMEOUT_MS,
        killSignal: "SIGKILL",
      });
      const fd = openSync(tmp, constants.O_RDONLY | constants.O_NOFOLLOW);
      let digest: string;
      try {
        // 0o755 whatever the umask; on disk before it is renamed into place.
        fchmodSync(fd, 0o755);
        fsyncSync(fd);
        digest = sha256(readFileSync(fd));
      } catch (e) {
        closeSync(fd);
        throw e;
      }
      let functions: ShimFunctions;
      try {
        functions = openFunctions(fd, tmp);
      } catch (e) {
        const why = (e as Error).message;
        if (temporary !== undefined) return fail(env, `the library built did not load: ${why}`);
        const marker = markerOf(path);
        writeFileAtomically(marker, `${why}\n`, 0o644, true);
        return fail(
          env,
          `${path} built but did not load (${why}); later processes will not build it while ${marker} exists`,
        );
      }
      if (temporary !== undefined) return { path, built: true, temporary: true, ...functions };
      renameSync(tmp, path);
      writeFileAtomically(`${path}.sha256`, `${digest}\n`, 0o644, true);
      syncDirectory(buildDir);
      rmSync(markerOf(path), { force: true });
      return { path, built: true, temporary: false, ...functions };
    } finally {
      rmSync(tmp, { force: true });
    }
  } catch (e) {
    return fail(env, `build failed: ${(e as Error).message}`);
  } finally {
    // dlopen keeps the library mapped: a temporary build's directory can go now.
    if (temporary !== undefined) rmSync(temporary, { recursive: true, force: true });
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/** Whether TIRX_DEBUG was told once that TIRX_LAUNCH_SHIM=off keeps the stub out. */
let saidOff = false;

/** The failure marker of the library `path`: `launch-shim-<key>.failed`. */
function markerOf(path: string): string {
  return path.replace(/\.so$/, ".failed");
}

/**
 * Why the cache directory `dir` (created when missing, mode 0o755 less the umask) is not to be
 * used, or undefined: not a directory, owned by another user than the current one or root, or
 * writable by others (the mode's o+w bit). A group-writable directory of the current user's is
 * used (umask 002 makes them): its files are checked one by one, through their descriptors.
 */
function untrustedDirectory(dir: string): string | undefined {
  try {
    // Bounded, not mkdirSync's recursion, which loops on procfs (disk-cache.ts, ensureDir).
    if (!ensureDir(dir)) return "cannot be created";
    const st = statSync(dir);
    if (!st.isDirectory()) return "not a directory";
    const owner = foreignOwner(st);
    if (owner) return owner;
    // Without /proc/self/fd a library is loaded by its path: then no one else may rename in it.
    const others = existsSync("/proc/self/fd") ? 0o002 : 0o022;
    if (st.mode & others) return `writable by others (mode ${modeOf(st)})`;
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/** Whether the current user may create files in `dir` (access(2), W_OK). */
function canWrite(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** The reason a failure marker holds, or undefined without one (or with one not to be trusted). */
function readMarker(marker: string): string | undefined {
  const read = readCacheFile(marker);
  return read && "bytes" in read
    ? read.bytes.toString("utf8").trim() || "no reason given"
    : undefined;
}

/**
 * The cached library `path`, opened (a file descriptor) once checked: a regular file owned by the
 * current user (or root) and writable by no one else, with a checksum file `path.sha256` of the
 * same kind whose SHA-256 digest its bytes have. `"missing"` when there is no library; else the
 * reason it is not to be loaded (then it should be deleted with its checksum file).
 * @internal exported for tests.
 */
export function openCached(path: string): number | string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : (e as Error).message;
  }
  let why: string | undefined;
  try {
    why = untrustedFile(fd);
    if (!why) {
      const sum = readCacheFile(`${path}.sha256`);
      if (!sum) why = "no checksum file";
      else if ("untrusted" in sum) why = `checksum file ${sum.untrusted}`;
      else if (sum.bytes.toString("utf8").trim() !== sha256(readFileSync(fd)))
        why = "its bytes do not match its checksum";
    }
  } catch (e) {
    why = (e as Error).message;
  }
  if (why === undefined) return fd;
  closeSync(fd);
  return why;
}

/** Delete the cached library `path` and its checksum file. */
function removeCached(path: string): void {
  rmSync(path, { force: true });
  rmSync(`${path}.sha256`, { force: true });
}

/**
 * Load the library open as `fd` (file `path`) and bind its three functions. It is loaded through
 * the descriptor, `/proc/self/fd/<fd>`, where that exists (Linux), so that the file loaded is the
 * one checked; the descriptor then stays open while the process lives (dlopen(3) takes a name it
 * loaded before for that library: the name must not come to mean another file). The descriptor
 * is closed when the library does not load.
 * @throws Error from koffi when it does not load or lacks a function.
 */
function openFunctions(fd: number, path: string): ShimFunctions {
  const byFd = `/proc/self/fd/${fd}`;
  let so: ReturnType<ReturnType<typeof koffi>["load"]>;
  try {
    so = koffi().load(existsSync(byFd) ? byFd : path);
  } catch (e) {
    closeSync(fd);
    throw e;
  }
  return {
    init: so.func("tirx_shim_init", "int", ["const char *", "void *"]) as (
      library: string,
      table: bigint,
    ) => number,
    launch: so.func("tirx_launch", "int", ["void *"]) as (record: bigint) => number,
    launchSync: so.func("tirx_launch_sync", "int", ["void *"]) as (record: bigint) => number,
  };
}

/** fsync the directory `dir`, so that its renames are on disk; ignored where it fails. */
function syncDirectory(dir: string): void {
  try {
    const fd = openSync(dir, constants.O_RDONLY);
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // not every file system syncs a directory
  }
}

function fail(env: NodeJS.ProcessEnv, why: string): undefined {
  if (env["TIRX_DEBUG"]) process.stderr.write(`tirx-ts: launch stub not used: ${why}\n`);
  return undefined;
}

function note(env: NodeJS.ProcessEnv, what: string): void {
  if (env["TIRX_DEBUG"]) process.stderr.write(`tirx-ts: launch stub: ${what}\n`);
}

/** The stub's functions, loaded once per process; null when it could not be built or loaded. */
let loaded: ShimLibrary | null | undefined;
/** The stub initialized per driver library; undefined where init failed. */
const shims = new Map<string, LaunchShim | undefined>();

/**
 * The launch stub for the driver library `library` (the `library` of the `CudaDriver` that
 * launches: `TIRX_LIBCUDA` or libcuda.so.1), built and loaded on the first call of the process
 * and initialized once per library (dlopen, dlsym of cuLaunchKernelEx and cuCtxSynchronize);
 * both outcomes are remembered, failure included. Undefined when `TIRX_LAUNCH_SHIM=off` (read at
 * each call), or when the stub cannot be built, loaded or initialized: the caller launches
 * through koffi. Never throws.
 */
export function launchShim(library: string): LaunchShim | undefined {
  if (process.env["TIRX_LAUNCH_SHIM"] === "off") {
    if (!saidOff) fail(process.env, "TIRX_LAUNCH_SHIM=off");
    saidOff = true;
    return undefined;
  }
  if (shims.has(library)) return shims.get(library);
  if (loaded === undefined) {
    try {
      loaded = buildLaunchShim() ?? null;
    } catch (e) {
      loaded = null; // a temporary directory that could not be removed, say
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
