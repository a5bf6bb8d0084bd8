// The cost of a tuned gemm() call's first launch in a new process (issue 24: ≤ 50 ms beyond the
// compile, on a cache hit). One process tunes a shape that has no shipped default (bf16 A·Bᵀ,
// 2048 × 3072 × 5120 by default), filling a fresh tuning cache and a fresh binary cache
// (TIRX_CACHE_DIR); then, alternating, fresh processes time their first call:
//   - "tuned": gemm(a, b, { transB, tune: { cacheDir } }), the tuning found in the cache;
//   - "given": gemm(a, b, { transB, config }) with the tuned config written out (no tuning code).
// Each child times the call from its start to the device's synchronize (after its inputs exist
// and the modules are imported), so both include the kernel build, the binary cache's hit and the
// launch; the difference is what tuning adds to a first launch. Medians of --runs children each.
// Usage: tsx -C source bench/gemm-first-launch.ts [--m 2048 --n 3072 --k 5120] [--runs 5]
//   [--out results.md]
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  options: {
    m: { type: "string", default: "2048" },
    n: { type: "string", default: "3072" },
    k: { type: "string", default: "5120" },
    runs: { type: "string", default: "5" },
    out: { type: "string" },
    child: { type: "string" },
    cache: { type: "string" },
    config: { type: "string" },
  },
});
const [m, n, k] = [Number(values.m), Number(values.n), Number(values.k)];

/** One child: build the inputs, then time the first gemm() call to the device's synchronize. */
async function child(mode: string): Promise<void> {
  const { cuda, gemm, gemmChoice, tensor } = await import("tirx-ts");
  type Opts = NonNullable<Parameters<typeof gemm>[2]>;
  const dev = cuda(0);
  const a = tensor.zeros([m, k], "bfloat16", dev);
  const b = tensor.zeros([n, k], "bfloat16", dev);
  dev.synchronize();
  const opts: Opts =
    mode === "given"
      ? { transB: true, config: JSON.parse(values.config!) }
      : { transB: true, tune: { cacheDir: values.cache!, progress: false } };
  const t0 = performance.now();
  gemm(a, b, opts);
  dev.synchronize();
  const ms = performance.now() - t0;
  const c = gemmChoice(a, b, opts);
  process.stdout.write(JSON.stringify({ ms, source: c.source, config: c.config }));
}

if (values.child !== undefined) {
  await child(values.child);
} else {
  const tsx = fileURLToPath(new URL("../node_modules/tsx/dist/cli.mjs", import.meta.url));
  const self = fileURLToPath(import.meta.url);
  const work = mkdtempSync(join(tmpdir(), "gemm-first-"));
  const cache = join(work, "tune");
  const env = { ...process.env, TIRX_CACHE_DIR: join(work, "bin") };
  const spawn = (args: string[]) =>
    JSON.parse(
      execFileSync(process.execPath, [tsx, "-C", "source", self, ...args], {
        env,
        encoding: "utf8",
      }),
    ) as { ms: number; source: string; config: unknown };
  const shape = ["--m", String(m), "--n", String(n), "--k", String(k)];
  try {
    const tuned = spawn([...shape, "--child", "tuned", "--cache", cache]);
    const config = JSON.stringify(tuned.config);
    const t: number[] = [];
    const g: number[] = [];
    const sources = new Set<string>();
    for (let r = 0; r < Number(values.runs); r++) {
      const x = spawn([...shape, "--child", "tuned", "--cache", cache]);
      sources.add(x.source);
      t.push(x.ms);
      g.push(spawn([...shape, "--child", "given", "--config", config]).ms);
    }
    const med = (xs: number[]) => [...xs].sort((p, q) => p - q)[Math.floor(xs.length / 2)]!;
    const lines = [
      "# gemm(): a tuned call's first launch in a new process",
      "",
      `- date: ${new Date().toISOString()}`,
      `- command: tsx -C source bench/gemm-first-launch.ts --m ${m} --n ${n} --k ${k} --runs ${values.runs}`,
      `- shape: bf16 A·Bᵀ ${m} × ${n} × ${k}; the tuning (first process, ${tuned.ms.toFixed(0)} ms with its timing) chose ${config}`,
      `- the timed children found the tuning as: ${[...sources].join(", ")}`,
      "",
      "| first call, fresh process (median) | ms | each |",
      "| --- | --- | --- |",
      `| tune: true, the tuning cached | ${med(t).toFixed(1)} | ${t.map((x) => x.toFixed(1)).join(", ")} |`,
      `| config given | ${med(g).toFixed(1)} | ${g.map((x) => x.toFixed(1)).join(", ")} |`,
      `| what tuning adds (target ≤ 50 ms) | ${(med(t) - med(g)).toFixed(1)} | |`,
    ];
    const text = lines.join("\n") + "\n";
    process.stdout.write(text);
    if (values.out) writeFileSync(values.out, text);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
