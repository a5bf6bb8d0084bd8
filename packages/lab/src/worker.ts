// The lab's worker: transpiles the editor's TypeScript (sucrase: types removed, lines kept),
// evaluates it as an ES module from a data: URL (its imports of "tirx-ts", @tirx-ts/* and the
// examples rewritten to modules made once), then verifies, emits PTX, prints IR after a pass,
// draws layouts or runs the example on the simulated device. The module ends in a
// `//# sourceURL=` comment, a name of its own that its stack frames carry, and the editor's text is
// registered under that name (registerSource): spans, code frames and script mode read the
// editor's lines.
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

/** Stub modules made, by specifier and names (a stub's text is a function of them). */
const stubUrls = new Map<string, string>();

/**
 * A module standing in for one the browser has not (node:fs …): each name throws when called.
 * Made once per specifier and names, and imported again from the browser's module map after.
 */
function stubModule(spec: string, names: readonly string[]): string {
  const key = JSON.stringify([spec, names]);
  let url = stubUrls.get(key);
  if (url === undefined) stubUrls.set(key, (url = makeStub(spec, names)));
  return url;
}

function makeStub(spec: string, names: readonly string[]): string {
  const body = names
    .map(
      (n) =>
        `export const ${n} = () => { throw new L.TirxError("TX5010", ${JSON.stringify(`${spec}'s ${n} is not available in the lab (a browser)`)}); };`,
    )
    .join("\n");
  const text = `const L = globalThis.__tirxLab;\n${body}\nexport default {};\n`;
  return URL.createObjectURL(new Blob([text], { type: "text/javascript" }));
}

/** Random hex digits of this worker's module names, and the names made so far. */
const NAME_HEAD = Array.from({ length: 20 }, () =>
  Math.floor(Math.random() * 16).toString(16),
).join("");
let namesMade = 0;

/**
 * A new name for a module of ours (its `//# sourceURL`, the file its stack frames and spans
 * carry): `lab:/` and a UUID-shaped last segment, random per worker and counted per module,
 * which spans' short forms print (PTX comments) as they printed the UUID of a blob URL.
 */
function moduleName(): string {
  const h = NAME_HEAD + (++namesMade).toString(16).padStart(12, "0");
  return `lab:/${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** Module name → the file it holds ("kernel.ts" for the editor, or an example's path). */
const fileOfName = new Map<string, string>();
/** The same by the name's last segment (a UUID), which the spans' short forms print. */
const fileOfId = new Map<string, string>();
/** Example modules already made, by path (their text never changes). */
const exampleUrls = new Map<string, string>();

/** Did we give script mode its parser. */
let tsProvided = false;

/**
 * A data: URL of the module for `source` (the file `file`), its imports rewritten: "tirx-ts" and
 * @tirx-ts/* to the lab library, relative imports to the examples they name, anything else to
 * a stub. The module's last line names it (`//# sourceURL=`, a new moduleName), and the text is
 * registered under that name for spans. The worker reads a data: URL itself; a blob URL cost a
 * round trip to the browser process each to make, fetch and revoke it (the build's load phase
 * took 21 to 28 ms a keystroke from blob URLs, 11 from data: URLs, side by side on the 2-core
 * machine at load averages 5 to 11).
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
  const name = moduleName();
  fileOfName.set(name, file);
  fileOfId.set(name.slice(name.lastIndexOf("/") + 1), file);
  registerSource(name, source);
  // After the last line: no line or column of the text moves.
  return `data:text/javascript,${encodeURIComponent(`${rewritten}\n//# sourceURL=${name}\n`)}`;
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
  const mod = (await import(/* @vite-ignore */ url)) as Record<string, unknown>;
  loadPhases.evaluate = performance.now() - t0 - loadPhases.transform;
  const found = Object.entries(mod).filter((e): e is [string, PrimFunc] => isPrimFunc(e[1]));
  const at = (name: string): number => {
    const i = source.search(new RegExp(`export\\s+(const|let|var|function)\\s+${name}\\b`));
    return i < 0 ? Infinity : i;
  };
  found.sort(([a], [b]) => at(a) - at(b));
  return { mod, kernels: new Map(found) };
}

/** A span as the page places it (the file its module's name stands for). */
function where(span: Span | undefined): Where | undefined {
  if (!span || !span.line) return undefined;
  const file = fileOfName.get(span.file) ?? span.file;
  return { file, line: span.line, col: span.col, ...(span.length ? { length: span.length } : {}) };
}

/** `text` with each name of our modules replaced by the file it holds. */
const unname = (text: string): string =>
  text
    .replace(/lab:\/[^\s)]+?(?=:\d+:\d+|[\s)]|$)/g, (u) => fileOfName.get(u) ?? u)
    .replace(
      /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/g,
      (id) => fileOfId.get(id) ?? id,
    );

/** A TirxError as diagnostics (each error of an aggregate), or a thrown value as one. */
function diagnosticsOf(e: unknown, severity: "error" | "warning" = "error"): Diag[] {
  if (isTirxError(e)) {
    return e.all.map((x: TirxError) => ({
      code: x.code,
      message: unname(x.message),
      severity,
      ...(where(x.span) ? { at: where(x.span)! } : {}),
      notes: x.notes.map((n) => ({
        message: unname(n.message),
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
  const message = unname(`${err.name ?? "Error"}: ${err.message ?? String(e)}`);
  let at: Where | undefined;
  if (err.loc) at = { file: "kernel.ts", line: err.loc.line, col: err.loc.column + 1 };
  else {
    for (const m of (err.stack ?? "").matchAll(/(lab:\/[^\s)]+?):(\d+):(\d+)/g)) {
      const file = fileOfName.get(m[1]!);
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
    explain = explainTile(fn).map(unname);
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
