// The lab's worker: transpiles the editor's TypeScript (sucrase: types removed, lines kept),
// evaluates it as an ES module from a blob URL (its imports of "tirx-ts", @tirx-ts/* and the
// examples rewritten to blob modules), then verifies, emits PTX, prints IR after a pass, draws
// layouts or runs the example on the simulated device. The module's stack frames carry its blob
// URL, so the editor's text is registered under that URL (registerSource): spans, code frames and
// script mode read the editor's lines.
import { transform } from "sucrase";
import {
  isTirxError,
  registerSource,
  runPipeline,
  verify,
  type PrimFunc,
  type Span,
  type TirxError,
} from "@tirx-ts/core";
import { explainTile, printFunc, provideTypeScript } from "@tirx-ts/dsl";
import { emitPtx, PTX_PASSES } from "@tirx-ts/codegen-ptx";
import { runSim, sim, type TraceEvent } from "@tirx-ts/runtime-sim";
import * as lab from "./tirx-lab.js";
import { patternArgs } from "tirx-ts/src/pattern-args.js";
import { EXAMPLES, resolveExample } from "./examples.js";
import type { BuildReply, Diag, LayoutReply, Reply, Request, RunReply, Where } from "./protocol.js";

/** The stages whose IR the page offers: the verifier's output, then each PTX pass. */
const STAGES = ["verify", ...PTX_PASSES.map((p) => p.name)];

/** Trace events sent to the page at most (the timeline draws the first CTAs). */
const TRACE_EVENTS = 20_000;

(globalThis as { __tirxLab?: unknown }).__tirxLab = lab;
/**
 * What an example's `process` is in the lab (`process.argv[1]` to tell whether it is the entry
 * point, `process.exitCode`): no entry point, no environment. A module's own, not a global: the
 * packages tell Node from a browser by globalThis.process.
 */
(globalThis as { __tirxProcess?: unknown }).__tirxProcess = { argv: [], env: {}, exitCode: 0 };

/** Blob URL of the module that re-exports the lab library (made once). */
let libUrl: string | undefined;
function libModule(): string {
  if (libUrl) return libUrl;
  const names = Object.keys(lab).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== "default");
  const text =
    `const L = globalThis.__tirxLab;\n` +
    names.map((n) => `export const ${n} = L.${n};`).join("\n") +
    `\nexport default L;\n`;
  libUrl = URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
  return libUrl;
}

/** A module standing in for one the browser has not (node:fs …): each name throws when called. */
function stubModule(spec: string, names: readonly string[]): string {
  const body = names
    .map(
      (n) =>
        `export const ${n} = () => { throw new L.TirxError("TX5010", ${JSON.stringify(`${spec}'s ${n} is not available in the lab (a browser)`)}); };`,
    )
    .join("\n");
  const text = `const L = globalThis.__tirxLab;\n${body}\nexport default {};\n`;
  return URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
}

/** Blob URL → the file it holds ("kernel.ts" for the editor, or an example's path). */
const fileOfUrl = new Map<string, string>();
/** The same by the URL's last segment (a UUID), which the spans' short forms print. */
const fileOfId = new Map<string, string>();
/** Example modules already made, by path (their text never changes). */
const exampleUrls = new Map<string, string>();

/** Did we give script mode its parser. */
let tsProvided = false;

/**
 * A blob URL of the module for `source` (the file `file`), its imports rewritten: "tirx-ts" and
 * @tirx-ts/* to the lab library, relative imports to the examples they name, anything else to
 * a stub. Registers the text under the URL for spans.
 * @throws SyntaxError from sucrase for text it cannot parse.
 */
async function moduleUrl(file: string, source: string): Promise<string> {
  if (!tsProvided && /\bprim_func\b/.test(source)) {
    const ts = (await import("typescript")) as unknown as { default?: unknown };
    provideTypeScript({ ts: (ts.default ?? ts) as Parameters<typeof provideTypeScript>[0]["ts"] });
    tsProvided = true;
  }
  const plain = transform(source, {
    transforms: ["typescript"],
    disableESTransforms: true,
    filePath: file,
  }).code;
  // A module that reads `process` and declares none gets the lab's, on its first line (lines kept).
  const js =
    /\bprocess\b/.test(plain) && !/\b(const|let|var|function)\s+process\b/.test(plain)
      ? `const process = globalThis.__tirxProcess; ${plain}`
      : plain;
  const deps = new Map<string, string>();
  const specs = [...js.matchAll(/\b(?:from|import)\s*["']([^"']+)["']/g)].map((m) => m[1]!);
  for (const spec of new Set(specs)) {
    if (spec === "tirx-ts" || spec.startsWith("@tirx-ts/")) deps.set(spec, libModule());
    else {
      const path = resolveExample(file, spec);
      if (path !== undefined) {
        let url = exampleUrls.get(path);
        if (!url) {
          url = await moduleUrl(path, EXAMPLES[path]!);
          exampleUrls.set(path, url);
        }
        deps.set(spec, url);
      } else {
        const names = importedNames(js, spec);
        deps.set(spec, stubModule(spec, names));
      }
    }
  }
  const rewritten = js.replace(
    /\b(from|import)(\s*)(["'])([^"']+)\3/g,
    (all, kw: string, sp: string, _q: string, spec: string) =>
      deps.has(spec) ? `${kw}${sp}"${deps.get(spec)}"` : all,
  );
  const url = URL.createObjectURL(new Blob([rewritten], { type: "text/javascript" }));
  fileOfUrl.set(url, file);
  fileOfId.set(url.slice(url.lastIndexOf("/") + 1), file);
  registerSource(url, source);
  return url;
}

/** The names `js` imports from `spec` (`import { a, b as c } from "spec"`). */
function importedNames(js: string, spec: string): string[] {
  const out: string[] = [];
  const re = new RegExp(
    `import\\s*\\{([^}]*)\\}\\s*from\\s*["']${spec.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}["']`,
    "g",
  );
  for (const m of js.matchAll(re)) {
    for (const part of m[1]!.split(",")) {
      const name = part
        .trim()
        .split(/\s+as\s+/)[0]!
        .trim();
      if (/^[A-Za-z_$][\w$]*$/.test(name)) out.push(name);
    }
  }
  return out;
}

/** The module of the editor's text, evaluated afresh, and its kernels in source order. */
interface Loaded {
  readonly mod: Record<string, unknown>;
  readonly kernels: Map<string, PrimFunc>;
}

const isPrimFunc = (v: unknown): v is PrimFunc =>
  typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "PrimFunc";

/** The last load's times (ms): transpiling and making the module, evaluating it. */
const loadPhases = { transform: 0, evaluate: 0 };

async function load(file: string, source: string): Promise<Loaded> {
  const t0 = performance.now();
  const url = await moduleUrl(file, source);
  loadPhases.transform = performance.now() - t0;
  try {
    const mod = (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
    loadPhases.evaluate = performance.now() - t0 - loadPhases.transform;
    const found = Object.entries(mod).filter((e): e is [string, PrimFunc] => isPrimFunc(e[1]));
    const at = (name: string): number => {
      const i = source.search(new RegExp(`export\\s+(const|let|var|function)\\s+${name}\\b`));
      return i < 0 ? Infinity : i;
    };
    found.sort(([a], [b]) => at(a) - at(b));
    return { mod, kernels: new Map(found) };
  } finally {
    // The editor's module is evaluated once: its URL is not imported again.
    URL.revokeObjectURL(url);
  }
}

/** A span as the page places it (the file the blob URL holds). */
function where(span: Span | undefined): Where | undefined {
  if (!span || !span.line) return undefined;
  const file = fileOfUrl.get(span.file) ?? span.file;
  return { file, line: span.line, col: span.col, ...(span.length ? { length: span.length } : {}) };
}

/** `text` with each blob URL of ours replaced by the file it holds. */
const unblob = (text: string): string =>
  text
    .replace(/blob:[^\s)]+?(?=:\d+:\d+|[\s)]|$)/g, (u) => fileOfUrl.get(u) ?? u)
    .replace(
      /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g,
      (id) => fileOfId.get(id) ?? id,
    );

/** A TirxError as diagnostics (each error of an aggregate), or a thrown value as one. */
function diagnosticsOf(e: unknown, severity: "error" | "warning" = "error"): Diag[] {
  if (isTirxError(e)) {
    return e.all.map((x: TirxError) => ({
      code: x.code,
      message: unblob(x.message),
      severity,
      ...(where(x.span) ? { at: where(x.span)! } : {}),
      notes: x.notes.map((n) => ({
        message: unblob(n.message),
        ...(where(n.span) ? { at: where(n.span)! } : {}),
      })),
    }));
  }
  const err = e as {
    name?: string;
    message?: string;
    stack?: string;
    loc?: { line: number; column: number };
  };
  const message = unblob(`${err.name ?? "Error"}: ${err.message ?? String(e)}`);
  let at: Where | undefined;
  if (err.loc) at = { file: "kernel.ts", line: err.loc.line, col: err.loc.column + 1 };
  else {
    for (const m of (err.stack ?? "").matchAll(/(blob:[^\s)]+?):(\d+):(\d+)/g)) {
      const file = fileOfUrl.get(m[1]!);
      if (file) {
        at = { file, line: Number(m[2]), col: Number(m[3]) };
        break;
      }
    }
  }
  return [{ code: "", message, severity, ...(at ? { at } : {}), notes: [] }];
}

/** The kernel the page asked for, or the first. */
function chosen(l: Loaded, name: string | undefined): PrimFunc | undefined {
  return (name !== undefined ? l.kernels.get(name) : undefined) ?? l.kernels.values().next().value;
}

async function build(r: Extract<Request, { kind: "build" }>): Promise<BuildReply> {
  const phases: Record<string, number> = {};
  let t = performance.now();
  /** Time since the last mark, as phase `name`. */
  const mark = (name: string): void => {
    const now = performance.now();
    phases[name] = now - t;
    t = now;
  };
  const base = { kind: "build" as const, id: r.id, stages: STAGES, phases };
  let l: Loaded;
  try {
    l = await load(r.file, r.source);
    mark("load");
    phases["transform"] = loadPhases.transform;
    phases["evaluate"] = loadPhases.evaluate;
  } catch (e) {
    return { ...base, kernels: [], explain: [], diagnostics: diagnosticsOf(e) };
  }
  const fn = chosen(l, r.kernel);
  const kernels = [...l.kernels.keys()];
  if (!fn) return { ...base, kernels, explain: [], diagnostics: [] };
  const name = [...l.kernels].find(([, f]) => f === fn)![0];
  const diags: Diag[] = [];
  let ptx: string | undefined;
  let ir: string | undefined;
  let explain: string[] = [];
  try {
    const vf = verify(fn);
    mark("verify");
    ptx = emitPtx(vf).text;
    mark("ptx");
    const after = r.after ?? "verify";
    ir =
      after === "verify" ? printFunc(vf.fn) : printFunc(runPipeline(vf, PTX_PASSES, { after }).fn);
    mark("ir");
    explain = explainTile(fn).map(unblob);
    mark("explain");
  } catch (e) {
    diags.push(...diagnosticsOf(e));
    if (ir === undefined) ir = printFunc(fn);
  }
  return {
    ...base,
    kernels,
    kernel: name,
    ...(ptx !== undefined ? { ptx } : {}),
    ...(ir !== undefined ? { ir } : {}),
    explain,
    diagnostics: diags,
  };
}

async function run(r: Extract<Request, { kind: "run" }>): Promise<RunReply> {
  const base = { kind: "run" as const, id: r.id };
  lab.resetLaunches();
  let ok = false;
  let summary = "";
  const diags: Diag[] = [];
  try {
    const l = await load(r.file, r.source);
    lab.resetLaunches();
    const runExample = l.mod["runExample"];
    if (typeof runExample === "function") {
      const res = (runExample as (dev: unknown) => lab.ExampleResult)(sim());
      ok = res.ok;
      summary = res.summary + (res.approximate ? ` (approximate: ${res.approximate})` : "");
    } else {
      const fn = chosen(l, r.kernel);
      if (!fn) summary = "no exported kernel to run";
      else {
        const vf = verify(fn);
        const res = runSim(vf, patternArgs(fn), { hazards: "collect", trace: true });
        lab.launches.push({ kernel: fn.name, reports: res.reports, trace: res.trace });
        summary = `ran ${fn.name} on pattern arguments (tensors i % 251, scalars 1)`;
        ok = true;
      }
    }
  } catch (e) {
    diags.push(...diagnosticsOf(e));
    summary = "the run threw";
  }
  const reports = lab.launches.flatMap((x) => x.reports.flatMap((e) => diagnosticsOf(e)));
  if (reports.length > 0) ok = false;
  const traced = lab.launches.find((x) => x.trace && x.trace.length > 0);
  const trace: readonly TraceEvent[] = traced?.trace?.slice(0, TRACE_EVENTS) ?? [];
  return {
    ...base,
    ok: ok && diags.length === 0,
    summary,
    reports,
    diagnostics: diags,
    launches: lab.launches.length,
    trace,
    ...(traced ? { traceKernel: traced.kernel } : {}),
  };
}

async function layouts(r: Extract<Request, { kind: "layouts" }>): Promise<LayoutReply> {
  const base = { kind: "layouts" as const, id: r.id };
  try {
    const l = await load(r.file, r.source);
    const fn = chosen(l, r.kernel);
    const pictures = fn ? lab.layoutPictures(fn).map((p) => ({ name: p.name, svg: p.svg })) : [];
    return { ...base, pictures, diagnostics: [] };
  } catch (e) {
    return { ...base, pictures: [], diagnostics: diagnosticsOf(e) };
  }
}

self.onmessage = async (ev: MessageEvent<Request>) => {
  const r = ev.data;
  let reply: Reply;
  try {
    reply =
      r.kind === "build" ? await build(r) : r.kind === "run" ? await run(r) : await layouts(r);
  } catch (e) {
    // What the handlers did not expect: the page still gets an answer, with the error.
    const diagnostics = diagnosticsOf(e);
    reply =
      r.kind === "build"
        ? {
            kind: "build",
            id: r.id,
            kernels: [],
            stages: STAGES,
            explain: [],
            diagnostics,
            phases: {},
          }
        : r.kind === "run"
          ? {
              kind: "run",
              id: r.id,
              ok: false,
              summary: "the lab failed",
              reports: [],
              diagnostics,
              launches: 0,
              trace: [],
            }
          : { kind: "layouts", id: r.id, pictures: [], diagnostics };
  }
  (self as unknown as Worker).postMessage(reply);
};
