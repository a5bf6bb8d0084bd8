// Split copies on the GPU (sm_90a): a TMA load cut into boxes of two tensor maps (300 float32
// columns as 256 + 44; 264 128B-swizzled rows as 256 + 8) and cp.async tiles at offsets that
// allow only 8- or 4-byte .ca chunks equal the host copy and the simulator's output, element for
// element. Skipped without a CUDA driver.
import { describe, expect, it } from "vitest";
import type { PrimFunc } from "@tirx-ts/core";
import { compileCuda, cudaAvailable, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import { compile, sim, tensor } from "tirx-ts";
import { cpKernel, GC, GR, gOf, kernel, type Case } from "../util/split-copy-cases.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/copy-async-split: skipped, ${available.reason}`);
const gpu = available.ok ? describe : describe.skip;

type DT = "float16" | "float32";

/** `fn(...scalars, G, O)` on cuda(0) and on the simulator: both outputs. */
function both(
  fn: PrimFunc,
  scalars: number[],
  g: number[],
  gShape: number[],
  oShape: number[],
  dt: DT | Case["dt"],
) {
  const run = compileCuda(fn, { arch: "sm_90a" });
  const G = cudaTensor(g, { shape: gShape, dtype: dt });
  const O = cudaZeros(oShape, dt);
  run(...scalars, G, O);
  const onGpu = Array.from(O.toArray() as ArrayLike<number>);
  G.dispose();
  O.dispose();
  const dev = sim();
  const Gs = tensor(Float32Array.from(g), { shape: gShape, dtype: dt, device: dev });
  const Os = tensor.zeros(oShape, dt, dev);
  compile(fn)(...scalars, Gs, Os);
  return { onGpu, onSim: Array.from(Os.toArray() as ArrayLike<number>) };
}

const TMA: Case[] = [
  { R: 1, C: 300, P: 300, gR: 1, gC: 320, r0: 0, c0: 8, dt: "float32", sw: "none" },
  { R: 3, C: 300, P: 320, gR: 3, gC: 320, r0: 0, c0: 8, dt: "float32", sw: "none" },
  { R: 264, C: 64, P: 64, gR: 264, gC: 64, r0: 0, c0: 0, dt: "float16", sw: "128B" },
];

gpu("split copies on the GPU", () => {
  for (const c of TMA) {
    it(`TMA ${c.R} × ${c.C} ${c.dt} (${c.sw}): GPU equals the host copy and the simulator`, () => {
      const g = gOf(c);
      const { onGpu, onSim } = both(kernel(c), [], g, [c.gR, c.gC], [c.R, c.C], c.dt);
      const want = Array.from(
        { length: c.R * c.C },
        (_, k) => g[(c.r0 + Math.floor(k / c.C)) * c.gC + c.c0 + (k % c.C)]!,
      );
      expect(onGpu).toEqual(want);
      expect(onSim).toEqual(want);
    });
  }
  for (const [c0, dt] of [
    [4, "float16"],
    [2, "float16"],
    [1, "float32"],
  ] as const) {
    it(`cp.async .ca: a ${dt} tile at column ${c0}: GPU equals the host copy and the simulator`, () => {
      const g = Array.from({ length: GR * GC }, (_, i) => i + 1);
      const { onGpu, onSim } = both(cpKernel(5, 24, 3, c0, dt), [0], g, [GR, GC], [5, 24], dt);
      const want = Array.from(
        { length: 5 * 24 },
        (_, k) => g[(3 + Math.floor(k / 24)) * GC + c0 + (k % 24)]!,
      );
      expect(onGpu).toEqual(want);
      expect(onSim).toEqual(want);
    });
  }
});
