// On a GPU: every example passes its check on the GPU, and the GPU's output bytes equal the
// simulated device's bit for bit (examples with approximate ops: both pass their float64 check).
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { cuda, cudaAvailable, sim, type ExampleResult } from "tirx-ts";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/examples: skipped, no CUDA driver (${probe.reason})`);

const dir = fileURLToPath(new URL("../../examples/", import.meta.url));
const examples = [
  ...readdirSync(dir).filter((f) => f.endsWith(".ts")),
  // The tile-layer twins (examples/tile/).
  ...readdirSync(`${dir}tile/`)
    .filter((f) => f.endsWith(".ts"))
    .map((f) => `tile/${f}`),
];

describe.skipIf(!probe.ok)("examples on the GPU, bit for bit against the simulator", () => {
  test.each(examples)("%s", async (file) => {
    const mod = (await import(`${dir}${file}`)) as { runExample: (d: unknown) => ExampleResult };
    const gpu = mod.runExample(cuda(0));
    console.log(`${file} on ${cuda(0).name}: ${gpu.summary}`);
    expect(gpu.ok, gpu.summary).toBe(true);
    const simulated = mod.runExample(sim());
    expect(gpu.outputs.length).toBe(simulated.outputs.length);
    if (gpu.approximate) {
      // Approximate ops: both devices pass the example's float64 check instead.
      expect(simulated.ok, simulated.summary).toBe(true);
      const differ = gpu.outputs.reduce(
        (n, b, i) => n + b.filter((v, k) => v !== simulated.outputs[i]![k]).length,
        0,
      );
      console.log(
        `${file}: GPU and simulator both pass the float64 check; ${differ} output bytes differ (${gpu.approximate})`,
      );
      return;
    }
    gpu.outputs.forEach((bytes, i) => {
      const other = simulated.outputs[i]!;
      expect(bytes.length).toBe(other.length);
      const firstDiff = bytes.findIndex((v, k) => v !== other[k]);
      expect(firstDiff, `${file} output ${i} differs from the simulator at byte ${firstDiff}`).toBe(
        -1,
      );
    });
    console.log(
      `${file}: GPU output equals simulator output bit for bit (${gpu.outputs.map((o) => o.length).join(", ")} bytes)`,
    );
  });
});
