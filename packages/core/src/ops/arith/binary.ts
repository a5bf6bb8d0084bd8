import {
  DTYPES,
  dtypeBits,
  dtypeKind,
  isFloat,
  isFloat8,
  isSigned,
  isWideInt,
  type DType,
} from "../../dtype.js";
import type { BinaryOp } from "../../ir/expr.js";
import { invariant } from "../../invariant.js";
import type { Span } from "../../span.js";
import { floatRounder } from "../../numeric/float.js";
import { floorDiv, floorMod } from "../../numeric/float-rem.js";
import { bigWrapper, intWrapper } from "../../numeric/int.js";
import { badDtypes, valueArg } from "../define.js";
import type { LowerCtx, OpDef, ThreadFn } from "../op.js";
import { bitType, opType } from "../ptx-type.js";
import { lowerFloatRem } from "./float-rem-ptx.js";

/** The operand families of the arith ops: signed, unsigned, float, bool. */
export type ArithFamily = "int" | "uint" | "float" | "bool";

/** The family of `dt`. */
export function arithFamily(dt: DType): ArithFamily {
  return dt === "bool" ? "bool" : (dtypeKind(dt) as ArithFamily);
}

type Lower2 = (c: LowerCtx, d: string, a: string, b: string, dt: DType) => void;
type Num2 = (a: number, b: number) => number;
type Big2 = (a: bigint, b: bigint) => bigint;

/** What differs between the binary operators; the rest of each record is common. */
interface BinarySpec {
  readonly families: readonly ArithFamily[];
  readonly doc: string;
  readonly lower: Lower2;
  /** Simulator semantics on floats (rounding with `r`), narrow integers (wrapping with `w`), 64-bit. */
  readonly float?: (r: (x: number) => number, dt: DType) => Num2;
  readonly int?: (w: (x: number) => number, dt: DType) => Num2;
  readonly big?: (w: (x: bigint) => bigint) => Big2;
}

const NUM = ["int", "uint", "float"] as const;
const BITS = ["int", "uint", "bool"] as const;

// Floats use `.rn` explicitly: without a rounding modifier ptxas may contract mul+add into fma,
// and the simulated device computes each operation rounded on its own.
const arith =
  (intOp: string, floatOp: string): Lower2 =>
  (c, d, a, b, dt) =>
    c.ins(`${isFloat(dt) ? floatOp : intOp}.${opType(dt)} ${d}, ${a}, ${b}`);

const bitwise =
  (op: string): Lower2 =>
  (c, d, a, b, dt) =>
    c.ins(`${op}.${dt === "bool" ? "pred" : bitType(dt)} ${d}, ${a}, ${b}`);

/** Signed floor division: truncate, then step down when the remainder and divisor differ in sign. */
function signedFloorDiv(c: LowerCtx, d: string, a: string, b: string, dt: DType): void {
  const t = opType(dt);
  const bits = bitType(dt);
  const [q, r, x, adj] = [c.tmp(dt), c.tmp(dt), c.tmp(dt), c.tmp(dt)];
  const [nz, neg, fix] = [c.tmp("bool"), c.tmp("bool"), c.tmp("bool")];
  c.ins(`div.${t} ${q}, ${a}, ${b}`);
  c.ins(`rem.${t} ${r}, ${a}, ${b}`);
  c.ins(`setp.ne.${t} ${nz}, ${r}, 0`);
  c.ins(`xor.${bits} ${x}, ${r}, ${b}`);
  c.ins(`setp.lt.${t} ${neg}, ${x}, 0`);
  c.ins(`and.pred ${fix}, ${nz}, ${neg}`);
  c.ins(`selp.${bits} ${adj}, 1, 0, ${fix}`);
  c.ins(`sub.${t} ${d}, ${q}, ${adj}`);
}

/** Signed floor modulo: the truncated remainder, plus the divisor when their signs differ. */
function signedFloorMod(c: LowerCtx, d: string, a: string, b: string, dt: DType): void {
  const t = opType(dt);
  const bits = bitType(dt);
  const [r, x, adj] = [c.tmp(dt), c.tmp(dt), c.tmp(dt)];
  const [nz, neg, fix] = [c.tmp("bool"), c.tmp("bool"), c.tmp("bool")];
  c.ins(`rem.${t} ${r}, ${a}, ${b}`);
  c.ins(`setp.ne.${t} ${nz}, ${r}, 0`);
  c.ins(`xor.${bits} ${x}, ${r}, ${b}`);
  c.ins(`setp.lt.${t} ${neg}, ${x}, 0`);
  c.ins(`and.pred ${fix}, ${nz}, ${neg}`);
  c.ins(`selp.${bits} ${adj}, ${b}, 0, ${fix}`);
  c.ins(`add.${t} ${d}, ${r}, ${adj}`);
}

/** The float division family through the exact long division (float-rem-ptx.ts). */
const floatRem =
  (kind: "mod" | "floormod" | "floordiv", intLower: Lower2): Lower2 =>
  (c, d, a, b, dt) => {
    if (!isFloat(dt)) return intLower(c, d, a, b, dt);
    invariant(dt === "float32" || dt === "float64", `${kind} on ${dt} reached PTX unpromoted`);
    lowerFloatRem(kind, c, d, a, b, dt);
  };

const plain =
  (op: string): Lower2 =>
  (c, d, a, b, dt) =>
    c.ins(`${op}.${opType(dt)} ${d}, ${a}, ${b}`);

/** PTX min/max: a NaN operand yields the other operand. */
const fmin = (a: number, b: number): number => (a !== a ? b : b !== b ? a : Math.min(a, b));
const fmax = (a: number, b: number): number => (a !== a ? b : b !== b ? a : Math.max(a, b));

const width = (dt: DType): number => (dt === "bool" ? 1 : dtypeBits(dt));

/**
 * Binary operators, one record per `BinaryOp`, as PTX computes them: floats round once to their
 * format (`.rn`); integers wrap at their width; `div`/`mod` truncate toward zero,
 * `floordiv`/`floormod` round toward negative infinity (for floats: numeric/float-rem.ts, exact).
 * Shifts clamp the amount to the width (PTX `shl`/`shr`). Integer division by zero, undefined in
 * PTX, gives all ones for div and the dividend for mod in the simulator.
 */
const SPECS: Readonly<Record<BinaryOp, BinarySpec>> = {
  add: {
    families: NUM,
    doc: "a + b",
    lower: arith("add", "add.rn"),
    float: (r) => (a, b) => r(a + b),
    int: (w) => (a, b) => w(a + b),
    big: (w) => (a, b) => w(a + b),
  },
  sub: {
    families: NUM,
    doc: "a - b",
    lower: arith("sub", "sub.rn"),
    float: (r) => (a, b) => r(a - b),
    int: (w) => (a, b) => w(a - b),
    big: (w) => (a, b) => w(a - b),
  },
  mul: {
    families: NUM,
    doc: "a * b (low half for integers)",
    lower: arith("mul.lo", "mul.rn"),
    float: (r) => (a, b) => r(a * b),
    int: (w, dt) => (width(dt) === 32 ? (a, b) => w(Math.imul(a, b)) : (a, b) => w(a * b)),
    big: (w) => (a, b) => w(a * b),
  },
  div: {
    families: NUM,
    doc: "a / b (truncating for integers)",
    lower: arith("div", "div.rn"),
    float: (r) => (a, b) => r(a / b),
    int: (w) => (a, b) => (b === 0 ? w(-1) : w(Math.trunc(a / b))),
    big: (w) => (a, b) => (b === 0n ? w(-1n) : w(a / b)),
  },
  mod: {
    families: NUM,
    doc: "C remainder: sign of a; exact fmod for floats",
    lower: floatRem("mod", plain("rem")),
    float: () => (a, b) => a % b,
    int: (w) => (a, b) => (b === 0 ? a : w(a % b)),
    big: (w) => (a, b) => (b === 0n ? a : w(a % b)),
  },
  floordiv: {
    families: NUM,
    doc: "floor(a / b), exact for floats (Python //)",
    lower: floatRem("floordiv", (c, d, a, b, dt) =>
      isSigned(dt) ? signedFloorDiv(c, d, a, b, dt) : plain("div")(c, d, a, b, dt),
    ),
    float: (r, dt) => (a, b) => floorDiv(a, b, r, dt),
    int: (w) => (a, b) => (b === 0 ? w(-1) : w(Math.floor(a / b))),
    big: (w) => (a, b) => {
      if (b === 0n) return w(-1n);
      let q = a / b;
      if (a % b !== 0n && a < 0n !== b < 0n) q -= 1n;
      return w(q);
    },
  },
  floormod: {
    families: NUM,
    doc: "a - floor(a / b) * b: sign of b; exact for floats (Python %)",
    lower: floatRem("floormod", (c, d, a, b, dt) =>
      isSigned(dt) ? signedFloorMod(c, d, a, b, dt) : plain("rem")(c, d, a, b, dt),
    ),
    float: (r) => (a, b) => floorMod(a, b, r),
    int: (w) => (a, b) => {
      if (b === 0) return a;
      let m = a % b;
      if (m !== 0 && m < 0 !== b < 0) m += b;
      return w(m);
    },
    big: (w) => (a, b) => {
      if (b === 0n) return a;
      let m = a % b;
      if (m !== 0n && m < 0n !== b < 0n) m += b;
      return w(m);
    },
  },
  min: {
    families: NUM,
    doc: "min(a, b); a NaN operand yields the other",
    lower: plain("min"),
    float: (r) => (a, b) => r(fmin(a, b)),
    int: () => (a, b) => Math.min(a, b),
    big: () => (a, b) => (a < b ? a : b),
  },
  max: {
    families: NUM,
    doc: "max(a, b); a NaN operand yields the other",
    lower: plain("max"),
    float: (r) => (a, b) => r(fmax(a, b)),
    int: () => (a, b) => Math.max(a, b),
    big: () => (a, b) => (a > b ? a : b),
  },
  bitand: {
    families: BITS,
    doc: "a & b",
    lower: bitwise("and"),
    int: (w) => (a, b) => w(a & b),
    big: (w) => (a, b) => w(a & b),
  },
  bitor: {
    families: BITS,
    doc: "a | b",
    lower: bitwise("or"),
    int: (w) => (a, b) => w(a | b),
    big: (w) => (a, b) => w(a | b),
  },
  bitxor: {
    families: BITS,
    doc: "a ^ b",
    lower: bitwise("xor"),
    int: (w) => (a, b) => w(a ^ b),
    big: (w) => (a, b) => w(a ^ b),
  },
  shl: {
    families: ["int", "uint"],
    doc: "a << b; amounts of the width or more give 0",
    lower: (c, d, a, b, dt) => c.ins(`shl.${bitType(dt)} ${d}, ${a}, ${b}`),
    int: (w, dt) => (a, b) => (b < 0 || b >= width(dt) ? 0 : w(a << b)),
    // A 64-bit amount reaches PTX as its low 32 bits, unsigned (the emitter's cvt.u32.s64).
    big: (w) => (a, b) => {
      const n = BigInt.asUintN(32, b);
      return n >= 64n ? 0n : w(a << n);
    },
  },
  shr: {
    families: ["int", "uint"],
    doc: "a >> b, arithmetic for signed dtypes; amounts of the width or more clamp",
    lower: plain("shr"),
    int: (w, dt) =>
      isSigned(dt)
        ? (a, b) => (b < 0 || b >= width(dt) ? (a < 0 ? -1 : 0) : w(a >> b))
        : (a, b) => (b < 0 || b >= width(dt) ? 0 : w(a >>> b)),
    big: (w) => (a, b) => {
      const n = BigInt.asUintN(32, b);
      return n >= 64n ? (a < 0n ? -1n : 0n) : w(a >> n);
    },
  },
};

function binaryRecord(op: BinaryOp, spec: BinarySpec): OpDef {
  // float8 has no arithmetic in PTX (cvt and wgmma only): cast to float16/float32 first.
  const accepts = (dt: DType) => !isFloat8(dt) && spec.families.includes(arithFamily(dt));
  const result = (dts: readonly DType[], span?: Span): DType => {
    if (dts.length !== 2 || dts[0] !== dts[1] || !accepts(dts[0]!)) {
      throw badDtypes(`operator ${op}`, dts, span);
    }
    return dts[0]!;
  };
  return {
    name: op,
    family: "arith",
    surface: `T.${op}`,
    form: "operator",
    operands: [valueArg("a"), valueArg("b")],
    result,
    signatures: DTYPES.filter(accepts).map((dt) => [dt, dt]),
    sm: 30,
    ptx: [6, 0],
    source: `PTX ISA, integer and floating-point arithmetic instructions; ${spec.doc}`,
    lower: (c, d, ops, dts) => spec.lower(c, d, ops[0]!, ops[1]!, dts[0]!),
    sim: {
      kind: "thread",
      make(dts): ThreadFn {
        const dt = result(dts);
        if (isWideInt(dt)) return spec.big!(bigWrapper(dt)) as ThreadFn;
        if (isFloat(dt)) return spec.float!(floatRounder(dt), dt) as ThreadFn;
        return spec.int!(intWrapper(dt), dt) as ThreadFn;
      },
    },
  };
}

/** One record per binary operator, keyed by `BinaryOp`. */
export const BINARY_OPS: Readonly<Record<BinaryOp, OpDef>> = Object.fromEntries(
  (Object.keys(SPECS) as BinaryOp[]).map((op) => [op, binaryRecord(op, SPECS[op])]),
) as Record<BinaryOp, OpDef>;

/** The record of binary operator `op` (the `Binary` IR node's operator). */
export function binaryOp(op: BinaryOp): OpDef {
  return BINARY_OPS[op];
}
