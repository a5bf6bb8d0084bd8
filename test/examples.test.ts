// Every example runs on the simulated device with its numeric check, and with no hazard report
// (the simulator throws on the first one).
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { sim, type ExampleResult } from "tirx-ts";

const dir = fileURLToPath(new URL("../examples/", import.meta.url));
const examples = readdirSync(dir).filter((f) => f.endsWith(".ts"));

describe("examples on the simulated device", () => {
  test("there are examples", () => expect(examples.length).toBeGreaterThan(0));
  test.each(examples)("%s", async (file) => {
    const mod = (await import(`${dir}${file}`)) as { runExample?: (d: unknown) => ExampleResult };
    expect(typeof mod.runExample, `${file} must export runExample(device)`).toBe("function");
    const r = mod.runExample!(sim());
    expect(r.ok, r.summary).toBe(true);
  });
});
