/**
 * A place in the author's source: 1-based line and column, as editors show them.
 * `length` is the number of characters the span covers on that line (0 when unknown).
 */
export interface Span {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly length?: number;
}

/** `file:line:col`, the form editors and terminals turn into links. */
export function formatSpan(span: Span): string {
  return `${span.file}:${span.line}:${span.col}`;
}
