// The compiler packages run in a browser: core, dsl, codegen-ptx and runtime-sim bundle with
// esbuild for the browser platform with no Node built-in (each package's entry), and a bundle of
// all four builds a kernel, emits its PTX and runs it on the simulated device inside a fresh V8
// context that has no `process`, `require` or Node module at all (what a browser page or worker
// gives), where a missing cta_sync is reported as a race naming both accesses.
import { runInNewContext } from "node:vm";
import { fileURLToPath } from "node:url";
import { build, type BuildOptions } from "esbuild";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const PACKAGES = ["core", "dsl", "codegen-ptx", "runtime-sim"] as const;

/** esbuild's options for a browser bundle of the packages' sources. */
const browser: BuildOptions & { write: false; metafile: true } = {
  bundle: true,
  platform: "browser",
  write: false,
  metafile: true,
  conditions: ["source"],
  logLevel: "silent",
  // Not the process's working directory, which another file of the worker may have changed.
  absWorkingDir: root,
};

/** The kernel a page would write: B[i] = A[n − 1 − i] through shared memory, with or without the barrier. */
const ENTRY = `
import { T } from "@tirx-ts/dsl";
import { verify } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
const N = 128;
const reverse = (sync) =>
  T.function("reverse", { A: T.Tensor([N], "float32"), B: T.Tensor([N], "float32") }, ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [1], block: N }) });
    const t = T.cuda.thread_idx("x");
    const tile = T.alloc_shared([N], "float32", { name: "tile" });
    tile.set([t], A.get([t]));
    if (sync) T.cuda.cta_sync();
    B.set([t], tile.get([T.sub(N - 1, t)]));
  });
const input = Float32Array.from({ length: N }, (_, i) => i * 0.5 - 7);
const out = {};
for (const sync of [true, false]) {
  const kernel = reverse(sync);
  const fn = verify(kernel);
  const a = simTensor(input, { shape: [N], dtype: "float32" });
  const b = simZeros([N], "float32");
  const { reports } = runSim(fn, [a, b], { hazards: "collect" });
  out[sync ? "synced" : "racy"] = {
    ptx: compileToPtx(kernel, { arch: "sm_90" }).text,
    output: Array.from(b.toArray()),
    reports: reports.map((r) => ({ code: r.code, message: r.message, notes: (r.notes ?? []).map((n) => n.message) })),
  };
}
globalThis.result = { input: Array.from(input), ...out };
`;

describe("browser bundles of the compiler packages", () => {
  it("core, dsl, codegen-ptx and runtime-sim each bundle for the browser platform with no Node built-in", async () => {
    // One build of the four entries (esbuild parses the shared modules once).
    const r = await build({
      ...browser,
      entryPoints: Object.fromEntries(
        PACKAGES.map((p) => [p, `${root}packages/${p}/src/index.ts`]),
      ),
      outdir: "browser-bundles",
      format: "esm",
      splitting: false,
    });
    for (const p of PACKAGES) {
      const out = Object.entries(r.metafile.outputs).find(([, o]) =>
        (o.entryPoint ?? "").endsWith(`packages/${p}/src/index.ts`),
      );
      expect(out, p).toBeDefined();
      const inputs = Object.keys(out![1].inputs);
      expect(
        inputs.filter((i) => i.startsWith("node:")),
        p,
      ).toEqual([]);
      // No Node-only package in the bundle (the driver binding, the script-mode parser).
      expect(
        inputs.filter((i) => /node_modules\/(koffi|ts-morph|typescript)\//.test(i)),
        p,
      ).toEqual([]);
    }
  });

  it("builds, emits PTX and simulates a kernel in a context with no process, require or Node module", async () => {
    const r = await build({
      ...browser,
      stdin: { contents: ENTRY, resolveDir: root, loader: "ts", sourcefile: "page.ts" },
      format: "iife",
    });
    const code = r.outputFiles[0]!.text;
    // What a browser worker has (no process, require, Buffer, module or __dirname).
    const context: Record<string, unknown> = {
      console,
      URL,
      TextEncoder,
      TextDecoder,
      queueMicrotask,
      setTimeout,
      clearTimeout,
      structuredClone,
    };
    context["globalThis"] = context;
    context["self"] = context;
    runInNewContext(code, context, { filename: "page.js" });
    const result = context["result"] as {
      input: number[];
      synced: { ptx: string; output: number[]; reports: { code: string; message: string }[] };
      racy: {
        ptx: string;
        output: number[];
        reports: { code: string; message: string; notes: string[] }[];
      };
    };
    const want = [...result.input].reverse();
    expect(result.synced.reports).toEqual([]);
    expect(result.synced.output).toEqual(want);
    expect(result.synced.ptx).toMatch(/\.entry reverse\(/);
    expect(result.synced.ptx).toMatch(/bar\.sync 0;/);
    expect(result.racy.ptx).not.toMatch(/bar\.sync/);
    // Without the barrier, thread t reads tile[N − 1 − t] that another warp writes, unordered.
    const race = result.racy.reports.find((x) => x.message.includes('"tile"'));
    expect(race, JSON.stringify(result.racy.reports.slice(0, 2))).toBeDefined();
  });
});
