// The lab in Chromium (Debian's /usr/bin/chromium, driven by playwright-core), on its production
// build served by `vite preview`: a keystroke in the seed kernel (examples/vector_add.ts) to its
// diagnostics and PTX shown (the editor's handling of the key included; target ≤ 50 ms warm), a
// simulated Run of the seed kernel with its check (≤ 100 ms), and a Run of examples/gemm_hopper.ts
// at its example size (≤ 3 s). Times are the page's clock (performance.now()) from the key press or
// click to the reply shown; medians of warm repetitions after one untimed warm-up. Writes
// bench/results/lab-<date>.md (or --out FILE).
// Run: npx tsx -C source bench/lab.ts [--out FILE] [--no-build]
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { chromium, type Page } from "playwright-core";
import { build, preview } from "vite";

const CHROMIUM = "/usr/bin/chromium";
const { values } = parseArgs({
  options: { out: { type: "string" }, "no-build": { type: "boolean", default: false } },
});
const root = fileURLToPath(new URL("..", import.meta.url));
const labDir = join(root, "packages/lab");
const day = new Date().toISOString().slice(0, 10);
const out = values.out ?? join(root, "bench/results", `lab-${day}.md`);

if (!existsSync(CHROMIUM)) {
  console.log(`bench/lab: ${CHROMIUM} is missing (apt-get install -y chromium); nothing measured`);
  process.exit(0);
}

/** The page's window.tirxLab (packages/lab/src/main.ts), as far as the bench reads it. */
interface Lab {
  builds: number;
  runs: number;
  builtAt: number;
  ranAt: number;
  building: boolean;
  lastRun?: { ok: boolean; summary: string };
  lastBuild?: { ptx?: string; diagnostics: unknown[]; phases: Record<string, number> };
  load(path: string): void;
}
declare const tirxLab: Lab;
/** The page's globals the bench's page functions use (this file is type-checked without DOM). */
declare const window: { keyAt: number; clickAt: number };
declare const document: {
  addEventListener(type: string, f: () => void, o: object): void;
  getElementById(id: string): { addEventListener(type: string, f: () => void, o: object): void };
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Wait for the build after `before` builds to be shown. */
async function built(page: Page, before: number): Promise<void> {
  await page.waitForFunction(
    (n) => typeof tirxLab !== "undefined" && tirxLab.builds > n && !tirxLab.building,
    before,
    { timeout: 120_000 },
  );
}

/**
 * One keystroke at the end of the editor's first line (a comment) and the time until its
 * build is shown: key down (page clock) to builtAt.
 */
async function keystroke(page: Page, key: string): Promise<number> {
  const before = await page.evaluate(() => tirxLab.builds);
  await page.evaluate(() => {
    window.keyAt = 0;
    document.addEventListener("keydown", () => (window.keyAt = performance.now()), {
      once: true,
      capture: true,
    });
  });
  await page.keyboard.press(key);
  await built(page, before);
  return page.evaluate(() => tirxLab.builtAt - window.keyAt);
}

/** Click Run and return the time from the click to the verdict shown, and the verdict. */
async function run(page: Page): Promise<{ ms: number; ok: boolean; summary: string }> {
  const before = await page.evaluate(() => tirxLab.runs);
  await page.evaluate(() => {
    window.clickAt = 0;
    document
      .getElementById("run")!
      .addEventListener("click", () => (window.clickAt = performance.now()), {
        once: true,
        capture: true,
      });
  });
  await page.click("#run");
  await page.waitForFunction((n) => tirxLab.runs > n, before, { timeout: 120_000 });
  return page.evaluate(() => ({
    ms: tirxLab.ranAt - window.clickAt,
    ok: tirxLab.lastRun!.ok,
    summary: tirxLab.lastRun!.summary,
  }));
}

if (!values["no-build"]) {
  console.log("bench/lab: building the lab (vite build)…");
  await build({ configFile: join(labDir, "vite.config.ts"), root: labDir, logLevel: "warn" });
}
const server = await preview({
  configFile: join(labDir, "vite.config.ts"),
  root: labDir,
  preview: { host: "127.0.0.1", port: 0 },
  logLevel: "warn",
});
const port = (server.httpServer.address() as { port: number }).port;
const profile = mkdtempSync(join(tmpdir(), "tirx-lab-bench-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
  ],
  viewport: { width: 1280, height: 800 },
});
const rows: string[] = [];
try {
  const page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`http://127.0.0.1:${port}/`);
  await built(page, 0);
  // The caret at the end of line 1 (a comment): a key changes no kernel, the build runs in full.
  await page.click(".cm-content .cm-line >> nth=0");
  await page.keyboard.press("End");
  const keys: number[] = [];
  const phases = new Map<string, number[]>();
  for (let i = 0; i < 21; i++) {
    keys.push(await keystroke(page, i % 2 === 0 ? "x" : "Backspace"));
    const p = await page.evaluate(() => tirxLab.lastBuild!.phases);
    if (i > 0) for (const [k, v] of Object.entries(p)) phases.set(k, [...(phases.get(k) ?? []), v]);
  }
  keys.shift();
  const seedRuns: number[] = [];
  let seed = { ok: false, summary: "" };
  for (let i = 0; i < 11; i++) {
    const r = await run(page);
    seed = r;
    if (i > 0) seedRuns.push(r.ms);
  }
  const before = await page.evaluate(() => tirxLab.builds);
  await page.evaluate(() => tirxLab.load("gemm_hopper.ts"));
  await built(page, before);
  const gemm: number[] = [];
  let gemmRun = { ok: false, summary: "" };
  for (let i = 0; i < 4; i++) {
    const r = await run(page);
    gemmRun = r;
    if (i > 0) gemm.push(r.ms);
  }
  const fmt = (xs: number[]): string =>
    `${median(xs).toFixed(1)} ms (min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)}, n ${xs.length})`;
  rows.push(
    `| keystroke → diagnostics and PTX, seed kernel (vector_add.ts) | ≤ 50 ms | ${fmt(keys)} |`,
    `| of which in the worker: ${[...phases].map(([k, v]) => `${k} ${median(v).toFixed(1)}`).join(", ")} (ms, medians) | | |`,
    `| Run of the seed kernel (n = 1003, check included): ${seed.ok ? "PASS" : "FAIL"} | ≤ 100 ms | ${fmt(seedRuns)} |`,
    `| Run of gemm_hopper.ts (256 × 256 × 128): ${gemmRun.ok ? "PASS" : "FAIL"} | ≤ 3000 ms | ${fmt(gemm)} |`,
  );
} finally {
  await context.close();
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}
const browserVersion = context.browser()?.version() ?? "Chromium";
const text = [
  "# the lab in Chromium",
  "",
  `- date: ${new Date().toISOString()}`,
  `- machine: ${cpus().length} × ${cpus()[0]?.model ?? "unknown CPU"}, ${browserVersion} (${CHROMIUM}, headless)`,
  `- load average at the end: ${loadavg()
    .map((x) => x.toFixed(1))
    .join(", ")} (other processes share the cores: figures above 1 × cores are inflated)`,
  "- command: npx tsx -C source bench/lab.ts (vite build, then vite preview of packages/lab)",
  "- clock: the page's performance.now(), from the key press or the Run click to the reply shown",
  "  (a keystroke's build starts with its edit, no debounce); medians of warm repetitions",
  "",
  "| measure | target | median |",
  "| --- | --- | --- |",
  ...rows,
  "",
].join("\n");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, text);
console.log(text);
