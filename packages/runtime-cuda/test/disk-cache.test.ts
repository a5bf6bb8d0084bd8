// The on-disk binary cache's files and settings (no GPU needed).
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import {
  binaryCacheDir,
  binaryKey,
  forgetBinary,
  readBinary,
  writeBinary,
} from "../src/disk-cache.js";

test("the cache lives under TIRX_CACHE_DIR, XDG_CACHE_HOME or ~/.cache; TIRX_CACHE=off disables it", () => {
  expect(binaryCacheDir({ TIRX_CACHE_DIR: "/x/y" })).toBe("/x/y");
  expect(binaryCacheDir({ XDG_CACHE_HOME: "/c" })).toBe("/c/tirx-ts");
  expect(binaryCacheDir({ XDG_CACHE_HOME: "relative" })).toBe(join(homedir(), ".cache", "tirx-ts"));
  expect(binaryCacheDir({})).toBe(join(homedir(), ".cache", "tirx-ts"));
  expect(binaryCacheDir({ TIRX_CACHE: "off", TIRX_CACHE_DIR: "/x" })).toBeUndefined();
});

test("keys name the PTX hash, the arch and the driver version", () => {
  expect(binaryKey("ab12", "sm_90", 13000)).toBe("ab12-sm_90-cuda13000.cubin");
  expect(binaryKey("ab12", "sm_90", 12080)).not.toBe(binaryKey("ab12", "sm_90", 13000));
});

test("write, read back, forget; an unwritable directory is ignored", () => {
  const dir = mkdtempSync(join(tmpdir(), "tirx-disk-cache-"));
  try {
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
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
