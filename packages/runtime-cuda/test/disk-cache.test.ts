// The on-disk binary cache's files and settings (no GPU needed).
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import {
  binaryCacheDir,
  binaryKey,
  ensureDir,
  forgetBinary,
  homeDir,
  readBinary,
  readOwnFile,
  writeBinary,
} from "../src/disk-cache.js";

/** The password database's home of this process's user (what an unusable HOME falls back to). */
const account = ((): string | undefined => {
  try {
    return userInfo().homedir;
  } catch {
    return undefined;
  }
})();
const accountCache = account ? join(account, ".cache", "tirx-ts") : undefined;

function withTempDir(f: (dir: string) => void): void {
  const dir = mkdtempSync(join(tmpdir(), "tirx-disk-cache-"));
  try {
    f(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test("the cache lives under TIRX_CACHE_DIR, XDG_CACHE_HOME or ~/.cache; TIRX_CACHE=off disables it", () => {
  expect(binaryCacheDir({ TIRX_CACHE_DIR: "/x/y" })).toBe("/x/y");
  expect(binaryCacheDir({ TIRX_CACHE_DIR: "/x/y", HOME: "" })).toBe("/x/y");
  expect(binaryCacheDir({ XDG_CACHE_HOME: "/c", HOME: "/h" })).toBe("/c/tirx-ts");
  expect(binaryCacheDir({ HOME: "/h" })).toBe("/h/.cache/tirx-ts");
  expect(binaryCacheDir({ TIRX_CACHE: "off", TIRX_CACHE_DIR: "/x" })).toBeUndefined();
  // HOME from the environment given, not the process's.
  expect(binaryCacheDir({ HOME: "/elsewhere" })).toBe("/elsewhere/.cache/tirx-ts");
});

test("relative or empty XDG_CACHE_HOME and HOME are ignored (XDG Base Directory spec); the result is absolute", () => {
  // The spec: a relative path in an XDG variable is invalid and ignored; an empty one is unset.
  expect(binaryCacheDir({ XDG_CACHE_HOME: "relative", HOME: "/h" })).toBe("/h/.cache/tirx-ts");
  expect(binaryCacheDir({ XDG_CACHE_HOME: "", HOME: "/h" })).toBe("/h/.cache/tirx-ts");
  // An empty or relative HOME is as if unset: the password database's home.
  expect(binaryCacheDir({ HOME: "" })).toBe(accountCache);
  expect(binaryCacheDir({ HOME: "rel/home" })).toBe(accountCache);
  expect(binaryCacheDir({ HOME: "", XDG_CACHE_HOME: ".cache" })).toBe(accountCache);
  expect(binaryCacheDir({})).toBe(accountCache);
  expect(homeDir({ HOME: "/h" }, () => "/p")).toBe("/h");
  expect(homeDir({ HOME: "" }, () => "/p")).toBe("/p");
  expect(homeDir({ HOME: "." }, () => "/p")).toBe("/p");
  // No usable home at all: no home, hence no disk cache (binaryCacheDir undefined).
  expect(homeDir({ HOME: "" }, () => undefined)).toBeUndefined();
  expect(homeDir({}, () => "relative")).toBeUndefined();
  expect(homeDir({ HOME: "x" }, () => "")).toBeUndefined();
});

test("a relative TIRX_CACHE_DIR is resolved against the current directory of the call", () => {
  const saved = process.cwd();
  withTempDir((dir) => {
    mkdirSync(join(dir, "a"));
    mkdirSync(join(dir, "b"));
    try {
      process.chdir(join(dir, "a"));
      const here = process.cwd(); // the real path (tmpdir may be a symbolic link)
      const cache = binaryCacheDir({ TIRX_CACHE_DIR: "." });
      expect(cache).toBe(here);
      expect(binaryCacheDir({ TIRX_CACHE_DIR: "c" })).toBe(join(here, "c"));
      expect(binaryCacheDir({ TIRX_CACHE_DIR: "../b" })).toBe(join(here, "..", "b"));
      // The returned path is kept by its user: a later chdir does not move the files.
      process.chdir(join(dir, "b"));
      writeBinary("k.cubin", Uint8Array.from([7]), cache);
      expect(readdirSync(join(dir, "a"))).toEqual(["k.cubin"]);
      expect(readdirSync(join(dir, "b"))).toEqual([]);
      expect(Array.from(readBinary("k.cubin", cache) ?? [])).toEqual([7]);
      // A new call resolves against the new current directory.
      expect(binaryCacheDir({ TIRX_CACHE_DIR: "." })).toBe(process.cwd());
    } finally {
      process.chdir(saved);
    }
  });
});

test("keys name the PTX hash, the arch and the driver version", () => {
  expect(binaryKey("ab12", "sm_90", 13000)).toBe("ab12-sm_90-cuda13000.cubin");
  expect(binaryKey("ab12", "sm_90", 12080)).not.toBe(binaryKey("ab12", "sm_90", 13000));
});

test("write, read back, forget; an unwritable directory is ignored", () => {
  withTempDir((dir) => {
    const bytes = Uint8Array.from([1, 2, 3, 250]);
    expect(readBinary("k.cubin", dir)).toBeUndefined();
    writeBinary("k.cubin", bytes, join(dir, "nested"));
    expect(Array.from(readBinary("k.cubin", join(dir, "nested")) ?? [])).toEqual([1, 2, 3, 250]);
    expect(readdirSync(join(dir, "nested"))).toEqual(["k.cubin"]); // no temporary left behind
    forgetBinary("k.cubin", join(dir, "nested"));
    expect(readBinary("k.cubin", join(dir, "nested"))).toBeUndefined();
    writeFileSync(join(dir, "file"), "");
    expect(() => writeBinary("k.cubin", bytes, join(dir, "file", "below"))).not.toThrow();
    expect(readBinary("k.cubin", undefined)).toBeUndefined();
    expect(() => forgetBinary("k.cubin", join(dir, "file", "below"))).not.toThrow();
  });
});

test("a write that fails after its temporary file was made leaves no temporary file", () => {
  withTempDir((dir) => {
    // The rename onto the key fails (EISDIR: a non-empty directory holds the name), after the
    // temporary file was created and written: the same path as a full disk's failed write.
    mkdirSync(join(dir, "k.cubin"));
    writeFileSync(join(dir, "k.cubin", "inside"), "");
    expect(() => writeBinary("k.cubin", Uint8Array.from([1, 2]), dir)).not.toThrow();
    expect(readdirSync(dir)).toEqual(["k.cubin"]);
    expect(readBinary("k.cubin", dir)).toBeUndefined();
    // The write itself fails (not bytes), after the file was created.
    const notBytes = { length: 3 } as unknown as Uint8Array;
    expect(() => writeBinary("j.cubin", notBytes, dir)).not.toThrow();
    expect(readdirSync(dir)).toEqual(["k.cubin"]);
  });
});

test("ensureDir creates missing levels one by one, and fails on files and past its bound", () => {
  withTempDir((dir) => {
    expect(ensureDir(dir)).toBe(true);
    expect(ensureDir(join(dir, "a", "b", "c"))).toBe(true);
    expect(statSync(join(dir, "a", "b", "c")).isDirectory()).toBe(true);
    expect(ensureDir(join(dir, "a", "b", "c"))).toBe(true);
    // More missing levels than allowed: false, and nothing created.
    expect(ensureDir(join(dir, "d", "e", "f"), 2)).toBe(false);
    expect(existsSync(join(dir, "d"))).toBe(false);
    expect(ensureDir(join(dir, "d", "e", "f"), 3)).toBe(true);
    // A file where a directory should be, or above it.
    writeFileSync(join(dir, "file"), "");
    expect(ensureDir(join(dir, "file"))).toBe(false);
    expect(ensureDir(join(dir, "file", "below"))).toBe(false);
    // A relative path is relative to the current directory.
    const saved = process.cwd();
    try {
      process.chdir(dir);
      expect(ensureDir(join("r", "s"))).toBe(true);
    } finally {
      process.chdir(saved);
    }
    expect(statSync(join(dir, "r", "s")).isDirectory()).toBe(true);
    // A directory that cannot be written (not for root, which may write anywhere).
    if (process.getuid?.() !== 0) {
      mkdirSync(join(dir, "ro"));
      chmodSync(join(dir, "ro"), 0o555);
      expect(ensureDir(join(dir, "ro", "x"))).toBe(false);
      chmodSync(join(dir, "ro"), 0o755);
    }
  });
});

// procfs answers ENOENT to mkdir, which Node's recursive mkdirSync retries forever. The bound
// (maxLevels) keeps this test finite even if the walk were wrong; no timer.
test.skipIf(!existsSync("/proc/self"))("ensureDir under /proc returns false", () => {
  expect(ensureDir("/proc/self/nonexistent/x", 4)).toBe(false);
  expect(ensureDir(`/proc/tirx-ts-${process.pid}`, 4)).toBe(false);
  expect(ensureDir("/proc/self/nonexistent/x")).toBe(false);
  // writeBinary there gives up too (TIRX_CACHE_DIR=/proc/self/nonexistent/x).
  writeBinary("k.cubin", Uint8Array.from([1]), "/proc/self/nonexistent/x");
});

test("a cache file is read only while no one else can write it: 0o644 files, no symbolic links", () => {
  withTempDir((dir) => {
    const old = process.umask(0);
    try {
      writeBinary("k.cubin", Uint8Array.of(1, 2, 3), dir);
    } finally {
      process.umask(old);
    }
    // Created 0o644 whatever the umask, so that it passes the check below.
    expect(statSync(join(dir, "k.cubin")).mode & 0o777).toBe(0o644);
    expect([...(readBinary("k.cubin", dir) ?? [])]).toEqual([1, 2, 3]);
    // Writable by group or others: another user could have put the bytes there.
    for (const mode of [0o664, 0o646, 0o666]) {
      chmodSync(join(dir, "k.cubin"), mode);
      expect(readBinary("k.cubin", dir), mode.toString(8)).toBeUndefined();
    }
    chmodSync(join(dir, "k.cubin"), 0o644);
    // A symbolic link under the key's name is not followed; a directory is not a file.
    symlinkSync(join(dir, "k.cubin"), join(dir, "link.cubin"));
    expect(readOwnFile(join(dir, "link.cubin"))).toBeUndefined();
    mkdirSync(join(dir, "d.cubin"));
    expect(readOwnFile(join(dir, "d.cubin"))).toBeUndefined();
    expect(readOwnFile(join(dir, "missing"))).toBeUndefined();
    expect([...(readOwnFile(join(dir, "k.cubin")) ?? [])]).toEqual([1, 2, 3]);
  });
});
