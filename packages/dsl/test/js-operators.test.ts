// JavaScript's own operators on a traced expression (PrimExpr[Symbol.toPrimitive]): a comparison,
// arithmetic or loose equality converts the expression to a primitive, which traced a different
// kernel with no diagnostic (`T.if_(tid < 128, …)` became `T.if_(false, …)`, `tid + 1` the
// string "[object Object]1"). Each now throws TX1002 at the author's line, naming the method to
// use; a string conversion still works, and the methods build the kernel as before.
import { describe, expect, it } from "vitest";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { isTirxError, verify } from "@tirx-ts/core";
import { errorOf } from "../../../test/util/error-of.js";

/** Build a one-block kernel whose body applies `f` to the thread index. */
function build(f: (tid: PrimExpr) => unknown) {
  return T.function("k", { A: T.Tensor([128], "float32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [1], block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    f(tid);
    A.set([tid], T.float32(1));
  });
}

const OPERATORS: [string, (t: any) => unknown][] = [
  ["tid < 128", (t) => t < 128],
  ["tid >= 64", (t) => t >= 64],
  ["tid + 1", (t) => t + 1],
  ["tid - 1", (t) => t - 1],
  ["tid * 2", (t) => t * 2],
  ["tid / 2", (t) => t / 2],
  ["tid % 4", (t) => t % 4],
  ["-tid", (t) => -t],
  ["tid == 0", (t) => t == 0],
  ["Math.max(tid, 1)", (t) => Math.max(t, 1)],
  ["Number(tid)", (t) => Number(t)],
];

describe("JavaScript operators on a traced expression", () => {
  it.each(OPERATORS)("%s throws TX1002 at its own line, naming the methods", (_, op) => {
    // errorOf rethrows anything that is not a TirxError (a TypeError would fail the test).
    const err = errorOf(() => build(op));
    expect(isTirxError(err)).toBe(true);
    expect(err.code).toBe("TX1002");
    expect(err.message).toMatch(/JavaScript operator/);
    expect(err.message).toMatch(/a\.add\(b\).*a\.lt\(b\)/);
    expect(err.message).toMatch(/T\.max\(a, b\) \/ T\.min\(a, b\) for Math\.max \/ Math\.min/);
    // The span is the author's: this file, not the DSL's.
    expect(String(err.span?.file)).toMatch(/js-operators\.test\.ts$/);
  });

  it("a string conversion does not throw, and the methods build the same kernel as before", () => {
    let text = "";
    const fn = build((t) => {
      text = `${String(t)}`;
      T.if_(t.lt(128), () => undefined);
      return t.add(1).mul(2);
    });
    expect(text).toBe("[object Object]");
    expect(verify(fn).entry.launch.block).toEqual([128, 1, 1]);
  });
});

// `===` and `!==` cannot be hooked: on a traced value they give the JavaScript false / true,
// which then reached T.if_ as a constant condition (the branch silently never or always ran).
// Every T.* that takes a condition refuses a JavaScript boolean at the author's line.
describe("a JavaScript boolean where a traced condition is needed", () => {
  const CASES: [string, (t: any) => unknown][] = [
    ["T.if_(tid === 0, …)", (t) => T.if_(t === 0, () => undefined)],
    [
      "T.if_(tid !== 0, …, …)",
      (t) =>
        T.if_(
          t !== 0,
          () => undefined,
          () => undefined,
        ),
    ],
    ["T.if_then_else(tid === 0, 1, 2)", (t) => T.if_then_else(t === 0, 1, 2)],
    [
      "T.while_(() => tid === 0, …)",
      (t) =>
        T.while_(
          () => t === 0,
          () => undefined,
        ),
    ],
  ];
  it.each(CASES)("%s is TX1002 at its own line, naming the method", (_, f) => {
    const err = errorOf(() => build(f));
    expect(err.code).toBe("TX1002");
    expect(err.message).toMatch(/got the JavaScript boolean (true|false) as its condition/);
    expect(err.message).toMatch(/i\.eq\(0\)/);
    expect(String(err.span?.file)).toMatch(/js-operators\.test\.ts$/);
  });

  it("a traced condition still builds", () => {
    const fn = build((t) => {
      T.if_(t.eq(0), () => undefined);
      return T.if_then_else(t.ne(0), 1, 2);
    });
    expect(verify(fn).entry.launch.block).toEqual([128, 1, 1]);
  });
});
