// Script mode's own behaviour: errors at the exact syntax node with a code frame and what to
// write instead (TX1020–TX1024), dtype checks of stores, and that a warm build reuses the parse.
import { mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { parseScript, script as T, scriptSourceCounters, type Tensor } from "@tirx-ts/dsl";
import { isTirxError, structuralEqual, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { copy_async } from "../examples/copy_async.js";

const dir = fileURLToPath(new URL("./.printed/script/", import.meta.url));

const HEAD =
  'import { script as T, type Tensor, type int32, type int64, type float16 } from "tirx-ts";\n';

/** The error parsing `body` as the body of a kernel over A (float16) and n (int32) throws. */
function errorOf(body: string, name = "k"): TirxError {
  mkdirSync(dir, { recursive: true });
  const file = `${dir}${name}.ts`;
  const text = `${HEAD}export const k = T.prim_func(function k(A: Tensor<[128], "float16">, n: int32) {\n${body}\n});\n`;
  writeFileSync(file, text);
  try {
    parseScript(text, file);
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error(`no error for:\n${body}`);
}

describe("script-mode errors", () => {
  test("a float16 store of an int64 value is TX1023 at the value, with a code frame", () => {
    const e = errorOf(
      "  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });\n  A[T.cuda.thread_idx()] = T.int64(n);",
      "store",
    );
    expect(e.code).toBe("TX1023");
    expect(e.span).toMatchObject({ line: 4, col: 28, length: 10 });
    expect(e.render({ cwd: dir })).toMatchInlineSnapshot(`
      "store.ts:4:28: error TX1023 [script/store-dtype]: a float16 element cannot store a value of dtype int64
        3 |   T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      > 4 |   A[T.cuda.thread_idx()] = T.int64(n);
          |                            ^^^^^^^^^^
        5 | });
        note: convert it explicitly: T.float16(...)"
    `);
  });

  test("a const annotated with a dtype must hold that dtype (TX1023)", () => {
    const e = errorOf("  const h: float16 = T.int64(n);", "const");
    expect(e.code).toBe("TX1023");
    expect(e.text).toBe("const h: float16 cannot hold a value of dtype int64");
    expect(e.span).toMatchObject({ line: 3, col: 22 });
  });

  test("unsupported syntax is TX1020 at the node, saying what to write instead", () => {
    const cases: [string, RegExp, RegExp][] = [
      ["  let x = 1;", /let of a value/, /local_scalar/],
      ["  A[0] = n ** 2;", /operator \*\*/, /multiply/],
      ["  for (let i = 0; i <= n; i++) {}", /i < bound/, /i < b/],
      ["  return;", /ReturnStatement/, /for, if and while/],
      ["  A[0] = A[0] as number;", /type assertions/, /T\.float32/],
      ["  n;", /not a call or an assignment/, /store/],
    ];
    for (const [body, what, hint] of cases) {
      const e = errorOf(body);
      expect(e.code, body).toBe("TX1020");
      expect(e.text).toMatch(what);
      expect(e.notes[0]?.message).toMatch(hint);
      expect(e.span?.line).toBe(3);
    }
  });

  test("an unknown name is TX1024; a bad annotation TX1022; a nameless kernel TX1021", () => {
    const unknown = errorOf("  A[0] = B[0];");
    expect(unknown.code).toBe("TX1024");
    expect(unknown.span).toMatchObject({ line: 3, col: 10 });
    // A misspelled member of T: TX1024 naming its owner and the nearest member (was TX1020).
    const member = errorOf('  const t = T.cuda.thread_id("x");\n  A[t] = 0;');
    expect(member.code).toBe("TX1024");
    expect(member.message).toContain(
      '"thread_id" is not a member of T.cuda (did you mean "thread_idx"?)',
    );
    expect(member.span).toMatchObject({ line: 3, col: 13 });
    const ann = (() => {
      try {
        parseScript(`${HEAD}export const k = T.prim_func(function k(A: number[]) {});`);
      } catch (e) {
        return e as TirxError;
      }
      return undefined;
    })();
    expect(ann?.code).toBe("TX1022");
    expect(() => parseScript(`${HEAD}T.prim_func(() => {});`)).toThrow(/TX1021/);
  });

  test("builder errors keep the node's span (a float literal stored to an int32 is TX1007)", () => {
    const text = `${HEAD}export const k = T.prim_func(function k(B: Tensor<[4], "int32">) {\n  B[0] = 2.5;\n});\n`;
    try {
      parseScript(text, "lit.ts");
      expect.unreachable();
    } catch (e) {
      expect((e as TirxError).code).toBe("TX1007");
      expect((e as TirxError).span).toMatchObject({ file: "lit.ts", line: 3 });
    }
  });
});

describe("non-null assertions", () => {
  /** The kernel of `body` over A, B (2-D float32) and a local C, parsed from text. */
  const kernelOf = (body: string): PrimFunc => {
    const text = `${HEAD}export const k = T.prim_func(function k(A: Tensor<[4, 8], "float32">, B: Tensor<[4, 8], "float32">) {\n  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });\n  const t = T.cuda.thread_idx("x");\n  const C = T.alloc_local([8], "float32");\n${body}\n});\n`;
    const fns = parseScript(text, "nonnull.ts");
    expect(fns).toHaveLength(1);
    return fns[0]!;
  };

  test("`!` is erased as TypeScript erases it: the kernel is the one without it", () => {
    // noUncheckedIndexedAccess types every element read as possibly undefined, so a kernel
    // type-checked under it writes A[i]![j]!; the parser must read it as A[i][j].
    const pairs: [string, string][] = [
      [
        "  for (let j = 0; j < 8; j++) B[t][j] = A[t][j] + 1;",
        "  for (let j = 0; j < 8; j++) B[t]![j] = A[t]![j]! + 1;",
      ],
      [
        "  C[0] = A[t][0];\n  B[t][1] = C[0] * 2;",
        "  C[0]! = A[t]![0]!;\n  B[t]![1]! = C[0]! * 2;",
      ],
      [
        "  C[1] = 0;\n  C[1] += A[t][2];\n  B[t][2] = C[1];",
        "  C[1] = 0;\n  C[1]! += A[t]![2]!;\n  B[t]![2] = C[1]!;",
      ],
    ];
    for (const [plain, asserted] of pairs) {
      const a = kernelOf(plain);
      const b = kernelOf(asserted);
      expect(structuralEqual(a, b), asserted).toBe(true);
      // The pair differs in what it stores: a kernel that drops the `!`-wrapped store is not equal.
      expect(structuralEqual(a, kernelOf("")), plain).toBe(false);
    }
  });

  test("`as` casts stay refused (TX1020): only the erased assertion is read through", () => {
    expect(errorOf("  A[0] = A[0]! as number;").code).toBe("TX1020");
  });
});

describe("conditions known while lowering", () => {
  const kernelOf = (body: string): PrimFunc => {
    const text = `${HEAD}const W = 4;\nexport const k = T.prim_func(function k(A: Tensor<[4, 8], "float32">) {\n  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });\n  const t = T.cuda.thread_idx("x");\n${body}\n});\n`;
    return parseScript(text, "constcond.ts")[0]!;
  };

  test("T.if_then_else on constants picks its arm, as ?: does (the builder's T.if_then_else refuses a JavaScript boolean)", () => {
    const picked = kernelOf("  A[t][0] = T.if_then_else(W === 4, 1, 2);");
    expect(structuralEqual(picked, kernelOf("  A[t][0] = 1;"))).toBe(true);
    expect(structuralEqual(picked, kernelOf("  A[t][0] = W === 4 ? 1 : 2;"))).toBe(true);
    expect(structuralEqual(picked, kernelOf("  A[t][0] = 2;"))).toBe(false);
    // A traced condition still traces.
    expect(
      structuralEqual(
        kernelOf("  A[t][0] = T.if_then_else(t === 0, T.float32(1), T.float32(2));"),
        picked,
      ),
    ).toBe(false);
  });
});

/** The seed kernel in script mode, built by the same T.prim_func call site every time. */
function seedScript() {
  return T.prim_func(function copy_async(
    A: Tensor<[128, 32], "float16">,
    B: Tensor<[128, 32], "float16">,
  ) {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const shared = T.alloc_shared([128, 32], "float16", { layout: "default", name: "shared" });
    const src = A.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    const dst = shared.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"], dst, src, {
      chunk_bytes: 16,
      scope: "cta",
    });
    T.ptx.cp.async_.commit_group();
    T.ptx.cp.async_.wait_group(0);
    T.cuda.cta_sync();
    for (let j = 0; j < 32; j++) B[tid]![j] = shared[tid]![j]!;
  });
}

/** The parses and call searches (scriptSourceCounters) that `build` does. */
function sourceWork(build: () => unknown): { parses: number; callSearches: number } {
  const before = { ...scriptSourceCounters };
  build();
  return {
    parses: scriptSourceCounters.parses - before.parses,
    callSearches: scriptSourceCounters.callSearches - before.callSearches,
  };
}

test("the seed kernel: script mode from a call site in this file; warm builds reuse the parse", () => {
  // (Cold and warm build times are measured by bench/script-build.ts.)
  let first: PrimFunc | undefined;
  sourceWork(() => (first = seedScript()));
  expect(structuralEqual(first!, copy_async)).toBe(true);
  // A warm build only lowers: it neither parses this file again nor searches it for the call.
  for (let k = 0; k < 50; k++)
    expect(sourceWork(seedScript)).toEqual({ parses: 0, callSearches: 0 });
});

test("a kernel file is parsed once per version on disk, its call site searched once", async () => {
  mkdirSync(dir, { recursive: true });
  const file = `${dir}warm.ts`;
  const text = `${HEAD}export const build = () =>\n  T.prim_func(function warm(A: Tensor<[128], "float16">) {\n    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });\n    A[T.cuda.thread_idx("x")] = A[T.cuda.thread_idx("x")];\n  });\n`;
  writeFileSync(file, text);
  const { build } = (await import(/* @vite-ignore */ file)) as { build: () => PrimFunc };
  expect(sourceWork(build)).toEqual({ parses: 1, callSearches: 1 });
  for (let k = 0; k < 10; k++) expect(sourceWork(build)).toEqual({ parses: 0, callSearches: 0 });
  // The same file, changed on disk (its size is part of the stamp): parsed and searched again.
  writeFileSync(file, `${text}// changed\n`);
  expect(sourceWork(build)).toEqual({ parses: 1, callSearches: 1 });
  expect(sourceWork(build)).toEqual({ parses: 0, callSearches: 0 });
});
