// Misuse of the library calls as a new user writes it, each caught before anything is built or
// launched: gemm() with out being one of its operands (other tiles still read it: a race, wrong
// data on the GPU) is TX9002; attention() with a batch or heads of 0 is TX9002 at the call (not
// the tensor map's TX4024 from inside the kernel); option values in messages are shown as
// values ("2" a string, NaN as NaN), not through String or JSON; a tensor without a dtype is
// TX1003 saying so.
import { describe, expect, test } from "vitest";
import { attention, attentionBackward, gemm, sim, tensor } from "tirx-ts";
import { errorOf } from "./util/error-of.js";

const dev = sim();
const t = (shape: number[], dtype: "float16" | "float32" = "float16") =>
  tensor(new Float32Array(shape.reduce((p, q) => p * q, 1)), { shape, dtype, device: dev });

describe("gemm(): out that is an operand", () => {
  test("out === a or out === b is TX9002 at the caller's line", () => {
    const a = t([16, 16]);
    const b = t([16, 16]);
    for (const [out, name] of [
      [a, "a"],
      [b, "b"],
    ] as const) {
      const e = errorOf(() => gemm(a, b, { out }));
      expect([e.code, e.message]).toEqual([
        "TX9002",
        expect.stringMatching(new RegExp(`gemm: out is ${name}: D cannot overwrite an operand`)),
      ]);
      expect(e.span?.file).toMatch(/kernels-user-errors\.test\.ts$/);
    }
  });
  test("a string or NaN alpha is shown as what it is", () => {
    const a = t([16, 16]);
    expect(errorOf(() => gemm(a, a, { alpha: "2" as never })).message).toMatch(
      /alpha is a finite number, got "2"/,
    );
    expect(errorOf(() => gemm(a, a, { alpha: Number.NaN })).message).toMatch(
      /alpha is a finite number, got NaN/,
    );
  });
});

describe("attention(): empty batch or heads, option values in messages", () => {
  test("a batch or heads of 0 is TX9002 naming them", () => {
    const x = t([0, 128, 1, 64]);
    const e = errorOf(() => attention(x, x, x));
    expect([e.code, e.message]).toEqual([
      "TX9002",
      expect.stringMatching(/batch, heads and kvHeads must be at least 1.*got batch 0, heads 1/),
    ]);
    const h = t([1, 128, 0, 64]);
    const lse = t([1, 0, 128], "float32");
    const eb = errorOf(() => attentionBackward(h, h, h, h, h, lse));
    expect([eb.code, eb.message]).toEqual([
      "TX9002",
      expect.stringMatching(/batch, heads and kvHeads must be at least 1.*heads 0/),
    ]);
  });
  test("lse, window and maxSeqQ values are shown as given", () => {
    const x = t([1, 128, 1, 64]);
    const bad = (opts: object) => errorOf(() => attention(x, x, x, opts as never)).message;
    expect(bad({ lse: "true" })).toMatch(/lse is a boolean, got "true"/);
    expect(bad({ window: [Number.NaN, 0] })).toMatch(/two integers .*got \[NaN, 0\]/);
  });
});

describe("tensor(): a missing dtype", () => {
  test("is TX1003 saying a dtype is needed, not 'unknown dtype undefined'", () => {
    const zeros = tensor.zeros as unknown as (shape: number[]) => unknown;
    const e = errorOf(() => zeros([4]));
    expect([e.code, e.message]).toEqual([
      "TX1003",
      expect.stringMatching(/a tensor needs a dtype, none given/),
    ]);
    const e2 = errorOf(() => tensor(new Float32Array(4), { shape: [4] } as never));
    expect(e2.code).toBe("TX1003");
    expect(e2.message).toMatch(/none given/);
  });
});

describe("gemm(): a config field it lacks", () => {
  test("is TX9001 naming the nearest field", () => {
    const a = t([16, 16]);
    const e = errorOf(() =>
      gemm(a, a, { config: { bm: 64, bn: 64, stages: 2, splitk: 2 } as never }),
    );
    expect([e.code, e.message]).toEqual([
      "TX9001",
      expect.stringMatching(/config has no field "splitk"; did you mean "splitK"\?/),
    ]);
  });
});
