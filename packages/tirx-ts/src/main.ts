import { pathToFileURL } from "node:url";
import { realpathSync } from "node:fs";
import type { DeviceLike, DeviceTensor } from "@tirx-ts/core";
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
 * What a runnable example reports: whether its numeric check passed, the raw bytes of its
 * outputs (so devices can be compared bit for bit), and a one-line summary.
 */
export interface ExampleResult {
  readonly ok: boolean;
  readonly outputs: readonly Uint8Array[];
  readonly summary: string;
  /**
   * Set when the example uses an approximate op (a `.approx` instruction whose bits the simulator
   * cannot reproduce): why devices may differ. Both are then held to the example's own check
   * against a float64 reference instead of to each other bit for bit.
   */
  readonly approximate?: string;
}

/**
 * Compare `out` with `expected` element by element (exact equality, after the tensor's dtype
 * rounding), then free `out` and every tensor in `free`. Returns the example's result, with
 * `out`'s raw bytes for bit-for-bit comparisons between devices.
 */
export function checkOutput(
  out: DeviceTensor,
  expected: ArrayLike<number>,
  free: readonly DeviceTensor[] = [],
  unit = "elements",
): ExampleResult {
  const got = out.toArray() as ArrayLike<number>;
  let equal = 0;
  for (let i = 0; i < expected.length; i++) if (got[i] === expected[i]) equal++;
  const bytes = out.toBytes();
  for (const t of [out, ...free]) t.dispose();
  return {
    ok: equal === expected.length && got.length === expected.length,
    outputs: [bytes],
    summary: `${equal} of ${expected.length} ${unit} match`,
  };
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
