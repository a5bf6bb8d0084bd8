// Hopper GEMM on the GPU, side by side, at 4096³ and 8192³ for float16 and bfloat16 (C = A·Bᵀ,
// A M × K and B N × K row-major, 16-bit out, float32 accumulation):
//   tirx-ts examples/gemm_hopper.ts (TMA, wgmma, warp specialisation; compiled for sm_90a)
//   tirx-ts examples/tile/gemm_hopper.ts (the same design written with the tile layer)
//   the hand-written CUDA kernel of the same design, bench/cuda/gemm_hopper.cu variant "a"
//     (bn256_bm128_st4_cl1_w0_pers_g8) for cluster 1 and "c" (bn256_bm128_st4_cl2_w0_pers_g8)
//     for cluster 2, and its fastest variants "d", "k" (2-CTA clusters, wait_group 1)
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
import { decodeHost, encodeHost } from "@tirx-ts/core";
import { cuda, cudaEmpty, cudaZeros, compileCuda, timeLaunches } from "@tirx-ts/runtime-cuda";
import { makeGemmHopper } from "../examples/gemm_hopper.js";
import { makeTileGemmHopper } from "../examples/tile/gemm_hopper.js";

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
  const out = execFileSync(exe, [sizes.join(","), String(iters), "a", "c", "d", "k"], {
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
/** Every 16-bit pattern of `dtype` as a float (decoding C and the inputs' stored values). */
const decodeTable = (dtype: "float16" | "bfloat16"): Float32Array => {
  const all = new Uint16Array(65536).map((_, i) => i);
  return Float32Array.from(decodeHost(new Uint8Array(all.buffer), dtype) as ArrayLike<number>);
};
/**
 * `count` pseudo-random values j/256 - 2, j in [0, 1024) (exact in float16; bfloat16 rounds some,
 * and the values kept are the stored ones), as bits and as floats: a table lookup per element,
 * since converting tens of millions of floats one by one costs minutes.
 */
function random16(count: number, seed: number, dtype: "float16" | "bfloat16", table: Float32Array) {
  const steps = 1024;
  const vals = Float32Array.from({ length: steps }, (_, j) => j / 256 - 2);
  const tbits = new Uint16Array(encodeHost(vals, dtype, steps).buffer);
  const bits = new Uint16Array(count);
  const values = new Float32Array(count);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < count; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    const j = (x >>> 0) % steps;
    bits[i] = tbits[j]!;
    values[i] = table[tbits[j]!]!;
  }
  return { bits, values };
}
for (const size of sizes) {
  for (const dtype of ["float16", "bfloat16"] as const) {
    const [m, n, k] = [size, size, size];
    const table = decodeTable(dtype);
    const a = random16(m * k, 11, dtype, table);
    const b = random16(n * k, 12, dtype, table);
    const A = cudaEmpty([m, k], dtype, dev).copyFrom(new Uint8Array(a.bits.buffer));
    const B = cudaEmpty([n, k], dtype, dev).copyFrom(new Uint8Array(b.bits.buffer));
    const C = cudaZeros([m, n], dtype, dev);
    for (const [cluster, file, make] of [1, 2].flatMap((cl) =>
      (
        [
          ["examples/gemm_hopper.ts", makeGemmHopper],
          ["examples/tile/gemm_hopper.ts", makeTileGemmHopper],
        ] as const
      ).map(([f, mk]) => [cl as 1 | 2, f, mk] as const),
    )) {
      const fn = make({ m, n, k, dtype, ctas: sms, cluster });
      const run = compileCuda(fn, { arch: "sm_90a", device: dev });
      C.zero();
      run(A, B, C);
      const cb = C.toBytes();
      const got = new Uint16Array(cb.buffer, cb.byteOffset, m * n);
      const ulp = dtype === "float16" ? 2 ** -10 : 2 ** -7;
      let worst = 0;
      for (let s = 0; s < 8; s++) {
        const r = (s * 7919 + 3) % m;
        for (let q = 0; q < n; q++) {
          let acc = 0;
          let mag = 0;
          for (let p = 0; p < k; p++) {
            const x = a.values[r * k + p]! * b.values[q * k + p]!;
            acc += x;
            mag += Math.abs(x);
          }
          const half = acc !== 0 ? 2 ** Math.floor(Math.log2(Math.abs(acc))) * ulp * 0.5 : 0;
          const e = Math.abs(table[got[r * n + q]!]! - acc) / (mag * 2 ** -20 + half || 1);
          worst = Math.max(worst, Number.isNaN(e) ? Infinity : e);
        }
      }
      const t = timeLaunches(() => run.launchAsync(A, B, C), { iters, device: dev });
      const row: Row = {
        dtype,
        size,
        variant: `tirx-ts ${file}, cluster ${cluster}`,
        us: t.medianUs,
        check: `${worst <= 1 ? "ok" : "FAILED"}: worst ${worst.toFixed(3)} of 2^-20·Σ|a·b| + ½ ulp (8 rows)`,
      };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
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
    // The hand kernel of the same design: variant a (no cluster) or c (2-CTA cluster, multicast B).
    const handOf = (r: Row): Row | undefined =>
      group.find((h) =>
        h.variant.startsWith(
          r.variant.endsWith("cluster 2")
            ? "hand bn256_bm128_st4_cl2_w0_pers_g8"
            : "hand bn256_bm128_st4_cl1_w0_pers_g8",
        ),
      );
    for (const r of group) {
      const hand = r.variant.startsWith("tirx-ts") ? handOf(r) : undefined;
      lines.push(
        `| ${dtype} | ${size}³ | ${r.variant} | ${r.us.toFixed(1)} | ${tflops(size, r.us).toFixed(1)} | ${cu ? (cu.us / r.us).toFixed(3) : ""} | ${hand ? (hand.us / r.us).toFixed(3) : ""} | ${r.check} |`,
      );
    }
    const ours = group
      .filter((r) => r.variant.startsWith("tirx-ts"))
      .sort((x, y) => x.us - y.us)[0];
    const hand = ours ? handOf(ours) : undefined;
    // The tile layer's kernel against the instruction-level one of the same cluster size.
    for (const cl of [1, 2]) {
      const inst = group.find(
        (r) => r.variant === `tirx-ts examples/gemm_hopper.ts, cluster ${cl}`,
      );
      const tile = group.find(
        (r) => r.variant === `tirx-ts examples/tile/gemm_hopper.ts, cluster ${cl}`,
      );
      if (inst && tile) {
        summary.push(
          `tile gemm_hopper ${dtype} ${size}³ cluster ${cl}: ${(inst.us / tile.us).toFixed(3)}× examples/gemm_hopper.ts (target 0.98)`,
        );
      }
    }
    if (ours && cu && hand) {
      summary.push(
        `gemm_hopper ${dtype} ${size}³: ${ours.variant} ${tflops(size, ours.us).toFixed(1)} TFLOP/s, ${(cu.us / ours.us).toFixed(3)}× cuBLAS (target 0.90), ${(hand.us / ours.us).toFixed(3)}× the hand kernel of the same design (target 0.98)`,
      );
    }
  }
}
const text = [`# Hopper GEMM, ${new Date().toISOString()}`, "", ...lines, "", ...summary, ""].join(
  "\n",
);
console.log(text);
if (values.out) writeFileSync(values.out, text);
