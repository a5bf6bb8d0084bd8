// TMA kernels through both printers: the builder-syntax module and the script-mode module rebuild
// structurally equal PrimFuncs (each tensor map declared once, `const A_tmap =
// T.tensormap_encode_tiled(...)`, so its uses stay one parameter), as written and after every
// pass of the PTX pipeline.
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import {
  mapStmt,
  runPipeline,
  structuralEqual,
  verify,
  type PrimFunc,
  type Stmt,
} from "@tirx-ts/core";
import { PTX_PASSES } from "@tirx-ts/codegen-ptx";
import { parseScript, printModule, printScriptModuleText } from "@tirx-ts/dsl";
import { TMA_CASES } from "./cases.js";

const outDir = fileURLToPath(new URL("../.printed/tma/", import.meta.url));
afterAll(() => rmSync(outDir, { recursive: true, force: true }));

function stages(fn: PrimFunc): PrimFunc[] {
  const out = [fn];
  // One run of the pipeline, every stage kept.
  runPipeline(verify(fn), PTX_PASSES, {
    onStage: (_, cur) => {
      const body = mapStmt(cur.fn.body, {
        stmt: (s: Stmt): Stmt => (s.kind === "TileOp" ? s.source : s),
      });
      out.push({ ...cur.fn, body });
    },
  });
  return out;
}

const kernels = TMA_CASES.map((c) => c.fn)
  .flatMap(stages)
  .map((f, i) => ({ ...f, name: `k${i}_${f.name}` }));

describe("TMA kernels round-trip through the printers", () => {
  test("builder syntax", async () => {
    mkdirSync(outDir, { recursive: true });
    const file = `${outDir}roundtrip.ts`;
    const text = printModule(kernels);
    expect(text).toContain("T.tensormap_encode_tiled(");
    expect(text).toContain("cluster: [2, 1, 1]");
    writeFileSync(file, text);
    const mod = (await import(file)) as Record<string, unknown>;
    const bad = kernels.filter((f) => !structuralEqual(f, mod[f.name]));
    expect(bad.map((f) => f.name)).toEqual([]);
  });

  test("script mode", () => {
    const text = printScriptModuleText(kernels);
    const back = parseScript(text, "tma-roundtrip.ts");
    const bad = kernels.filter((f, i) => !structuralEqual(f, back[i])).map((f) => f.name);
    expect(bad).toEqual([]);
  });
});
