// A kernel written in a script that has no file of its own, a module imported from a data: URL
// (the lab's editor text) or code run by eval, carries the name its `//# sourceURL=` comment
// gives (the name its stack lines print) as its spans' file, at the script's own lines; eval'd
// code without one is skipped as before, for the caller's frame.
import { runInThisContext } from "node:vm";
import { describe, expect, test } from "vitest";
import { T } from "../src/index.js";
import type { PrimFunc, Span } from "@tirx-ts/core";

/** The kernel's text; its Store is on line 5. */
const KERNEL = [
  "// a kernel of the editor",
  'const k = T.function("k", { A: T.Tensor([32], "int32") }, ({ A }) => {',
  "  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });",
  "",
  '  A.set([T.cuda.thread_idx("x")], 7);',
  "});",
].join("\n");

/**
 * `f()` with V8's own stack formatting, as a browser has it (the test runner installs a
 * formatter of its own, which names a frame by its file as source-map-support does).
 */
function withV8Stacks<R>(f: () => R): R {
  const saved = Error.prepareStackTrace;
  delete (Error as { prepareStackTrace?: unknown }).prepareStackTrace;
  try {
    return f();
  } finally {
    Error.prepareStackTrace = saved;
  }
}

/** The span of the kernel's Store. */
function storeSpan(k: PrimFunc): Span | undefined {
  const body = k.body.kind === "Seq" ? k.body.stmts[0]! : k.body;
  if (body.kind !== "DeviceEntry" || body.body.kind !== "Seq") throw new Error("unexpected IR");
  return body.body.stmts.find((s) => s.kind === "Store")!.span;
}

describe("spans of a script without a file", () => {
  test("a script named by a data: URL is named by its sourceURL", () => {
    // What V8 gives the frames of a module imported from a data: URL in a browser: the URL as
    // the script's name, and the name its sourceURL comment gives. (The test runner imports a
    // data: URL through its own loader, without the comment.)
    const text = `(T) => { ${KERNEL}\nreturn k; }\n//# sourceURL=lab:/0f5e2c1a-data\n`;
    const url = `data:text/javascript,${encodeURIComponent(text)}`;
    const k = withV8Stacks(() =>
      (runInThisContext(text, { filename: url }) as (t: typeof T) => PrimFunc)(T),
    );
    const span = storeSpan(k);
    expect(span?.file).toBe("lab:/0f5e2c1a-data");
    expect(span?.line).toBe(5);
    expect(span?.col).toBe(5);
  });

  test("eval'd code is named by its sourceURL, and skipped without one", () => {
    const run = (tail: string): PrimFunc =>
      withV8Stacks(() => new Function("T", `${KERNEL}\nreturn k;\n${tail}`)(T) as PrimFunc);
    const named = storeSpan(run("//# sourceURL=lab:/0f5e2c1a-eval"));
    expect(named?.file).toBe("lab:/0f5e2c1a-eval");
    // new Function puts two lines of its own before the body.
    expect(named?.line).toBe(5 + 2);
    expect(storeSpan(run(""))?.file).toMatch(/span-source-url\.test\.ts$/);
  });
});
