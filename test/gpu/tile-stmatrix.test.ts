// T.tile.warp.copy through stmatrix (registers → shared) and ldmatrix (shared → registers) on the
// GPU and on the simulated device: round trips of A, B and float16 C fragment tiles whose
// elements are all distinct must return the input exactly on both; likewise T.tile.wg.copy of
// float16 tiles in the wgmma accumulator layout (each warp's 16 rows by stmatrix), plain and
// 128B-swizzled, read back through a row-per-thread tile and through ldmatrix. Needs an sm_90 device (the
// kernels store by stmatrix); skipped, with the reason printed, where no CUDA driver loads or the
// device is older.
import { describe, expect, it } from "vitest";
import { T, compile, cuda, cudaAvailable, sim, tensor } from "tirx-ts";
import {
  distinct,
  distinctHalves,
  roundTrip,
  runWgRoundTrip,
  wgRoundTrip,
  WG_CASES,
  type Operand,
} from "../util/stmatrix-kernels.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/tile-stmatrix: skipped, no CUDA driver (${probe.reason})`);
const sm90 = probe.ok && cuda(0).computeCapability[0] * 10 + cuda(0).computeCapability[1] >= 90;
if (probe.ok && !sm90) console.log("test/gpu/tile-stmatrix: skipped, the device is below sm_90");

const CASES: readonly [Operand, number, number, boolean][] = [
  ["A", 32, 32, false],
  ["A", 16, 32, true],
  ["B", 32, 16, true],
  ["B", 16, 8, false],
  ["C", 32, 16, false],
  ["C", 16, 16, true],
];

function runOn(
  dev: ReturnType<typeof sim> | ReturnType<typeof cuda>,
  op: Operand,
  r: number,
  c: number,
  swz: boolean,
): number[] {
  const fn = roundTrip(op, r, c, `gpu_stm_${op}_${r}x${c}${swz ? "_swz" : ""}`, {
    arch: "sm_90",
    ...(swz ? { swizzle: T.SwizzleLayout(3, c >= 32 ? 2 : 1, 3) } : {}),
  });
  const k = compile(fn, { target: "cuda" });
  const X = tensor(distinct(r * c), { shape: [r, c], dtype: "float16", device: dev });
  const Y = tensor.zeros([r, c], "float16", dev);
  k(X, Y);
  const out = Array.from(Y.toArray() as Float32Array);
  X.dispose();
  Y.dispose();
  return out;
}

describe.skipIf(!sm90)("stmatrix / ldmatrix round trips: GPU, simulator, input", () => {
  it.each(CASES)("%s %i × %i (swizzled: %s)", (op, r, c, swz) => {
    const want = Array.from(distinct(r * c));
    expect(runOn(cuda(0), op, r, c, swz)).toEqual(want);
    expect(runOn(sim(), op, r, c, swz)).toEqual(want);
  });
});

describe.skipIf(!sm90)("T.tile.wg.copy of wgmma D tiles by stmatrix: GPU, simulator, input", () => {
  it.each(WG_CASES)("%i × %i (128B swizzle: %s, transposed: %s)", (r, c, swz, tr) => {
    const tag = `${r}x${c}${swz ? "_swz" : ""}${tr ? "_t" : ""}`;
    const fn = wgRoundTrip(r, c, `gpu_stm_wg_${tag}`, {
      arch: "sm_90",
      swizzle128: swz,
      transposed: tr,
    });
    const x = distinctHalves(r * c);
    const want = Array.from(x);
    for (const dev of [cuda(0), sim()]) {
      const got = runWgRoundTrip(fn, r, c, x, dev);
      expect(got.rows).toEqual(want);
      expect(got.ldmatrix).toEqual(want);
    }
  });
});
