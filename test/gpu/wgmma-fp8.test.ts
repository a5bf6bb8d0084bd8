// float8 wgmma (m64nNk32: e4m3/e5m2 × e4m3/e5m2, f32 and f16 accumulators, swizzles none/32B/64B)
// on the GPU (sm_90a) and on the simulated device, against the exact reference. The PTX ISA does
// not specify wgmma's accumulation order or internal precision, and Hopper's FP8 tensor cores
// keep fewer bits than float32 while they sum, so the GPU is judged within wgmmaFp8F32Bound
// (the terms aligned to the largest and truncated to 13 fraction bits there: 33·2^(E − 13) per
// k32 instruction, E the largest term's exponent, plus the float32 rounding) or, for f16 D,
// WGMMA_FP8_F16_BOUND (2^-10·(|c| + Σ|a·b|) plus half a float16 ulp of its result), summed over
// the chained instructions; the simulator (exact sum, one rounding per instruction) must equal
// the reference bit for bit. The run prints the worst GPU error as a fraction of the bound, the
// fraction bits the GPU's worst output implies, and how many outputs the GPU and the simulator
// agree on. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { WGMMA_FP8_F16_BOUND, wgmmaFp8F32Bound } from "@tirx-ts/core";
import { compile, cuda, cudaAvailable, sim, tensor, type DeviceLike } from "tirx-ts";
import {
  fp8GemmAsyncKernel,
  fp8Reference,
  fp8Values,
  fp8WgmmaKernel,
  type F8,
  type Fp8Wgmma,
} from "../util/wgmma-fp8-kernels.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/wgmma-fp8: skipped, no CUDA driver (${probe.reason})`);

const F8S: readonly F8[] = ["float8_e4m3", "float8_e5m2"];
const CASES: Fp8Wgmma[] = [];
for (const a of F8S) {
  for (const b of F8S) {
    for (const acc of ["float32", "float16"] as const) {
      CASES.push({ n: 64, a, b, acc, swizzle: 1 });
    }
  }
}
CASES.push(
  { n: 256, a: "float8_e4m3", b: "float8_e4m3", acc: "float32", swizzle: 2 },
  { n: 8, a: "float8_e5m2", b: "float8_e4m3", acc: "float16", swizzle: 0 },
  { n: 128, a: "float8_e4m3", b: "float8_e5m2", acc: "float32", swizzle: 0 },
);

/** Half an ulp of float16 at |x| (subnormal spacing below 2^-14). */
const halfUlpF16 = (x: number): number =>
  2 ** (Math.max(Math.floor(Math.log2(Math.abs(x) || 2 ** -14)), -14) - 11);

/** The bound of each output: the variant's bound summed over the k32 steps. */
function bounds(av: number[], bv: number[], o: Pick<Fp8Wgmma, "n" | "acc">, K: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < 64; i++) {
    for (let j = 0; j < o.n; j++) {
      let exact = 0;
      let bound = 0;
      for (let k0 = 0; k0 < K; k0 += 32) {
        const c = exact;
        let mag = Math.abs(exact);
        const products: number[] = [];
        for (let k = k0; k < k0 + 32; k++) {
          const p = av[i * K + k]! * bv[j * K + k]!;
          products.push(p);
          exact += p;
          mag += Math.abs(p);
        }
        bound +=
          o.acc === "float16"
            ? WGMMA_FP8_F16_BOUND.rel! * mag + halfUlpF16(exact)
            : wgmmaFp8F32Bound(c, products);
      }
      out.push(bound);
    }
  }
  return out;
}

function run(o: Fp8Wgmma, dev: DeviceLike, av: number[], bv: number[], K: number): number[] {
  const { fn } = fp8WgmmaKernel(o);
  const f = compile(fn, { target: "cuda", arch: "sm_90a" });
  using A = tensor(av, { shape: [64, K], dtype: o.a, device: dev });
  using B = tensor(bv, { shape: [o.n, K], dtype: o.b, device: dev });
  using D = tensor.zeros([64, o.n], o.acc, dev);
  f(A, B, D);
  return Array.from(D.toArray() as ArrayLike<number>);
}

describe.skipIf(!probe.ok)("wgmma float8: GPU (sm_90a), simulator, reference", () => {
  it.each(CASES.map((o) => [`${o.a}.${o.b}.${o.acc}.n${o.n}.sw${o.swizzle}`, o] as const))(
    "%s",
    (id, o) => {
      const K = o.swizzle === 2 ? 64 : 32;
      // f16 D: scale both operands (to at most 56 in magnitude) so that the sums stay inside
      // float16; the tensors round what is no longer a float8 value, and the reference reads
      // the values back from them.
      const down = (dt: F8): number =>
        o.acc === "float32" ? 1 : dt === "float8_e5m2" ? 2 ** -10 : 2 ** -3;
      const held = (vals: number[], dt: F8, shape: number[]): number[] => {
        using t = tensor(vals, { shape, dtype: dt, device: sim() });
        return Array.from(t.toArray() as ArrayLike<number>);
      };
      const av = held(
        fp8Values(o.a, 64 * K, 3).map((v) => v * down(o.a)),
        o.a,
        [64, K],
      );
      const bv = held(
        fp8Values(o.b, o.n * K, 5).map((v) => v * down(o.b)),
        o.b,
        [o.n, K],
      );
      const want = fp8Reference(av, bv, o.n, K, o.acc);
      const bound = bounds(av, bv, o, K);
      const gpu = run(o, cuda(0), av, bv, K);
      const onSim = run(o, sim(), av, bv, K);
      let worst = 0;
      let same = 0;
      const bad: string[] = [];
      gpu.forEach((g, e) => {
        const err = Math.abs(g - want[e]!);
        if (bound[e]! > 0) worst = Math.max(worst, err / bound[e]!);
        if (!(err <= bound[e]!) && bad.length < 5)
          bad.push(
            `D[${Math.floor(e / o.n)}][${e % o.n}] = ${g}, exact ${want[e]}, bound ${bound[e]}`,
          );
        if (Object.is(g, onSim[e])) same++;
      });
      console.log(
        `${id} on ${cuda(0).name}: worst error ${worst.toFixed(3)} of the bound${o.acc === "float32" && worst > 0 ? ` (as if ${(13 - Math.log2(worst)).toFixed(1)} fraction bits were kept)` : ""}, ${same}/${gpu.length} outputs bit-equal to the simulator's`,
      );
      expect(bad, bad.join("\n")).toEqual([]);
      expect(onSim).toEqual(want);
    },
  );

  it("T.tile.wg.gemm_async on float8 tiles (e4m3 × e5m2, 128B swizzle, four k32 steps)", () => {
    const n = 64;
    const { fn, K } = fp8GemmAsyncKernel(n, "float8_e4m3", "float8_e5m2", "128B");
    const av = fp8Values("float8_e4m3", 64 * K, 13);
    const bv = fp8Values("float8_e5m2", n * K, 17);
    const want = fp8Reference(av, bv, n, K, "float32");
    const bound = bounds(av, bv, { n, acc: "float32" }, K);
    const out = (dev: DeviceLike): number[] => {
      const f = compile(fn, { target: "cuda", arch: "sm_90a" });
      using A = tensor(av, { shape: [64, K], dtype: "float8_e4m3", device: dev });
      using B = tensor(bv, { shape: [n, K], dtype: "float8_e5m2", device: dev });
      using C = tensor.zeros([64, n], "float32", dev);
      f(A, B, C);
      return Array.from(C.toArray() as ArrayLike<number>);
    };
    const gpu = out(cuda(0));
    const bad = gpu.flatMap((g, e) =>
      Math.abs(g - want[e]!) <= bound[e]! ? [] : [`C[${e}] = ${g}, exact ${want[e]}`],
    );
    expect(bad.slice(0, 5)).toEqual([]);
    expect(out(sim())).toEqual(want);
  });
});
