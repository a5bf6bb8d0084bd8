// Division and remainder by constants (emit/divide.ts): the emitted instructions, run on a tiny
// interpreter of their PTX semantics, against floor/truncating division in BigInt, for dividends
// at the edges and spread over their range; and the PTX of a kernel (no div/rem left).
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import type { DType } from "@tirx-ts/core";
import { compileToPtx } from "../src/index.js";
import { divideByConstant } from "../src/emit/divide.js";
import type { EmitContext } from "../src/emit/context.js";

const u32 = (x: bigint): bigint => BigInt.asUintN(32, x);
const s32 = (x: bigint): bigint => BigInt.asIntN(32, x);

/** Emit `op a, c` and run it: PTX ISA semantics of shr, and, mul.hi, mul.lo, sub. */
function run(op: string, c: number, dt: DType, nonNeg: boolean, a: bigint): bigint | undefined {
  const lines: string[] = [];
  let n = 0;
  const ctx = { regs: { fresh: () => `%t${n++}` }, ins: (l: string) => lines.push(l) };
  const d = divideByConstant(ctx as unknown as EmitContext, op, "%a", c, dt, nonNeg);
  if (d === undefined) return undefined;
  const r = new Map<string, bigint>([["%a", u32(a)]]);
  const v = (x: string): bigint => (x.startsWith("%") ? r.get(x)! : u32(BigInt(x)));
  for (const l of lines) {
    const sp = l.indexOf(" ");
    const [ins, rest] = [l.slice(0, sp), l.slice(sp + 1)];
    const [dst, x, y] = rest.split(", ") as [string, string, string];
    const A = v(x);
    const B = v(y);
    const out: Record<string, () => bigint> = {
      "shr.s32": () => u32(s32(A) >> B),
      "shr.u32": () => A >> B,
      "and.b32": () => A & B,
      "mul.hi.u32": () => (A * B) >> 32n,
      "mul.lo.s32": () => u32(A * B),
      "sub.s32": () => u32(A - B),
    };
    if (!out[ins]) throw new Error(`no semantics for ${ins}`);
    r.set(dst, out[ins]());
  }
  return dt === "int32" ? s32(r.get(d)!) : r.get(d)!;
}

function want(op: string, a: bigint, c: bigint): bigint {
  const q = a / c;
  const fq = a % c !== 0n && a < 0n ? q - 1n : q;
  if (op === "div") return q;
  if (op === "mod") return a - q * c;
  if (op === "floordiv") return fq;
  return a - fq * c;
}

const dividends = (max: bigint, min: bigint, c: bigint): bigint[] => {
  const out = [min, max, 0n, 1n, c - 1n, c, c + 1n, max - c, max - 1n].filter(
    (x) => x >= min && x <= max,
  );
  let x = 12345n;
  for (let i = 0; i < 400; i++) {
    x = (x * 6364136223846793005n + 1442695040888963407n) % 2n ** 64n;
    out.push(min + (x % (max - min + 1n)));
    const k = out[out.length - 1]! / c;
    out.push(k * c, k * c - 1n);
  }
  return out.filter((y) => y >= min && y <= max);
};

describe("division by constants", () => {
  it.each([3, 5, 6, 7, 10, 24, 100, 641, 1000, 12345, 2 ** 30 + 1])(
    "non-negative int32 dividends: div, mod, floordiv, floormod by %i are exact",
    (c) => {
      for (const op of ["div", "mod", "floordiv", "floormod"]) {
        for (const a of dividends(2n ** 31n - 1n, 0n, BigInt(c))) {
          expect([op, c, a, run(op, c, "int32", true, a)]).toEqual([
            op,
            c,
            a,
            want(op, a, BigInt(c)),
          ]);
        }
      }
    },
  );

  it.each([2, 4, 8, 64, 2 ** 30])("floordiv/floormod by 2^k are exact for every int32, %i", (c) => {
    const bad: string[] = [];
    for (const op of ["floordiv", "floormod"]) {
      for (const a of dividends(2n ** 31n - 1n, -(2n ** 31n), BigInt(c))) {
        const got = run(op, c, "int32", false, a);
        if (got !== want(op, a, BigInt(c))) bad.push(`${op}(${a}, ${c}) = ${got}`);
      }
    }
    expect(bad).toEqual([]);
  });

  it("leaves div/mod of a possibly negative value by 2^k, and any non-power of two, to div/rem", () => {
    expect(run("div", 4, "int32", false, 5n)).toBeUndefined();
    expect(run("mod", 4, "int32", false, 5n)).toBeUndefined();
    expect(run("floordiv", 3, "int32", false, 5n)).toBeUndefined();
    expect(run("floordiv", 3, "int64", true, 5n)).toBeUndefined();
  });

  it("a kernel's thread-index divisions use shifts, masks and mul.hi", () => {
    const fn = T.function("divs", { Y: T.Tensor([4, 256], "int32") }, ({ Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
      const t = T.cuda.thread_idx("x");
      Y.set([0, t], t.floordiv(4));
      Y.set([1, t], t.floormod(8));
      Y.set([2, t], t.floordiv(3));
      Y.set([3, t], t.floormod(3));
    });
    const text = compileToPtx(fn, { arch: "sm_80" }).text;
    expect(text).not.toMatch(/\b(div|rem)\.[su]32/);
    expect(
      text
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => /^(shr|and|mul\.hi|sub)\./.test(l)),
    ).toMatchInlineSnapshot(`
      [
        "shr.s32 %r2, %r1, 2;",
        "and.b32 %r3, %r1, 7;",
        "mul.hi.u32 %r5, %r1, 2863311531;",
        "shr.u32 %r4, %r5, 1;",
        "mul.hi.u32 %r7, %r1, 2863311531;",
        "shr.u32 %r8, %r7, 1;",
        "sub.s32 %r6, %r1, %r9;",
      ]
    `);
  });
});
