// Script printer round trip: printScript(f) (prettier-formatted script-mode TypeScript) parsed
// back with parseScript is structurally equal to f, for every example kernel, the test kernels,
// and 1000 random valid IR functions (the generator of printer-property.test.ts; 250 of them
// formatted).
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { parseScript, printScriptModule, printScriptModuleText } from "@tirx-ts/dsl";
import {
  mapStmt,
  runPipeline,
  structuralEqual,
  verify,
  type PrimFunc,
  type Stmt,
} from "@tirx-ts/core";
import { PTX_PASSES } from "@tirx-ts/codegen-ptx";
import { build } from "./util/random-ir.js";
import { seedKernel } from "./kernels/seed.js";
import * as registers from "./kernels/registers.js";
import { rowCopyKernel, seedKernel as simSeed } from "../packages/runtime-sim/test/kernels.js";

const examplesDir = fileURLToPath(new URL("../examples/", import.meta.url));

const isPrimFunc = (x: unknown): x is PrimFunc =>
  typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";

/**
 * Print `fns` as one module (formatted with prettier unless `raw`), parse it back, and name the
 * kernels that did not come back equal.
 */
async function roundTrip(
  fns: readonly PrimFunc[],
  raw = false,
): Promise<{ bad: string[]; text: string }> {
  const text = raw ? printScriptModuleText(fns) : await printScriptModule(fns);
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

  test("every example kernel after every pass of the PTX pipeline", async () => {
    const fns: PrimFunc[] = [];
    for (const f of readdirSync(examplesDir).filter((x) => x.endsWith(".ts"))) {
      const mod = (await import(`${examplesDir}${f}`)) as Record<string, unknown>;
      for (const fn of Object.values(mod).filter(isPrimFunc)) {
        // One run of the pipeline, every stage kept.
        runPipeline(verify(fn), PTX_PASSES, {
          onStage: (name, cur) => {
            // A TileOp prints as the tile.apply it came from, which the verifier plans again.
            const body = mapStmt(cur.fn.body, {
              stmt: (s: Stmt): Stmt => (s.kind === "TileOp" ? s.source : s),
            });
            fns.push({ ...cur.fn, name: `${fn.name}_${name.replace(/\W/g, "_")}`, body });
          },
        });
      }
    }
    expect(fns.length).toBeGreaterThanOrEqual(8 * PTX_PASSES.length);
    // Unformatted: the unrolled stages are large, and the kernels as written went through prettier.
    const { bad } = await roundTrip(fns, true);
    expect(bad).toEqual([]);
  });

  test("1000 random valid functions", async () => {
    const tapes = fc.sample(fc.array(fc.nat({ max: 1 << 16 }), { minLength: 8, maxLength: 400 }), {
      numRuns: 1000,
      seed: 20240611,
    });
    const fns = tapes.map((t, i) => build(t, i));
    for (const fn of fns) verify(fn);
    // prettier takes ~5 ms a kernel here, so 250 go through it and all 1000 unformatted: what
    // prettier may change (it rebalances `a && (b && c)`) is met within the first 250.
    const formatted = await roundTrip(fns.slice(0, 250));
    expect(formatted.bad).toEqual([]);
    const { bad, text } = await roundTrip(fns, true);
    expect(bad).toEqual([]);
    // The generator reaches the spellings the script printer must get exactly right.
    for (const needle of ["T.raw.binary", "T.raw.cast", "while (", "T.unroll", " ? ", "} else {"]) {
      expect(text).toContain(needle);
    }
  });
});
