// The lab's page: a CodeMirror editor holding a kernel file, rebuilt in a worker as you type:
// diagnostics at their spans (TX code, message, notes), the PTX (highlighted), the IR after a
// chosen pass, layout pictures; Run executes it in a second worker on the simulated device and
// shows the check's verdict, the hazard reports (both accesses' lines highlighted) and a
// timeline of the trace. The source is shared in the URL fragment (deflate, base64url).
import { EditorView, basicSetup } from "codemirror";
import { EditorState, StateEffect, StateField, RangeSetBuilder } from "@codemirror/state";
import { Decoration, type DecorationSet } from "@codemirror/view";
import { javascript } from "@codemirror/lang-javascript";
import { setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { ptxLanguage } from "./ptx-language.js";
import { EXAMPLES, SEED } from "./examples.js";
import { decodeShare, encodeShare } from "./share.js";
import { timelineSvg } from "./timeline.js";
import { textChanges } from "./text-changes.js";
import type { BuildReply, Diag, LayoutReply, Reply, Request, RunReply, Where } from "./protocol.js";

/** The editor's file name, as diagnostics name it. */
const FILE = "kernel.ts";

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;
const exampleSel = $<HTMLSelectElement>("example");
const kernelSel = $<HTMLSelectElement>("kernel");
const stageSel = $<HTMLSelectElement>("stage");
const status = $<HTMLSpanElement>("status");

/** Lines highlighted for hazard reports: [line, "cm-hazard" | "cm-hazard-other"]. */
const setHazards = StateEffect.define<readonly (readonly [number, string])[]>();
const hazardField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(deco, tr) {
    deco = deco.map(tr.changes);
    for (const e of tr.effects) {
      if (!e.is(setHazards)) continue;
      const b = new RangeSetBuilder<Decoration>();
      const lines = [...new Map(e.value.map(([l, c]) => [l, c])).entries()].sort(
        (a, b) => a[0] - b[0],
      );
      for (const [line, cls] of lines) {
        if (line < 1 || line > tr.state.doc.lines) continue;
        const from = tr.state.doc.line(line).from;
        b.add(
          from,
          from,
          Decoration.line({ class: cls, attributes: { "data-hazard-line": String(line) } }),
        );
      }
      deco = b.finish();
    }
    if (tr.docChanged) deco = Decoration.none;
    return deco;
  },
  provide: (f) => EditorView.decorations.from(f),
});

let currentFile = SEED;
const editor = new EditorView({
  parent: $("editor"),
  state: EditorState.create({
    doc: "",
    extensions: [basicSetup, javascript({ typescript: true }), hazardField],
  }),
  // An edit's build starts before the editor updates its view: the worker builds on one core
  // while the page draws the edit on the other (a keystroke's median 70 ms with the build posted
  // after the update, 53 ms before it, side by side on the 2-core machine at load average 11).
  dispatchTransactions: (trs, view) => {
    if (trs.some((tr) => tr.docChanged)) void rebuild(trs[trs.length - 1]!.state.doc.toString());
    view.update(trs);
  },
});
const readOnly = (parent: HTMLElement, lang: unknown[] = []): EditorView =>
  new EditorView({
    parent,
    state: EditorState.create({
      doc: "",
      extensions: [
        basicSetup,
        EditorState.readOnly.of(true),
        EditorView.editable.of(false),
        ...(lang as []),
      ],
    }),
  });
const ptxView = readOnly($("ptx"), [ptxLanguage]);
const irView = readOnly($("irview"), [javascript({ typescript: true })]);
/**
 * Make `v`'s text `text`, replacing only the lines that differ (a rebuild's PTX keeps its lines
 * but for the module's name in its comments: the view redraws those, not the text between them).
 * False when the text was `text` already.
 */
const setText = (v: EditorView, text: string): boolean => {
  const changes = textChanges(v.state.doc.toString(), text);
  if (changes.length > 0) v.dispatch({ changes });
  return changes.length > 0;
};

// Workers: one builds as you type, one runs (a long run never delays the diagnostics).
const newWorker = (): Worker =>
  new Worker(new URL("./worker.ts", import.meta.url), { type: "module" });
const builder = newWorker();
let runner = newWorker();
let nextId = 1;
const pending = new Map<number, (r: Reply) => void>();
const onReply = (ev: MessageEvent<Reply>): void => {
  pending.get(ev.data.id)?.(ev.data);
  pending.delete(ev.data.id);
};
builder.onmessage = onReply;
runner.onmessage = onReply;
const onWorkerError = (ev: ErrorEvent): void => {
  status.textContent = `the lab's worker failed: ${ev.message}`;
};
builder.onerror = onWorkerError;
runner.onerror = onWorkerError;
function ask<R extends Reply>(w: Worker, req: Omit<Request, "id">): Promise<R> {
  const id = nextId++;
  return new Promise((resolve) => {
    pending.set(id, resolve as (r: Reply) => void);
    w.postMessage({ ...req, id });
  });
}

/**
 * The lab's state for tests and the bench: builds and runs finished, the last replies, and the
 * page's clock (performance.now(), ms) when the last build and run were shown.
 */
const lab = {
  builds: 0,
  runs: 0,
  builtAt: 0,
  ranAt: 0,
  lastBuild: undefined as BuildReply | undefined,
  lastRun: undefined as RunReply | undefined,
  building: false,
  running: false,
  setSource: (text: string) => setText(editor, text),
  load: (path: string) => loadExample(path),
};
(window as unknown as { tirxLab: typeof lab }).tirxLab = lab;

/** A rebuild is queued for the end of the current task. */
let queued = false;
/** The editor changed while a build ran: build again when it ends. */
let dirty = false;
/**
 * Rebuild when the current task's code is done, for what is not an edit (the kernel or stage
 * chosen, an example loaded with the text it had): the requests of one task build once.
 */
function schedule(): void {
  if (queued) return;
  queued = true;
  queueMicrotask(() => {
    queued = false;
    void rebuild();
  });
}

const editorFile = (): string => currentFile;
/**
 * Build `source` (default: the editor's text) and show the reply, unless the editor changed
 * meanwhile: edits made while a build runs are built together when it ends. An edit calls it at
 * once, with no debounce: a 5 ms timer here waited for the edit's frame as well, 10 to 25 ms on
 * the 2-core machine.
 */
async function rebuild(source = editor.state.doc.toString()): Promise<void> {
  if (lab.building) {
    dirty = true;
    return;
  }
  lab.building = true;
  status.textContent = "building…";
  const t0 = performance.now();
  const r = await ask<BuildReply>(builder, {
    kind: "build",
    file: editorFile(),
    source,
    ...(kernelSel.value ? { kernel: kernelSel.value } : {}),
    ...(stageSel.value ? { after: stageSel.value } : {}),
  });
  lab.building = false;
  if (dirty) {
    dirty = false;
    return rebuild();
  }
  showBuild(r, performance.now() - t0);
  lab.lastBuild = r;
  lab.builtAt = performance.now();
  lab.builds++;
}

function fill(sel: HTMLSelectElement, values: readonly string[], chosen?: string): void {
  if ([...sel.options].map((o) => o.value).join("\n") !== values.join("\n")) {
    sel.replaceChildren(...values.map((v) => new Option(v, v)));
  }
  if (chosen !== undefined) sel.value = chosen;
}

function showBuild(r: BuildReply, ms: number): void {
  fill(kernelSel, r.kernels, r.kernel);
  fill(stageSel, r.stages, stageSel.value || "verify");
  // Which instructions the tile primitives chose and why (as `tirx build --explain` prints it).
  const why = r.explain.map((l) => `// ${l}\n`).join("");
  setText(
    ptxView,
    r.ptx !== undefined
      ? why + r.ptx
      : r.diagnostics.length
        ? "// no PTX: see the diagnostics"
        : "// no exported kernel",
  );
  setText(irView, r.ir ?? "");
  showDiagnostics(r.diagnostics);
  const errors = r.diagnostics.length;
  status.textContent = `${r.kernel ?? "no kernel"}: ${errors ? `${errors} error${errors > 1 ? "s" : ""}` : "ok"} (${Math.round(ms)} ms)`;
  status.dataset["state"] = errors ? "error" : "ok";
}

/** Editor position of `at` in the editor's file, or undefined for another file. */
function pos(at: Where | undefined): { from: number; to: number } | undefined {
  if (!at || (at.file !== editorFile() && at.file !== FILE)) return undefined;
  const doc = editor.state.doc;
  if (at.line < 1 || at.line > doc.lines) return undefined;
  const line = doc.line(at.line);
  const from = Math.min(line.from + Math.max(at.col - 1, 0), line.to);
  const to = at.length ? Math.min(from + at.length, line.to) : line.to;
  return { from, to: Math.max(to, from) };
}

const place = (at: Where | undefined): string => (at ? ` (${at.file}:${at.line}:${at.col})` : "");
/** A diagnostic's text: the message (a TirxError's starts with its code), its place, its notes. */
const diagText = (d: Diag): string =>
  [
    `${d.code && !d.message.startsWith(d.code) ? d.code + " " : ""}${d.message}${d.message.includes("(at ") ? "" : place(d.at)}`,
    ...d.notes.map((n) => `  note: ${n.message}${place(n.at)}`),
  ].join("\n");

function listItem(d: Diag): HTMLLIElement {
  const li = document.createElement("li");
  li.textContent = diagText(d);
  li.onclick = () => {
    const p = pos(d.at);
    if (p) editor.dispatch({ selection: { anchor: p.from }, scrollIntoView: true });
  };
  return li;
}

/** Diagnostics the editor and the Problems list show now. */
let shownDiagnostics = 0;

function showDiagnostics(diags: readonly Diag[], extra: readonly Diag[] = []): void {
  const all = [...diags, ...extra];
  // None before and none now: the editor and the list stay as they are.
  if (all.length === 0 && shownDiagnostics === 0) return;
  shownDiagnostics = all.length;
  const cm: Diagnostic[] = [];
  for (const d of all) {
    const p = pos(d.at) ?? { from: 0, to: 0 };
    cm.push({
      from: p.from,
      to: p.to,
      severity: d.severity,
      source: d.code || "error",
      message: [d.message, ...d.notes.map((n) => `note: ${n.message}${place(n.at)}`)].join("\n"),
    });
    for (const n of d.notes) {
      const q = pos(n.at);
      if (q)
        cm.push({
          from: q.from,
          to: q.to,
          severity: "info",
          source: d.code,
          message: `note: ${n.message}`,
        });
    }
  }
  editor.dispatch(setDiagnostics(editor.state, cm));
  $("diags").replaceChildren(...all.map(listItem));
  $("count").textContent = all.length ? `(${all.length})` : "";
}

async function runNow(): Promise<void> {
  if (lab.running) return;
  lab.running = true;
  const verdict = $("verdict");
  verdict.className = "";
  verdict.textContent = "running on the simulated device…";
  showTab("runout");
  const t0 = performance.now();
  const r = await ask<RunReply>(runner, {
    kind: "run",
    file: editorFile(),
    source: editor.state.doc.toString(),
    ...(kernelSel.value ? { kernel: kernelSel.value } : {}),
  });
  const ms = performance.now() - t0;
  lab.running = false;
  verdict.className = r.ok ? "pass" : "fail";
  verdict.textContent = `${r.ok ? "PASS" : "FAIL"}: ${r.summary} — ${r.launches} launch${r.launches === 1 ? "" : "es"}, ${r.reports.length} hazard report${r.reports.length === 1 ? "" : "s"} (${Math.round(ms)} ms)`;
  $("reports").replaceChildren(...[...r.diagnostics, ...r.reports].map(listItem));
  // Both sides of each hazard: the report's span and its notes' spans.
  const lines: [number, string][] = [];
  for (const d of r.reports) {
    if (pos(d.at)) lines.push([d.at!.line, "cm-hazard"]);
    for (const n of d.notes) if (pos(n.at)) lines.push([n.at!.line, "cm-hazard-other"]);
  }
  editor.dispatch({ effects: setHazards.of(lines) });
  showDiagnostics(lab.lastBuild?.diagnostics ?? [], [...r.diagnostics, ...r.reports]);
  $("timeline").innerHTML = timelineSvg(r.trace, r.traceKernel);
  lab.lastRun = r;
  lab.ranAt = performance.now();
  lab.runs++;
}

async function drawLayouts(): Promise<void> {
  const box = $("layouts");
  box.textContent = "drawing (runs the kernel on pattern arguments)…";
  const r = await ask<LayoutReply>(runner, {
    kind: "layouts",
    file: editorFile(),
    source: editor.state.doc.toString(),
    ...(kernelSel.value ? { kernel: kernelSel.value } : {}),
  });
  box.replaceChildren();
  if (r.diagnostics.length) box.append(...r.diagnostics.map(listItem));
  if (!r.pictures.length && !r.diagnostics.length)
    box.textContent = "no cp.async tile.apply or ldmatrix/stmatrix site to draw";
  for (const p of r.pictures) {
    const div = document.createElement("div");
    div.className = "layout-pic";
    div.innerHTML = `<div>${p.name.replace(/[<>&]/g, "")}</div>${p.svg}`;
    box.append(div);
  }
}

function showTab(name: string): void {
  for (const b of document.querySelectorAll<HTMLButtonElement>("nav button"))
    b.classList.toggle("on", b.dataset["tab"] === name);
  for (const t of document.querySelectorAll<HTMLElement>(".tab"))
    t.classList.toggle("on", t.id === name);
  if (name === "layouts") void drawLayouts();
}
for (const b of document.querySelectorAll<HTMLButtonElement>("nav button"))
  b.onclick = () => showTab(b.dataset["tab"]!);

function loadExample(path: string): void {
  currentFile = path;
  exampleSel.value = path;
  kernelSel.replaceChildren();
  // A new text builds with its edit; the same text needs a build for the kernel menu emptied.
  if (!setText(editor, EXAMPLES[path] ?? "")) schedule();
  editor.dispatch({ effects: setHazards.of([]) });
}

fill(exampleSel, Object.keys(EXAMPLES), SEED);
exampleSel.onchange = () => loadExample(exampleSel.value);
kernelSel.onchange = () => schedule();
stageSel.onchange = () => schedule();
$("run").onclick = () => void runNow();
$("share").onclick = async () => {
  location.hash = await encodeShare(editor.state.doc.toString(), currentFile);
  await navigator.clipboard?.writeText(location.href).catch(() => undefined);
  status.textContent = "link copied (the source is in the URL)";
};

void (async () => {
  const shared = location.hash.length > 1 ? await decodeShare(location.hash.slice(1)) : undefined;
  if (shared) {
    currentFile = shared.file in EXAMPLES || shared.file === FILE ? shared.file : FILE;
    exampleSel.value = shared.file in EXAMPLES ? shared.file : "";
    if (!setText(editor, shared.source)) schedule();
  } else loadExample(SEED);
})();
