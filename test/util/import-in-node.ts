// Import a generated `T` module (printModule's text) in a plain node process and read its kernels
// back, for the printer round-trip tests.
import { spawnSync } from "node:child_process";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import type { PrimFunc } from "@tirx-ts/core";

/**
 * Import the generated module `file` (plain JavaScript, e.g. `.mjs`) in a plain node process,
 * which loads `tirx-ts` from its build (`npm test` builds first) without vitest's module
 * transform and source mapping (vitest took 5.7 s to import the 2 MB module of the example
 * kernels' pipeline stages), and read its exports back as JSON: bigints, non-finite numbers and
 * -0 are tagged on the way so that they come back as they were, and variables and buffers are
 * interned by id again, so that `structuralEqual` sees one object per binding as in the original.
 * Spans are not compared (structuralEqual ignores them, and they are dropped from the JSON), so
 * the child records none: its Error.captureStackTrace gives the builder an empty stack (the
 * JSON is byte for byte the same; capturing took half the child's time).
 * Throws an Error with the child's stderr when the import fails.
 */
export function importInNode(file: string): Record<string, PrimFunc> {
  const script =
    `Error.captureStackTrace = (o) => { o.stack = []; };` +
    `const m = await import(${JSON.stringify(pathToFileURL(file).href)});` +
    `process.stdout.write(JSON.stringify(m, (k, v) => typeof v === "bigint" ? { $big: String(v) }` +
    ` : typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0)) ? { $num: Object.is(v, -0) ? "-0" : String(v) }` +
    ` : k === "span" ? undefined : v));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    cwd: dirname(file),
    encoding: "utf8",
    maxBuffer: 1 << 30,
  });
  if (r.status !== 0) throw new Error(r.stderr);
  const bindings = new Map<string, unknown>();
  return JSON.parse(r.stdout, (_k, v: unknown) => {
    if (typeof v !== "object" || v === null) return v;
    const o = v as { $big?: string; $num?: string; kind?: string; id?: number };
    if (o.$big !== undefined) return BigInt(o.$big);
    if (o.$num !== undefined) return Number(o.$num);
    if (o.kind !== "Var" && o.kind !== "Buffer") return v;
    const key = `${o.kind}${o.id}`;
    if (!bindings.has(key)) bindings.set(key, v);
    return bindings.get(key);
  }) as Record<string, PrimFunc>;
}
