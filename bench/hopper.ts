// Hopper GEMM on the GPU, side by side, at 4096³ and 8192³ for float16 and bfloat16 (C = A·Bᵀ,
// A M × K and B N × K row-major, 16-bit out, float32 accumulation):
//   tirx-ts examples/gemm_hopper.ts (TMA, wgmma, warp specialisation; compiled for sm_90a)
//   the hand-written CUDA kernel of the same design, bench/cuda/gemm_hopper.cu variant "a"
//     (bn256_bm128_st4_cl1_w0_pers_g8), and its fastest variants (2-CTA clusters with multicast)
//   cuBLAS cublasGemmEx (same layouts and dtypes, CUBLAS_COMPUTE_32F), from the same binary
//   peers, when python3 can import torch and triton: bench/peers.py --hopper (torch.matmul, Triton)
// The tirx-ts output is checked against float64 on 8 sampled rows before it is timed (the bound of
// examples/gemm_hopper.ts); times are medians of 20 CUDA-event-timed launches after 3 warm-ups.
// Usage: tsx -C source bench/hopper.ts [--sizes 4096,8192] [--iters 20] [--ctas 132] [--no-peers]
//   [--out results.md]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { cuda, cudaTensor, cudaZeros, compileCuda, timeLaunches } from "@tirx-ts/runtime-cuda";
import { makeGemmHopper } from "../examples/gemm_hopper.js";

const { values } = parseArgs({
  options: {
    sizes: { type: "string", default: "4096,8192" },
    iters: { type: "string", default: "20" },
    out: { type: "string" },
    "no-peers": { type: "boolean", default: false },
    /** CTAs of the persistent grid: the GPU's SM count (the H200 has 132). */
    ctas: { type: "string", default: "132" },
  },
});
const sizes = values.sizes!.split(",").map(Number);
const iters = Number(values.iters);
const repo = (p: string): string => fileURLToPath(new URL(`../${p}`, import.meta.url));

interface Row {
  dtype: string;
  size: number;
  variant: string;
  us: number;
  check: string;
}
const rows: Row[] = [];
const tflops = (s: number, us: number): number => (2 * s ** 3) / (us * 1e-6) / 1e12;

// ---- the hand kernel and cuBLAS (one binary, one process) ----
const work = mkdtempSync(join(tmpdir(), "hopper-"));
const exe = join(work, "gemm_hopper");
const build = spawnSync(
  "nvcc",
  [
    "-O3",
    "-std=c++17",
    "-gencode=arch=compute_90a,code=sm_90a",
    // Only the variants compared here (the full sweep is bench/results/hopper-gemm-2026-12-01.md).
    '-DHOPPER_VARIANTS=V("a", 256, 1, 4, 1, false, true, 8) V("d", 256, 1, 4, 2, true, true, 8) V("k", 256, 1, 4, 2, true, true, 4)',
    "-o",
    exe,
    repo("bench/cuda/gemm_hopper.cu"),
    "-lcublas",
    "-lcuda",
  ],
  { encoding: "utf8" },
);
if (build.status !== 0) {
  console.log(`hand kernel / cuBLAS: skipped, nvcc failed: ${build.stderr.slice(0, 400)}`);
} else {
  const out = execFileSync(exe, [sizes.join(","), String(iters), "a", "d", "k"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  for (const line of out.split("\n")) {
    if (!line.startsWith("{")) continue;
    const j = JSON.parse(line) as {
      dtype: string;
      m: number;
      variant: string;
      median_us: number;
      max_rel_err: number;
    };
    rows.push({
      dtype: j.dtype === "f16" ? "float16" : "bfloat16",
      size: j.m,
      variant: j.variant === "cublas" ? "cuBLAS" : `hand ${j.variant}`,
      us: j.median_us,
      check: `rel err ${j.max_rel_err.toExponential(1)}`,
    });
  }
}

// ---- tirx-ts ----
const dev = cuda(0);
const sms = Number(values.ctas);
for (const size of sizes) {
  for (const dtype of ["float16", "bfloat16"] as const) {
    const [m, n, k] = [size, size, size];
    let seed = 5;
    const rnd = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
    const ha = Float32Array.from({ length: m * k }, rnd);
    const hb = Float32Array.from({ length: n * k }, rnd);
    const A = cudaTensor(ha, { shape: [m, k], dtype, device: dev });
    const B = cudaTensor(hb, { shape: [n, k], dtype, device: dev });
    const C = cudaZeros([m, n], dtype, dev);
    const a = A.toArray() as Float32Array; // the values as stored (rounded to dtype)
    const b = B.toArray() as Float32Array;
    const fn = makeGemmHopper({ m, n, k, dtype, ctas: sms });
    const run = compileCuda(fn, { arch: "sm_90a", device: dev });
    run(A, B, C);
    const got = C.toArray() as Float32Array;
    const ulp = dtype === "float16" ? 2 ** -10 : 2 ** -7;
    let worst = 0;
    for (let s = 0; s < 8; s++) {
      const r = (s * 7919 + 3) % m;
      for (let q = 0; q < n; q++) {
        let acc = 0;
        let mag = 0;
        for (let p = 0; p < k; p++) {
          const x = a[r * k + p]! * b[q * k + p]!;
          acc += x;
          mag += Math.abs(x);
        }
        const half = acc !== 0 ? 2 ** Math.floor(Math.log2(Math.abs(acc))) * ulp * 0.5 : 0;
        const e = Math.abs(got[r * n + q]! - acc) / (mag * 2 ** -20 + half || 1);
        worst = Math.max(worst, Number.isNaN(e) ? Infinity : e);
      }
    }
    const t = timeLaunches(() => run.launchAsync(A, B, C), { iters, device: dev });
    rows.push({
      dtype,
      size,
      variant: "tirx-ts examples/gemm_hopper.ts",
      us: t.medianUs,
      check: `${worst <= 1 ? "ok" : "FAILED"}: worst ${worst.toFixed(3)} of 2^-20·Σ|a·b| + ½ ulp (8 rows)`,
    });
    for (const x of [A, B, C]) x.dispose();
  }
}

// ---- peers ----
if (!values["no-peers"]) {
  const p = spawnSync("python3", [repo("bench/peers.py"), "--hopper", sizes.join(",")], {
    encoding: "utf8",
  });
  if (p.status !== 0) console.log(`peers: skipped (${p.stderr.trim().split("\n").pop()})`);
  for (const line of (p.stdout ?? "").split("\n")) {
    if (!line.startsWith("{")) continue;
    const j = JSON.parse(line) as {
      variant: string;
      dtype: string;
      size: number;
      median_us: number;
      max_err: number;
    };
    rows.push({
      dtype: j.dtype,
      size: j.size,
      variant: j.variant,
      us: j.median_us,
      check: `rel Frobenius err ${j.max_err.toExponential(1)}`,
    });
  }
}

// ---- table ----
const lines: string[] = [
  "| dtype | size | variant | µs | TFLOP/s | × cuBLAS | × hand (same design) | check |",
  "|---|---|---|---|---|---|---|---|",
];
const summary: string[] = [];
for (const size of sizes) {
  for (const dtype of ["float16", "bfloat16"]) {
    const group = rows.filter((r) => r.size === size && r.dtype === dtype);
    const cu = group.find((r) => r.variant === "cuBLAS");
    const hand = group.find((r) => r.variant.startsWith("hand bn256_bm128_st4_cl1_w0_pers"));
    for (const r of group) {
      lines.push(
        `| ${dtype} | ${size}³ | ${r.variant} | ${r.us.toFixed(1)} | ${tflops(size, r.us).toFixed(1)} | ${cu ? (cu.us / r.us).toFixed(3) : ""} | ${hand ? (hand.us / r.us).toFixed(3) : ""} | ${r.check} |`,
      );
    }
    const ours = group.find((r) => r.variant.startsWith("tirx-ts"));
    if (ours && cu && hand) {
      summary.push(
        `gemm_hopper ${dtype} ${size}³: tirx-ts ${tflops(size, ours.us).toFixed(1)} TFLOP/s, ${(cu.us / ours.us).toFixed(3)}× cuBLAS (target 0.90), ${(hand.us / ours.us).toFixed(3)}× the hand kernel of the same design (target 0.98)`,
      );
    }
  }
}
const text = [`# Hopper GEMM, ${new Date().toISOString()}`, "", ...lines, "", ...summary, ""].join(
  "\n",
);
console.log(text);
if (values.out) writeFileSync(values.out, text);
