import { pathToFileURL } from "node:url";
import { realpathSync } from "node:fs";
import { checkOutput, type DeviceLike, type ExampleResult } from "@tirx-ts/core";

export { checkOutput, type ExampleResult };
import { device } from "@tirx-ts/runtime";

/**
 * True when the module with `importMetaUrl` is the program's entry point (`tsx file.ts`), so an
 * example can export its kernels for `tirx build` and run itself only when executed.
 */
export function isMain(importMetaUrl: string): boolean {
  const entry = process.argv[1];
  if (!entry) return false;
  try {
    return pathToFileURL(realpathSync(entry)).href === importMetaUrl;
  } catch {
    return false;
  }
}

/**
 * The body of an example run as a program: run it on `dev` (default: the default device), print
 * `<name> on <device>: <summary>` (what it checked and how it came out), and set the exit code
 * (1 when the check failed).
 */
export function runAsMain(
  name: string,
  runExample: (dev: DeviceLike) => ExampleResult,
  dev: DeviceLike = device(),
): void {
  const r = runExample(dev);
  const where = dev.kind === "sim" ? "the simulated device" : dev.name;
  console.log(`${name} on ${where}: ${r.summary}`);
  process.exitCode = r.ok ? 0 : 1;
}
