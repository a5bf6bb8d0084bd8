import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { userInfo } from "node:os";
import { dirname, isAbsolute, join, resolve } from "node:path";

/**
 * The on-disk cache of compiled GPU binaries (cubins): one file per key in an absolute directory,
 * the first of
 *
 * - `$TIRX_CACHE_DIR`, resolved against the current directory at the time of this call when it
 *   is relative (`TIRX_CACHE_DIR=.` is the directory the process is in when it compiles; a caller
 *   keeps the returned path, so a later `process.chdir` does not move a cache in use, but a later
 *   call resolves again against the new current directory);
 * - `$XDG_CACHE_HOME/tirx-ts`, only when `XDG_CACHE_HOME` is an absolute path: the XDG Base
 *   Directory Specification says relative paths in its variables are invalid and must be ignored,
 *   and an empty one is as if unset;
 * - `<home>/.cache/tirx-ts` (the spec's default), `<home>` from {@link homeDir}.
 *
 * Undefined, meaning no disk cache, under `TIRX_CACHE=off`, for a relative `TIRX_CACHE_DIR` when
 * the current directory no longer exists, or when none of them applies (no `TIRX_CACHE_DIR`, no
 * absolute `XDG_CACHE_HOME` and no usable home). `env` is the whole
 * environment read (`HOME` included). Never throws. Files are written to a temporary name and
 * renamed, so a concurrent reader never sees half a file; a file that fails to load is removed by
 * the caller (`forgetBinary`).
 */
export function binaryCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env["TIRX_CACHE"] === "off") return undefined;
  const own = env["TIRX_CACHE_DIR"];
  if (own) {
    try {
      return resolve(own);
    } catch {
      return undefined; // relative, and the current directory is gone (process.cwd() throws)
    }
  }
  const xdg = env["XDG_CACHE_HOME"];
  if (xdg && isAbsolute(xdg)) return join(xdg, "tirx-ts");
  const home = homeDir(env);
  return home === undefined ? undefined : join(home, ".cache", "tirx-ts");
}

/**
 * The user's home directory as an absolute path: `env.HOME` when it is absolute, else (unset,
 * empty or relative, all treated as absent) the home of the process's user in the password
 * database, `account()`, which is what Node's `os.homedir()` falls back to when `HOME` is unset;
 * undefined when that is missing or not absolute either. A relative home would make the cache a
 * folder of whatever directory the process is in. Never throws.
 * @internal exported for tests (`account` replaces the password database).
 */
export function homeDir(
  env: NodeJS.ProcessEnv,
  account: () => string | undefined = accountHome,
): string | undefined {
  const home = env["HOME"];
  if (home && isAbsolute(home)) return home;
  const fromAccount = account();
  return fromAccount && isAbsolute(fromAccount) ? fromAccount : undefined;
}

/** The password database's home of the process's user; undefined when it has no entry. */
function accountHome(): string | undefined {
  try {
    return userInfo().homedir;
  } catch {
    return undefined; // a uid with no entry (containers run under arbitrary uids)
  }
}

/**
 * The most directory levels {@link ensureDir} creates by default: a cache directory that far below
 * the deepest existing one is most likely a mistaken path.
 */
export const ENSURE_DIR_MAX_LEVELS = 32;

/**
 * Make `dir` (relative to the current directory when relative) exist as a directory, creating the
 * missing ones one level at a time with non-recursive `mkdirSync`, from below the deepest
 * existing ancestor down, at most `maxLevels` of them. True when `dir` is a directory (already or
 * now; one created meanwhile by another process counts), false on any failure, without throwing:
 * more than `maxLevels` missing levels, an ancestor that is not a directory, or an error from
 * `stat`/`mkdir` (permissions, a read-only or full file system, a file system such as procfs
 * that answers ENOENT to every mkdir). Node's `mkdirSync(dir, { recursive: true })` retries such
 * an ENOENT forever (100% CPU) under `/proc`; this makes at most `maxLevels + 1` stat calls
 * walking up and then at most `maxLevels` mkdir calls (each EEXIST checked by one more stat),
 * and stops at the first failure. Directories created before a failure stay.
 * @internal for the binary cache and the launch stub's builder.
 */
export function ensureDir(dir: string, maxLevels = ENSURE_DIR_MAX_LEVELS): boolean {
  try {
    // Missing directories, deepest first. Each step goes to the parent, so the walk ends at the
    // root (which exists) or after maxLevels steps.
    const missing: string[] = [];
    for (let p = resolve(dir); ; p = dirname(p)) {
      const kind = statKind(p);
      if (kind === "directory") break;
      if (kind !== "missing" || missing.length >= maxLevels || dirname(p) === p) return false;
      missing.push(p);
    }
    for (let i = missing.length - 1; i >= 0; i--) {
      const p = missing[i]!;
      try {
        mkdirSync(p);
      } catch (e) {
        // Another process may have created it between the stat and now: fine if a directory.
        if ((e as NodeJS.ErrnoException).code !== "EEXIST" || statKind(p) !== "directory") {
          return false;
        }
      }
    }
    return true;
  } catch {
    return false;
  }
}

/** What `path` is: a directory (symbolic links followed), missing, or other / unreadable. */
function statKind(path: string): "directory" | "missing" | "other" {
  try {
    return statSync(path).isDirectory() ? "directory" : "other";
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "ENOENT" ? "missing" : "other";
  }
}

/** The file name of a binary: PTX hash, arch and driver version (a new driver recompiles). */
export function binaryKey(ptxHash: string, arch: string, driverVersion: number): string {
  return `${ptxHash}-${arch}-cuda${driverVersion}.cubin`;
}

/**
 * The cached bytes for `key`, or undefined (no cache, no file, unreadable, or not trusted: see
 * {@link readOwnFile}).
 */
export function readBinary(key: string, dir = binaryCacheDir()): Uint8Array | undefined {
  return dir ? readOwnFile(join(dir, key)) : undefined;
}

/**
 * The bytes of the cache file `path` when it can be trusted, else undefined (also when missing or
 * unreadable; never throws): {@link readCacheFile} without the reason.
 * @internal for the binary cache and the CLI's bundle cache.
 */
export function readOwnFile(path: string): Buffer | undefined {
  const read = readCacheFile(path);
  return read && "bytes" in read ? read.bytes : undefined;
}

/**
 * The cache file `path`: its bytes when it can be trusted, else why not (`untrusted`: the open
 * or the read failed, or {@link untrustedFile}'s reason); undefined when it is missing. Never
 * throws. It is opened without following a symbolic link (O_NOFOLLOW), then checked through the
 * open descriptor, so that the file checked is the file read. In a cache directory others can
 * write to, another user could otherwise plant a file under a predictable name (a cubin the
 * driver loads, a kernel bundle the CLI runs). Files this package writes are created 0o644
 * ({@link writeFileAtomically}).
 * @internal for readOwnFile and the launch stub (which reports the reason under TIRX_DEBUG).
 */
export function readCacheFile(
  path: string,
): { readonly bytes: Buffer } | { readonly untrusted: string } | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    return { untrusted: (e as Error).message };
  }
  try {
    const why = untrustedFile(fd);
    return why ? { untrusted: why } : { bytes: readFileSync(fd) };
  } catch (e) {
    return { untrusted: (e as Error).message };
  } finally {
    quietly(() => closeSync(fd));
  }
}

/**
 * Why the open file `fd` is not to be trusted as a cache file, or undefined: not a regular file,
 * owned by another user than the current one or root ({@link foreignOwner}), or writable by group
 * or others.
 * @internal for readCacheFile and the launch stub's library.
 */
export function untrustedFile(fd: number): string | undefined {
  const st = fstatSync(fd);
  if (!st.isFile()) return "not a regular file";
  const owner = foreignOwner(st);
  if (owner) return owner;
  if (st.mode & 0o022) return `writable by group or others (mode ${modeOf(st)})`;
  return undefined;
}

/**
 * "owned by uid N, not M" when `st` belongs to neither the current user nor root; undefined
 * otherwise, and where `process.getuid` does not exist.
 * @internal for untrustedFile and the launch stub's directory check.
 */
export function foreignOwner(st: Stats): string | undefined {
  const uid = process.getuid?.();
  if (uid === undefined || st.uid === uid || st.uid === 0) return undefined;
  return `owned by uid ${st.uid}, not ${uid}`;
}

/** `st`'s permission bits in octal, e.g. "0755". @internal */
export function modeOf(st: Stats): string {
  return (st.mode & 0o7777).toString(8).padStart(4, "0");
}

/**
 * Write `data` to `path` as a whole: to `<path>.<pid>.<random>.tmp` (pid and random: worker
 * threads share the pid), created exclusively (never another's file, nor a planted symbolic
 * link) with `mode` whatever the umask, then renamed over `path`, so that a reader sees the old
 * file or the new one, never half of one. `durable` fsyncs the file before the rename. The
 * temporary file is removed on any failure (only when this call created it).
 * @throws Error from the file system (a read-only or full disk, a missing directory).
 * @internal for the binary cache, the CLI's bundle cache and the launch stub.
 */
export function writeFileAtomically(
  path: string,
  data: string | Uint8Array,
  mode: number,
  durable = false,
): void {
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  let fd: number | undefined;
  let created = false;
  try {
    fd = openSync(tmp, "wx", mode);
    created = true;
    fchmodSync(fd, mode); // whatever the umask: readOwnFile refuses group- or other-writable files
    writeFileSync(fd, data);
    if (durable) fsyncSync(fd);
    const written = fd;
    fd = undefined; // closed even when close reports an error: never closed twice
    closeSync(written);
    renameSync(tmp, path);
    created = false;
  } finally {
    const left = fd;
    if (left !== undefined) quietly(() => closeSync(left));
    if (created) quietly(() => rmSync(tmp, { force: true }));
  }
}

/**
 * Store `bytes` under `key` in `dir` (created as by {@link ensureDir}), mode 0o644, through
 * {@link writeFileAtomically}. Failures (a read-only home, a full disk, a directory that cannot
 * be created) are ignored, it is a cache, and leave no temporary file behind.
 */
export function writeBinary(key: string, bytes: Uint8Array, dir = binaryCacheDir()): void {
  if (dir && ensureDir(dir)) quietly(() => writeFileAtomically(join(dir, key), bytes, 0o644));
}

/** Remove the file of `key` (after it failed to load); a failure to remove it is ignored. */
export function forgetBinary(key: string, dir = binaryCacheDir()): void {
  if (dir) quietly(() => rmSync(join(dir, key), { force: true }));
}

/** Run `f`, ignoring what it throws (cleanup after a failure, or of a cache file). */
function quietly(f: () => void): void {
  try {
    f();
  } catch {
    // nothing more to do
  }
}
