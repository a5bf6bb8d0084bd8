// Spans carry the text of their line (and the lines around it), captured when the span is
// resolved, and diagnostics render their code frame from it: a frame survives its source file
// being changed or deleted. The expected frames are babel's code frame of the whole original
// file, which is how the frame was made when it was read from disk at render time.
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { codeFrameColumns } from "@babel/code-frame";
import {
  callSite,
  sourceTextCounters,
  TirxError,
  verify,
  type PrimFunc,
  type Span,
  type Stmt,
} from "@tirx-ts/core";
import { parseScript } from "@tirx-ts/dsl";
import { spanFingerprint } from "../packages/runtime/src/cache.js";
import { printedDir } from "./util/cli-files.js";

const dir = printedDir("span-line-text");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A kernel whose tile.apply (line 7, marked) is TX3007 at verify: .cg copies 16-byte chunks. */
const KERNEL = `import { T } from "tirx-ts";
export const k = T.function("k", { A: T.Tensor([128, 32], "float16") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
  const s = T.alloc_shared([128, 32], "float16");
  const v = { w: 4, t: 32, v: 4 };
  const d = s.rearrange("(w t) (r v) -> w t r v", v);
  T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"], d, A.rearrange("(w t) (r v) -> w t r v", v), { chunk_bytes: 8, scope: "cta" }); // @apply
});
`;

/** Babel's frame of `span` in the whole `text` (the renderer's options). */
function reference(text: string, span: Span): string {
  const loc = {
    start: { line: span.line, column: span.col },
    ...(span.length ? { end: { line: span.line, column: span.col + span.length } } : {}),
  };
  return codeFrameColumns(text, loc, { linesAbove: 1, linesBelow: 1 });
}

function thrown(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

const lineOf = (text: string, marker: string): number =>
  text.split("\n").findIndex((l) => l.includes(marker)) + 1;

describe("a diagnostic's code frame comes from its span, not from the file at render time", () => {
  test("a builder kernel's error, after its file changed and after it was deleted", async () => {
    const file = join(dir, "builder.ts");
    writeFileSync(file, KERNEL);
    const { k } = (await import(pathToFileURL(file).href)) as { k: PrimFunc };
    const e = thrown(() => verify(k));
    expect(e.code).toBe("TX3007");
    expect(e.span?.file).toBe(file);
    expect(e.span?.line).toBe(lineOf(KERNEL, "// @apply"));
    expect(e.span?.lineText).toBe(KERNEL.split("\n")[e.span!.line - 1]);
    const rendered = e.render();
    expect(rendered).toContain(reference(KERNEL, e.span!));
    writeFileSync(file, KERNEL.replace(/T\./g, "X."));
    expect(e.render()).toBe(rendered);
    rmSync(file);
    expect(e.render()).toBe(rendered);
    expect(e.render()).toContain("// @apply");
  });

  test("a launch-site span (callSite), after its file was deleted", async () => {
    const text = [
      'import { callSite } from "@tirx-ts/core";',
      "export function here() {",
      "  return callSite(); // @site",
      "}",
      "",
    ].join("\n");
    const file = join(dir, "site.ts");
    writeFileSync(file, text);
    const { here } = (await import(pathToFileURL(file).href)) as { here: typeof callSite };
    const span = here()!;
    expect(span.file).toBe(file);
    expect(span.line).toBe(lineOf(text, "// @site"));
    expect([span.lineAbove, span.lineText, span.lineBelow]).toEqual(
      text.split("\n").slice(span.line - 2, span.line + 1),
    );
    rmSync(file);
    const e = new TirxError("TX5001", "wrong number of arguments", span);
    expect(e.render()).toContain(reference(text, span));
  });

  test("a script-mode error in a text that is on no disk frames the text's line", () => {
    const text = [
      'import { script as T, type Tensor } from "tirx-ts";',
      "",
      'export const bad = T.prim_func(function bad(A: Tensor<[128], "float32">) {',
      "  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });",
      '  const i = T.cuda.thread_idx("x");',
      "  A[i] = A[i] ** 2;",
      "});",
      "",
    ].join("\n");
    const e = thrown(() => parseScript(text, join(dir, "never-written.ts")));
    expect(e.code).toBe("TX1020");
    expect(e.span?.line).toBe(lineOf(text, "**"));
    expect(e.span?.lineText).toBe("  A[i] = A[i] ** 2;");
    expect(e.render()).toContain(reference(text, e.span!));
  });

  test("a span made without line text renders without a frame and reads no file", () => {
    const file = join(dir, "plain.ts");
    writeFileSync(file, "const a = 1;\nconst b = 2;\n");
    const before = { ...sourceTextCounters };
    const text = new TirxError("TX5001", "wrong", { file, line: 2, col: 7 }).render();
    expect(text.split("\n")).toHaveLength(1);
    expect(sourceTextCounters).toEqual(before);
  });
});

test("the spans of a kernel's 300 statements resolve with one read of its file", async () => {
  const n = 300;
  const body = Array.from({ length: n }, (_, i) => `  A.set([t], T.float32(${i})); // @${i}`);
  const text = [
    'import { T } from "tirx-ts";',
    'export const straight = T.function("straight", { A: T.Tensor([32], "float32") }, ({ A }) => {',
    "  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });",
    '  const t = T.cuda.thread_idx("x");',
    ...body,
    "});",
    "",
  ].join("\n");
  const file = join(dir, "straight.ts");
  writeFileSync(file, text);
  const before = { ...sourceTextCounters };
  const { straight } = (await import(pathToFileURL(file).href)) as { straight: PrimFunc };
  const stores: Stmt[] = [];
  const stack: Stmt[] = [straight.body];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (s.kind === "Seq") stack.push(...s.stmts);
    else if (s.kind === "DeviceEntry") stack.push(s.body);
    else if (s.kind === "Store") stores.push(s);
  }
  expect(stores).toHaveLength(n);
  const lines = text.split("\n");
  for (const s of stores) {
    const span = s.span!;
    expect(span.lineText).toBe(lines[span.line - 1]);
    expect(span.lineText).toMatch(/\/\/ @\d+$/);
  }
  // One read of the file, and its version checked once per synchronous job (the trace, this
  // loop), not once per span.
  expect(sourceTextCounters.reads - before.reads).toBe(1);
  expect(sourceTextCounters.stats - before.stats).toBeLessThanOrEqual(2);
});

test("the compile cache's span fingerprint covers each span's code frame lines", () => {
  // One node at one place whose lines read differently (the file was edited in between).
  const at = (frame: Partial<Span>): PrimFunc =>
    ({ kind: "Store", span: { file: "k.ts", line: 4, col: 5, ...frame } }) as unknown as PrimFunc;
  const fp = (frame: Partial<Span>): string => spanFingerprint(at(frame));
  expect(fp({ lineText: "a" })).toBe(fp({ lineText: "a" }));
  expect(fp({ lineText: "a" })).not.toBe(fp({ lineText: "b" }));
  expect(fp({ lineText: "a" })).not.toBe(fp({}));
  expect(fp({ lineText: "" })).not.toBe(fp({}));
  expect(fp({ lineText: "a", lineAbove: "x" })).not.toBe(fp({ lineText: "a", lineBelow: "x" }));
  expect(fp({ lineText: "a", lineBelow: "x" })).not.toBe(fp({ lineText: "a", lineBelow: "y" }));
  expect(fp({ lineText: "ab", lineBelow: "" })).not.toBe(fp({ lineText: "a", lineBelow: "b" }));
});
