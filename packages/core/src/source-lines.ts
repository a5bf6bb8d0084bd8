import { nodeBuiltin } from "./host/node.js";
import type { Span } from "./span.js";

/**
 * Line breaks as code frames and V8 count lines (ECMAScript LineTerminatorSequence; babel's
 * code-frame splits on the same): CRLF, LF, CR, U+2028, U+2029.
 */
const NEWLINE = /\r\n|[\n\r\u2028\u2029]/;

/**
 * The lines of a source text, without their line breaks (a text ending in a break ends in ""):
 * all of them, or the first `limit`.
 */
export function sourceLines(text: string, limit?: number): string[] {
  return text.split(NEWLINE, limit);
}

/**
 * `span` with the text of its line (`lineText`) and of the lines just above and below
 * (`lineAbove`, `lineBelow`; absent at the text's first or last line), taken from `lines`: an
 * array of a text's lines (sourceLines) or a function from a 1-based line number to its text
 * (undefined past the text's ends). `span` as it is when its line is not in the text. Capture
 * them when the span is made: a diagnostic renders its code frame from them (esbuild's logger
 * keeps a location's line text the same way), not from the file as it is later.
 */
export function withLineText(
  span: Span,
  lines: readonly string[] | ((line: number) => string | undefined),
): Span {
  const at = typeof lines === "function" ? lines : (n: number) => lines[n - 1];
  const text = span.line >= 1 ? at(span.line) : undefined;
  if (text === undefined) return span;
  const above = span.line > 1 ? at(span.line - 1) : undefined;
  const below = at(span.line + 1);
  return {
    file: span.file,
    line: span.line,
    col: span.col,
    ...(span.length !== undefined ? { length: span.length } : {}),
    lineText: text,
    ...(above !== undefined ? { lineAbove: above } : {}),
    ...(below !== undefined ? { lineBelow: below } : {}),
  };
}

/**
 * Source files read for spans' line text (`reads`: whole files read, `stats`: checks of a cached
 * file's version), counted so that tests can check that a build reads each file once.
 */
export const sourceTextCounters = { reads: 0, stats: 0 };

/**
 * Source texts registered by path (registerSource): where there is no file system (a browser),
 * or where the text being compiled is not the file's (an editor's buffer). Consulted first.
 */
const registered = new Map<
  string,
  { readonly text: string; readonly lines: readonly string[]; readonly version: number }
>();
let registrations = 0;

/**
 * Make `text` the source of `path` for spans' line text (code frames), in place of the file, or
 * forget it (`text` undefined). For hosts without a file system: a browser page compiling the
 * text of an editor registers it under the name its stack frames carry.
 */
export function registerSource(path: string, text: string | undefined): void {
  if (text === undefined) registered.delete(path);
  else registered.set(path, { text, lines: sourceLines(text), version: ++registrations });
}

/**
 * The text registered for `path` (registerSource) and its version (a number that changes with
 * every registration), or undefined when none is.
 */
export function registeredSource(path: string): { text: string; version: number } | undefined {
  const r = registered.get(path);
  return r && { text: r.text, version: r.version };
}

/** Lines of files read, by path, with the version (mtime and size) they were read at. */
const files = new Map<string, { stamp: string; lines: readonly string[] | undefined }>();
const FILES_LIMIT = 256;
/** Files whose cached lines were checked against the disk in the current job. */
const checked = new Set<string>();

/**
 * The lines of the file at `path` (sourceLines), undefined when it cannot be read. A file is read
 * once per version on disk; its version (mtime and size) is checked once per synchronous job
 * (the set of checked files is cleared in a microtask), so the spans a build resolves in one go
 * cost one check of their file, not one each.
 */
export function fileLines(path: string): readonly string[] | undefined {
  const own = registered.get(path);
  if (own !== undefined) return own.lines;
  const fs = nodeBuiltin("fs");
  if (fs === undefined) return undefined;
  const hit = files.get(path);
  if (hit && checked.has(path)) return hit.lines;
  if (checked.size === 0) queueMicrotask(() => checked.clear());
  checked.add(path);
  let stamp: string;
  try {
    sourceTextCounters.stats++;
    const st = fs.statSync(path);
    stamp = `${st.mtimeMs}:${st.size}`;
  } catch {
    files.delete(path);
    return undefined;
  }
  if (hit && hit.stamp === stamp) return hit.lines;
  let lines: readonly string[] | undefined;
  try {
    sourceTextCounters.reads++;
    lines = sourceLines(fs.readFileSync(path, "utf8"));
  } catch {
    lines = undefined;
  }
  if (files.size >= FILES_LIMIT) files.clear();
  files.set(path, { stamp, lines });
  return lines;
}

/**
 * `span` with its line text and the lines around it (withLineText) read from its file as the file
 * is now (fileLines); `span` as it is when the file cannot be read. For spans made from a
 * position in a file that was just run or parsed (a stack frame, a bundler's message).
 */
export function withFileText(span: Span): Span {
  const lines = fileLines(span.file);
  return lines ? withLineText(span, lines) : span;
}

/**
 * Line `n` (1-based) of `text` without its line break, given the offsets at which its lines
 * start (a parser's line table, e.g. TypeScript's `getLineStarts()`); undefined past its ends.
 */
export function lineOfText(text: string, starts: readonly number[], n: number): string | undefined {
  const from = starts[n - 1];
  if (from === undefined) return undefined;
  const line = text.slice(from, starts[n] ?? text.length);
  const m = /(?:\r\n|[\n\r\u2028\u2029])$/.exec(line);
  return m ? line.slice(0, m.index) : line;
}
