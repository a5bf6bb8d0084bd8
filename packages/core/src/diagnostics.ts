import { codeFrameColumns } from "@babel/code-frame";
import { formatSpan, type Span } from "./span.js";
import { CATALOG, type DiagnosticCode } from "./catalog.js";
import { nodeBuiltin } from "./host/node.js";

/**
 * Machine-readable facts of a note, for tools and tests: `kind` names the report's record (the
 * simulator's deadlock reports: `"mbarrier"`, `"mbarrier-wait"`, `"named-barrier"`,
 * `"named-barrier-wait"`, each documented where it is built), the other keys its values (counts,
 * phases, warp ids). The note's message says the same in words.
 */
export interface NoteFacts {
  readonly kind: string;
  readonly [key: string]: string | number | boolean | readonly number[];
}

/** A secondary message attached to a diagnostic, optionally with its own span and facts. */
export interface Note {
  readonly message: string;
  readonly span?: Span;
  readonly facts?: NoteFacts;
}

/**
 * The one error type for anything wrong with a user's kernel: a stable code from the catalog
 * (`TX1201`), a one-line message naming the rule, the author's source span, and notes.
 * `rule` is the catalog's short rule name (e.g. `cp-async/cg-chunk-16`).
 */
export class TirxError extends Error {
  readonly code: DiagnosticCode;
  readonly rule: string;
  readonly span: Span | undefined;
  readonly notes: readonly Note[];

  constructor(code: DiagnosticCode, message: string, span?: Span, notes: readonly Note[] = []) {
    const entry = CATALOG[code];
    super(`${code} [${entry.rule}] ${message}${span ? ` (at ${formatSpan(span)})` : ""}`);
    this.name = "TirxError";
    this.code = code;
    this.rule = entry.rule;
    this.span = span;
    this.notes = notes;
  }

  /** The message without code, rule and location. */
  get text(): string {
    const m = /^\S+ \[[^\]]+\] (.*?)(?: \(at [^)]*\))?$/s.exec(this.message);
    return m ? m[1]! : this.message;
  }

  /** Multi-line rendering with a code frame of the author's line, as a terminal shows it. */
  render(opts: { color?: boolean; cwd?: string } = {}): string {
    return renderDiagnostic(this, opts);
  }

  #all: readonly TirxError[] | undefined;

  /**
   * Every error of the check that threw this one, sorted by position (`DiagnosticLog`): the
   * verifier collects all the errors of a kernel and throws them as one, whose own code,
   * message, span and notes are those of the first it found. `[this]` for a single error.
   */
  get all(): readonly TirxError[] {
    return this.#all ?? [this];
  }

  /**
   * One error carrying `all` (every error of one check, sorted; see {@link all}), with the code,
   * message, span and notes of `first`; `first` itself when it is the only one.
   */
  static aggregate(first: TirxError, all: readonly TirxError[]): TirxError {
    if (all.length === 1 && all[0] === first) return first;
    const e = new TirxError(first.code, first.text, first.span, first.notes);
    e.#all = all;
    return e;
  }
}

/** True for a TirxError (also one from another copy of this package). */
export function isTirxError(e: unknown): e is TirxError {
  return e instanceof TirxError || (e instanceof Error && e.name === "TirxError" && "code" in e);
}

/**
 * The code frame of `span` (babel's code-frame: the line with a marker under the span, the lines
 * around it), from the line text the span carries; undefined for a span made without it.
 */
function frame(span: Span, color: boolean): string | undefined {
  if (span.lineText === undefined) return undefined;
  const rows = [
    ...(span.lineAbove !== undefined ? [span.lineAbove] : []),
    span.lineText,
    ...(span.lineBelow !== undefined ? [span.lineBelow] : []),
  ];
  const loc = {
    start: { line: span.line, column: span.col },
    ...(span.length ? { end: { line: span.line, column: span.col + span.length } } : {}),
  };
  // `startLine` (code-frame 7.29, not in its type declarations): the number of the first row.
  const opts = {
    highlightCode: color,
    linesAbove: 1,
    linesBelow: 1,
    startLine: span.line - (span.lineAbove !== undefined ? 1 : 0),
  };
  return codeFrameColumns(rows.join("\n"), loc, opts);
}

/** Render `err` as `file:line:col: error TXnnnn [rule]: message`, a code frame, and notes. */
export function renderDiagnostic(
  err: TirxError,
  opts: { color?: boolean; cwd?: string } = {},
): string {
  const color = opts.color ?? false;
  const show = (span: Span): string => {
    const path = opts.cwd ? nodeBuiltin("path") : undefined;
    const file = path && opts.cwd ? path.relative(opts.cwd, span.file) : span.file;
    return formatSpan({ ...span, file: file.startsWith("..") ? span.file : file });
  };
  const where = err.span ? `${show(err.span)}: ` : "";
  const lines = [`${where}error ${err.code} [${err.rule}]: ${err.text}`];
  if (err.span) {
    const f = frame(err.span, color);
    if (f) lines.push(f);
  }
  for (const n of err.notes) {
    lines.push(`  note: ${n.message}${n.span ? ` (${show(n.span)})` : ""}`);
  }
  return lines.join("\n");
}
