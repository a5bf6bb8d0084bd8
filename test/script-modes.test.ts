// Both modes agree: every kernel of examples/script/ (script mode, parsed with ts-morph) builds
// IR structurally equal to its builder-mode twin in examples/, and the same PTX module text. Each
// script-mode example's runExample is the builder twin's check applied to the script-mode kernel
// (test/examples.test.ts runs every builder twin's check on the simulated device; structural
// equality makes a second simulator run of the same IR prove nothing more): its wiring is checked
// from the source, and one example (the cheapest) runs as a program end to end and prints what it
// checked.
import { readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { structuralEqual, verify, type PrimFunc } from "@tirx-ts/core";
import { emitPtx } from "@tirx-ts/codegen-ptx";
import { runExampleAsMain } from "./util/example-run.js";

const dir = fileURLToPath(new URL("../examples/", import.meta.url));
// The tile-layer examples pair examples/script/tile/ with examples/tile/.
const scripts = [
  ...readdirSync(`${dir}script/`).filter((f) => f.endsWith(".ts")),
  ...readdirSync(`${dir}script/tile/`)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `tile/${f}`),
];

const isPrimFunc = (x: unknown): x is PrimFunc =>
  typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";

/** PTX text without `//` comments and the lines they leave empty. */
const stripComments = (ptx: string): string =>
  ptx
    .split("\n")
    .map((l) => l.replace(/\s*\/\/.*$/, ""))
    .filter((l) => l.trim() !== "")
    .join("\n");

const kernels = async (file: string): Promise<[string, PrimFunc][]> =>
  Object.entries((await import(file)) as Record<string, unknown>).filter(
    (e): e is [string, PrimFunc] => isPrimFunc(e[1]),
  );

describe("script mode and builder mode agree", () => {
  test("every builder example has a script twin", () => {
    expect(scripts.sort()).toEqual(
      [
        ...readdirSync(dir).filter((f) => f.endsWith(".ts")),
        ...readdirSync(`${dir}tile/`)
          .filter((f) => f.endsWith(".ts"))
          .map((f) => `tile/${f}`),
      ].sort(),
    );
  });
  test.each(scripts)("%s", async (f) => {
    const script = await kernels(`${dir}script/${f}`);
    const builder = new Map(await kernels(`${dir}${f}`));
    expect(script.length).toBeGreaterThan(0);
    for (const [name, fn] of script) {
      const twin = builder.get(name);
      expect(twin, `examples/${f} exports ${name}`).toBeDefined();
      expect(structuralEqual(fn, twin!)).toBe(true);
      const json = JSON.stringify(fn);
      const arch = json.includes("wgmma")
        ? "sm_90a"
        : json.includes("cp.async.bulk")
          ? "sm_90"
          : "sm_80";
      // Comments name each statement's source line, which differs between the two files.
      const ptx = (k: PrimFunc): string => stripComments(emitPtx(verify(k), { arch }).text);
      expect(ptx(fn)).toBe(ptx(twin!));
    }
    // runExample hands one of the kernels just compared to its builder twin's check.
    const src = readFileSync(`${dir}script/${f}`, "utf8");
    const twinPath = f.startsWith("tile/") ? `../../${f}` : `../${f}`;
    expect(src).toContain(
      `import { runExample as check } from ${JSON.stringify(twinPath.replace(/\.ts$/, ".js"))};`,
    );
    const body =
      /export function runExample\(dev: DeviceLike = device\(\)\): ExampleResult \{\n {2}return check\(dev, (?:undefined, )?(\w+)\);\n\}/.exec(
        src,
      );
    expect(body, `examples/script/${f}: runExample returns check(dev, <kernel>)`).not.toBeNull();
    expect(script.map(([name]) => name)).toContain(body![1]);
    const label = `${f.replace(/\.ts$/, "").replace(/^tile\//, "")} (script mode)`;
    expect(src, `${f} runs itself under isMain`).toContain(
      `if (isMain(import.meta.url)) runAsMain(${JSON.stringify(label)}, runExample);`,
    );
  });
  // One script-mode example end to end as a program (the cheapest): runAsMain under isMain runs
  // runExample on the simulated device and prints what it checked.
  test("vector_add.ts runs as a program", async () => {
    const label = "vector_add (script mode)";
    const { printed, result, exitCode } = await runExampleAsMain(
      `${dir}script/vector_add.ts`,
      label,
    );
    expect(result.ok, result.summary).toBe(true);
    expect(exitCode).toBe(0);
    expect(result.summary).toMatch(/\d/);
    expect(printed).toBe(`${label} on the simulated device: ${result.summary}`);
  });
});
