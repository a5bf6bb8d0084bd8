// The tensor-core differential cases (test/diff/mma-cases.ts) on the GPU and on the simulated
// device, each against the independent reference: ldmatrix/stmatrix (from/to a 128B-swizzled
// tile filled by cp.async) and integer mma (every s8/u8, s4/u4 and b1 form, with and without
// .satfinite) must be bit-exact on both and agree with each other; float mma must lie within its
// form's documented bound of the exact D = A·B + C on both (MMA_F32_BOUND; f16 C, float8 and f64
// forms: core's mmaFormBound), and the run prints
// how many elements equal the once-rounded exact value on each (the PTX ISA does not specify
// the accumulation order or internal precision). T.tile.warp.gemm with a float16 C
// (mma.sync ... .f16.f16.f16.f16, test/util/f16acc-kernels.ts) runs the same inputs on both,
// each within MMA_F16_BOUND of float64 host math per instruction. Skipped, with the reason
// printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { mmaCases, runMmaCase } from "../diff/mma-cases.js";
import { mmaFormCases } from "../diff/mma-form-cases.js";
import { f16AccGemm, judgeF16Acc, runF16AccGemm } from "../util/f16acc-kernels.js";
import { uniformFrom } from "../util/lcg.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/mma-differential: skipped, no CUDA driver (${probe.reason})`);

describe.skipIf(!probe.ok)("tensor-core differential: GPU, simulator, reference", () => {
  // The moves and the first mma cases, then one case per mma.sync form of MMA_FORMS (f16, bf16,
  // tf32, f64, s8/u8, s4/u4, b1 and float8 inputs; test/diff/mma-form-cases.ts).
  const cases = probe.ok ? [...mmaCases(), ...mmaFormCases()] : [];
  it.each(cases.map((c) => [c.id, c] as const))("%s", (_, c) => {
    const gpuOut = runMmaCase(c, cuda(0));
    const simOut = runMmaCase(c, sim());
    const g = c.judge(gpuOut);
    const s = c.judge(simOut);
    let same = 0;
    gpuOut.forEach((v, i) => {
      const w = simOut[i]!;
      if (Object.is(v, w) || (v !== v && w !== w)) same++;
    });
    console.log(
      `${c.id} on ${cuda(0).name}: ${g.exact}/${g.checked} equal to the reference (simulator ${s.exact}), worst ${g.worst.toFixed(3)} of the bound (simulator ${s.worst.toFixed(3)}), inexact warps [${g.inexactWarps.join(", ")}], ${same}/${gpuOut.length} outputs bit-equal to the simulator's`,
    );
    expect(g.bad, g.bad.join("\n")).toEqual([]);
    expect(s.bad, s.bad.join("\n")).toEqual([]);
    if (c.exactness === "bit-exact") {
      expect(g.exact).toBe(g.checked);
      expect(same).toBe(gpuOut.length);
    }
  });
});

describe.skipIf(!probe.ok)("examples/gemm_mma.ts on the GPU at a shape with tails", () => {
  // 200 × 136 × 72: no dimension a multiple of its tile (cp.async tail path for A and B);
  // 200 × 130 × 41: N and K not multiples of 8 either (element tail path for A and B).
  it.each([
    [200, 136, 72],
    [200, 130, 41],
  ])("%i × %i × %i matches float64 within 2^-20 · Σ|a·b|", async (m, n, k) => {
    const { makeGemm } = await import("../../examples/gemm_mma.js");
    const { compile, tensor } = await import("tirx-ts");
    const dev = cuda(0);
    const rnd = uniformFrom(5);
    const a = tensor(Float32Array.from({ length: m * k }, rnd), {
      shape: [m, k],
      dtype: "float16",
      device: dev,
    });
    const b = tensor(Float32Array.from({ length: k * n }, rnd), {
      shape: [k, n],
      dtype: "float16",
      device: dev,
    });
    const c = tensor.zeros([m, n], "float32", dev);
    compile(makeGemm(m, n, k), { target: "cuda" })(a, b, c);
    const av = a.toArray() as Float32Array;
    const bv = b.toArray() as Float32Array;
    const got = c.toArray() as Float32Array;
    let worst = 0;
    for (let i = 0; i < m; i++) {
      for (let j = 0; j < n; j++) {
        let s = 0;
        let mag = 0;
        for (let q = 0; q < k; q++) {
          s += av[i * k + q]! * bv[q * n + j]!;
          mag += Math.abs(av[i * k + q]! * bv[q * n + j]!);
        }
        worst = Math.max(worst, Math.abs(got[i * n + j]! - s) / (mag * 2 ** -20));
      }
    }
    console.log(
      `gemm_mma ${m}×${n}×${k} on ${dev.name}: worst error ${worst.toFixed(3)} of 2^-20·Σ|a·b|`,
    );
    for (const x of [a, b, c]) x.dispose();
    expect(worst).toBeLessThanOrEqual(1);
  });
});

describe.skipIf(!probe.ok)("T.tile.warp.gemm into a float16 C: GPU and simulator", () => {
  // The simulator test's shapes (test/tile-gemm-f16acc.test.ts): one atom, 2 × 2 × 2 atoms, and
  // an odd grid of 3 × 3 × 3; A, B and the initial C uniform in [-1, 1), the same on both.
  it.each([
    [16, 8, 16, 11],
    [32, 16, 32, 23],
    [48, 24, 48, 37],
  ])("%i × %i × %i within MMA_F16_BOUND of float64 on both", (m, n, k, seed) => {
    const fn = f16AccGemm(m, n, k);
    const g = runF16AccGemm(fn, m, n, k, cuda(0), seed);
    const s = runF16AccGemm(fn, m, n, k, sim(), seed);
    expect(Array.from(g.a)).toEqual(Array.from(s.a));
    expect(Array.from(g.b)).toEqual(Array.from(s.b));
    expect(Array.from(g.c0)).toEqual(Array.from(s.c0));
    const gv = judgeF16Acc(g, m, n, k);
    const sv = judgeF16Acc(s, m, n, k);
    const same = g.got.reduce((t, v, i) => t + (Object.is(v, s.got[i]) ? 1 : 0), 0);
    console.log(
      `tile gemm f16 C ${m}×${n}×${k} on ${cuda(0).name}: ${gv.exact}/${gv.checked} equal to float64 rounded once (simulator ${sv.exact}), worst ${gv.worst.toFixed(3)} of the bound (simulator ${sv.worst.toFixed(3)}), ${same}/${g.got.length} outputs bit-equal to the simulator's`,
    );
    expect(gv.bad, gv.bad.join("\n")).toEqual([]);
    expect(sv.bad, sv.bad.join("\n")).toEqual([]);
  });
});
