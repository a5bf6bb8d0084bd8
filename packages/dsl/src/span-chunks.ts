import type * as TsMorph from "ts-morph";
import { tsMorph } from "./script/source.js";

type Ts = typeof TsMorph.ts;
type Node = TsMorph.ts.Node;
type Statement = TsMorph.ts.Statement;

/**
 * Blocks with fewer direct statements are left as they are: below it V8's walks cost less than
 * loading the TypeScript parser (about 19 ms of walks for 1,024 statements, against 0.5 s).
 */
export const MIN_BLOCK_STATEMENTS = 1024;
/** The most statements one arrow function of {@link chunkLongBlocks} holds. */
export const CHUNK_STATEMENTS = 64;

/** A text with lines inserted, and where. */
export interface ChunkedText {
  readonly text: string;
  /**
   * For each inserted line, the 0-based index of the original line it was inserted before,
   * ascending (an index appears once per line inserted there; the text's line count is an
   * index past the last line). A source map of the original maps the new text once an empty
   * line is inserted into its `mappings` at each of these indexes.
   */
  readonly insertedBefore: readonly number[];
}

let ts: Ts | undefined;

/**
 * `js`, an ES module as esbuild prints it (one statement per line, semicolons), with the
 * consecutive expression statements of every long block (a function body or block of at least
 * MIN_BLOCK_STATEMENTS direct statements: a generated kernel) wrapped, CHUNK_STATEMENTS at a
 * time, in arrow functions called in place: `;(() => {` on a line of its own before them and
 * `})();` on a line of its own after. Undefined when no block is that long.
 *
 * Why: V8 finds the source position of a stack frame by walking the position table of the
 * frame's function from its start, so resolving the span of each of n statements of one
 * function costs time quadratic in n (a 30,000-statement kernel: most of `tirx build`'s time).
 * In an arrow of 64 statements each walk is short. An arrow keeps `this`, `arguments`, `super`
 * and `new.target` of the enclosing function, and reads and writes its variables; the module
 * is strict, so a direct `eval` declares nothing outside itself either way. Statements that
 * await or yield, declarations, directives and statements sharing a line with code outside the
 * chunk are never wrapped. Existing lines are not changed, so columns stay as they were.
 */
export function chunkLongBlocks(js: string): ChunkedText | undefined {
  let lines = 1;
  for (
    let i = js.indexOf("\n");
    i >= 0 && lines < MIN_BLOCK_STATEMENTS;
    i = js.indexOf("\n", i + 1)
  ) {
    lines++;
  }
  if (lines < MIN_BLOCK_STATEMENTS) return undefined;
  ts ??= tsMorph().ts;
  const t = ts;
  const sf = t.createSourceFile("bundle.mjs", js, t.ScriptTarget.Latest, false, t.ScriptKind.JS);
  const starts = sf.getLineStarts();
  const lineOf = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line;
  const lineEnd = (line: number): number =>
    line + 1 < starts.length ? starts[line + 1]! - 1 : js.length;
  /** Nothing but whitespace before the statement on its first line. */
  const startsLine = (s: Statement): boolean => {
    const start = s.getStart(sf);
    return js.slice(starts[lineOf(start)]!, start).trim() === "";
  };
  /** Nothing but whitespace after the statement on its last line. */
  const endsLine = (s: Statement): boolean => js.slice(s.end, lineEnd(lineOf(s.end))).trim() === "";
  /** An expression statement that neither awaits nor yields (outside functions it holds). */
  const wrappable = (s: Statement): boolean => {
    if (!t.isExpressionStatement(s) || t.isStringLiteral(s.expression)) return false;
    let suspends = false;
    const look = (n: Node): void => {
      if (suspends || t.isFunctionLike(n) || t.isClassLike(n)) return;
      if (t.isAwaitExpression(n) || t.isYieldExpression(n)) suspends = true;
      else t.forEachChild(n, look);
    };
    look(s.expression);
    return !suspends;
  };
  // Insertions as (line, order): closers before openers at one line, inner closers first,
  // outer openers first.
  const inserts: { line: number; order: number; text: string }[] = [];
  const chunk = (statements: readonly Statement[], depth: number): void => {
    let i = 0;
    while (i < statements.length) {
      if (!wrappable(statements[i]!) || !startsLine(statements[i]!)) {
        i++;
        continue;
      }
      let last = -1;
      for (let j = i; j < statements.length && j - i < CHUNK_STATEMENTS; j++) {
        if (!wrappable(statements[j]!)) break;
        if (endsLine(statements[j]!)) last = j;
      }
      if (last < 0) {
        i++;
        continue;
      }
      const indent = /^[ \t]*/.exec(js.slice(starts[lineOf(statements[i]!.getStart(sf))]!))![0];
      inserts.push({
        line: lineOf(statements[i]!.getStart(sf)),
        order: depth,
        text: `${indent};(() => {`,
      });
      inserts.push({
        line: lineOf(statements[last]!.end) + 1,
        order: -depth - 1,
        text: `${indent}})();`,
      });
      i = last + 1;
    }
  };
  const visit = (n: Node, depth: number): void => {
    if ((t.isBlock(n) || t.isSourceFile(n)) && n.statements.length >= MIN_BLOCK_STATEMENTS) {
      chunk(n.statements, depth);
    }
    t.forEachChild(n, (c) => visit(c, depth + 1));
  };
  visit(sf, 0);
  if (inserts.length === 0) return undefined;
  // Closers (negative order, the deepest most negative) before openers (the shallowest first).
  inserts.sort((a, b) => a.line - b.line || a.order - b.order);
  const out: string[] = [];
  let from = 0;
  for (const ins of inserts) {
    const at = ins.line < starts.length ? starts[ins.line]! : js.length;
    out.push(js.slice(from, at));
    if (at === js.length && !js.endsWith("\n")) out.push("\n");
    out.push(ins.text + "\n");
    from = at;
  }
  out.push(js.slice(from));
  return { text: out.join(""), insertedBefore: inserts.map((x) => x.line) };
}
