// gemm()'s tuning on the simulated device with an injected measure (no clock): the candidates
// (GEMM_CONFIGS' rows, split-K pruned where K is short), the injected fastest chosen and used,
// the cache file read by a second process that then times nothing and, without `tune`, takes
// the cached choice; a shipped default taken without timing; TIRX_TUNE=1 turning tuning on.
import { describe, expect, test } from "vitest";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { gemm, sim, tensor, type GemmConfig } from "tirx-ts";
import {
  GEMM_TUNED_DEFAULTS,
  gemmChoice,
  gemmRowsBucket,
  gemmTuneCandidates,
  gemmTuneKey,
  makeGemm,
} from "@tirx-ts/kernels";
import { tuneKeyText } from "@tirx-ts/runtime";
import { randomTensor } from "./util/gemm-reference.js";
import { uniformFrom } from "./util/lcg.js";
import { errorOf } from "./util/error-of.js";
import { DEFAULT_SHAPES } from "../bench/gemm-sweep-cases.js";
import { repoRoot, tuneChildDir } from "./util/tune-child-dir.js";

const dev = sim();
const root = repoRoot;
// A fresh folder in the repository for the child processes; ptxas off while the file runs.
const base = tuneChildDir("gemm-tune");

/** The injected measure: µs by config, 128 × 128 tiles fastest. */
const fakeUs = (c: GemmConfig): number => (c.bm === 128 && c.bn === 128 ? 1 : 2 + c.bn / 64);
const FASTEST: GemmConfig = { bm: 128, bn: 128, stages: 6 };
const SHAPE = { m: 20, n: 72, k: 40 } as const;
/** A child process's first lines: SHAPE's bfloat16 operands a [m, k] and b [n, k] on the simulator. */
const CHILD_HEAD = `import { sim, tensor } from "tirx-ts";
import { gemmChoice } from "@tirx-ts/kernels";
const dev = sim();
const a = tensor.zeros([${SHAPE.m}, ${SHAPE.k}], "bfloat16", dev);
const b = tensor.zeros([${SHAPE.n}, ${SHAPE.k}], "bfloat16", dev);
`;

describe("gemm() tuned on the simulator with an injected measure", () => {
  test("the candidates: GEMM_CONFIGS' rows, pickGemmConfig's first, split-K only for long K", () => {
    const short = gemmTuneCandidates({ m: 64, n: 256, k: 64, inBytes: 2 });
    expect(short.some((c) => (c.splitK ?? 1) > 1)).toBe(false);
    expect(short[0]).toEqual({ bm: 64, bn: 128, stages: 6 });
    const long = gemmTuneCandidates({ m: 64, n: 256, k: 8192, inBytes: 2 });
    expect(long[0]).toEqual({ bm: 64, bn: 128, stages: 6, splitK: 4 });
    expect(new Set(long.map((c) => JSON.stringify(c))).size).toBe(long.length);
    expect(gemmRowsBucket(20)).toBe(64);
    expect(gemmRowsBucket(3000)).toBe(4096);
  });

  const cacheRoot = join(base, "cache");
  const cacheDir = join(cacheRoot, "autotune");
  const rnd = uniformFrom(3);
  const a = randomTensor([SHAPE.m, SHAPE.k], "bfloat16", dev, rnd);
  const b = randomTensor([SHAPE.n, SHAPE.k], "bfloat16", dev, rnd);

  test("tune picks the injected fastest and writes the cache file", () => {
    let measured = 0;
    const tune = {
      cacheDir,
      progress: false as const,
      measure: (c: GemmConfig) => (measured++, fakeUs(c)),
    };
    const choice = gemmChoice(a, b, { transB: true, tune });
    expect(choice.source).toBe("tuned");
    expect(choice.config).toEqual(FASTEST);
    expect(measured).toBe(choice.candidates!.length);
    expect(choice.measurements).toBe(measured);
    expect(choice.key).toBe(
      tuneKeyText(gemmTuneKey({ ...SHAPE, dtype: "bfloat16", transB: true })),
    );
    // Again (as gemm() would ask): this process's answer, nothing timed again. (The kernel of
    // each configuration is checked against float64 in test/kernels-gemm-configs.)
    const again = gemmChoice(a, b, { transB: true, tune });
    expect([again.config, again.measurements]).toEqual([FASTEST, 0]);
    expect(measured).toBe(choice.candidates!.length);
  });

  test("a second process reads the cache: no measurement, and untuned calls take it too", () => {
    const child = join(base, "child.mjs");
    writeFileSync(
      child,
      `${CHILD_HEAD}const plain = gemmChoice(a, b, { transB: true });
let measured = 0;
const tuned = gemmChoice(a, b, { transB: true, tune: { progress: false, measure: () => (measured++, 1) } });
process.stdout.write(JSON.stringify({ measured, plain, tuned }));
`,
    );
    const p = spawnSync(process.execPath, [child], {
      cwd: root,
      encoding: "utf8",
      env: { ...process.env, TIRX_CACHE_DIR: cacheRoot, TIRX_TUNE: "", TIRX_PTXAS: "off" },
    });
    expect(p.status, p.stderr).toBe(0);
    const got = JSON.parse(p.stdout) as {
      measured: number;
      plain: { source: string; config: GemmConfig };
      tuned: { source: string; config: GemmConfig; measurements: number };
    };
    expect(got.plain.source).toBe("cache");
    expect(got.plain.config).toEqual(FASTEST);
    expect(got.measured).toBe(0);
    expect(got.tuned.measurements).toBe(0);
    expect(got.tuned.source).toBe("cache");
    expect(got.tuned.config).toEqual(FASTEST);
  });

  test("a cached config the kernel no longer takes is skipped: the call takes what it would without the cache", () => {
    const [file] = readdirSync(cacheDir).filter(
      (f) => f.startsWith("gemm-") && f.endsWith(".json"),
    );
    const path = join(cacheDir, file!);
    const saved = readFileSync(path, "utf8");
    const child = join(base, "child-bad.mjs");
    writeFileSync(
      child,
      `${CHILD_HEAD}process.stdout.write(JSON.stringify(gemmChoice(a, b, { transB: true })));
`,
    );
    const run = (cache: string) =>
      spawnSync(process.execPath, [child], {
        cwd: root,
        encoding: "utf8",
        env: { ...process.env, TIRX_CACHE_DIR: cache, TIRX_TUNE: "", TIRX_PTXAS: "off" },
      });
    // What the call takes with no cache at all.
    const none = run(join(base, "no-cache"));
    expect(none.status, none.stderr).toBe(0);
    try {
      // A float8-only option on this bfloat16 GEMM, and a tile that makeGemm refuses.
      for (const bad of [
        { ...FASTEST, halves: true },
        { ...FASTEST, bn: 999 },
      ]) {
        writeFileSync(path, JSON.stringify({ ...JSON.parse(saved), config: bad }));
        const p = run(cacheRoot);
        expect(p.status, p.stderr).toBe(0);
        const got = JSON.parse(p.stdout) as { source: string; config: GemmConfig };
        expect(got.source, JSON.stringify(bad)).not.toBe("cache");
        expect(got).toEqual(JSON.parse(none.stdout));
      }
    } finally {
      writeFileSync(path, saved);
    }
  });

  test("a shipped default is taken without timing, with or without tune", () => {
    const [m, n, k] = [16, 4096, 4096];
    const a16 = tensor.zeros([m, k], "bfloat16", dev);
    const b16 = tensor.zeros([n, k], "bfloat16", dev);
    const key = tuneKeyText(gemmTuneKey({ m, n, k, dtype: "bfloat16", transB: true }));
    expect(GEMM_TUNED_DEFAULTS[key]).toBeDefined();
    let measured = 0;
    const tune = {
      cacheDir: join(base, "none"),
      progress: false as const,
      measure: () => (measured++, 1),
    };
    const tuned = gemmChoice(a16, b16, { transB: true, tune });
    expect(tuned.source).toBe("default");
    expect(measured).toBe(0);
    expect(tuned.config).toEqual(GEMM_TUNED_DEFAULTS[key]);
    const plain = gemmChoice(a16, b16, { transB: true });
    expect(plain.source).toBe("default");
  });

  test("every shipped float8 default of the issue's shapes builds: block scales ('shared' at m 8192 × 14336 × 4096, 8192 × 8192, 28672 × 8192 and 8192 × 28672) and per-tensor", () => {
    const built: string[] = [];
    for (const m of [1024, 8192]) {
      for (const [n, k] of DEFAULT_SHAPES) {
        for (const scales of ["block", true] as const) {
          const sizes = { m, n, k, dtype: "float8_e4m3", transB: true, scales } as const;
          const config = GEMM_TUNED_DEFAULTS[tuneKeyText(gemmTuneKey(sizes))];
          expect(config, `${m} ${n} ${k} ${String(scales)}`).toBeDefined();
          expect(() => makeGemm({ ...sizes, config: config! })).not.toThrow();
          if (config!.scaleLoad !== undefined) built.push(`${m}x${n}x${k}:${config!.scaleLoad}`);
        }
      }
    }
    expect(built.sort()).toEqual(
      [
        "8192x14336x4096:shared",
        "8192x8192x8192:shared",
        "8192x28672x8192:shared",
        "8192x8192x28672:shared",
      ].sort(),
    );
  });

  test("TIRX_TUNE=1 tunes without the option (the simulator without measure: first fit)", () => {
    const saved = { tune: process.env["TIRX_TUNE"], dir: process.env["TIRX_CACHE_DIR"] };
    process.env["TIRX_TUNE"] = "1";
    process.env["TIRX_CACHE_DIR"] = join(base, "env");
    try {
      const c = gemmChoice(a, b, { transB: true });
      expect(c.source).toBe("first-fit");
      expect(gemmChoice(a, b, { transB: true, tune: false }).source).toBe("picked");
    } finally {
      for (const [k, v] of [
        ["TIRX_TUNE", saved.tune],
        ["TIRX_CACHE_DIR", saved.dir],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  });

  test("tune with config, or a tune that is not a boolean or an object, is TX9001", () => {
    const e = errorOf(() => gemm(a, b, { transB: true, tune: true, config: FASTEST }));
    expect(e.code).toBe("TX9001");
    expect(e.message).toMatch(/config or tune, not both/);
    const e2 = errorOf(() => gemm(a, b, { transB: true, tune: 1 as unknown as boolean }));
    expect(e2.code).toBe("TX9001");
  });
});
