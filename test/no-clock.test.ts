// No test reads a clock: a bound on time fails on a busy machine for reasons that are not bugs.
// Tests bound work by counts instead (steps, node reads, loop iterations, compiles); timings
// belong in bench/. This scans every source file under test/ and packages/*/test/ (helpers and
// fixtures included, this file too) for the ways JavaScript reads one.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/**
 * The clock reads looked for. Spelled in pieces so that this file's own text holds none of them
 * (it is scanned like the others).
 */
const CLOCKS: readonly string[] = [
  ["performance", "now"].join("."),
  ["performance", "timeOrigin"].join("."),
  ["Date", "now"].join("."),
  ["new", "Date"].join(" "),
  ["process", "hrtime"].join("."),
  ["cpu", "Usage"].join(""),
  ["console", "time"].join("."),
];

/** The clock reads in `text`: each pattern found, with its 1-based line. */
function clockReads(text: string): { pattern: string; line: number }[] {
  const out: { pattern: string; line: number }[] = [];
  text.split("\n").forEach((l, i) => {
    for (const p of CLOCKS) if (l.includes(p)) out.push({ pattern: p, line: i + 1 });
  });
  return out;
}

const SOURCE = /\.(c|m)?(t|j)sx?$/;
const SKIP = new Set(["node_modules", "dist", ".printed"]);

/** Source files under `dir`, recursively (generated output and dependencies left out). */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(e.name)) continue;
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...sources(p));
    else if (e.isFile() && SOURCE.test(e.name)) out.push(p);
  }
  return out;
}

const testDirs = [
  join(root, "test"),
  ...readdirSync(join(root, "packages"), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(root, "packages", e.name, "test")),
].filter((d) => existsSync(d));

describe("no test reads a clock", () => {
  test("the scanner finds each clock read, with its line", () => {
    const sample = CLOCKS.map((p, i) => `const t${i} = ${p}(); // ${i}`).join("\n");
    expect(clockReads(sample)).toEqual(CLOCKS.map((pattern, i) => ({ pattern, line: i + 1 })));
    expect(clockReads("const steps = counters.loopIterations;\nexpect(steps).toBe(3);")).toEqual(
      [],
    );
  });

  test("no file under test/ or packages/*/test/ reads one", () => {
    const files = testDirs.flatMap(sources);
    // This file, the util helpers and the runtime-sim tests are among those scanned.
    expect(files).toContain(fileURLToPath(import.meta.url));
    expect(files.some((f) => f.includes(join("test", "util")))).toBe(true);
    expect(files.some((f) => f.includes(join("runtime-sim", "test")))).toBe(true);
    const found = files.flatMap((f) =>
      clockReads(readFileSync(f, "utf8")).map(
        ({ pattern, line }) => `${relative(root, f)}:${line}: ${pattern}`,
      ),
    );
    expect(found, "bound work by a count instead; put timings in bench/").toEqual([]);
  });
});
