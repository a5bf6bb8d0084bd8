// autotune on a real GPU: candidates timed with CUDA events (medians of rounds), the fastest
// kept, a candidate that cannot fit pruned before any launch, the chosen kernel's result checked
// against the host, and a second process that reads the cache file and times nothing. The test
// asserts relations between the timings (the choice is the smallest median), never a time.
// Skipped (with the reason printed) where there is no driver.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { archForDevice, cudaAvailable, driver, median } from "@tirx-ts/runtime-cuda";
import { autotune, cuda, tensor, type PrimFunc } from "tirx-ts";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/autotune: skipped, ${available.reason}`);

const root = fileURLToPath(new URL("../..", import.meta.url));
const work = join(root, "test", ".printed", "autotune-gpu");

// The family, a module this process and the child both import: A[i] += 1 over N floats, one
// element per thread, `block` threads per CTA, `words` float32 of shared memory staged through.
const N = 1 << 20;
const FAMILY = `import { T } from "tirx-ts";
export const N = ${N};
export const CONFIGS = [{ block: 128 }, { block: 256 }, { block: 512 }, { block: 256, words: 65536 }];
export const makeInc = (c) =>
  T.function("tune_inc_gpu", { A: T.Tensor([N], "float32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: N / c.block, block: c.block }) });
    const s = T.alloc_shared([c.words ?? c.block], "float32");
    const tid = T.cuda.thread_idx("x");
    const i = T.cuda.block_idx("x").mul(c.block).add(tid);
    s.set([tid], A.get([i]));
    A.set([i], s.get([tid]).add(1));
  });
`;

interface Cfg {
  readonly block: number;
  readonly words?: number;
}

describe.skipIf(!available.ok)("autotune on a real GPU", () => {
  mkdirSync(work, { recursive: true });
  const base = mkdtempSync(join(work, "run-"));
  afterAll(() => rmSync(base, { recursive: true, force: true }));
  const familyFile = join(base, "family.mjs");
  writeFileSync(familyFile, FAMILY);
  const cacheDir = join(base, "cache");

  test("times the fitting candidates, keeps the smallest median, caches it; a second process times nothing", async () => {
    const fam = (await import(familyFile)) as {
      CONFIGS: readonly Cfg[];
      makeInc: (c: Cfg) => PrimFunc;
    };
    const dev = cuda(0);
    const a = tensor.zeros([N], "float32", dev);
    const r = autotune(fam.makeInc, fam.CONFIGS, {
      key: { n: N },
      device: dev,
      args: [a],
      warmup: 2,
      iters: 10,
      rounds: 3,
      cacheDir,
      progress: false,
    });
    expect(r.source).toBe("tuned");
    expect(r.key.device).toBe(dev.name);
    expect(r.key.arch).toBe(archForDevice(dev));
    expect(r.key.driver).toBe(String(driver().driverVersion()));
    const timed = r.candidates.filter((c) => c.status === "timed");
    expect(timed.map((c) => c.config)).toEqual(fam.CONFIGS.slice(0, 3));
    expect(r.measurements).toBe(3);
    for (const c of timed) {
      expect(c.samplesUs).toHaveLength(3);
      expect(c.us).toBe(median(c.samplesUs!));
      expect(c.us).toBeGreaterThan(0);
    }
    const best = Math.min(...timed.map((c) => c.us!));
    expect(r.us).toBe(best);
    expect(timed.find((c) => c.us === best)!.config).toBe(r.config);
    expect(r.pruned.map((c) => c.config)).toEqual([fam.CONFIGS[3]]);
    expect(r.pruned[0]!.code).toBe("TX2008");

    // The chosen kernel adds 1 to every element.
    const host = Float32Array.from({ length: N }, (_, i) => (i % 1000) * 0.25);
    const b = tensor(host, { shape: [N], dtype: "float32", device: dev });
    r.kernel(b);
    const got = b.toArray() as Float32Array;
    for (let i = 0; i < N; i++)
      if (got[i] !== host[i]! + 1) expect([i, got[i]]).toEqual([i, host[i]! + 1]);

    const child = join(base, "child.mjs");
    writeFileSync(
      child,
      `import { autotune, cuda, tensor } from "tirx-ts";
import { CONFIGS, N, makeInc } from "./family.mjs";
const dev = cuda(0);
const r = autotune(makeInc, CONFIGS, {
  key: { n: N }, device: dev, args: [tensor.zeros([N], "float32", dev)],
  cacheDir: ${JSON.stringify(cacheDir)}, progress: false,
});
process.stdout.write(JSON.stringify({ measurements: r.measurements, source: r.source, config: r.config }));
`,
    );
    // Through tsx with the "source" condition, so the child runs the same sources as this file
    // (no build needed), as the project's scripts do.
    const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");
    const p = spawnSync(process.execPath, [tsx, "-C", "source", child], {
      cwd: root,
      encoding: "utf8",
    });
    expect(p.status, p.stderr).toBe(0);
    const got2 = JSON.parse(p.stdout) as { measurements: number; source: string; config: Cfg };
    expect(got2).toEqual({ measurements: 0, source: "cache", config: r.config });
  });
});
