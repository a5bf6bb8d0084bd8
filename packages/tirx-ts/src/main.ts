import { pathToFileURL } from "node:url";
import { realpathSync } from "node:fs";

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
}
