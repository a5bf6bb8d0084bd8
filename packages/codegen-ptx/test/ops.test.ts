// The multi-instruction lowerings of the arith op records, run on a tiny interpreter of the instructions they
// use, against the definitions: floor division and modulo round toward negative infinity.
import { describe, expect, it } from "vitest";
import {
  binary,
  binaryOp,
  cast,
  compare,
  floatImm,
  mkVar,
  type BinaryOp,
  type Expr,
} from "@tirx-ts/core";
import { upcastHalf } from "../src/lower/upcast-half.js";

/** Run template lines over int32 registers (the instructions floordiv/floormod use). */
function run(op: BinaryOp, a: number, b: number): number {
  const regs = new Map<string, number | boolean>([
    ["%a", a],
    ["%b", b],
  ]);
  let n = 0;
  const lines: string[] = [];
  binaryOp(op).lower(
    {
      ins: (l) => lines.push(l),
      tmp: (dt) => `%t${dt}${n++}`,
      label: () => {},
      newLabel: (h) => h,
      space: () => "global",
      toReg: (x) => x,
    },
    "%d",
    ["%a", "%b"],
    ["int32", "int32"],
    "int32",
  );
  const val = (x: string): number => (x.startsWith("%") ? (regs.get(x) as number) : Number(x));
  for (const line of lines) {
    const [ins, rest] = [line.slice(0, line.indexOf(" ")), line.slice(line.indexOf(" ") + 1)];
    const [d, x, y, z] = rest.split(", ");
    const X = () => val(x!);
    const Y = () => val(y!);
    switch (ins) {
      case "div.s32":
        regs.set(d!, Math.trunc(X() / Y()));
        break;
      case "rem.s32":
        regs.set(d!, X() % Y() || 0);
        break;
      case "setp.ne.s32":
        regs.set(d!, X() !== Y());
        break;
      case "setp.lt.s32":
        regs.set(d!, X() < Y());
        break;
      case "xor.b32":
        regs.set(d!, X() ^ Y());
        break;
      case "and.pred":
        regs.set(d!, (regs.get(x!) as boolean) && (regs.get(y!) as boolean));
        break;
      case "selp.b32":
        regs.set(d!, regs.get(z!) ? X() : Y());
        break;
      case "sub.s32":
        regs.set(d!, X() - Y());
        break;
      case "add.s32":
        regs.set(d!, X() + Y());
        break;
      default:
        throw new Error(`interpreter lacks ${ins}`);
    }
  }
  return regs.get("%d") as number;
}

describe("floor division templates (signed int32)", () => {
  const values = [-9, -8, -7, -3, -1, 0, 1, 3, 7, 8, 9];
  const divisors = [-4, -3, -1, 1, 3, 4];
  it("floordiv rounds toward negative infinity", () => {
    for (const a of values)
      for (const b of divisors)
        expect(run("floordiv", a, b), `${a} // ${b}`).toBe(Math.floor(a / b));
  });
  it("floormod takes the sign of the divisor", () => {
    for (const a of values)
      for (const b of divisors)
        expect(run("floormod", a, b), `${a} % ${b}`).toBe(a - Math.floor(a / b) * b);
  });
});

describe("upcastHalf", () => {
  const x = mkVar("x", "float16");
  const y = mkVar("y", "float16");
  it("computes float16 arithmetic in float32 and rounds back once", () => {
    const e = upcastHalf(binary("add", x, y));
    expect(e).toMatchObject({
      kind: "Cast",
      dtype: "float16",
      value: {
        kind: "Binary",
        op: "add",
        dtype: "float32",
        a: { kind: "Cast", value: x },
        b: { kind: "Cast", value: y },
      },
    });
  });
  it("compares in float32 and routes conversions PTX lacks through float32", () => {
    expect(upcastHalf(compare("lt", x, y))).toMatchObject({
      a: { kind: "Cast", dtype: "float32" },
    });
    const b = mkVar("b", "bfloat16");
    const viaF32 = (e: Expr) => (e as { value: Expr }).value;
    expect(viaF32(upcastHalf(cast("int32", b)))).toMatchObject({
      kind: "Cast",
      dtype: "float32",
      value: b,
    });
    expect(viaF32(upcastHalf(cast("bool", x)))).toMatchObject({
      kind: "Cast",
      dtype: "float32",
      value: x,
    });
    // Direct conversions are left alone.
    expect(upcastHalf(cast("int32", x))).toMatchObject({ kind: "Cast", value: x });
    expect(upcastHalf(cast("float32", b))).toMatchObject({ kind: "Cast", value: b });
  });
  it("leaves float32 expressions untouched", () => {
    const e = binary("mul", floatImm(2), floatImm(3));
    expect(upcastHalf(e)).toBe(e);
  });
});
