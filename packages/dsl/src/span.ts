import { fileURLToPath } from "node:url";
import type { Span } from "@tirx-ts/core";

const OWN_FILES =
  /[\\/]packages[\\/](dsl|core|codegen-ptx|runtime-sim|runtime-cuda|tirx-ts)[\\/](src|dist)[\\/]/;
const FRAME = /\(?((?:file:\/\/)?[^\s()]+?):(\d+):(\d+)\)?$/;

const foreign = (file: string): boolean =>
  !(OWN_FILES.test(file) || file.startsWith("node:") || file.includes("node_modules"));

/**
 * The author's span, from a formatted stack (positions mapped through source maps). `frames`:
 * how many frames to format (formatting maps each through source maps, the slow part): the
 * depth rawSite found the author's frame at, plus this function's own.
 */
function spanFromText(frames = 30): Span | undefined {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = frames;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = saved;
  for (const line of stack.split("\n").slice(1)) {
    const m = FRAME.exec(line.trim());
    if (!m) continue;
    let file = m[1]!;
    if (file.startsWith("file://")) file = fileURLToPath(file);
    if (!foreign(file)) continue;
    return { file, line: Number(m[2]), col: Number(m[3]) };
  }
  return undefined;
}

const paths = new Map<string, string>();

/** `file` as a path (file URLs converted once per distinct URL). */
function pathOf(file: string): string {
  if (!file.startsWith("file://")) return file;
  let p = paths.get(file);
  if (p === undefined) {
    p = fileURLToPath(file);
    if (paths.size < 10_000) paths.set(file, p);
  }
  return p;
}

/**
 * The first foreign frame as raw V8 call-site data (generated positions, not source-mapped):
 * cheap, because no stack text is formatted and no source map consulted.
 */
function rawSite(): { key: string; depth: number } | undefined {
  const savedPrepare = Error.prepareStackTrace;
  const savedLimit = Error.stackTraceLimit;
  // Builder calls reach the author within a few frames; deeper paths take the slow path.
  Error.stackTraceLimit = 8;
  Error.prepareStackTrace = (_e, sites) => sites;
  const holder: { stack?: NodeJS.CallSite[] } = {};
  Error.captureStackTrace(holder, rawSite);
  const sites = holder.stack;
  Error.prepareStackTrace = savedPrepare;
  Error.stackTraceLimit = savedLimit;
  if (!Array.isArray(sites)) return undefined;
  // The key is the whole chain of positions up to the first foreign frame, so that two call
  // paths never share an entry even if a file name looked foreign in one and not the other.
  const parts: string[] = [];
  for (const s of sites) {
    const file = pathOf(s.getFileName() ?? "");
    parts.push(`${file}:${s.getLineNumber()}:${s.getColumnNumber()}`);
    if (file && foreign(file)) return { key: parts.join("|"), depth: parts.length };
  }
  return undefined;
}

/** Spans by raw call site: mapping positions is the slow part of a span, and it is a function of the site. */
const cache = new Map<string, Span | undefined>();
const CACHE_LIMIT = 10_000;

/**
 * The author's source position of the current T.* (or `compile`) call: the first stack frame
 * outside the tirx-ts packages. Node maps positions through source maps under tsx and vitest, so
 * these are the lines of the author's .ts file. Mapping costs tens of microseconds, so the result
 * is cached by the raw (unmapped) call site: a builder loop calling `.add` 200,000 times from one
 * line maps it once.
 */
export function callerSpan(): Span | undefined {
  if (spanOverride !== undefined) return spanOverride;
  const raw = rawSite();
  if (raw === undefined) return spanFromText();
  const key = raw.key;
  if (cache.has(key)) return cache.get(key);
  // rawSite's frames start at this function; spanFromText's one deeper (itself).
  const span = spanFromText(raw.depth + 1);
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, span);
  return span;
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
