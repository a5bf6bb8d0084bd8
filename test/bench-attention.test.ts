// The pure parts of bench/attention.ts on the CPU: options, the case list (heads = 2048 / hd,
// batch = 16384 / seq), FLOP counting (causal halves it, backward is 2.5×), the sampled-row check,
// the markdown table, and the script's --help and --dry-run under tsx (no GPU, no python).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";
import { packagesBuilt } from "./util/built-packages.js";
import { describe, expect, test } from "vitest";
import {
  BACKWARD_HD,
  BWD_BOUND,
  FWD_BOUND,
  HIDDEN,
  TOKENS,
  attentionCases,
  attentionFlops,
  failed,
  formatAttentionTable,
  forwardVariants,
  itersFor,
  parseAttentionArgs,
  variantSuffix,
  worstRowError,
  type AttentionRow,
} from "../bench/attention-cases.js";

const defaults = parseAttentionArgs([]);

describe("options and cases", () => {
  test("the defaults are the issue's grid", () => {
    expect(defaults.dtypes).toEqual(["bfloat16", "float16"]);
    expect(defaults.hds).toEqual([64, 128, 256]);
    expect(defaults.seqs).toEqual([1024, 4096, 16384]);
    expect(defaults.causal).toEqual([false, true]);
    expect(defaults.backward && defaults.peers && !defaults.dryRun).toBe(true);
  });
  test("every case has batch·seq = 16384 tokens and heads·hd = 2048; backward only at hd 128", () => {
    const cases = attentionCases(defaults);
    expect(cases.length).toBe(2 * 3 * 3 * 2);
    for (const c of cases) {
      expect(c.batch * c.seq).toBe(TOKENS);
      expect(c.heads * c.hd).toBe(HIDDEN);
      expect(c.backward).toBe(c.hd === BACKWARD_HD);
      expect(c.iters).toBe(itersFor(c.seq, defaults.iters));
    }
    expect(new Set(cases.map((c) => `${c.dtype} ${c.hd} ${c.seq} ${c.causal}`)).size).toBe(
      cases.length,
    );
    expect(attentionCases(parseAttentionArgs(["--no-backward"])).some((c) => c.backward)).toBe(
      false,
    );
    // --backward-hd: the backward at other head dims too.
    const all = attentionCases(parseAttentionArgs(["--backward-hd", "64,256"]));
    expect(new Set(all.filter((c) => c.backward).map((c) => c.hd))).toEqual(new Set([64, 256]));
    expect(() => parseAttentionArgs(["--backward-hd", "96"])).toThrow(/--backward-hd: 96/);
  });
  test("fewer timed calls at 16k, never below 10 there, never above --iters", () => {
    expect(itersFor(4096, 20)).toBe(20);
    expect(itersFor(16384, 20)).toBe(10);
    expect(itersFor(16384, 40)).toBe(20);
    expect(itersFor(16384, 6)).toBe(6);
  });
  test("lists are parsed; bad values are refused by name", () => {
    const o = parseAttentionArgs(["--dtypes", "float16", "--hd", "128", "--seqs", "4096"]);
    const cs = attentionCases({ ...o, causal: [true] });
    expect(cs.map((c) => [c.dtype, c.hd, c.seq, c.causal])).toEqual([["float16", 128, 4096, true]]);
    expect(() => parseAttentionArgs(["--hd", "96"])).toThrow(/--hd: 96/);
    expect(() => parseAttentionArgs(["--dtypes", "float32"])).toThrow(/--dtypes/);
    expect(() => parseAttentionArgs(["--seqs", "1000"])).toThrow(/--seqs: 1000/);
    expect(() => parseAttentionArgs(["--causal", "yes"])).toThrow(/--causal/);
    expect(() => parseAttentionArgs(["--iters", "2"])).toThrow(/--iters/);
  });
});

describe("tiles and schedules", () => {
  test("--tiles: query rows per CTA, optionally x keys per KV block; bad values refused by name", () => {
    expect(defaults.tiles).toBeUndefined();
    expect(parseAttentionArgs(["--tiles", "128,192,192x192,128x192"]).tiles).toEqual([
      { blockM: 128 },
      { blockM: 192 },
      { blockM: 192, blockN: 192 },
      { blockM: 128, blockN: 192 },
    ]);
    for (const bad of ["256", "192x96", "x192", "192x"])
      expect(() => parseAttentionArgs(["--tiles", bad])).toThrow(`--tiles: "${bad}"`);
  });
  test("--backward-mma: the backward's main kernels to time; bad values refused by name", () => {
    expect(defaults.backwardMmas).toBeUndefined();
    expect(parseAttentionArgs(["--backward-mma", "rs,ss"]).backwardMmas).toEqual(["rs", "ss"]);
    expect(() => parseAttentionArgs(["--backward-mma", "sr"])).toThrow(`--backward-mma: "sr"`);
  });
  test("a forward row per tile the head dim offers and schedule, named by both", () => {
    const { schedules, tiles } = parseAttentionArgs([
      "--tiles",
      "128,192x192",
      "--schedules",
      "serial,pingpong",
    ]);
    const v64 = forwardVariants(64, schedules, tiles);
    expect(v64.map(variantSuffix)).toEqual([
      " (serial, 128)",
      " (pingpong, 128)",
      " (serial, 192x192)",
      " (pingpong, 192x192)",
    ]);
    expect(forwardVariants(128, schedules, tiles).map(variantSuffix)).toEqual([
      " (serial, 128)",
      " (pingpong, 128)",
    ]);
    // The wider KV blocks of hd 128 and 256; 192 query rows and 192-key blocks are not offered
    // at 256, so it takes the default tile.
    const wide = parseAttentionArgs(["--tiles", "128x176,128x80,192x192"]).tiles;
    expect(forwardVariants(128, undefined, wide).map(variantSuffix)).toEqual([" (128x176)"]);
    expect(forwardVariants(256, undefined, wide).map(variantSuffix)).toEqual([" (128x80)"]);
    expect(forwardVariants(256, undefined, [{ blockM: 192 }])).toEqual([{}]);
    expect(forwardVariants(64, undefined, undefined)).toEqual([{}]);
    const { ctas } = parseAttentionArgs(["--ctas", "grid,132"]);
    expect(forwardVariants(128, ["pingpong"], undefined, ctas).map(variantSuffix)).toEqual([
      " (pingpong, grid)",
      " (pingpong, ctas 132)",
    ]);
    expect(() => parseAttentionArgs(["--ctas", "0"])).toThrow(`--ctas: "0"`);
    expect(variantSuffix(forwardVariants(64, undefined, [{ blockM: 192 }])[0]!)).toBe(" (192)");
  });
});

describe("FLOPs", () => {
  test("forward 4·b·h·s²·hd, halved when causal; backward 2.5×", () => {
    for (const c of attentionCases(defaults)) {
      const full = 4 * c.batch * c.heads * c.seq * c.seq * c.hd;
      expect(attentionFlops(c, "forward")).toBe(c.causal ? full / 2 : full);
      expect(attentionFlops(c, "backward")).toBe(2.5 * attentionFlops(c, "forward"));
      // with 16384 tokens and hidden 2048 the forward is 4 · 16384 · 2048 · seq
      expect(attentionFlops({ ...c, causal: false }, "forward")).toBe(4 * TOKENS * HIDDEN * c.seq);
    }
  });
});

describe("worstRowError", () => {
  test("per row max error over the row's max |ref|; NaN fails", () => {
    const dims = { seq: 3, heads: 2, hd: 2 };
    const o = Float32Array.from({ length: 2 * 3 * 2 * 2 }, (_, i) => i / 8);
    const at = (b: number, s: number, h: number) => ((b * dims.seq + s) * dims.heads + h) * 2;
    const index = Int32Array.from([1, 2, 0, 0, 1, 1]);
    const ref = new Float32Array(4);
    const base = [at(1, 2, 0), at(0, 1, 1)];
    base.forEach((p, i) => {
      ref[2 * i] = o[p]! + 0.01;
      ref[2 * i + 1] = o[p + 1]!;
    });
    const want = Math.max(
      ...base.map((p, i) => {
        const err = Math.max(Math.abs(o[p]! - ref[2 * i]!), Math.abs(o[p + 1]! - ref[2 * i + 1]!));
        return err / Math.max(Math.abs(ref[2 * i]!), Math.abs(ref[2 * i + 1]!));
      }),
    );
    expect(worstRowError((i) => o[i]!, dims, index, ref)).toBe(want);
    const bad = Float32Array.from(o);
    bad[base[1]! + 1] = NaN;
    expect(worstRowError((i) => bad[i]!, dims, index, ref)).toBe(Infinity);
  });
});

describe("formatAttentionTable", () => {
  test("one line per row, 12 cells each, ratios against cuDNN and flash, FAILED and notes", () => {
    const cases = attentionCases(
      parseAttentionArgs([
        "--hd",
        "128",
        "--seqs",
        "1024",
        "--dtypes",
        "bfloat16",
        "--causal",
        "true",
      ]),
    );
    const b = FWD_BOUND.bfloat16;
    const rows: AttentionRow[] = [
      { case: 0, pass: "forward", variant: "torch SDPA cuDNN", us: 100, err: b / 4, bound: b },
      { case: 0, pass: "forward", variant: "torch SDPA flash", us: 125, err: b / 4, bound: b },
      { case: 0, pass: "forward", variant: "tirx-ts x", us: 80, err: 2 * b, bound: b },
      {
        case: 0,
        pass: "backward",
        variant: "torch SDPA cuDNN",
        us: 300,
        err: 0,
        bound: BWD_BOUND.bfloat16,
      },
      { case: 0, pass: "forward", variant: "tirx-ts y", note: "tirx-ts: not written" },
    ];
    const lines = formatAttentionTable(cases, rows);
    expect(lines.length).toBe(2 + rows.length);
    for (const l of lines) expect(l.split("|").length - 2).toBe(12);
    const cells = (needle: string) =>
      lines
        .find((l) => l.includes(needle))!
        .split("|")
        .map((s) => s.trim());
    const ours = cells("tirx-ts x");
    const tf = attentionFlops(cases[0]!, "forward") / 80e-6 / 1e12;
    expect(ours.slice(8, 13)).toEqual([
      "80.0",
      tf.toFixed(1),
      (100 / 80).toFixed(3),
      (125 / 80).toFixed(3),
      `FAILED: err ${(2 * b).toExponential(1)} (bound ${b.toExponential(1)})`,
    ]);
    expect(cells("torch SDPA flash")[12]).toMatch(/^ok: /);
    expect(cells("tirx-ts y")[12]).toBe("tirx-ts: not written");
    expect(cells("| backward |")[9]).toBe(
      (attentionFlops(cases[0]!, "backward") / 300e-6 / 1e12).toFixed(1),
    );
    expect(rows.filter(failed).map((r) => r.variant)).toEqual(["tirx-ts x"]);
  });
});

describe("the script", () => {
  const script = fileURLToPath(new URL("../bench/attention.ts", import.meta.url));
  // tsx as a loader in the child itself (its CLI starts a second node), over the packages as
  // built when they are (npm test builds first: none of their TypeScript to transform), else
  // their sources, as vitest.config.ts takes them.
  const source = packagesBuilt() ? [] : ["--conditions=source"];
  const run = (...args: string[]) =>
    promisify(execFile)(process.execPath, ["--import", "tsx", ...source, script, ...args], {
      encoding: "utf8",
    });
  test("--dry-run prints the planned cases and launches nothing; --help lists the options", async () => {
    // Both at once: each is a tsx start-up (most of this file's time).
    const [dry, help] = await Promise.all([
      run("--dry-run", "--hd", "64,128", "--seqs", "1024,16384"),
      run("--help"),
    ]);
    const cases = dry.stdout.split("\n").filter((l) => l.startsWith("case "));
    expect(cases.length).toBe(2 * 2 * 2 * 2);
    expect(cases.filter((l) => l.includes("backward")).length).toBe(2 * 2 * 2);
    expect(dry.stdout).toMatch(/batch 1 heads 32 causal true/);
    expect(dry.stdout).not.toMatch(/peers: python3/);
    for (const o of [
      "--dtypes",
      "--hd",
      "--seqs",
      "--causal",
      "--no-backward",
      "--backward-hd",
      "--no-peers",
      "--iters",
      "--schedules",
      "--tiles",
      "--backward-mma",
      "--out",
      "--dry-run",
    ])
      expect(help.stdout).toContain(o);
  });
});
