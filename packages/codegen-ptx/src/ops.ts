import type { BinaryOp, CompareOp, DType } from "@tirx-ts/core";
import { bitType, opType } from "./types.js";

/**
 * The table from IR operator to PTX, in the manner of tinygrad's `asm_for_op`: each entry turns a
 * destination, operands and the operand dtype into instruction lines (without `;`). Entries that
 * need scratch registers get them from `tmp`. 16-bit floats never reach this table (see
 * `lower/upcast-half.ts`); bool operands only reach the bit operators.
 */
export type Template = (d: string, a: string, b: string, dt: DType, tmp: Scratch) => string[];

/** Scratch registers for multi-instruction templates. */
export interface Scratch {
  /** A fresh register holding a value of `dt`. */
  of(dt: DType): string;
}

type Family = "int" | "uint" | "float" | "bool";

function family(dt: DType): Family {
  if (dt === "bool") return "bool";
  const t = opType(dt);
  return t[0] === "f" ? "float" : t[0] === "s" ? "int" : "uint";
}

// Floats use `.rn` explicitly: without a rounding modifier ptxas may contract mul+add into fma,
// and the simulated device computes each operation rounded on its own.
const arith =
  (intOp: string, floatOp: string): Template =>
  (d, a, b, dt) => [`${family(dt) === "float" ? floatOp : intOp}.${opType(dt)} ${d}, ${a}, ${b}`];

const intOnly =
  (op: string): Template =>
  (d, a, b, dt) => [`${op}.${opType(dt)} ${d}, ${a}, ${b}`];

const bitwise =
  (op: string): Template =>
  (d, a, b, dt) => [`${op}.${dt === "bool" ? "pred" : bitType(dt)} ${d}, ${a}, ${b}`];

/** `a - round(a / b) * b` in floats, with one fused rounding (TVM's float floormod/truncmod). */
const floatRem =
  (round: "rzi" | "rmi"): Template =>
  (d, a, b, dt, tmp) => {
    const t = opType(dt);
    const q = tmp.of(dt);
    return [
      `div.rn.${t} ${q}, ${a}, ${b}`,
      `cvt.${round}.${t}.${t} ${q}, ${q}`,
      `neg.${t} ${q}, ${q}`,
      `fma.rn.${t} ${d}, ${q}, ${b}, ${a}`,
    ];
  };

/** Signed floor division: truncate, then step down when the remainder and divisor differ in sign. */
const signedFloorDiv: Template = (d, a, b, dt, tmp) => {
  const t = opType(dt);
  const bits = bitType(dt);
  const [q, r, x, adj] = [tmp.of(dt), tmp.of(dt), tmp.of(dt), tmp.of(dt)];
  const [nz, neg, fix] = [tmp.of("bool"), tmp.of("bool"), tmp.of("bool")];
  return [
    `div.${t} ${q}, ${a}, ${b}`,
    `rem.${t} ${r}, ${a}, ${b}`,
    `setp.ne.${t} ${nz}, ${r}, 0`,
    `xor.${bits} ${x}, ${r}, ${b}`,
    `setp.lt.${t} ${neg}, ${x}, 0`,
    `and.pred ${fix}, ${nz}, ${neg}`,
    `selp.${bits} ${adj}, 1, 0, ${fix}`,
    `sub.${t} ${d}, ${q}, ${adj}`,
  ];
};

/** Signed floor modulo: the truncated remainder, plus the divisor when their signs differ. */
const signedFloorMod: Template = (d, a, b, dt, tmp) => {
  const t = opType(dt);
  const bits = bitType(dt);
  const [r, x, adj] = [tmp.of(dt), tmp.of(dt), tmp.of(dt)];
  const [nz, neg, fix] = [tmp.of("bool"), tmp.of("bool"), tmp.of("bool")];
  return [
    `rem.${t} ${r}, ${a}, ${b}`,
    `setp.ne.${t} ${nz}, ${r}, 0`,
    `xor.${bits} ${x}, ${r}, ${b}`,
    `setp.lt.${t} ${neg}, ${x}, 0`,
    `and.pred ${fix}, ${nz}, ${neg}`,
    `selp.${bits} ${adj}, ${b}, 0, ${fix}`,
    `add.${t} ${d}, ${r}, ${adj}`,
  ];
};

const byFamily =
  (table: Partial<Record<Family, Template>>): Template =>
  (d, a, b, dt, tmp) =>
    table[family(dt)]!(d, a, b, dt, tmp);

/** Operator families each binary operator accepts (others are a dtype error, TX2005). */
export const BINARY_FAMILIES: Readonly<Record<BinaryOp, readonly Family[]>> = {
  add: ["int", "uint", "float"],
  sub: ["int", "uint", "float"],
  mul: ["int", "uint", "float"],
  div: ["int", "uint", "float"],
  mod: ["int", "uint", "float"],
  floordiv: ["int", "uint", "float"],
  floormod: ["int", "uint", "float"],
  min: ["int", "uint", "float"],
  max: ["int", "uint", "float"],
  bitand: ["int", "uint", "bool"],
  bitor: ["int", "uint", "bool"],
  bitxor: ["int", "uint", "bool"],
  shl: ["int", "uint"],
  shr: ["int", "uint"],
};

/** True when `op` is defined on `dt`. */
export const binarySupports = (op: BinaryOp, dt: DType): boolean =>
  BINARY_FAMILIES[op].includes(family(dt));

/**
 * Binary operators. `div`/`mod` truncate (PTX `div`/`rem`); `floordiv`/`floormod` round toward
 * negative infinity for signed integers and floats, and equal `div`/`rem` for unsigned ones.
 * Shift amounts are `.u32` operands in PTX; the emitter converts them first.
 */
export const BINARY: Readonly<Record<BinaryOp, Template>> = {
  add: arith("add", "add.rn"),
  sub: arith("sub", "sub.rn"),
  mul: arith("mul.lo", "mul.rn"),
  div: arith("div", "div.rn"),
  mod: byFamily({ int: intOnly("rem"), uint: intOnly("rem"), float: floatRem("rzi") }),
  floordiv: byFamily({
    int: signedFloorDiv,
    uint: intOnly("div"),
    float: (d, a, b, dt) => [
      `div.rn.${opType(dt)} ${d}, ${a}, ${b}`,
      `cvt.rmi.${opType(dt)}.${opType(dt)} ${d}, ${d}`,
    ],
  }),
  floormod: byFamily({ int: signedFloorMod, uint: intOnly("rem"), float: floatRem("rmi") }),
  min: arith("min", "min"),
  max: arith("max", "max"),
  bitand: bitwise("and"),
  bitor: bitwise("or"),
  bitxor: bitwise("xor"),
  shl: (d, a, b, dt) => [`shl.${bitType(dt)} ${d}, ${a}, ${b}`],
  shr: (d, a, b, dt) => [`shr.${opType(dt)} ${d}, ${a}, ${b}`],
};

/**
 * `setp` comparison names. Float `ne` is the unordered `neu` so that NaN != x holds, as in C;
 * every other float comparison is ordered (false on NaN).
 */
export function setp(op: CompareOp, dt: DType): string {
  const name = op === "ne" && family(dt) === "float" ? "neu" : op;
  return `setp.${name}.${opType(dt)}`;
}
