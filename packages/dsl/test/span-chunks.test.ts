// chunkLongBlocks: long blocks of generated code run in arrows of at most 64 statements (so
// that V8's position lookup of each statement walks a short table), with the same effects as
// the original, and without changing any existing line (columns and, through the inserted
// lines, source-map lines stay right).
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { createRequire } from "node:module";
import type * as TsMorph from "ts-morph";
import { CHUNK_STATEMENTS, chunkLongBlocks, MIN_BLOCK_STATEMENTS } from "../src/span-chunks.js";

const ts = (createRequire(import.meta.url)("ts-morph") as typeof TsMorph).ts;

/** Statement makers: `i` is the statement's index, so that every effect is distinct. */
const KINDS: readonly ((i: number) => string)[] = [
  (i) => `log.push(${i});`,
  (i) => `acc += ${i}; log.push(acc);`,
  (i) => `const c${i} = acc * 2;\nlog.push(c${i});`,
  (i) => `log.push([${i}, this === undefined, arguments.length]);`,
  (i) => `await null; log.push("after await ${i}");`,
  (i) => `log.push(\n  ${i},\n  await Promise.resolve(${i}),\n);`,
  (i) => `if (${i} % 2) log.push("odd ${i}");`,
  (i) => `log.push("a${i}"); log.push("b${i}");`,
  (i) => `log.push(\n  "multi-line ${i}",\n);`,
  (i) => `[${i}, ${i + 1}].forEach((x) => log.push(x));`,
  (i) => `"not a directive ${i}";`,
];

/** An async function (strict) whose body is the statements of `kinds`, one after another. */
function program(kinds: readonly number[], nested: boolean): string {
  const body = kinds.map((k, i) => KINDS[k]!(i)).join("\n");
  const inner = nested
    ? `\n[0].forEach(() => {\n${kinds.map((k, i) => KINDS[k === 4 || k === 5 ? 0 : k]!(1000 + i)).join("\n")}\n});`
    : "";
  return `async function run(log) {\n"use strict";\nlet acc = 0;\n${body}${inner}\nreturn acc;\n}\n`;
}

async function runProgram(text: string): Promise<unknown[]> {
  const fn = (0, eval)(`(${text.trim()})`) as (log: unknown[]) => Promise<number>;
  const log: unknown[] = [];
  log.push(await fn.call(undefined, log));
  return log;
}

/** Each function with a block body: its first line (0-based) and its number of statements. */
function bodies(text: string): { line: number; size: number }[] {
  const sf = ts.createSourceFile("x.mjs", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.JS);
  const out: { line: number; size: number }[] = [];
  const visit = (n: TsMorph.ts.Node): void => {
    if (ts.isFunctionLike(n) && "body" in n && n.body && ts.isBlock(n.body as TsMorph.ts.Node)) {
      out.push({
        line: sf.getLineAndCharacterOfPosition(n.getStart(sf)).line,
        size: (n.body as TsMorph.ts.Block).statements.length,
      });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

describe("chunkLongBlocks", () => {
  test("short modules are left alone", () => {
    expect(chunkLongBlocks(program([0, 1, 2], false))).toBeUndefined();
  });

  test("a long straight-line body runs in arrows of at most 64 statements", () => {
    const n = 2000;
    const text = program(Array<number>(n).fill(0), false);
    const c = chunkLongBlocks(text)!;
    const sizes = bodies(c.text).map((b) => b.size);
    // Every log.push is in an arrow.
    const arrows = sizes.slice(1);
    expect(arrows.reduce((a, b) => a + b, 0)).toBe(n);
    expect(Math.max(...arrows)).toBe(CHUNK_STATEMENTS);
    // Its directive, declaration and return, and per chunk an empty statement and the call.
    expect(sizes[0]).toBe(3 + 2 * Math.ceil(n / CHUNK_STATEMENTS));
  });

  test("any mix of statements keeps its effects; existing lines are kept, in order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: KINDS.length - 1 }), {
          minLength: MIN_BLOCK_STATEMENTS,
          maxLength: MIN_BLOCK_STATEMENTS + 100,
        }),
        fc.boolean(),
        async (kinds, nested) => {
          const text = program(kinds, nested);
          const c = chunkLongBlocks(text);
          expect(c).toBeDefined();
          const { text: out, insertedBefore } = c!;
          // Removing the inserted lines gives the original back, and they are where it says.
          const outLines = out.split("\n");
          const inLines = text.split("\n");
          expect(outLines.length).toBe(inLines.length + insertedBefore.length);
          const kept: string[] = [];
          let k = 0;
          for (let line = 0, o = 0; o < outLines.length; o++) {
            if (k < insertedBefore.length && insertedBefore[k] === line) {
              expect(outLines[o]).toMatch(/^\s*(;\(\(\) => \{|\}\)\(\);)$/);
              k++;
              continue;
            }
            kept.push(outLines[o]!);
            line++;
          }
          expect(kept).toEqual(inLines);
          expect(await runProgram(out)).toEqual(await runProgram(text));
          // The arrows that begin on inserted lines hold 1 to 64 statements each.
          const openers = new Set(
            outLines.flatMap((l, o) => (/^\s*;\(\(\) => \{$/.test(l) ? [o] : [])),
          );
          const arrows = bodies(out).filter((b) => openers.has(b.line));
          expect(arrows.length).toBe(openers.size);
          for (const a of arrows) {
            expect(a.size).toBeGreaterThan(0);
            expect(a.size).toBeLessThanOrEqual(CHUNK_STATEMENTS);
          }
        },
      ),
      { seed: 42, numRuns: 30 },
    );
  });
});
