// The launch stub's build and cache rules (src/launch-shim.ts), without a GPU or a driver: a
// library that builds but does not load leaves a failure marker that later builds with the same
// key honour without running the compiler (none under TIRX_CACHE=off); a CC with
// -fsanitize=address still builds a library that loads; a cache directory writable by others is
// not used (the stub is built in a private temporary directory), and a cached file writable by
// others, or another user's, is not loaded; a compiler that hangs is killed. Compilers here are
// shell scripts in a temporary directory; two of them run gcc.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterAll, afterEach, describe, expect, test, vi } from "vitest";
import {
  BUILD_TIMEOUT_MS,
  buildLaunchShim,
  openCached,
  type ShimLibrary,
} from "../src/launch-shim.js";

const root = mkdtempSync(join(tmpdir(), "tirx-launch-shim-cache-"));
const gcc = execFileSync("sh", ["-c", "command -v gcc"], { encoding: "utf8" }).trim();

afterAll(() => rmSync(root, { recursive: true, force: true }));
afterEach(() => vi.restoreAllMocks());

/** A shell script at `name` in the test's directory, run as CC; each run appends a line to `name.log`. */
function script(name: string, body: string): { path: string; runs: () => number } {
  const path = join(root, name);
  writeFileSync(path, `#!/bin/sh\necho run >> '${path}.log'\n${body}\n`, { mode: 0o755 });
  const runs = () =>
    existsSync(`${path}.log`) ? readFileSync(`${path}.log`, "utf8").split("\n").length - 1 : 0;
  return { path, runs };
}

/** A writable directory of the test's, owned by the current user, mode 0o755. */
function directory(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { mode: 0o755 });
  chmodSync(dir, 0o755);
  return dir;
}

/** What buildLaunchShim printed under TIRX_DEBUG, with its result. */
function debugged(f: () => ShimLibrary | undefined): {
  lib: ShimLibrary | undefined;
  said: string;
} {
  const lines: string[] = [];
  vi.spyOn(process.stderr, "write").mockImplementation((text) => {
    lines.push(String(text));
    return true;
  });
  try {
    return { lib: f(), said: lines.join("") };
  } finally {
    vi.restoreAllMocks();
  }
}

/** Built by the first test (CC = gcc -fsanitize=address, through a script), for the others. */
let built: ShimLibrary;
/** That test's compiler. */
let asanCc: string;

describe("the launch stub's cache", () => {
  test("a library that does not load leaves a marker; a CC with -fsanitize=address builds one that loads", () => {
    // First the compiler writes no ELF file: the library builds but does not load.
    const cc = script(
      "cc",
      `cat > /dev/null\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && echo "not ELF" > "$2"; shift; done`,
    );
    const dir = directory("marked");
    const env = { PATH: process.env["PATH"], CC: cc.path, TIRX_DEBUG: "1" };
    const first = debugged(() => buildLaunchShim({ dir, env }));
    expect(first.lib).toBeUndefined();
    expect(cc.runs()).toBe(1);
    const marker = readdirSync(dir).find((f) => f.endsWith(".failed"));
    expect(readdirSync(dir)).toEqual([marker]); // no library, no temporary file
    expect(readFileSync(join(dir, marker!), "utf8")).toMatch(/Failed to load shared library/);
    expect(first.said).toContain(join(dir, marker!));
    // A later build with the same key runs no compiler, and says why and which file to delete.
    const second = debugged(() => buildLaunchShim({ dir, env }));
    expect(second.lib).toBeUndefined();
    expect(cc.runs()).toBe(1);
    expect(second.said).toContain(`delete ${join(dir, marker!)}`);
    expect(second.said).toMatch(/Failed to load shared library/);
    // Under TIRX_CACHE=off (a temporary build) no marker is written, in the cache or elsewhere.
    const off = join(root, "off");
    const offEnv = { ...env, TIRX_CACHE: "off", TIRX_CACHE_DIR: off };
    const offBuild = debugged(() => buildLaunchShim({ env: offEnv }));
    expect(offBuild.lib).toBeUndefined();
    expect(offBuild.said).toMatch(/the library built did not load: Failed to load shared library/);
    expect(cc.runs()).toBe(2);
    expect(existsSync(off)).toBe(false);

    // The same compiler path (the same key), now gcc with AddressSanitizer: without the flags
    // after CC's (-fno-sanitize=all), the library would need libasan loaded first, and dlopen
    // would end the process. A marker writable by others is not trusted: the build runs, and
    // removes it once the library loads.
    writeFileSync(
      cc.path,
      `#!/bin/sh\necho run >> '${cc.path}.log'\nexec ${gcc} -fsanitize=address "$@"\n`,
    );
    chmodSync(join(dir, marker!), 0o666);
    const lib = buildLaunchShim({ dir, env: { PATH: env.PATH, CC: cc.path } });
    expect(lib).toMatchObject({ built: true, temporary: false });
    expect(cc.runs()).toBe(3);
    expect(readdirSync(dir).sort()).toEqual([basename(lib!.path), `${basename(lib!.path)}.sha256`]);
    expect(readFileSync(lib!.path).includes("__asan")).toBe(false);
    // Its code runs: tirx_shim_init of a library that does not open returns 1.
    expect(lib!.init("/nonexistent/libcuda.so.1", new BigUint64Array(2) as never)).toBe(1);
    built = lib!;
    asanCc = cc.path;
  });

  test("a directory writable by others is not used; a file writable by others, or another user's, is not loaded", () => {
    // Another user's library, planted under the name this compiler's build gets, with its checksum.
    const shared = directory("shared");
    const planted = join(shared, basename(built.path));
    copyFileSync(built.path, planted);
    copyFileSync(`${built.path}.sha256`, `${planted}.sha256`);
    chmodSync(shared, 0o1777);
    const env = { PATH: process.env["PATH"], CC: asanCc, TIRX_DEBUG: "1" };
    const { lib, said } = debugged(() => buildLaunchShim({ dir: shared, env }));
    expect(said).toMatch(
      /not using the cache directory .*shared \(writable by others \(mode 1777\)\)/,
    );
    expect(lib).toMatchObject({ built: true, temporary: true });
    expect(lib!.path.startsWith(shared)).toBe(false);
    expect(existsSync(lib!.path)).toBe(false); // its private directory is gone once loaded
    expect(readdirSync(shared).sort()).toEqual([basename(planted), `${basename(planted)}.sha256`]);

    // The files themselves, in a directory of ours: modes 0o755 and 0o644 pass, a group- or
    // other-writable library or checksum does not.
    const mine = directory("mine");
    const copy = join(mine, basename(built.path));
    copyFileSync(built.path, copy);
    copyFileSync(`${built.path}.sha256`, `${copy}.sha256`);
    chmodSync(copy, 0o775);
    expect(openCached(copy)).toBe("writable by group or others (mode 0775)");
    chmodSync(copy, 0o755);
    chmodSync(`${copy}.sha256`, 0o646);
    expect(openCached(copy)).toBe("checksum file writable by group or others (mode 0646)");
    chmodSync(`${copy}.sha256`, 0o644);
    expect(typeof openCached(copy)).toBe("number");
    expect(statSync(built.path).mode & 0o777).toBe(0o755);
    expect(statSync(`${built.path}.sha256`).mode & 0o777).toBe(0o644);
    if (process.getuid?.() === 0) {
      chownSync(copy, 65534, 65534);
      expect(openCached(copy)).toBe("owned by uid 65534, not 0");
    }
  });

  test(`a compiler that hangs is killed (SIGKILL) after the time limit, ${BUILD_TIMEOUT_MS / 1000} s by default`, () => {
    expect(BUILD_TIMEOUT_MS).toBe(30_000);
    const pidFile = join(root, "hang.pid");
    const cc = script("hang", `echo $$ > '${pidFile}'\nexec sleep 1000`);
    const dir = directory("hung");
    const env = { PATH: process.env["PATH"], CC: cc.path, TIRX_DEBUG: "1" };
    const { lib, said } = debugged(() => buildLaunchShim({ dir, env, timeoutMs: 500 }));
    expect(lib).toBeUndefined();
    expect(said).toMatch(/build failed: .*ETIMEDOUT/);
    const pid = Number(readFileSync(pidFile, "utf8"));
    expect(() => process.kill(pid, 0)).toThrow(/ESRCH/);
    expect(readdirSync(dir)).toEqual([]); // no marker: the compiler may work next time
  });

  test("a CC that names no compiler is the reason given, with no fall back to cc or gcc", () => {
    const dir = directory("no-cc");
    const env = { PATH: process.env["PATH"], CC: "/nonexistent/cc -O1", TIRX_DEBUG: "1" };
    const { lib, said } = debugged(() => buildLaunchShim({ dir, env }));
    expect(lib).toBeUndefined();
    expect(said).toContain(
      "launch stub not used: CC=/nonexistent/cc -O1 is not an executable C compiler (CC, when set, is the only one tried)",
    );
    expect(readdirSync(dir)).toEqual([]);
  });
});
