// On a GPU: every legal cell of the cp.async matrix (test/conformance/matrix.ts, 288 kernels)
// runs on the device, and its output bytes equal the simulator's bit for bit (and the bytes the
// seed's rules predict). Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, test } from "vitest";
import { compile, cuda, cudaAvailable, sim } from "tirx-ts";
import {
  allCells,
  buildCell,
  cellName,
  expectedBytes,
  inputBytes,
  isLegal,
  runCell,
} from "../conformance/matrix.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/cp-async-matrix: skipped, no CUDA driver (${probe.reason})`);

const legal = allCells()
  .map((cell, index) => ({ cell, index }))
  .filter(({ cell }) => isLegal(cell));

describe.skipIf(!probe.ok)("cp.async matrix on the GPU, bit for bit against the simulator", () => {
  test("there are 288 legal cells", () => expect(legal.length).toBe(288));

  test.each(legal.map(({ cell, index }) => [cellName(cell), cell, index] as const))(
    "%s",
    (_name, cell, index) => {
      const run = compile(buildCell(cell, index), { target: "cuda" });
      const gpu = runCell(cell, cuda(0), index, run);
      const simulated = runCell(cell, sim(), index, run);
      const want = expectedBytes(cell, inputBytes(cell, index));
      expect(gpu.length).toBe(simulated.length);
      const diff = gpu.findIndex((v, k) => v !== simulated[k]);
      expect(
        diff,
        `${cellName(cell)}: GPU byte ${diff} is ${gpu[diff]}, simulator ${simulated[diff]}`,
      ).toBe(-1);
      const wrong = gpu.findIndex((v, k) => v !== want[k]);
      expect(
        wrong,
        `${cellName(cell)}: GPU byte ${wrong} is ${gpu[wrong]}, expected ${want[wrong]}`,
      ).toBe(-1);
    },
  );
});
