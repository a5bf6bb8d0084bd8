import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

/**
 * The on-disk cache of compiled GPU binaries (cubins): one file per key under
 * `$TIRX_CACHE_DIR`, else `$XDG_CACHE_HOME/tirx-ts`, else `~/.cache/tirx-ts`. `TIRX_CACHE=off`
 * disables it. Files are written to a temporary name and renamed, so a concurrent reader never
 * sees half a file; a file that fails to load is removed by the caller (`forget`).
 */
export function binaryCacheDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (env["TIRX_CACHE"] === "off") return undefined;
  const own = env["TIRX_CACHE_DIR"];
  if (own) return own;
  const xdg = env["XDG_CACHE_HOME"];
  return join(xdg && xdg.startsWith("/") ? xdg : join(homedir(), ".cache"), "tirx-ts");
}

/** The file name of a binary: PTX hash, arch and driver version (a new driver recompiles). */
export function binaryKey(ptxHash: string, arch: string, driverVersion: number): string {
  return `${ptxHash}-${arch}-cuda${driverVersion}.cubin`;
}

/** The cached bytes for `key`, or undefined (no cache, no file, or unreadable). */
export function readBinary(key: string, dir = binaryCacheDir()): Uint8Array | undefined {
  if (!dir) return undefined;
  try {
    return readFileSync(join(dir, key));
  } catch {
    return undefined;
  }
}

/** Store `bytes` under `key`; failures (read-only home, full disk) are ignored: it is a cache. */
export function writeBinary(key: string, bytes: Uint8Array, dir = binaryCacheDir()): void {
  if (!dir) return;
  try {
    mkdirSync(dir, { recursive: true });
    const tmp = join(dir, `${key}.${process.pid}.tmp`);
    writeFileSync(tmp, bytes);
    renameSync(tmp, join(dir, key));
  } catch {
    // a cache that cannot be written is no cache
  }
}

/** Remove the file of `key` (after it failed to load). */
export function forgetBinary(key: string, dir = binaryCacheDir()): void {
  if (dir) rmSync(join(dir, key), { force: true });
}
