// The lab in a real browser: Chromium from the system's packages (/usr/bin/chromium, never a
// downloaded build) driven by playwright-core against the lab as `npm run lab` serves it: built
// by Vite (into a temporary folder) and served by `vite preview`. In one page session, every example of examples/ (builder, tile, script mode, multi-GPU) loads into the editor,
// shows its PTX with no diagnostic, and its Run passes its own check on the simulated device (a
// script-mode twin runs its builder twin's check on the same instructions: of those, only
// script/vector_add.ts runs here unless TIRX_LAB_ALL=1, nor do the FlashAttention and Hopper
// GEMM examples, whose simulated runs test/examples.test.ts checks in Node);
// a kernel whose cta_sync is missing shows the simulator's race report naming both accesses'
// lines, both highlighted in the editor. With TIRX_LAB_SHOTS=1, a screenshot of each goes to
// bench/results/lab/ (3 s of a run's 35 otherwise spent encoding 35 PNGs nothing compares).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { build, preview, type PreviewServer } from "vite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CHROMIUM = "/usr/bin/chromium";
const root = fileURLToPath(new URL("../../../", import.meta.url));
const shots = join(root, "bench/results/lab");

/** Every example under examples/, as the lab names them ("tile/softmax.ts"). */
function examples(dir = join(root, "examples"), prefix = ""): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory()
        ? examples(join(dir, e.name), `${prefix}${e.name}/`)
        : e.name.endsWith(".ts")
          ? [`${prefix}${e.name}`]
          : [],
    )
    .sort();
}

/** What the page exposes as window.tirxLab (packages/lab/src/main.ts). */
interface LabState {
  builds: number;
  runs: number;
  building: boolean;
  running: boolean;
  lastBuild?: {
    kernels: string[];
    ptx?: string;
    diagnostics: { code: string; message: string }[];
  };
  lastRun?: {
    ok: boolean;
    summary: string;
    reports: {
      code: string;
      message: string;
      at?: { line: number };
      notes: { message: string; at?: { line: number } }[];
    }[];
    diagnostics: { message: string }[];
    trace: unknown[];
  };
  load(path: string): void;
  setSource(text: string): void;
}
declare const tirxLab: LabState;

/** A run's reply as the tests see it: its trace as the number of its events. */
type RunSeen = Omit<NonNullable<LabState["lastRun"]>, "trace"> & { traceEvents: number };

/** B[i] = A[N − 1 − i] through shared memory with no cta_sync between the write and the read. */
const RACY = `import { T } from "tirx-ts";
const N = 128;
export const reverse = T.function(
  "reverse",
  { A: T.Tensor([N], "float32"), B: T.Tensor([N], "float32") },
  ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [1], block: N }) });
    const t = T.cuda.thread_idx("x");
    const tile = T.alloc_shared([N], "float32", { name: "tile" });
    tile.set([t], A.get([t]));
    B.set([t], tile.get([T.sub(N - 1, t)]));
  },
);
`;

/**
 * The examples whose simulated Run at their example size costs seconds of the suite's time
 * (FlashAttention forward and backward, the Hopper GEMMs): test/examples.test.ts runs each of
 * them on the simulator in Node, and bench/lab.ts runs gemm_hopper.ts in this page; here they
 * show their PTX, and TIRX_LAB_ALL=1 runs them too.
 */
const HEAVY = /(^|\/)(flash_attention|flash_attention_backward|gemm_hopper)\.ts$/;

/**
 * Examples whose Run the test clicks: those with a `runExample` (the lab's Run calls it; the
 * multi-GPU examples check several simulated PEs through functions with parameters, and show
 * their PTX only), all of them with TIRX_LAB_ALL=1, else all but the script-mode twins (but
 * script/vector_add.ts) and the HEAVY ones.
 */
const runs = (path: string): boolean =>
  /export function runExample\b/.test(readFileSync(join(root, "examples", path), "utf8")) &&
  (process.env["TIRX_LAB_ALL"] === "1" ||
    ((!path.startsWith("script/") || path === "script/vector_add.ts") && !HEAVY.test(path)));

const available = existsSync(CHROMIUM);
if (!available)
  console.log(`lab browser test skipped: ${CHROMIUM} is missing (apt-get install -y chromium)`);

describe.skipIf(!available)("the lab in Chromium", () => {
  let server: PreviewServer;
  let context: BrowserContext;
  let page: Page;
  let profile: string;
  let dist: string;

  /**
   * Wait until the page has finished a build after `before` builds; its last build then. Only
   * what the tests read crosses from the page: the whole state also held the last run's trace
   * (up to 20,000 events), which the page serialized and this process parsed and validated at
   * every build (Chromium's CPU for the file 14-16 s without it instead of 17-20, this process
   * 2.6-3.0 s instead of 3.9-5.1, the 2-core machine).
   */
  const built = async (before: number): Promise<Pick<LabState, "lastBuild">> => {
    await page.waitForFunction(
      (n) => typeof tirxLab !== "undefined" && tirxLab.builds > n && !tirxLab.building,
      before,
      {
        timeout: 60_000,
      },
    );
    return page.evaluate(() => ({ lastBuild: tirxLab.lastBuild }));
  };
  const builds = (): Promise<number> => page.evaluate(() => tirxLab.builds);
  /** Click Run and wait for its reply: the reply, its trace as the number of its events. */
  const run = async (): Promise<RunSeen> => {
    const before = await page.evaluate(() => tirxLab.runs);
    await page.click("#run");
    await page.waitForFunction((n) => tirxLab.runs > n, before, { timeout: 120_000 });
    return page.evaluate(() => {
      const { trace, ...rest } = tirxLab.lastRun!;
      return { ...rest, traceEvents: trace.length };
    });
  };
  /** With TIRX_LAB_SHOTS=1, the page as a PNG in bench/results/lab/; nothing otherwise. */
  const shot = async (name: string): Promise<void> => {
    if (process.env["TIRX_LAB_SHOTS"] !== "1") return;
    mkdirSync(shots, { recursive: true });
    const file = `${name.replace(/\//g, "-").replace(/\.ts$/, "")}.png`;
    await page.screenshot({ path: join(shots, file) });
  };

  beforeAll(async () => {
    // `npm run lab`: vite build, then vite preview of what it wrote. The page and its workers load
    // a few bundled, minified files instead of the dev server's few hundred modules (each
    // transformed on request, twice over: the build and the run worker each import the
    // compiler): on the 2-core machine Chromium took about 24 s of CPU for the file instead of
    // 32-35 s, and this process 6 s (3 s of it building) instead of 7-8 s. The built page is
    // also the one whose worker bundle is named under packages/tirx-ts/dist/ (vite.config.ts),
    // the frames dsl's spans skip as the library's own.
    const options = {
      configFile: join(root, "packages/lab/vite.config.ts"),
      root: join(root, "packages/lab"),
      logLevel: "error" as const,
      clearScreen: false,
    };
    dist = mkdtempSync(join(tmpdir(), "tirx-lab-dist-"));
    await build({ ...options, build: { outDir: dist, emptyOutDir: true } });
    server = await preview({
      ...options,
      build: { outDir: dist },
      preview: { host: "127.0.0.1", port: 0, strictPort: false },
    });
    const address = server.httpServer.address() as { port: number };
    profile = mkdtempSync(join(tmpdir(), "tirx-lab-chromium-"));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        // The GPU process's software compositing inside the browser process (one process less).
        "--in-process-gpu",
        // V8 without its optimizing compilers and background threads: the page's code runs a
        // few times each (every example is built once, most run once), and compiling it
        // optimized cost more than it saved (Chromium's CPU for the file about 24 s → 17 s on
        // the 2-core machine); JavaScript means the same in every tier.
        "--js-flags=--no-opt --single-threaded",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
      ],
      viewport: { width: 800, height: 480 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`http://127.0.0.1:${address.port}/`);
    await built(0);
  }, 120_000);

  afterAll(async () => {
    await context?.close();
    await server?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
    if (dist) rmSync(dist, { recursive: true, force: true });
  });

  it("every example shows its PTX, and its Run passes its check", async () => {
    const all = examples();
    expect(all.length).toBeGreaterThan(10);
    for (const path of all) {
      const before = await builds();
      await page.evaluate((p) => tirxLab.load(p), path);
      const state = await built(before);
      expect(state.lastBuild!.diagnostics, path).toEqual([]);
      if (state.lastBuild!.kernels.length === 0) {
        // The multi-GPU examples export kernel builders and checks with parameters, no kernel:
        // the module loads with no diagnostic, and there is nothing to show or run.
        expect(path).toMatch(/^multi_gpu\//);
        continue;
      }
      expect(state.lastBuild!.ptx, path).toMatch(/\.visible \.entry \w+\(/);
      if (!runs(path)) {
        await shot(path);
        continue;
      }
      const r = await run();
      expect({ path, ok: r.ok, diagnostics: r.diagnostics, reports: r.reports.length }).toEqual({
        path,
        ok: true,
        diagnostics: [],
        reports: 0,
      });
      expect(r.summary, path).toMatch(/\d/);
      await shot(path);
    }
  }, 170_000);

  it("a missing cta_sync is a race naming both lines, both highlighted in the editor", async () => {
    const before = await builds();
    await page.evaluate((s) => tirxLab.setSource(s), RACY);
    const state = await built(before);
    expect(state.lastBuild!.diagnostics).toEqual([]);
    expect(state.lastBuild!.ptx).not.toMatch(/bar\.sync/);
    const r = await run();
    expect(r.ok).toBe(false);
    const lines = RACY.split("\n");
    const write = lines.findIndex((l) => l.includes("tile.set(")) + 1;
    const read = lines.findIndex((l) => l.includes("tile.get(")) + 1;
    const race = r.reports.find((x) => x.code === "TX6003");
    expect(race, JSON.stringify(r.reports.slice(0, 2))).toBeDefined();
    expect(race!.message).toContain('"tile"');
    expect(race!.at?.line).toBe(read);
    expect(race!.notes.map((n) => n.at?.line)).toContain(write);
    // Both lines carry the lab's hazard highlight.
    const marked = await page.$$eval("[data-hazard-line]", (els) =>
      els.map((e) => Number(e.getAttribute("data-hazard-line"))),
    );
    expect(marked.sort((a, b) => a - b)).toEqual([write, read]);
    // The Run panel lists the report with the line of each access.
    const listed = await page.textContent("#reports");
    expect(listed).toContain(`:${read}:`);
    expect(listed).toContain(`:${write}:`);
    expect(r.traceEvents).toBeGreaterThan(0);
    await shot("race-missing-cta-sync");
  }, 60_000);
});
