// Every example runs on the simulated device with its numeric check, and with no hazard report
// (the simulator throws on the first one); run as a program, it prints what it checked:
// `<name> on the simulated device: <summary>`.
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { runExampleAsMain } from "./util/example-run.js";

const dir = fileURLToPath(new URL("../examples/", import.meta.url));
const examples = readdirSync(dir).filter((f) => f.endsWith(".ts"));
// The tile-layer twins (examples/tile/): the same checks, on kernels written with T.tile.
const tileExamples = readdirSync(`${dir}tile/`)
  .filter((f) => f.endsWith(".ts"))
  .map((f) => `tile/${f}`);

describe("examples on the simulated device", () => {
  test("there are examples", () => expect(examples.length).toBeGreaterThan(0));
  test.each([...examples, ...tileExamples])("%s", async (file) => {
    const name = file.replace(/\.ts$/, "").replace(/^tile\//, "");
    const { printed, result, exitCode } = await runExampleAsMain(`${dir}${file}`, name);
    expect(result.ok, result.summary).toBe(true);
    expect(exitCode).toBe(0);
    // The summary says what was compared, with counts or a bound.
    expect(result.summary).toMatch(/\d/);
    expect(printed).toBe(`${name} on the simulated device: ${result.summary}`);
  });
});
