// The pure parts of bench/gemm-sweep.ts on the CPU: options, the case list (the sweep
// and the epilogue pair at 8192³), FLOP counting, the deterministic inputs (exact in bfloat16
// and float8 e4m3) and their float64 reference, and the markdown table.
import { describe, expect, test } from "vitest";
import { wgmmaFp8F32Bound } from "@tirx-ts/core";
import {
  DEFAULT_SHAPES,
  FP8_SCALES,
  describeGemmCase,
  blockScaleValue,
  boundAt,
  formatGemmTable,
  gemmSweepCases,
  inputValue,
  itersFor,
  parseGemmArgs,
  referenceAt,
  tflops,
  type GemmCase,
} from "../bench/gemm-sweep-cases.js";

describe("bench/gemm-sweep options and cases", () => {
  test("the defaults are issue 24's sweep, bf16, fp8, fp8-fast and fp8-block, then bias + GELU beside plain at 8192³", () => {
    const o = parseGemmArgs([]);
    expect([o.ms, o.shapes, o.peers, o.dryRun]).toEqual([
      [16, 128, 1024, 8192],
      DEFAULT_SHAPES,
      true,
      false,
    ]);
    const cases = gemmSweepCases(o);
    // 4 × 6 per kind (bf16, fp8, fp8-fast, fp8-block); 8192³ bf16 is already in the sweep, so
    // the epilogue adds one case.
    expect(cases.length).toBe(4 * 24 + 1);
    expect(cases.at(-1)).toMatchObject({ kind: "bias-gelu", m: 8192, n: 8192, k: 8192 });
    expect(cases.filter((c) => c.kind === "fp8").map((c) => [c.m, c.n, c.k])[7]).toEqual([
      128, 14336, 4096,
    ]);
  });
  test("flags narrow the sweep; bad values are RangeErrors naming the flag", () => {
    const o = parseGemmArgs([
      "--ms",
      "16",
      "--shapes",
      "4096x14336",
      "--kinds",
      "fp8",
      "--iters",
      "5",
      "--no-peers",
      "--out",
      "x.md",
    ]);
    expect(gemmSweepCases(o)).toEqual([{ kind: "fp8", m: 16, n: 4096, k: 14336, iters: 5 }]);
    expect([o.peers, o.out, o.rounds]).toEqual([false, "x.md", 6]);
    expect(parseGemmArgs(["--rounds", "20"]).rounds).toBe(20);
    expect(() => parseGemmArgs(["--rounds", "5"])).toThrow(/--rounds takes an even count/);
    expect(() => parseGemmArgs(["--rounds", "0"])).toThrow(/--rounds takes positive integers/);
    expect(() => parseGemmArgs(["--shapes", "4096"])).toThrow(/--shapes takes \(n\)x\(k\) pairs/);
    expect(() => parseGemmArgs(["--ms", "0"])).toThrow(/--ms takes positive integers/);
    expect(() => parseGemmArgs(["--kinds", "int8"])).toThrow(
      /--kinds takes bf16, fp8, fp8-fast, fp8-block, bias-gelu/,
    );
    expect([o.tune, parseGemmArgs(["--tune"]).tune]).toEqual([false, true]);
  });
  test("--scale-load times each fp8-block case once per scale load, side by side; other kinds once", () => {
    const o = parseGemmArgs([
      ...["--ms", "8192", "--shapes", "8192x8192", "--kinds", "fp8,fp8-block"],
      ...["--scale-load", "global,tma", "--iters", "5"],
    ]);
    expect(o.scaleLoads).toEqual(["global", "tma"]);
    const cases = gemmSweepCases(o);
    expect(cases).toEqual([
      { kind: "fp8", m: 8192, n: 8192, k: 8192, iters: 5 },
      { kind: "fp8-block", m: 8192, n: 8192, k: 8192, iters: 5, scaleLoad: "global" },
      { kind: "fp8-block", m: 8192, n: 8192, k: 8192, iters: 5, scaleLoad: "tma" },
    ]);
    expect(cases.map((c, i) => describeGemmCase(c, i))).toEqual([
      "#0 fp8 m 8192 n 8192 k 8192 (5 iters)",
      "#1 fp8-block (global) m 8192 n 8192 k 8192 (5 iters)",
      "#2 fp8-block (tma) m 8192 n 8192 k 8192 (5 iters)",
    ]);
    // Without the flag: one fp8-block case, its configuration's own scale load.
    const plain = gemmSweepCases(parseGemmArgs(["--ms", "16", "--kinds", "fp8-block"]));
    expect(plain.every((c) => c.scaleLoad === undefined)).toBe(true);
    expect(parseGemmArgs(["--scale-load", "tma,tma"]).scaleLoads).toEqual(["tma"]);
    expect(parseGemmArgs(["--scale-load", "shared"]).scaleLoads).toEqual(["shared"]);
    expect(() => parseGemmArgs(["--scale-load", "smem"])).toThrow(
      /--scale-load takes global, tma, shared, got "smem"/,
    );
  });
  test("--configs times every case once per forced configuration, named in the kind column", () => {
    const o = parseGemmArgs([
      ...["--ms", "1024", "--shapes", "4096x4096", "--kinds", "fp8,fp8-block"],
      ...["--configs", "128x128x6o,64x192x5c2", "--scale-load", "tma", "--iters", "5"],
    ]);
    expect(o.configs).toEqual([
      { bm: 128, bn: 128, stages: 6, overlap: true },
      { bm: 64, bn: 192, stages: 5, cluster: 2 },
    ]);
    expect(gemmSweepCases(o).map((c, i) => describeGemmCase(c, i))).toEqual([
      "#0 fp8 (128x128x6o) m 1024 n 4096 k 4096 (5 iters)",
      "#1 fp8 (64x192x5c2) m 1024 n 4096 k 4096 (5 iters)",
      "#2 fp8-block (tma, 128x128x6o) m 1024 n 4096 k 4096 (5 iters)",
      "#3 fp8-block (tma, 64x192x5c2) m 1024 n 4096 k 4096 (5 iters)",
    ]);
    expect(() => parseGemmArgs(["--configs", "96x128x4"])).toThrow(
      /--configs takes bm x bn x stages \(o: overlap, c2: cluster 2\) like 128x128x6o or 128x192x5c2, got "96x128x4"/,
    );
  });
  test("FLOPs and iterations", () => {
    const c = { m: 8192, n: 8192, k: 8192 };
    expect(tflops(c, 1e6)).toBeCloseTo((2 * 8192 ** 3) / 1e12, 9);
    expect([itersFor(c), itersFor({ m: 16, n: 4096, k: 4096 })]).toEqual([10, 100]);
  });
});

describe("bench/gemm-sweep inputs and table", () => {
  test("inputs are exact in their dtypes; the reference sums their products", () => {
    const bf = Array.from({ length: 600 }, (_, i) => inputValue(i, 1, false));
    expect(bf.every((v) => v >= -1 && v < 1 && Number.isInteger(v * 128))).toBe(true);
    const f8 = Array.from({ length: 100 }, (_, i) => inputValue(i, 2, true));
    expect(f8.every((v) => v >= -1 && v < 1 && Number.isInteger(v * 8))).toBe(true);
    const c: GemmCase = { kind: "bf16", m: 2, n: 3, k: 5, iters: 1 };
    let dot = 0;
    for (let x = 0; x < 5; x++)
      dot += inputValue(1 * 5 + x, 1, false) * inputValue(2 * 5 + x, 2, false);
    expect(referenceAt(c, 1, 2).ref).toBe(dot);
  });
  test("fp8-block: exact power-of-two scales; the reference sums each K block's products scaled", () => {
    const c: GemmCase = { kind: "fp8-block", m: 3, n: 200, k: 300, iters: 1 };
    const kb = Math.ceil(c.k / 128);
    const [i, j] = [2, 150];
    let ref = 0;
    for (let b = 0; b < kb; b++) {
      let dot = 0;
      for (let x = b * 128; x < Math.min(c.k, (b + 1) * 128); x++)
        dot += inputValue(i * c.k + x, 1, true) * inputValue(j * c.k + x, 2, true);
      ref += blockScaleValue(i * kb + b, false) * blockScaleValue(1 * kb + b, true) * dot;
    }
    expect(referenceAt(c, i, j).ref).toBe(ref);
    const s = Array.from({ length: 50 }, (_, x) => blockScaleValue(x, x % 2 === 0));
    expect(s.every((v) => v >= 0.25 && v <= 4 && Number.isInteger(Math.log2(v)))).toBe(true);
  });
  test("float8: the bound adds the tensor cores' truncation, one k32 wgmma at a time", () => {
    // Per-tensor: one accumulator over all of K (k = 70: wgmmas of 32, 32 and 6 products).
    const c: GemmCase = { kind: "fp8", m: 2, n: 2, k: 70, iters: 1 };
    const p = Array.from(
      { length: 70 },
      (_, x) => inputValue(x, 1, true) * inputValue(70 + x, 2, true),
    );
    const sum = (a: number[]): number => a.reduce((x, y) => x + y, 0);
    const want =
      wgmmaFp8F32Bound(0, p.slice(0, 32)) +
      wgmmaFp8F32Bound(sum(p.slice(0, 32)), p.slice(32, 64)) +
      wgmmaFp8F32Bound(sum(p.slice(0, 64)), p.slice(64));
    const got = referenceAt(c, 0, 1);
    expect(got.tc).toBeCloseTo(want * FP8_SCALES[0] * FP8_SCALES[1], 12);
    expect(boundAt(c, got.ref, got.mag, got.tc)).toBeGreaterThan(boundAt(c, got.ref, got.mag));
    // fp8-block: the accumulator restarts at each 128-wide K block (k = 160: 4 wgmmas, then 1).
    const b: GemmCase = { kind: "fp8-block", m: 1, n: 1, k: 160, iters: 1 };
    const q = Array.from(
      { length: 160 },
      (_, x) => inputValue(x, 1, true) * inputValue(x, 2, true),
    );
    let tc = 0;
    for (const [lo, hi] of [
      [0, 128],
      [128, 160],
    ] as const) {
      const s0 = blockScaleValue(lo / 128, false) * blockScaleValue(lo / 128, true);
      for (let x = lo; x < hi; x += 32)
        tc += s0 * wgmmaFp8F32Bound(sum(q.slice(lo, x)), q.slice(x, Math.min(hi, x + 32)));
    }
    expect(referenceAt(b, 0, 0).tc).toBeCloseTo(tc, 12);
    expect(referenceAt({ kind: "bf16", m: 1, n: 1, k: 64, iters: 1 }, 0, 0).tc).toBe(0);
  });
  test("the table: times, TFLOP/s, the ratio peer / tirx-ts, the check and notes", () => {
    const cases: GemmCase[] = [
      { kind: "bf16", m: 1024, n: 4096, k: 4096, iters: 10 },
      { kind: "fp8", m: 16, n: 4096, k: 4096, iters: 10 },
    ];
    const text = formatGemmTable(
      cases,
      [
        { case: 0, variant: "tirx-ts", us: 100, err: 0.25 },
        { case: 0, variant: "torch.matmul", us: 110 },
        { case: 1, variant: "tirx-ts", note: "no CUDA driver" },
        { case: 1, variant: "torch._scaled_mm", us: 20 },
      ],
      { gpu: "H200", command: "tsx bench/gemm-sweep.ts", date: "2026-12-02", rounds: 6 },
    );
    expect(text.split("\n").filter((l) => /^\| \d/.test(l))).toEqual([
      "| 0 | bf16 | 1024 | 4096 | 4096 | 100.0 | 343.6 | torch.matmul | 110.0 | 312.4 | 1.10 | ok |",
      "| 1 | fp8 | 16 | 4096 | 4096 | – | – | torch._scaled_mm | 20.0 | 26.8 | – | – |",
    ]);
    expect(text).toMatch(/- #1 tirx-ts: no CUDA driver/);
  });
});

describe("bench/gemm-sweep --tune's table", () => {
  test("a config column when a row names its configuration", () => {
    const cases: GemmCase[] = [{ kind: "fp8-block", m: 128, n: 4096, k: 4096, iters: 10 }];
    const text = formatGemmTable(
      cases,
      [
        { case: 0, variant: "tirx-ts", us: 50, err: 0.5, config: "m128-n128 (tuned)" },
        { case: 0, variant: "tirx-ts fp8 per-tensor", us: 45 },
      ],
      { gpu: "H200", command: "tsx bench/gemm-sweep.ts --tune", date: "2026-12-02", rounds: 20 },
    );
    const line = text.split("\n").find((l) => /^\| 0/.test(l));
    expect(line).toMatch(
      /\| tirx-ts fp8 per-tensor \| 45\.0 \|.*\| 0\.90 \| ok \| m128-n128 \(tuned\) \|$/,
    );
    expect(text).toMatch(/\| check \| config \|/);
    expect(text).toMatch(/fp8-block and its per-tensor peer: 20 rounds alternating ABBA/);
    // A forced scale load is named in the kind column.
    const forced = formatGemmTable(
      [{ ...cases[0]!, scaleLoad: "tma" }],
      [{ case: 0, variant: "tirx-ts", us: 50, err: 0.5 }],
      {
        gpu: "H200",
        command: "tsx bench/gemm-sweep.ts --scale-load tma",
        date: "2026-12-03",
        rounds: 6,
      },
    );
    expect(forced).toMatch(/^\| 0 \| fp8-block \(tma\) \| 128 \| 4096 \| 4096 \| 50\.0 \|/m);
  });
});
