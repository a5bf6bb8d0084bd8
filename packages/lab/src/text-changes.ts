// The smallest edits the lab's read-only views need when a rebuild replaces their text: a
// rebuild's PTX keeps its lines but for the module's name in its source comments, and a view
// redraws (and re-highlights) only the lines an edit touches.
import type { ChangeSpec } from "@codemirror/state";

/**
 * Changes that turn the text `a` into `b` (offsets into `a`, ascending, not overlapping): the
 * common start and end are kept; between them, when both hold as many lines, each line that
 * differs is replaced without its own common start and end, else the middle is replaced whole.
 * Empty when the texts are equal.
 */
export function textChanges(a: string, b: string): ChangeSpec[] {
  if (a === b) return [];
  const n = Math.min(a.length, b.length);
  let start = 0;
  while (start < n && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  // Back to the start of the line, so that the middles split into whole lines.
  if (start > 0) start = a.lastIndexOf("\n", start - 1) + 1;
  let end = 0;
  while (end < n - start && a.charCodeAt(a.length - 1 - end) === b.charCodeAt(b.length - 1 - end))
    end++;
  const midA = a.slice(start, a.length - end).split("\n");
  const midB = b.slice(start, b.length - end).split("\n");
  if (midA.length !== midB.length)
    return [{ from: start, to: a.length - end, insert: b.slice(start, b.length - end) }];
  const changes: ChangeSpec[] = [];
  let at = start;
  for (let i = 0; i < midA.length; i++) {
    const x = midA[i]!;
    const y = midB[i]!;
    if (x !== y) {
      const m = Math.min(x.length, y.length);
      let p = 0;
      while (p < m && x.charCodeAt(p) === y.charCodeAt(p)) p++;
      let s = 0;
      while (s < m - p && x.charCodeAt(x.length - 1 - s) === y.charCodeAt(y.length - 1 - s)) s++;
      changes.push({ from: at + p, to: at + x.length - s, insert: y.slice(p, y.length - s) });
    }
    at += x.length + 1;
  }
  return changes;
}
