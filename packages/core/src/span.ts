/**
 * A place in the author's source: 1-based line and column, as editors show them.
 * `length` is the number of characters the span covers on that line (0 when unknown).
 * `lineText` is the text of that line as the file held it when the span was made (no line
 * break), and `lineAbove` / `lineBelow` the lines around it (absent at the file's first or last
 * line): a diagnostic's code frame shows them (see `withLineText`, `withFileText`); a span made
 * without them renders without a code frame.
 */
export interface Span {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly length?: number;
  readonly lineText?: string;
  readonly lineAbove?: string;
  readonly lineBelow?: string;
}

/** `file:line:col`, the form editors and terminals turn into links. */
export function formatSpan(span: Span): string {
  return `${span.file}:${span.line}:${span.col}`;
}
