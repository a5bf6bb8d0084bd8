// Property: random IR functions (expression trees over int32/float32/bool with loads, stores,
// lets, ifs, whiles and loops over a few buffers, built as raw IR so that unfolded constants and
// no-op casts occur) print as a `T` module that rebuilds structurally equal functions. The
// functions are valid (`verify` accepts each); all go into ONE generated module, imported once.
import { spawnSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath, pathToFileURL } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import fc from "fast-check";
import { printModule } from "@tirx-ts/dsl";
import { structuralEqual, verify, type PrimFunc } from "@tirx-ts/core";
import { build } from "./util/random-ir.js";

/**
 * Import the generated module in a plain node process, which loads `tirx-ts` from its build
 * (`npm test` builds first) and records the builder's ~10^5 spans without vitest's source
 * mapping (several times faster), and read its kernels back as JSON. Variables and buffers are
 * interned by id again, so that `structuralEqual` sees one object per binding as in the original.
 */
function importInNode(file: string): Record<string, PrimFunc> {
  const script =
    `const m = await import(${JSON.stringify(pathToFileURL(file).href)});` +
    `process.stdout.write(JSON.stringify(m, (k, v) => (typeof v === "bigint" ? { $big: String(v) } : k === "span" ? undefined : v)));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: outDir,
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  const bindings = new Map<string, unknown>();
  return JSON.parse(r.stdout, (_k, v: unknown) => {
    if (typeof v !== "object" || v === null) return v;
    const o = v as { $big?: string; kind?: string; id?: number };
    if (o.$big !== undefined) return BigInt(o.$big);
    if (o.kind !== "Var" && o.kind !== "Buffer") return v;
    const key = `${o.kind}${o.id}`;
    if (!bindings.has(key)) bindings.set(key, v);
    return bindings.get(key);
  }) as Record<string, PrimFunc>;
}

const outDir = fileURLToPath(new URL("./.printed/property/", import.meta.url));
afterAll(() => rmSync(`${outDir}property.mjs`, { force: true }));

describe("printFunc on random IR", () => {
  test("1000 random valid functions print → parse → structurally equal", async () => {
    const tapes = fc.sample(fc.array(fc.nat({ max: 1 << 16 }), { minLength: 8, maxLength: 400 }), {
      numRuns: 1000,
      seed: 20240611,
    });
    const fns = tapes.map((t, i) => build(t, i));
    for (const fn of fns) verify(fn);
    mkdirSync(outDir, { recursive: true });
    const file = `${outDir}property.mjs`;
    writeFileSync(file, printModule(fns));
    const mod = importInNode(file);
    const bad = fns.filter((fn) => !structuralEqual(fn, mod[fn.name])).map((fn) => fn.name);
    expect(bad).toEqual([]);
    // The generator reaches what the printer must spell exactly.
    const text = printModule(fns);
    for (const needle of [
      "T.raw.binary",
      "T.raw.cast",
      "T.while_",
      "T.unroll",
      "T.if_then_else",
      ".not()",
    ]) {
      expect(text).toContain(needle);
    }
  });
});
