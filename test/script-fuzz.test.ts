// Fixed-seed fuzzing of script-mode syntax: random small kernels (int32 arithmetic, loads,
// selects, conditions, const bindings, if/else, for loops) parsed with parseScript give on the
// simulator exactly what the same program computes in JavaScript, and assemble with ptxas; the
// same programs with random mutations (deleted, inserted and moved text) are either kernels that
// run or are refused with a TirxError (a code), never another exception. Source nested deeper
// than the TypeScript parser follows is TX2013.
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { parseScript, printScriptModuleText } from "@tirx-ts/dsl";
import { isTirxError, structuralEqual, verify, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { T } from "tirx-ts";
import { assembleLater } from "./util/ptxas-deferred.js";

const THREADS = 32;
const A = Array.from({ length: THREADS }, (_, i) => ((i * 37) % 61) - 30);

/** A generated program: its text, and what it does to B[t] for each thread (undefined: no store). */
interface Program {
  readonly text: string;
  readonly run: (t: number) => number | undefined;
}

/** Values in scope while a thread runs the program. */
type Env = Map<string, number>;

interface Gen {
  code: string;
  eval: (env: Env) => number;
}

/** A random program from `rnd` (fast-check's random source), at most `size` statements. */
function program(rnd: (n: number) => number, size: number): Program {
  let vars = 0;
  const lit = (): Gen => {
    const v = rnd(41) - 20;
    return { code: String(v), eval: () => v };
  };
  const expr = (scope: string[], depth: number): Gen => {
    const pick = rnd(depth <= 0 ? 3 : 8);
    if (pick === 0 || (pick === 1 && scope.length === 0)) {
      return { code: "t", eval: (e) => e.get("t")! };
    }
    if (pick === 1) {
      const name = scope[rnd(scope.length)]!;
      return { code: name, eval: (e) => e.get(name)! };
    }
    if (pick === 2) {
      const i = expr(scope, depth - 1);
      return { code: `A[(${i.code}) & 31]`, eval: (e) => A[i.eval(e) & 31]! };
    }
    if (pick <= 5) {
      // An operator with a non-constant left operand (two constants fold in JS doubles).
      const a = expr(scope, depth - 1);
      const b = rnd(2) === 0 ? lit() : expr(scope, depth - 1);
      const ops: [string, (x: number, y: number) => number][] = [
        ["+", (x, y) => (x + y) | 0],
        ["-", (x, y) => (x - y) | 0],
        ["*", (x, y) => Math.imul(x, y)],
        ["&", (x, y) => x & y],
        ["|", (x, y) => x | y],
        ["^", (x, y) => x ^ y],
      ];
      const [op, f] = ops[rnd(ops.length)]!;
      return { code: `(${a.code} ${op} ${b.code})`, eval: (e) => f(a.eval(e), b.eval(e)) };
    }
    const c = cond(scope, depth - 1);
    const x = expr(scope, depth - 1);
    const y = expr(scope, depth - 1);
    return {
      code: `(${c.code} ? ${x.code} : ${y.code})`,
      eval: (e) => (c.eval(e) ? x.eval(e) : y.eval(e)),
    };
  };
  const cond = (scope: string[], depth: number): Gen => {
    const pick = rnd(depth <= 0 ? 3 : 6);
    if (pick < 3) {
      const a = expr(scope, depth - 1);
      const b = rnd(2) === 0 ? lit() : expr(scope, depth - 1);
      const ops: [string, (x: number, y: number) => boolean][] = [
        ["<", (x, y) => x < y],
        [">=", (x, y) => x >= y],
        ["===", (x, y) => x === y],
      ];
      const [op, f] = ops[pick]!;
      return { code: `(${a.code} ${op} ${b.code})`, eval: (e) => +f(a.eval(e), b.eval(e)) };
    }
    if (pick === 3) {
      const a = cond(scope, depth - 1);
      return { code: `!${a.code}`, eval: (e) => +!a.eval(e) };
    }
    const a = cond(scope, depth - 1);
    const b = cond(scope, depth - 1);
    return pick === 4
      ? { code: `(${a.code} && ${b.code})`, eval: (e) => +(a.eval(e) && b.eval(e)) }
      : { code: `(${a.code} || ${b.code})`, eval: (e) => +(a.eval(e) || b.eval(e)) };
  };
  type Run = (env: Env, out: { b?: number }) => void;
  let budget = size;
  const block = (scope: string[], indent: string, nest: number): { code: string; run: Run } => {
    const lines: string[] = [];
    const runs: Run[] = [];
    const inner = [...scope];
    const count = 1 + rnd(3);
    for (let k = 0; k < count && budget > 0; k++, budget--) {
      const pick = rnd(nest >= 2 ? 2 : 4);
      if (pick === 0) {
        const name = `v${vars++}`;
        const e = expr(inner, 2);
        lines.push(`${indent}const ${name} = ${e.code};`);
        runs.push((env) => env.set(name, e.eval(env)));
        inner.push(name);
      } else if (pick === 1) {
        const e = expr(inner, 2);
        lines.push(`${indent}B[t] = ${e.code};`);
        runs.push((env, out) => (out.b = e.eval(env)));
      } else if (pick === 2) {
        const c = cond(inner, 2);
        const th = block(inner, indent + "  ", nest + 1);
        const el = block(inner, indent + "  ", nest + 1);
        lines.push(
          `${indent}if (${c.code}) {`,
          th.code,
          `${indent}} else {`,
          el.code,
          `${indent}}`,
        );
        runs.push((env, out) =>
          c.eval(env) ? th.run(new Map(env), out) : el.run(new Map(env), out),
        );
      } else {
        const name = `i${vars++}`;
        const n = 1 + rnd(3);
        const body = block([...inner, name], indent + "  ", nest + 1);
        lines.push(
          `${indent}for (let ${name} = 0; ${name} < ${n}; ${name}++) {`,
          body.code,
          `${indent}}`,
        );
        runs.push((env, out) => {
          for (let i = 0; i < n; i++) body.run(new Map(env).set(name, i), out);
        });
      }
    }
    return { code: lines.join("\n"), run: (env, out) => runs.forEach((r) => r(env, out)) };
  };
  const body = block([], "  ", 0);
  const text = `import { script as T, type Tensor } from "tirx-ts";
export const k = T.prim_func(function k(A: Tensor<[${THREADS}], "int32">, B: Tensor<[${THREADS}], "int32">) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: ${THREADS} }) });
  const t = T.cuda.thread_idx("x");
${body.code}
});
`;
  return {
    text,
    run: (t) => {
      const out: { b?: number } = {};
      body.run(new Map([["t", t]]), out);
      return out.b;
    },
  };
}

/** B after a simulated launch of `fn` (B starts at -7 everywhere). */
function simB(fn: PrimFunc): number[] {
  const a = simTensor(A, { shape: [THREADS], dtype: "int32" });
  const b = simTensor(new Int32Array(THREADS).fill(-7), { shape: [THREADS], dtype: "int32" });
  runSim(verify(fn), [a, b]);
  return Array.from(b.toArray() as Int32Array);
}

/** A random source for `program` from a fast-check seed. */
const source = (seed: number) => {
  let s = seed >>> 0 || 1;
  return (n: number): number => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) % n;
  };
};

describe("random script-mode kernels", () => {
  test("compute what the same program computes in JavaScript", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 8 }),
        (seed, size) => {
          const p = program(source(seed), size);
          const [fn] = parseScript(p.text, "fuzz.ts");
          const want = Array.from({ length: THREADS }, (_, t) => p.run(t) ?? -7);
          expect(simB(fn!)).toEqual(want);
          const ptx = compileToPtx(fn!);
          assembleLater(ptx.text, ptx.target, `script_${seed}`);
        },
      ),
      { seed: 31, numRuns: 40 },
    );
  });

  test("mutated, they run or are refused with a code", () => {
    const tokens = [
      "(",
      ")",
      "{",
      "}",
      ";",
      ",",
      "=",
      "+",
      "[",
      "]",
      "await ",
      "async ",
      "yield ",
      "1e9",
      "t",
      "B[t]",
      "...",
      "?",
      ":",
      "!",
      "=>",
      "while (1) {}",
      "return;",
      "delete ",
      "new ",
      "this",
      "`",
      "'",
      "/*",
      "for (;;) {}",
      "class X {}",
      "let ",
      "var ",
      "T.",
      "0x",
    ];
    let refused = 0;
    let ran = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.array(fc.tuple(fc.nat(3), fc.nat(10_000), fc.nat(40), fc.nat(tokens.length - 1)), {
          minLength: 1,
          maxLength: 3,
        }),
        (seed, edits) => {
          let text = program(source(seed), 6).text;
          for (const [kind, at, len, tok] of edits) {
            const i = at % (text.length + 1);
            if (kind === 0) text = text.slice(0, i) + text.slice(i + 1 + (len % 12));
            else if (kind === 1) text = text.slice(0, i) + tokens[tok]! + text.slice(i);
            else {
              const lines = text.split("\n");
              const a = i % lines.length;
              const b = (i + len) % lines.length;
              [lines[a], lines[b]] = [lines[b]!, lines[a]!];
              text = lines.join("\n");
            }
          }
          try {
            for (const fn of parseScript(text, "mutant.ts")) simB(fn);
            ran++;
          } catch (e) {
            if (!isTirxError(e)) throw e;
            expect(e.code).toMatch(/^TX\d{4}$/);
            refused++;
          }
        },
      ),
      { seed: 32, numRuns: 200 },
    );
    expect(ran).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
  });
});

describe("nesting in script-mode source", () => {
  const chain = (n: number): PrimFunc =>
    T.function(
      "deep",
      { A: T.Tensor([4], "float32"), B: T.Tensor([4], "float32") },
      ({ A: a, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
        const t = T.cuda.thread_idx("x");
        let e = a.get([t]);
        for (let i = 0; i < n; i++) e = i % 2 ? e.add(a.get([t])) : a.get([t]).sub(e);
        B.set([t], e);
      },
    );

  test("200 levels of parentheses read back as the same kernel", () => {
    const fn = chain(200);
    const [back] = parseScript(printScriptModuleText([fn]), "deep200.ts");
    expect(structuralEqual(back, fn)).toBe(true);
  });

  test("2040 levels, more than the TypeScript parser follows, are TX2013", () => {
    let err: unknown;
    try {
      parseScript(printScriptModuleText([chain(2040)]), "deep2040.ts");
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ code: "TX2013", span: { file: "deep2040.ts" } });
  });
});
