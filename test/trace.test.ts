// `tirx trace`: a Chrome / Perfetto trace of a simulated run (packages/tirx-ts/src/trace.ts).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { traceKernel } from "../packages/tirx-ts/src/trace.js";
import { copy_async } from "../examples/copy_async.js";
import { makeBulkPipeline } from "../examples/bulk_pipeline.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = fileURLToPath(new URL("../packages/tirx-ts/bin/tirx.js", import.meta.url));
type Ev = {
  name: string;
  cat: string;
  ph: string;
  ts: number;
  dur?: number;
  pid: number;
  tid: number;
};
const kinds = (evs: readonly Ev[]) => new Set(evs.map((e) => e.cat));
const line = (e: Ev) => `${e.pid}/${e.tid} ${e.ph} ${e.ts}${e.dur ? `+${e.dur}` : ""} ${e.name}`;

describe("tirx trace", () => {
  test("writes JSON with cp.async groups, waits and barrier phases per warp (CLI, copy_async)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-trace-"));
    try {
      const out = join(dir, "t.json");
      const r = spawnSync(
        process.execPath,
        [bin, "trace", "examples/copy_async.ts", "--kernel", "copy_async", "--out", out],
        { cwd: root, encoding: "utf8" },
      );
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      const t = JSON.parse(readFileSync(out, "utf8")) as { traceEvents: Ev[] };
      expect(kinds(t.traceEvents)).toEqual(new Set(["cp.async", "wait", "barrier"]));
      // 128 threads: warps 0..3 of CTA 0 each have a group, a wait and two barrier phases.
      expect(new Set(t.traceEvents.map((e) => e.tid))).toEqual(new Set([0, 1, 2, 3]));
      for (const e of t.traceEvents) {
        expect(["X", "i"]).toContain(e.ph);
        expect(Number.isInteger(e.ts)).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("snapshot of copy_async's trace (warp 0)", () => {
    const evs = traceKernel(copy_async).traceEvents.filter((e) => e.tid === 0);
    expect(evs.map(line)).toMatchInlineSnapshot(`
      [
        "0/0 X 2+2 cp.async group",
        "0/0 X 4+1 cp.async.wait_group 0",
        "0/0 i 5 cta_sync",
        "0/0 X 0+5 barrier phase 0",
        "0/0 X 5+33 barrier phase 1",
      ]
    `);
  });

  test("bulk_pipeline: bulk copies, mbarrier phases, try_wait and barrier events, one pid per CTA", () => {
    const fn = makeBulkPipeline({ elements: 1024, tileBytes: 1024, stages: 2, grid: 2 });
    const t = traceKernel(fn);
    expect(t.otherData["hazards"]).toBe("");
    const evs = t.traceEvents as readonly Ev[];
    expect(kinds(evs)).toEqual(new Set(["mbarrier", "bulk", "wait", "barrier"]));
    expect(new Set(evs.map((e) => e.pid))).toEqual(new Set([0, 1]));
    // 4 tiles of 1 KiB, 2 per CTA on 2 stages: each stage's mbarrier completes one phase.
    const phases = evs.filter((e) => e.cat === "mbarrier" && e.ph === "X");
    expect(phases.map((e) => `${e.pid} ${e.name}`).sort()).toEqual([
      '0 mbarrier "bars"[0] phase 0',
      '0 mbarrier "bars"[1] phase 0',
      '1 mbarrier "bars"[0] phase 0',
      '1 mbarrier "bars"[1] phase 0',
    ]);
    expect(evs.some((e) => e.name.includes("try_wait") && e.name.endsWith("passed"))).toBe(true);
  });

  test("hazards: printed as diagnostics on stderr, the trace still written, exit 1 (CLI)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-trace-"));
    try {
      const out = join(dir, "t.json");
      const r = spawnSync(
        process.execPath,
        [bin, "trace", "test/fixtures/hazard_no_wait.ts", "--out", out],
        { cwd: root, encoding: "utf8" },
      );
      expect(r.status).toBe(1);
      // One line naming what was written; the trace itself in the file only.
      expect(r.stdout).toMatch(
        /^\S+t\.json: the trace of "no_wait", \d+ events \(open it in chrome:\/\/tracing or Perfetto\)\n$/,
      );
      const text = readFileSync(join(root, "test/fixtures/hazard_no_wait.ts"), "utf8").split("\n");
      const line = text.findIndex((l) => l.includes("// HAZARD")) + 1;
      // The format of every kernel error: file:line:col, code and rule, a code frame.
      expect(r.stderr).toMatch(
        new RegExp(
          `^test/fixtures/hazard_no_wait\\.ts:${line}:\\d+: error TX6001 \\[hazard/async-pending\\]: `,
          "m",
        ),
      );
      expect(r.stderr).toMatch(new RegExp(`^> +${line} \\| .*// HAZARD$`, "m"));
      expect(r.stderr).toContain("error TX6017 [hazard/exit-pending]");
      expect(r.stderr).toMatch(
        /^tirx: 2 hazard reports \(2 distinct\) in the simulated run of "no_wait"/m,
      );
      expect(existsSync(out)).toBe(true);
      const t = JSON.parse(readFileSync(out, "utf8")) as { otherData: { hazards: string } };
      const hazards = t.otherData.hazards.split("\n");
      expect(hazards.map((h) => h.split(" (")[0]!.split(" ").slice(0, 2).join(" "))).toEqual([
        "TX6001 [hazard/async-pending]",
        "TX6017 [hazard/exit-pending]",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
