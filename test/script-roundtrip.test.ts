// Script printer round trip: printScript(f) (prettier-formatted script-mode TypeScript) parsed
// back with parseScript is structurally equal to f, for every example kernel and the test
// kernels. The same round trip of the examples after every pass of the PTX pipeline is in
// printer-roundtrip.test.ts (one run of the pipeline for both printers), and of the 1000 random
// valid IR functions in printer-property.test.ts (one build and verification for both printers).
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { parseScript, printScriptModule } from "@tirx-ts/dsl";
import { structuralEqual, type PrimFunc } from "@tirx-ts/core";
import { seedKernel } from "./kernels/seed.js";
import * as registers from "./kernels/registers.js";
import { rowCopyKernel, seedKernel as simSeed } from "../packages/runtime-sim/test/kernels.js";

const examplesDir = fileURLToPath(new URL("../examples/", import.meta.url));

const isPrimFunc = (x: unknown): x is PrimFunc =>
  typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";

/**
 * Print `fns` as one module formatted with prettier, parse it back, and name the kernels that did
 * not come back equal.
 */
async function roundTrip(fns: readonly PrimFunc[]): Promise<{ bad: string[]; text: string }> {
  const text = await printScriptModule(fns);
  const back = parseScript(text, "roundtrip.ts");
  expect(back.length).toBe(fns.length);
  const bad = fns.filter((f, i) => !structuralEqual(f, back[i]!)).map((f) => f.name);
  return { bad, text };
}

describe("printScript → parseScript", () => {
  test("every example kernel and the test kernels", async () => {
    const fns: PrimFunc[] = [
      seedKernel(),
      seedKernel({ block: 256 }),
      simSeed,
      rowCopyKernel(1024),
      registers.accumulate(8),
      registers.gemmTile(16),
      registers.runtimeIndex(),
      registers.localScalar(8),
      registers.vectorCopy("float16"),
      registers.misalignedCopy(),
      registers.vectorAxpy(),
    ];
    for (const f of readdirSync(examplesDir).filter((x) => x.endsWith(".ts"))) {
      const mod = (await import(`${examplesDir}${f}`)) as Record<string, unknown>;
      fns.push(...Object.values(mod).filter(isPrimFunc));
    }
    expect(fns.length).toBeGreaterThanOrEqual(8);
    const { bad } = await roundTrip(fns);
    expect(bad).toEqual([]);
  });
});
