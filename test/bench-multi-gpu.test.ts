// bench/multi-gpu.ts on the CPU: its options, rows and bus bandwidth; its tirx-ts kernels
// (one-shot and two-shot all-reduce, the block gather) on simulated GPUs against the host's exact
// results, a partial last grid-stride step included; the dry run (every row's kernels built for
// 2 GPUs, shards padded to 2 MiB, the environment without NVLink SHARP) and the PTX of every
// kernel it builds assembled by ptxas.
import { afterEach, describe, expect, test, vi } from "vitest";
import { bf16Bits, bf16Value, verify } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { MULTI_GPU_ENV } from "@tirx-ts/runtime-cuda";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import {
  allreduceBusBw,
  allreduceCtas,
  allreduceSum,
  allreduceValue,
  caseKernels,
  formatMultiGpuTable,
  multiGpuPlan,
  parseMultiGpuArgs,
} from "../bench/multi-gpu-cases.js";
import {
  allreduceShard,
  gatherShard,
  makeGatherBlock,
  makeOneShot,
  makeTwoShot,
} from "../bench/multi-gpu-kernels.js";
import { benchEnv, main } from "../bench/multi-gpu.js";
import { assembleLater } from "./util/ptxas-deferred.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("bench/multi-gpu options and rows", () => {
  test("defaults: 2 GPUs, 50 iterations after 5; flags and their errors", () => {
    expect(parseMultiGpuArgs([])).toMatchObject({ gpus: 2, dryRun: false, iters: 50, warmup: 5 });
    expect(
      parseMultiGpuArgs([
        "--gpus",
        "4",
        "--dry-run",
        "--ctas",
        "64",
        "--no-torch",
        "--out",
        "x.md",
      ]),
    ).toMatchObject({ gpus: 4, dryRun: true, ctas: 64, noTorch: true, out: "x.md" });
    expect(() => parseMultiGpuArgs(["--gpus", "1"])).toThrow(/--gpus takes an integer in 2..8/);
    expect(() => parseMultiGpuArgs(["--gpu", "2"])).toThrow(/unknown option --gpu/);
  });

  test("the rows: all-reduce of bf16 at 256 KiB .. 4 MiB and 256 MiB, then all-gather + GEMM at 8192", () => {
    const plan = multiGpuPlan(2);
    expect(plan.map((c) => [c.kind, c.size])).toEqual([
      ["allreduce", 256 << 10],
      ["allreduce", 512 << 10],
      ["allreduce", 1 << 20],
      ["allreduce", 2 << 20],
      ["allreduce", 4 << 20],
      ["allreduce", 256 << 20],
      ["allgather_gemm", 8192],
    ]);
    expect(plan[0]!.peer).toMatch(/ncclAllReduce/);
    expect(plan[6]!.peer).toMatch(/multi_gpu_peers\.py/);
    expect(allreduceCtas(131072, 132)).toBe(32);
    expect(allreduceCtas(1 << 27, 132)).toBe(132);
  });

  test("bus bandwidth is nccl-tests' 2(P − 1)/P · bytes / time; the table", () => {
    expect(allreduceBusBw(1 << 20, 2, 10)).toBeCloseTo(104.8576, 4);
    expect(allreduceBusBw(1 << 20, 4, 10)).toBeCloseTo(157.2864, 4);
    const c = multiGpuPlan(2)[2]!;
    const t = formatMultiGpuTable(
      [{ case: c, tirxUs: { "one-shot": 10, "two-shot": 20 }, peerUs: 15, correct: true }],
      2,
    );
    expect(t.split("\n").slice(2)).toEqual([
      "| allreduce | 1 MiB | one-shot | 10.0 | 104.9 | 15.0 | 69.9 | 1.50 | yes |",
      "| allreduce | 1 MiB | two-shot | 20.0 | 52.4 | 15.0 | 69.9 | 0.75 | yes |",
    ]);
  });
});

describe("bench/multi-gpu's kernels on simulated GPUs", () => {
  // 9216 elements over 2 CTAs of 512 threads: the second grid-stride step is partial.
  const s = { pes: 2, n: 9216, ctas: 2, granularity: 1 };
  const input = () =>
    simTensor(
      Array.from({ length: 2 * s.n }, (_, k) => allreduceValue(Math.floor(k / s.n), k % s.n)),
      { shape: [2, allreduceShard(s)], dtype: "bfloat16" },
    );
  const want = Array.from({ length: s.n }, (_, i) => bf16Value(bf16Bits(allreduceSum(2, i))));

  test("one-shot: the sum of both PEs' inputs, on one simulated PE; no report", () => {
    // Out is each PE's own tensor, which simulated PEs would share: one PE sums both rows.
    const out = simZeros([s.n], "bfloat16");
    const r = runSim(verify(makeOneShot(s)), [input(), out], { pes: 1, hazards: "collect" });
    expect(r.reports.map(String)).toEqual([]);
    expect(Array.from(out.toArray() as ArrayLike<number>)).toEqual(want);
  });

  test("two-shot: each PE's sum of its chunk lands in every PE's result; no report", () => {
    const Y = simZeros([2, allreduceShard(s)], "bfloat16");
    const r = runSim(verify(makeTwoShot(s)), [input(), Y], { pes: 2, hazards: "collect" });
    expect(r.reports.map(String)).toEqual([]);
    const got = Array.from(Y.toArray() as ArrayLike<number>);
    expect(got.slice(0, s.n)).toEqual(want);
    expect(got.slice(s.n, 2 * s.n)).toEqual(want);
  });

  test("block gather: each PE pulls the other's row block into its copy", () => {
    const g = { pes: 2, m: 16, k: 64, ctas: 1, granularity: 1 };
    const blk = (g.m / 2) * g.k;
    const shard = gatherShard(g);
    // PE p holds its own block (values p·1000 + i), the rest NaN.
    const a = Array.from({ length: 2 * shard }, (_, x) => {
      const p = Math.floor(x / shard);
      const i = x % shard;
      return Math.floor(i / blk) === p ? p * 1000 + (i % blk) : NaN;
    });
    const A = simTensor(a, { shape: [2, shard], dtype: "bfloat16" });
    const fn = verify(makeGatherBlock(g));
    // The simulator's PEs share a scalar: src 1 (PE 0 pulls, PE 1 has it), then src 0.
    for (const src of [1, 0]) {
      const r = runSim(fn, [A, src], { pes: 2, hazards: "collect" });
      expect(r.reports.map(String)).toEqual([]);
    }
    const got = Array.from(A.toArray() as ArrayLike<number>);
    const bits = (v: number): number => bf16Value(bf16Bits(v));
    for (const p of [0, 1]) {
      for (const b of [0, 1]) {
        expect(got.slice(p * shard + b * blk, p * shard + (b + 1) * blk)).toEqual(
          Array.from({ length: blk }, (_, i) => bits(b * 1000 + i)),
        );
      }
    }
  });
});

describe("bench/multi-gpu --dry-run", () => {
  test("prints the plan with every kernel built for 2 GPUs, sets the environment, touches no GPU; the PTX assembles", () => {
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((x: unknown) => void lines.push(String(x)));
    for (const k of Object.keys(MULTI_GPU_ENV)) delete process.env[k];
    expect(main(["--dry-run", "--gpus", "2"])).toBe(0);
    expect(lines[0]).toBe(
      "multi-GPU bench on 2 GPUs (environment: NCCL_NVLS_ENABLE=0 NVSHMEM_DISABLE_NVLS=1 TORCH_SYMM_MEM_DISABLE_MULTICAST=1)",
    );
    for (const [k, v] of Object.entries(MULTI_GPU_ENV)) {
      expect(process.env[k]).toBe(v);
      expect(benchEnv()[k]).toBe(v);
    }
    const kernels = lines.filter((l) => l.startsWith("  tirx-ts kernel "));
    expect(kernels.map((l) => l.split(":")[0]!.slice(17))).toEqual([
      ...[131072, 262144, 524288, 1048576, 2097152, 134217728].flatMap((n) => [
        `allreduce_one_shot_2_${n}`,
        `allreduce_two_shot_2_${n}`,
      ]),
      "gather_block_2_8192_8192",
      "gemm",
    ]);
    expect(lines.at(-2)).toMatch(
      /torch\.distributed\.run --standalone --nproc-per-node=2 .*multi_gpu_peers\.py/,
    );
    expect(lines.at(-1)).toBe("dry run: nothing was launched");
    for (const c of multiGpuPlan(2)) {
      for (const fn of caseKernels(c, 2, 132)) {
        assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", fn.name);
      }
    }
  });
});
