// A kernel is traced synchronously: a body that returns a promise (an `async` function) would
// lose every statement after its first `await`. Such a body is refused at once, at the author's
// call (TX1025), and its rejection is not left unhandled; script mode refuses an async kernel
// function at the node (TX1020).
import { afterEach, beforeEach, expect, test } from "vitest";
import { T, parseScript } from "tirx-ts";
import { isTirxError } from "@tirx-ts/core";
import type { TileView } from "@tirx-ts/dsl";

const unhandled: unknown[] = [];
const record = (e: unknown): void => void unhandled.push(e);
beforeEach(() => {
  unhandled.length = 0;
  process.on("unhandledRejection", record);
});
afterEach(() => void process.off("unhandledRejection", record));

/** The error `f` throws, after the microtasks and one macrotask it started have run. */
async function refusal(f: () => unknown): Promise<unknown> {
  let err: unknown;
  try {
    f();
  } catch (e) {
    err = e;
  }
  await new Promise((r) => setImmediate(r));
  return err;
}

const P = { A: T.Tensor([4], "float32") };
const entry = () => T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });

test("an async T.function body is TX1025 at the T.function call, before any await resumes", async () => {
  let resumed = false;
  const err = await refusal(() =>
    T.function("k", P, async ({ A }) => {
      entry();
      await Promise.resolve();
      resumed = true;
      A.set([0], 1); // would be lost: the builder is gone by now
    }),
  );
  expect(err).toMatchObject({
    code: "TX1025",
    span: { file: expect.stringMatching(/async-body/) },
  });
  // The rest of the body still ran later (JavaScript resumes it), outside any kernel: the T.*
  // call there threw TX1001 into a promise that was observed, not left unhandled.
  expect(resumed).toBe(true);
  expect(unhandled).toEqual([]);
});

test("async T.if_ arms and T.while_ bodies are TX1025 at their call", async () => {
  const bodies: [string, (A: TileView) => void][] = [
    ["then", (A) => T.if_(T.cuda.thread_idx("x").lt(2), (async () => A.set([0], 1)) as never)],
    [
      "else",
      (A) =>
        T.if_(T.cuda.thread_idx("x").lt(2), () => A.set([0], 1), (async () =>
          A.set([1], 1)) as never),
    ],
    [
      "while",
      (A) => T.while_(() => T.cuda.thread_idx("x").lt(0), (async () => A.set([0], 1)) as never),
    ],
    // A thenable that is not a Promise counts too.
    [
      "thenable",
      (A) => T.if_(T.cuda.thread_idx("x").lt(2), (() => ({ then: () => A }) as never) as never),
    ],
  ];
  for (const [what, body] of bodies) {
    const err = await refusal(() =>
      T.function("k", P, ({ A }) => {
        entry();
        body(A);
      }),
    );
    expect([what, isTirxError(err) && err.code]).toEqual([what, "TX1025"]);
  }
  expect(unhandled).toEqual([]);
});

test("a synchronous body returning undefined (or any non-thenable) is unaffected", () => {
  const k = T.function("k", P, ({ A }) => {
    entry();
    T.if_(T.cuda.thread_idx("x").lt(2), () => A.set([0], 1));
    return 5 as never;
  });
  expect(k.name).toBe("k");
});

test("script mode refuses an async kernel function at the node (TX1020)", () => {
  const text = `import { script as T, type Tensor } from "tirx-ts";
export const k = T.prim_func(async function k(A: Tensor<[4], "float32">) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
  await 0;
  A[0] = 1;
});
`;
  let err: unknown;
  try {
    parseScript(text, "async-kernel.ts");
  } catch (e) {
    err = e;
  }
  expect(err).toMatchObject({ code: "TX1020", span: { file: "async-kernel.ts", line: 2 } });
});
