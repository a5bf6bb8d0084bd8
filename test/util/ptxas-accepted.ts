// The PTX modules ptxas accepted, remembered by content across test runs, so that a module whose
// text, target and ptxas are those of one ptxas already accepted is not assembled again (about a
// fifth of the CPU of the files that assemble most: the suite's modules barely change between
// runs). A module ptxas refused is never recorded: it is assembled, and refused, every time.
// One empty file per accepted module under node_modules/.cache/tirx-ptxas/, named by the
// SHA-256 of ptxas's `--version`, the `-arch` and the text. Likewise the report of `ptxas -v`
// on a module it accepted (registers, spills, warnings: the same ptxas gives the same report for
// the same text and options), in a file of its own named `<SHA-256>.report`, so that a test
// reading a big kernel's report does not run ptxas again. TIRX_PTXAS_CACHE=off assembles every
// module.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const DIR = fileURLToPath(new URL("../../node_modules/.cache/tirx-ptxas/", import.meta.url));

/** `ptxas --version` of each ptxas path, asked once per process. */
const versions = new Map<string, string>();

function versionOf(ptxas: string): string {
  let v = versions.get(ptxas);
  if (v === undefined) {
    const r = spawnSync(ptxas, ["--version"], { encoding: "utf8" });
    v = r.status === 0 ? r.stdout : `unknown ${ptxas}`;
    versions.set(ptxas, v);
  }
  return v;
}

/**
 * The record's name for `text` assembled by `ptxas` (a path) with `-arch=<arch>`; undefined when
 * TIRX_PTXAS_CACHE=off (nothing is skipped or recorded).
 */
export function acceptedKey(ptxas: string, text: string, arch: string): string | undefined {
  if (process.env["TIRX_PTXAS_CACHE"] === "off") return undefined;
  return createHash("sha256")
    .update(versionOf(ptxas))
    .update("\0")
    .update(arch)
    .update("\0")
    .update(text)
    .digest("hex");
}

/** Did this ptxas accept this module (`key` from acceptedKey) in this or an earlier run. */
export function wasAccepted(key: string | undefined): boolean {
  return key !== undefined && existsSync(join(DIR, key));
}

/** Remember that ptxas accepted the module of `key` (nothing for undefined). */
export function recordAccepted(key: string | undefined): void {
  if (key === undefined) return;
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, key), "");
}

/**
 * The record's name for the report of `ptxas <args>` (a path) on `text`; undefined when
 * TIRX_PTXAS_CACHE=off (nothing is read or recorded).
 */
export function reportKey(
  ptxas: string,
  text: string,
  args: readonly string[],
): string | undefined {
  const key = acceptedKey(ptxas, text, args.join(" "));
  return key === undefined ? undefined : `${key}.report`;
}

/** The report recorded under `key` (from reportKey), or undefined (none, or `key` undefined). */
export function recordedReport(key: string | undefined): string | undefined {
  if (key === undefined || !existsSync(join(DIR, key))) return undefined;
  return readFileSync(join(DIR, key), "utf8");
}

/**
 * Record `report`, what ptxas printed when it accepted a module, under `key` (nothing for
 * undefined). Written to a file of its own and renamed into place, so that a worker reading the
 * record never sees part of it.
 */
export function recordReport(key: string | undefined, report: string): void {
  if (key === undefined) return;
  mkdirSync(DIR, { recursive: true });
  const part = join(DIR, `${key}.${process.pid}.part`);
  writeFileSync(part, report);
  renameSync(part, join(DIR, key));
}
