import { filePathOf, nodeBuiltin, nodeProcess, withFileText, type Span } from "@tirx-ts/core";

/**
 * Source and build folders of the packages whose frames are never the author's. Not
 * packages/kernels: its kernel builders are kernel source, and their IR records their own lines.
 */
const OWN_FILES =
  /[\\/]packages[\\/](dsl|core|codegen-ptx|runtime-sim|runtime-cuda|runtime|tirx-ts)[\\/](src|dist)[\\/]/;

const foreign = (file: string): boolean =>
  !(OWN_FILES.test(file) || file.startsWith("node:") || file.includes("node_modules"));

/**
 * How much work spans cost, counted (tests check that it grows with the number of T.* calls,
 * not faster): `captures`, call sites taken from the stack (one per `callerSpan()` outside
 * `withSpan`); `resolutions`, spans whose line and column were asked of V8 (a span is resolved
 * when first read; V8's lookup of a frame's position walks its function's position table from
 * the start); `mappings`, resolved positions mapped through a source map (once per distinct
 * generated position).
 */
export const spanCounters = { captures: 0, resolutions: 0, mappings: 0 };

const paths = new Map<string, string>();

/** `file` as a path (file URLs converted once per distinct URL). */
function pathOf(file: string): string {
  if (!file.startsWith("file://")) return file;
  let p = paths.get(file);
  if (p === undefined) {
    p = filePathOf(file);
    if (paths.size < 10_000) paths.set(file, p);
  }
  return p;
}

type Prepare = (error: Error, sites: NodeJS.CallSite[]) => unknown;

/**
 * The author's frame of a T.* call, as V8 captured it: no position asked yet. `prepare` and
 * `maps` are the stack formatting in force at the capture (a test runner's source-map support,
 * Node's own with or without source maps), used to map the position when it is resolved.
 */
interface Capture {
  readonly site: NodeJS.CallSite;
  readonly file: string;
  readonly prepare: Prepare | undefined;
  readonly maps: boolean;
}

const asSites: Prepare = (_e, sites) => sites;

/**
 * The name of a frame's script, as its stack line prints it: its file, or where the script has
 * no file of its own (a module imported from a data: URL, as the lab's editor text is; code run
 * by eval) the name its `//# sourceURL=` comment gives, else the data: URL. core's `callSite()`
 * reads the same name from the formatted stack.
 */
function frameFile(site: NodeJS.CallSite): string | undefined {
  const name = site.getFileName();
  if (name && !name.startsWith("data:")) return name;
  return site.getScriptNameOrSourceURL() || name || undefined;
}

/**
 * The first stack frame outside the tirx-ts packages, as a V8 call site (cheap: V8 records the
 * frames; nothing is formatted and no position computed). Builder calls reach the author within
 * two or three frames (the T.* function, a helper); a deeper path is captured again with more. Null when no frame is outside the
 * packages; undefined when V8 gave no call sites (a formatter that cannot be replaced).
 */
function captureAuthor(): Capture | null | undefined {
  const prepare = Error.prepareStackTrace as Prepare | undefined;
  const limit = Error.stackTraceLimit;
  const maps = nodeProcess()?.sourceMapsEnabled === true;
  try {
    for (const frames of [4, 64]) {
      Error.stackTraceLimit = frames;
      Error.prepareStackTrace = asSites;
      const holder: { stack?: NodeJS.CallSite[] } = {};
      Error.captureStackTrace(holder, callerSpan);
      const sites = holder.stack;
      if (!Array.isArray(sites)) return undefined;
      for (const site of sites) {
        const name = frameFile(site);
        if (!name) continue;
        const file = pathOf(name);
        if (foreign(file)) return { site, file, prepare, maps };
      }
      if (sites.length < frames) return null;
    }
    return null;
  } finally {
    (Error as { prepareStackTrace?: Prepare }).prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
}

/** Mapped spans by generated position and formatter: one source-map lookup per position. */
const mapped = new Map<string, Span>();
const MAPPED_LIMIT = 10_000;
const formatterIds = new WeakMap<object, number>();
let formatters = 0;

/** Which formatting a capture's position is mapped by (formatter and source-map setting). */
function formatterKey(c: Capture): string {
  if (c.prepare === undefined) return c.maps ? "m" : "-";
  let id = formatterIds.get(c.prepare);
  if (id === undefined) formatterIds.set(c.prepare, (id = ++formatters));
  return `${id}${c.maps ? "m" : ""}`;
}

/** The thing a formatter is asked to format: an error without a stack of its own. */
const PROBE = Object.create(Error.prototype, {
  name: { value: "Error" },
  message: { value: "" },
}) as Error;

/** `at name (file:line:col)` or `at file:line:col`: the location of a formatted frame. */
const AT = /^\s*at (?:.*? \()?(.+):(\d+):(\d+)\)?$/;

/**
 * The author's span of a capture: V8's position of the frame (the one costly step, counted in
 * `resolutions`), mapped as at the capture (mapPosition: Node's source map of the module where
 * Node's source maps were on and it has one, as for tsx and the CLI's bundled kernel files; else
 * the formatter then installed, as a test runner maps its transformed files), and the text of
 * its line and the lines around it read now (withFileText: one read per file version, its
 * diagnostics' code frame).
 */
function resolve(c: Capture): Span {
  spanCounters.resolutions++;
  const line = c.site.getLineNumber() ?? 0;
  const col = c.site.getColumnNumber() ?? 0;
  const key = `${formatterKey(c)}\0${c.file}:${line}:${col}`;
  const hit = mapped.get(key);
  if (hit) return hit;
  spanCounters.mappings++;
  const span = withFileText(mapPosition(c, line, col) ?? { file: c.file, line, col });
  if (mapped.size >= MAPPED_LIMIT) mapped.clear();
  mapped.set(key, span);
  return span;
}

/**
 * The position a capture's frame maps to: through Node's source map of the frame's module where
 * Node's source maps were on at the capture and Node has one (a module Node loaded with them on:
 * the CLI's bundled kernel files, tsx's transformed files), else through the formatter in force
 * at the capture (a test runner's source-map support maps the modules it transformed itself;
 * a formatter that does not know Node's maps would name the bundle's lines), else unmapped.
 */
function mapPosition(c: Capture, line: number, col: number): Span | undefined {
  if (c.maps) {
    const find = nodeBuiltin("module")?.findSourceMap;
    const entry = find?.(c.site.getFileName() ?? c.file)?.findEntry(line - 1, col - 1);
    if (entry && "originalSource" in entry) {
      return {
        file: pathOf(entry.originalSource),
        line: entry.originalLine + 1,
        col: entry.originalColumn + 1,
      };
    }
  }
  if (c.prepare === undefined) return undefined;
  // Node's source-map setting as it was at the capture (off Node there is none to set).
  const proc = nodeProcess();
  const set = proc?.setSourceMapsEnabled?.bind(proc);
  const restore = proc?.sourceMapsEnabled === true;
  if (restore !== c.maps) set?.(c.maps);
  let text: unknown;
  try {
    text = c.prepare(PROBE, [c.site]);
  } catch {
    return undefined;
  } finally {
    if (restore !== c.maps) set?.(restore);
  }
  if (typeof text !== "string") return undefined;
  for (const l of text.split("\n").slice(1)) {
    const m = AT.exec(l);
    if (m) return { file: pathOf(m[1]!), line: Number(m[2]), col: Number(m[3]) };
  }
  return undefined;
}

/**
 * A span whose position (and line text) is computed when first read (`file`, `line`, `col`,
 * `lineText`, `lineAbove` or `lineBelow`): own enumerable accessors, so that spreading,
 * `Object.keys` and `JSON.stringify` see a plain `{ file, line, col, lineText, ... }` (the text
 * fields undefined where the file could not be read). Most spans of a kernel (every
 * expression's) are never read unless a diagnostic names them, and reading one costs V8 a walk
 * of its function's position table.
 */
function lazySpan(c: Capture): Span {
  let span: Span | undefined;
  const get = (): Span => (span ??= resolve(c));
  return {
    get file() {
      return get().file;
    },
    get line() {
      return get().line;
    },
    get col() {
      return get().col;
    },
    get lineText() {
      return get().lineText;
    },
    get lineAbove() {
      return get().lineAbove;
    },
    get lineBelow() {
      return get().lineBelow;
    },
  };
}

const FRAME = /\(?((?:file:\/\/)?[^\s()]+?):(\d+):(\d+)\)?$/;

/**
 * The author's span from a formatted stack, for when V8 gives no structured call sites (a
 * formatter that cannot be replaced).
 */
function spanFromText(): Span | undefined {
  // The stack without an Error object: V8 formats it on `frames` (first line a header).
  const frames: { stack?: string } = {};
  Error.captureStackTrace(frames);
  return authorSpanOfStack(frames.stack ?? "");
}

/**
 * The author's position in a formatted stack (`error.stack`: the first frame outside the tirx-ts
 * packages), with its line's text where the file can be read; undefined when no frame is the
 * author's.
 * @param stack A V8 stack as `Error.prototype.stack` formats it (first line the message).
 */
export function authorSpanOfStack(stack: string): Span | undefined {
  for (const line of stack.split("\n").slice(1)) {
    const m = FRAME.exec(line.trim());
    if (!m) continue;
    const file = pathOf(m[1]!);
    if (!foreign(file)) continue;
    return withFileText({ file, line: Number(m[2]), col: Number(m[3]) });
  }
  return undefined;
}

/**
 * The author's source position of the current T.* (or `compile`) call: the first stack frame
 * outside the tirx-ts packages, mapped through source maps as the stack would be (the lines of
 * the author's .ts file under tsx, vitest and `tirx build`). The frame is captured now and its
 * position computed when the span is first read: V8 finds a frame's position by walking the
 * position table of the frame's function from its start, so resolving every call of a
 * 30,000-statement function eagerly took time quadratic in its length; a build reads the spans
 * of statements only (PTX comments), a diagnostic the spans it names. Undefined when no frame
 * is outside the packages.
 */
export function callerSpan(): Span | undefined {
  if (spanOverride !== undefined) return spanOverride;
  spanCounters.captures++;
  const c = captureAuthor();
  if (c === null) return undefined;
  return c === undefined ? spanFromText() : lazySpan(c);
}

let spanOverride: Span | undefined;

/**
 * Run `fn` with `span` as what every `callerSpan()` returns: script mode lowers a syntax node
 * through the builder, and the node, not a stack frame, is the author's position.
 */
export function withSpan<R>(span: Span, fn: () => R): R {
  const saved = spanOverride;
  spanOverride = span;
  try {
    return fn();
  } finally {
    spanOverride = saved;
  }
}
