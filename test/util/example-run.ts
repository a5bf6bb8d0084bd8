// Runs an example module's runExample as `npx tsx examples/<file>` does (through runAsMain, on the
// simulated device) and returns what it printed, its result and the exit code it set.
import { readFileSync } from "node:fs";
import { expect, vi } from "vitest";
import { runAsMain, sim, type ExampleResult } from "tirx-ts";

/** What one example printed when run as the program, with its result. */
export interface ExampleRun {
  readonly printed: string;
  readonly result: ExampleResult;
  readonly exitCode: number | undefined;
}

/**
 * Import `path` (an example file), check that running it as a program calls runAsMain with
 * `label` (under `isMain(import.meta.url)`), and run its runExample through runAsMain on the
 * simulated device with console.log captured. process.exitCode is restored afterwards.
 */
export async function runExampleAsMain(path: string, label: string): Promise<ExampleRun> {
  const src = readFileSync(path, "utf8");
  expect(src, `${path} runs itself under isMain`).toContain("if (isMain(import.meta.url))");
  expect(src, `${path} prints through runAsMain`).toContain(`runAsMain(${JSON.stringify(label)}, `);
  const mod = (await import(path)) as { runExample?: (d: unknown) => ExampleResult };
  expect(typeof mod.runExample, `${path} must export runExample(device)`).toBe("function");
  const lines: string[] = [];
  const log = vi.spyOn(console, "log").mockImplementation((...a: unknown[]) => {
    lines.push(a.map(String).join(" "));
  });
  const saved = process.exitCode;
  let result: ExampleResult | undefined;
  let exitCode: number | undefined;
  try {
    runAsMain(label, (d) => (result = mod.runExample!(d)), sim());
    exitCode = process.exitCode === undefined ? undefined : Number(process.exitCode);
  } finally {
    process.exitCode = saved;
    log.mockRestore();
  }
  return { printed: lines.join("\n"), result: result!, exitCode };
}
