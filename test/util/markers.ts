// Source lines of a test file found through marker comments, so that a test can assert the line
// of a diagnostic without hard-coding numbers that formatting would move.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * For the test file at `url` (its `import.meta.url`): `at(name)` is the 1-based line that ends
 * with the comment `// @name`.
 * @throws Error when no line or more than one line carries the marker.
 */
export function markers(url: string): { at(name: string): number } {
  const src = readFileSync(fileURLToPath(url), "utf8").split("\n");
  return {
    at(name: string): number {
      const hits = src.flatMap((l, i) => (l.trimEnd().endsWith(`// @${name}`) ? [i + 1] : []));
      if (hits.length !== 1) throw new Error(`marker @${name}: ${hits.length} lines`);
      return hits[0]!;
    },
  };
}

/**
 * For the test file at `url` (its `import.meta.url`): the 1-based line of the first line that
 * contains `text` (0 when none does), for a test that asserts a diagnostic's line by a piece of
 * the code on it.
 */
export function lineContaining(url: string): (text: string) => number {
  const src = readFileSync(fileURLToPath(url), "utf8").split("\n");
  return (text) => src.findIndex((l) => l.includes(text)) + 1;
}
