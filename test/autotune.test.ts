// autotune (issue 24, item 3): candidates that cannot fit are pruned with their reason before
// anything is timed; the fastest by an injected deterministic measure is kept and written to a
// JSON cache file that a second process reads without timing; a changed kernel source re-tunes;
// shipped defaults and the simulator's first fit choose without timing; a corrupt cache file is a
// warning and a new tuning. No clock is read: the measure and the progress bar's clock are
// injected.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import {
  TirxError,
  autotune,
  registerTunedDefaults,
  sim,
  tensor,
  tuneKeyText,
  type PrimFunc,
} from "tirx-ts";
import {
  parsePtxasUsage,
  readTuneCache,
  registersPerBlock,
  type TuneCacheEntry,
} from "@tirx-ts/runtime";
import { errorOf } from "./util/error-of.js";

const root = fileURLToPath(new URL("..", import.meta.url));
// Inside the repository (so that `tirx-ts` resolves for the child process), in a gitignored folder.
const work = join(root, "test", ".printed", "autotune");
mkdirSync(work, { recursive: true });
const base = mkdtempSync(join(work, "run-"));
afterAll(() => rmSync(base, { recursive: true, force: true }));
let dirs = 0;
/** A fresh cache folder per test (autotune also remembers results per folder in this process). */
const freshDir = (): string => join(base, `cache-${dirs++}`);

// The kernel family, as a module that this process and the child process both import, so that
// both build the same IR: A[i] += step through `words` float32 of shared memory, `block` threads.
const FAMILY = `import { T } from "tirx-ts";
export const CONFIGS = [{ block: 32 }, { block: 64 }, { block: 96 }, { block: 128 }];
/** The injected measure: µs of a config, fastest at block 64. */
export const fakeUs = (c) => Math.abs(c.block - 64) + 3;
const family = (step) => (c) =>
  T.function("tune_inc", { A: T.Tensor([c.block], "float32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.block }) });
    const s = T.alloc_shared([c.words ?? c.block], "float32");
    const tid = T.cuda.thread_idx("x");
    s.set([tid], A.get([tid]));
    A.set([tid], s.get([tid]).add(step));
  });
export const makeInc = family(1);
/** The same family with another kernel body (a changed source). */
export const makeInc2 = family(2);
`;
const familyFile = join(base, "family.mjs");
writeFileSync(familyFile, FAMILY);

interface Cfg {
  readonly block: number;
  readonly words?: number;
}
interface Family {
  readonly CONFIGS: readonly Cfg[];
  readonly fakeUs: (c: Cfg) => number;
  readonly makeInc: (c: Cfg) => PrimFunc;
  readonly makeInc2: (c: Cfg) => PrimFunc;
}
const fam = (await import(familyFile)) as Family;

/** A stream that keeps what is written; a terminal when `tty`. */
function sink(tty = false): { isTTY: boolean; text: string; write(s: string): boolean } {
  return {
    isTTY: tty,
    text: "",
    write(s: string) {
      this.text += s;
      return true;
    },
  };
}

/** The injected measure, counting its calls. */
function counted(): { calls: Cfg[]; measure: (c: Cfg) => number } {
  const calls: Cfg[] = [];
  return { calls, measure: (c) => (calls.push(c), fam.fakeUs(c)) };
}

const KEY = { n: "block", dtype: "float32" };

describe("pruning", () => {
  test("shared memory over the target's or the option's limit, and registers over the limit (ptxas -v), are pruned with their reasons before timing", () => {
    const { calls, measure } = counted();
    const configs: Cfg[] = [
      { block: 32 },
      { block: 32, words: 65536 }, // 256 KiB: more than any target's CTA
      { block: 32, words: 2048 }, // 8 KiB: over limits.sharedBytes
      { block: 128 }, // 4 warps: over limits.registersPerBlock
    ];
    const limits = { sharedBytes: 4096, registersPerBlock: 1024 };
    const out = sink();
    const r = autotune(fam.makeInc, configs, {
      key: KEY,
      device: sim(),
      measure,
      limits,
      cacheDir: freshDir(),
      progress: out,
    });
    expect(calls).toEqual([configs[0]]);
    expect(r.source).toBe("tuned");
    expect(r.config).toBe(configs[0]);
    expect(r.candidates.map((c) => c.status)).toEqual(["timed", "pruned", "pruned", "pruned"]);
    expect(r.pruned.map((c) => c.config)).toEqual(configs.slice(1));
    const [big, overOption, overRegs] = r.pruned;
    expect(big!.code).toBe("TX2008");
    expect(big!.reason).toMatch(
      /^compile: TX2008 \[wf\/shared-capacity\] static shared memory reaches 262144 bytes/,
    );
    expect(overOption!.code).toBe("TX2008");
    expect(overOption!.reason).toBe(
      `shared memory: ${2048 * 4} bytes (${2048 * 4} static + 0 dynamic) per CTA exceed the limits.sharedBytes option, 4096 bytes`,
    );
    // The fitting candidate's registers, as ptxas -v reported them, give the pruned one's count.
    const regs = r.candidates[0]!.registers!;
    expect(regs).toBeGreaterThan(0);
    expect(registersPerBlock(regs, 32)).toBeLessThanOrEqual(1024);
    expect(overRegs!.code).toBeUndefined();
    expect(overRegs!.reason).toBe(
      `registers: ${regs} per thread (ptxas -v) × 128 threads take ${registersPerBlock(regs, 128)} of the register file, over 1024 per CTA`,
    );
    // Pruned candidates are recorded in the cache file with their reasons.
    const file = readTuneCache(r.cacheFile!);
    expect(file.kind).toBe("entry");
    const entry = (file as { entry: TuneCacheEntry }).entry;
    expect(entry.candidates.map((c) => c.pruned)).toEqual([
      undefined,
      ...r.pruned.map((c) => c.reason),
    ]);
  });

  test("no candidate that fits: TX5013 naming each candidate's reason", () => {
    const e = errorOf(() =>
      autotune(fam.makeInc, [{ block: 32, words: 65536 }], {
        key: "none fits",
        device: sim(),
        measure: fam.fakeUs,
        cacheDir: freshDir(),
        progress: false,
      }),
    );
    expect(e.code).toBe("TX5013");
    expect(e.message).toContain(
      'no candidate of tune_inc fits the simulated device: {"block":32,"words":65536}: compile: TX2008',
    );
  });

  test("a candidate whose run throws a TirxError is pruned with it; a measure that is no time is TX1002", () => {
    const bad = fam.CONFIGS[1]!;
    const r = autotune(fam.makeInc, fam.CONFIGS.slice(0, 2), {
      key: "run fails",
      device: sim(),
      cacheDir: false,
      progress: false,
      measure: (c) => {
        if (c === bad) throw new TirxError("TX5003", "a tensor argument has the wrong shape");
        return fam.fakeUs(c);
      },
    });
    expect(r.config).toBe(fam.CONFIGS[0]);
    expect(r.pruned).toEqual([
      {
        config: bad,
        status: "pruned",
        reason: "launch: TX5003 [launch/arg-shape] a tensor argument has the wrong shape",
        code: "TX5003",
      },
    ]);
    const e = errorOf(() =>
      autotune(fam.makeInc, fam.CONFIGS.slice(0, 1), {
        key: "no time",
        device: sim(),
        cacheDir: false,
        progress: false,
        measure: () => Number.NaN,
      }),
    );
    expect(e.code).toBe("TX1002");
    expect(e.message).toContain(
      'autotune\'s measure must return a time in µs (a finite number ≥ 0), got NaN for {"block":32}',
    );
  });

  test("ptxas -v's report: registers and spills", () => {
    const text = [
      "ptxas info    : Compiling entry function 'k' for 'sm_90a'",
      "    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads",
      "ptxas info    : Used 168 registers, used 1 barriers, 512 bytes smem",
    ].join("\n");
    expect(parsePtxasUsage(text)).toEqual({ registers: 168, spillStores: 8, spillLoads: 12 });
    expect(parsePtxasUsage("nothing")).toBeUndefined();
    // Each warp's registers are rounded up to 256 (10 × 32 = 320 → 512).
    expect(registersPerBlock(10, 100)).toBe(Math.ceil(100 / 32) * 512);
  });
});

describe("tuning and the cache", () => {
  const dir = freshDir();
  const fastest = fam.CONFIGS.reduce((a, b) => (fam.fakeUs(b) < fam.fakeUs(a) ? b : a));

  test("the fastest by the measure is kept and written to the cache file; the chosen kernel runs", () => {
    const { calls, measure } = counted();
    let builds = 0;
    const make = (c: Cfg): PrimFunc => (builds++, fam.makeInc(c));
    const r = autotune(make, fam.CONFIGS, {
      key: KEY,
      device: sim(),
      measure,
      cacheDir: dir,
      progress: false,
    });
    expect(builds).toBe(fam.CONFIGS.length);
    expect(calls).toEqual(fam.CONFIGS);
    expect(r.measurements).toBe(fam.CONFIGS.length);
    expect(r.source).toBe("tuned");
    expect(r.config).toBe(fastest);
    expect(r.us).toBe(fam.fakeUs(fastest));
    expect(r.candidates.map((c) => c.us)).toEqual(fam.CONFIGS.map(fam.fakeUs));
    const read = readTuneCache(r.cacheFile!);
    expect(read.kind).toBe("entry");
    const entry = (read as { entry: TuneCacheEntry }).entry;
    expect(entry.config).toEqual(fastest);
    expect(entry.key).toEqual(r.key);
    expect(entry.key.user).toBe(tuneKeyText(KEY));
    expect(entry.key.device).toBe("sim");
    // The chosen kernel, run on the simulator: A + 1.
    const host = Array.from({ length: fastest.block }, (_, i) => i * 0.5 - 3);
    const a = tensor(host, { shape: [fastest.block], dtype: "float32", device: sim() });
    r.kernel(a);
    expect(Array.from(a.toArray() as Float32Array)).toEqual(host.map((x) => x + 1));
    // Again in this process: the same result, nothing built or timed.
    builds = 0;
    const again = autotune(make, fam.CONFIGS, {
      key: KEY,
      device: sim(),
      measure,
      cacheDir: dir,
      progress: false,
    });
    // The same choice and kernel; this call timed nothing (measurements 0).
    expect([again.config, again.kernel, again.measurements]).toEqual([r.config, r.kernel, 0]);
    expect(calls.length).toBe(fam.CONFIGS.length);
    expect(builds).toBe(0);
    // A call that names its family is answered by name, whatever closure builds it: a library
    // call can call autotune on every call. The first one here reads the cache file.
    const named = () =>
      autotune((c: Cfg) => (builds++, fam.makeInc(c)), fam.CONFIGS, {
        key: KEY,
        name: "tune_inc",
        device: sim(),
        measure,
        cacheDir: dir,
        progress: false,
      });
    // The file records each candidate's hash: only the cached choice is built, its hash checked.
    const first = named();
    expect([first.source, builds]).toEqual(["cache", 1]);
    expect(first.why).toContain("no other candidate built");
    expect(named()).toBe(first);
    expect(builds).toBe(1);
    expect(calls.length).toBe(fam.CONFIGS.length);
    // A file without the hashes (written before they were recorded) is checked by building every
    // candidate and comparing the family's hash.
    const file = first.cacheFile!;
    const saved = JSON.parse(readFileSync(file, "utf8")) as TuneCacheEntry;
    const stripped = { ...saved, candidates: saved.candidates.map(({ hash: _h, ...c }) => c) };
    writeFileSync(file, JSON.stringify(stripped));
    builds = 0;
    const older = autotune((c: Cfg) => (builds++, fam.makeInc(c)), fam.CONFIGS, {
      key: KEY,
      device: sim(),
      measure,
      cacheDir: dir,
      progress: false,
      retune: false,
      name: "tune_inc",
      limits: { sharedBytes: 1 << 20 }, // another call than the memoized one
    });
    expect([older.source, builds]).toEqual(["cache", fam.CONFIGS.length]);
    writeFileSync(file, JSON.stringify(saved));
  });

  test("a second process reads the cache file and times nothing", () => {
    const child = join(base, "child.mjs");
    writeFileSync(
      child,
      `import { autotune, sim } from "tirx-ts";
import { CONFIGS, fakeUs, makeInc } from "./family.mjs";
let measured = 0;
const r = autotune(makeInc, CONFIGS, {
  key: ${JSON.stringify(KEY)}, device: sim(), cacheDir: ${JSON.stringify(dir)}, progress: false,
  measure: (c) => (measured++, fakeUs(c)),
});
process.stdout.write(JSON.stringify({ measured, source: r.source, config: r.config, why: r.why }));
`,
    );
    const p = spawnSync(process.execPath, [child], { cwd: root, encoding: "utf8" });
    expect(p.status, p.stderr).toBe(0);
    const got = JSON.parse(p.stdout) as {
      measured: number;
      source: string;
      config: Cfg;
      why: string;
    };
    expect(got.measured).toBe(0);
    expect(got.source).toBe("cache");
    expect(got.config).toEqual(fastest);
    expect(got.why).toContain("nothing timed");
  });

  test("a changed kernel source re-tunes and overwrites the file", () => {
    const { calls, measure } = counted();
    const before = readTuneCache(
      autotune(fam.makeInc, fam.CONFIGS, {
        key: KEY,
        device: sim(),
        measure,
        cacheDir: dir,
        progress: false,
      }).cacheFile!,
    );
    expect(calls).toEqual([]); // read from the cache file
    const r = autotune(fam.makeInc2, fam.CONFIGS, {
      key: KEY,
      device: sim(),
      measure,
      cacheDir: dir,
      progress: false,
    });
    expect(r.source).toBe("tuned");
    expect(calls).toEqual(fam.CONFIGS);
    expect(r.why).toContain("the cached choice's kernel changed since the tuning");
    const after = readTuneCache(r.cacheFile!);
    expect(after.kind).toBe("entry");
    const [b, a] = [before, after].map((x) => (x as { entry: TuneCacheEntry }).entry);
    expect(a!.key.source).toBe(r.key.source);
    expect(a!.key.source).not.toBe(b!.key.source);
  });

  test("retune: true times again although the cache file has the choice", () => {
    const { calls, measure } = counted();
    const r = autotune(fam.makeInc, fam.CONFIGS, {
      key: KEY,
      device: sim(),
      measure,
      cacheDir: dir,
      progress: false,
      retune: true,
    });
    expect([r.source, r.config]).toEqual(["tuned", fastest]);
    expect(calls).toEqual(fam.CONFIGS);
  });

  test("a corrupt cache file: a warning, then a new tuning that rewrites it", () => {
    const d = freshDir();
    const first = autotune(fam.makeInc, fam.CONFIGS, {
      key: "corrupt",
      device: sim(),
      measure: fam.fakeUs,
      cacheDir: d,
      progress: false,
    });
    writeFileSync(first.cacheFile!, '{"format": 1, "key": ');
    const { calls, measure } = counted();
    const out = sink();
    const r = autotune(fam.makeInc, fam.CONFIGS, {
      key: "corrupt",
      device: sim(),
      measure,
      cacheDir: d,
      progress: out,
      name: "tune_inc",
    });
    expect(r.source).toBe("tuned");
    expect(calls).toEqual(fam.CONFIGS);
    expect(out.text).toMatch(
      /^tirx-ts: autotune tune_inc: the cache file .*\.json is unreadable \(not JSON \(.*\)\); tuning again\n/,
    );
    expect(r.why).toContain("the cache file was unreadable");
    expect(JSON.parse(readFileSync(r.cacheFile!, "utf8")).config).toEqual(fastest);
  });
});

describe("a cache file that is not a regular file", () => {
  test.skipIf(process.platform === "win32")(
    "a FIFO in the cache's place is never read (a read would wait for a writer forever): a warning, a new tuning that replaces it",
    () => {
      const d = freshDir();
      const first = autotune(fam.makeInc, fam.CONFIGS, {
        key: "fifo",
        device: sim(),
        measure: fam.fakeUs,
        cacheDir: d,
        progress: false,
      });
      rmSync(first.cacheFile!);
      expect(spawnSync("mkfifo", [first.cacheFile!]).status).toBe(0);
      // First in a child process, so that a read that blocks (on the FIFO, with no writer) fails
      // this test through the watchdog instead of hanging the test worker.
      const child = join(base, "fifo.mjs");
      writeFileSync(
        child,
        `import { readTuneCache } from "@tirx-ts/runtime";
process.stdout.write(JSON.stringify(readTuneCache(${JSON.stringify(first.cacheFile!)})));
`,
      );
      const p = spawnSync(process.execPath, [child], {
        cwd: root,
        encoding: "utf8",
        timeout: 60_000,
      });
      expect([p.status, p.signal], p.stderr).toEqual([0, null]);
      const read = { kind: "corrupt", why: "not a regular file" };
      expect(JSON.parse(p.stdout)).toEqual(read);
      expect(readTuneCache(first.cacheFile!)).toEqual(read);
      const out = sink();
      const r = autotune(fam.makeInc, fam.CONFIGS, {
        key: "fifo",
        device: sim(),
        measure: fam.fakeUs,
        cacheDir: d,
        progress: out,
        name: "tune_inc",
      });
      expect(r.source).toBe("tuned");
      expect(out.text).toMatch(/is unreadable \(not a regular file\); tuning again/);
      expect(readTuneCache(r.cacheFile!).kind).toBe("entry");
    },
  );
});

describe("choices without timing", () => {
  test("a shipped default (passed, or registered by name; an arch-prefixed entry first) is used without tuning", () => {
    const { calls, measure } = counted();
    const key = { n: 96 };
    const common = { key, device: sim(), measure, progress: false as const };
    const passed = autotune(fam.makeInc, fam.CONFIGS, {
      ...common,
      cacheDir: freshDir(),
      defaults: { [tuneKeyText(key)]: fam.CONFIGS[2]! },
    });
    expect(passed.source).toBe("default");
    expect(passed.config).toBe(fam.CONFIGS[2]);
    expect(passed.why).toBe('the shipped default "n=96"; nothing timed');
    registerTunedDefaults("inc_family", {
      "n=96": fam.CONFIGS[0]!,
      "sm_80/n=96": fam.CONFIGS[3]!,
    });
    const registered = autotune(fam.makeInc, fam.CONFIGS, {
      ...common,
      cacheDir: freshDir(),
      name: "inc_family",
    });
    expect(registered.config).toBe(fam.CONFIGS[0]);
    const forArch = autotune(fam.makeInc, fam.CONFIGS, {
      ...common,
      cacheDir: freshDir(),
      name: "inc_family",
      arch: "sm_80",
    });
    expect(forArch.config).toBe(fam.CONFIGS[3]);
    expect(calls).toEqual([]);
    expect([passed, registered, forArch].map((r) => r.measurements)).toEqual([0, 0, 0]);
  });

  test("the simulator without a measure: the first config that fits, untimed, and said so", () => {
    const configs: Cfg[] = [{ block: 32, words: 65536 }, { block: 64 }, { block: 96 }];
    const r = autotune(fam.makeInc, configs, {
      key: KEY,
      device: sim(),
      cacheDir: freshDir(),
      progress: false,
    });
    expect(r.source).toBe("first-fit");
    expect(r.config).toBe(configs[1]);
    expect(r.us).toBeUndefined();
    expect(r.candidates.map((c) => c.status)).toEqual(["pruned", "untimed", "unchecked"]);
    expect(r.why).toBe(
      "the simulated device has no meaningful timings: the first candidate that fits (2 of 3), not timed",
    );
  });
});

describe("progress", () => {
  const run = (out: ReturnType<typeof sink>, step: number) => {
    let t = 0;
    return autotune(fam.makeInc, fam.CONFIGS, {
      key: `progress ${out.isTTY} ${step}`,
      name: "tune_inc",
      device: sim(),
      measure: fam.fakeUs,
      cacheDir: false,
      progress: out,
      clock: () => (t += step),
    });
  };

  test("on a terminal, a bar redrawn in place once tuning takes a second, then one final line", () => {
    const out = sink(true);
    const r = run(out, 400); // the clock advances 400 ms per read
    const lines = out.text.split("\r\x1b[K").filter((l) => l !== "");
    // Read at the start, then before each candidate: 800 ms, 1200 ms, …; the bar from the second.
    expect(lines[0]).toBe(
      `tirx-ts: autotune tune_inc [##########          ] candidate 3/4, best so far: {"block":64} ${fam.fakeUs(fam.CONFIGS[1]!)} µs`,
    );
    expect(lines).toHaveLength(3);
    expect(lines[2]).toBe(
      `tirx-ts: autotune tune_inc (progress true 400): {"block":64} at ${r.us} µs, the fastest of 4 timed (0 pruned)\n`,
    );
  });

  test("a short tuning on a terminal, or any tuning elsewhere: the final line only", () => {
    for (const out of [sink(true), sink(false)]) {
      run(out, out.isTTY ? 1 : 5000);
      expect(out.text).toMatch(
        /^tirx-ts: autotune tune_inc \(progress (true 1|false 5000)\): \{"block":64\} at \d+ µs, the fastest of 4 timed \(0 pruned\)\n$/,
      );
    }
  });
});

describe("argument checks", () => {
  test("malformed configs and options are TX1002", () => {
    const cases: [() => unknown, string][] = [
      [
        () => autotune(fam.makeInc, [], { key: "k" }),
        "autotune needs a non-empty array of candidate configs",
      ],
      [
        () => autotune(fam.makeInc, [{ block: Number.NaN }], { key: "k" }),
        "configs[0].block is NaN",
      ],
      [
        () => autotune(fam.makeInc, fam.CONFIGS, { key: "k", iter: 3 } as never),
        'autotune has no option "iter"; did you mean "iters"?',
      ],
      [
        () => autotune(fam.makeInc, fam.CONFIGS, { key: [1] } as never),
        "autotune's key must be a string or a flat object",
      ],
    ];
    for (const [f, text] of cases) {
      const e = errorOf(f);
      expect(e.code).toBe("TX1002");
      expect(e.message).toContain(text);
    }
  });
});

describe("tuneKeyText", () => {
  test('two keys never share a text: parts holding , = or " are quoted', () => {
    expect(tuneKeyText({ a: "x,b=y" })).not.toBe(tuneKeyText({ a: "x", b: "y" }));
    expect(tuneKeyText({ a: "x,b=y" })).toBe('a="x,b=y"');
    // Plain parts are written as before (the shipped defaults' keys).
    expect(tuneKeyText({ n: 4096, dtype: "float16" })).toBe("dtype=float16,n=4096");
  });
});
