import { isTirxError, renderDiagnostic, TirxError } from "./diagnostics.js";
import { invariant } from "./invariant.js";
import { MAX_DIAGNOSTICS } from "./limits.js";
import { formatSpan } from "./span.js";

/**
 * The errors of one check, collected rather than thrown at the first (esbuild's logger is the
 * model: collect every message, sort by position, print them with a count). A check reports each
 * error it finds and goes on; at the end {@link throwIfAny} throws them as one `TirxError`
 * (`TirxError.aggregate`): its own code, message, span and notes are the first error found (what
 * a check that stopped there would have thrown), and its `all` lists every error, sorted by
 * position. An error equal to one already reported (same code, span and message: the same
 * mistake met twice in one statement) is dropped. At `limit` errors the check stops: reporting
 * the last one throws.
 */
export class DiagnosticLog {
  private readonly found: TirxError[] = [];
  private readonly seen = new Set<string>();

  constructor(readonly limit: number = MAX_DIAGNOSTICS) {
    invariant(limit >= 1, "a diagnostic log holds at least one error");
  }

  /** How many distinct errors were reported. */
  get count(): number {
    return this.found.length;
  }

  /**
   * Record `err`.
   * @throws TirxError the aggregate of every error so far, when this one reaches the limit.
   */
  report(err: TirxError): void {
    const key = `${err.code}\u0000${err.span ? formatSpan(err.span) : ""}\u0000${err.message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.found.push(err);
    if (this.found.length >= this.limit) throw this.aggregate();
  }

  /**
   * Run `check`; a `TirxError` it throws is reported, anything else passes through (an internal
   * failure is no diagnostic). Returns whether `check` threw nothing.
   */
  attempt(check: () => void): boolean {
    try {
      check();
      return true;
    } catch (e) {
      if (!isTirxError(e)) throw e;
      this.report(e);
      return false;
    }
  }

  /**
   * Report `err` and stop: what follows cannot be checked without what it concerns.
   * @throws TirxError the aggregate of every error so far, `err` included.
   */
  fail(err: TirxError): never {
    this.report(err);
    throw this.aggregate();
  }

  /** @throws TirxError the aggregate of every error reported, if there was any. */
  throwIfAny(): void {
    if (this.found.length > 0) throw this.aggregate();
  }

  /** The errors so far as one (see the class comment). Needs at least one. */
  aggregate(): TirxError {
    invariant(this.found.length > 0, "an aggregate of no errors");
    return TirxError.aggregate(this.found[0]!, sortDiagnostics(this.found));
  }
}

/**
 * `errors` in source order: by file, line and column; errors without a span last; equal
 * positions in the order given.
 */
export function sortDiagnostics(errors: readonly TirxError[]): TirxError[] {
  return errors
    .map((e, i) => ({ e, i }))
    .sort((a, b) => {
      const x = a.e.span;
      const y = b.e.span;
      if (!x || !y) return x ? -1 : y ? 1 : a.i - b.i;
      if (x.file !== y.file) return x.file < y.file ? -1 : 1;
      return x.line - y.line || x.col - y.col || a.i - b.i;
    })
    .map((p) => p.e);
}

/**
 * "3 errors", with a note when a check stopped at its limit (`limited`; by default when `n` is
 * {@link MAX_DIAGNOSTICS} or more).
 */
export function countLine(n: number, limited: boolean = n >= MAX_DIAGNOSTICS): string {
  const note = limited ? ` (a check stops at ${MAX_DIAGNOSTICS})` : "";
  return `${n} error${n === 1 ? "" : "s"}${note}`;
}

/**
 * Every error `err` carries (`TirxError.all`, sorted by position), each rendered as
 * `renderDiagnostic` does (location, code, rule, message, code frame, notes), a blank line
 * between two, and a {@link countLine} after them. A single error renders exactly as
 * `renderDiagnostic`.
 */
export function renderDiagnostics(
  err: TirxError,
  opts: { color?: boolean; cwd?: string } = {},
): string {
  // An error from another copy of the package may lack `all`.
  const all = (err as { all?: readonly TirxError[] }).all ?? [err];
  if (all.length <= 1) return renderDiagnostic(err, opts);
  return [...all.map((e) => renderDiagnostic(e, opts)), countLine(all.length)].join("\n\n");
}
