import { DTYPES, isFloat, isFloat8, isLaneValue, type DType } from "../../dtype.js";
import type { CompareOp } from "../../ir/expr.js";
import type { Span } from "../../span.js";
import { badDtypes, valueArg } from "../define.js";
import type { OpDef, SimValue, ThreadFn } from "../op.js";
import { opType } from "../ptx-type.js";

type Cmp = (a: SimValue, b: SimValue) => number;

/**
 * Comparisons as 0/1, as C and PTX `setp` compute them: every float comparison with NaN is false
 * except `ne`, which is the unordered `setp.neu` (PTX ISA, setp). Works on numbers and bigints.
 */
const SEMANTICS: Readonly<Record<CompareOp, Cmp>> = {
  eq: (a, b) => (a === b ? 1 : 0),
  ne: (a, b) => (a !== b ? 1 : 0),
  lt: (a, b) => (a < b ? 1 : 0),
  le: (a, b) => (a <= b ? 1 : 0),
  gt: (a, b) => (a > b ? 1 : 0),
  ge: (a, b) => (a >= b ? 1 : 0),
};

/** The `setp` instruction of `op` on `dt` (float `ne` is `neu`). */
export function setp(op: CompareOp, dt: DType): string {
  return `setp.${op === "ne" && isFloat(dt) ? "neu" : op}.${opType(dt)}`;
}

function compareRecord(op: CompareOp): OpDef {
  const result = (dts: readonly DType[], span?: Span): DType => {
    // float8 has no setp (PTX ISA, setp types): compare after a cast to float16 or float32. A
    // packed pair's setp.f16x2 gives two predicates, not one bool: compare its lanes.
    if (dts.length !== 2 || dts[0] !== dts[1] || isFloat8(dts[0]!) || isLaneValue(dts[0]!))
      throw badDtypes(`comparison ${op}`, dts, span);
    return "bool";
  };
  return {
    name: op,
    family: "arith",
    surface: `T.${op}`,
    form: "operator",
    operands: [valueArg("a"), valueArg("b")],
    result,
    signatures: DTYPES.filter((dt) => !isFloat8(dt) && !isLaneValue(dt)).map((dt) => [dt, dt]),
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, setp",
    // bool operands reach PTX as 0/1 integers (the code generator converts them).
    lower: (c, d, ops, dts) => c.ins(`${setp(op, dts[0]!)} ${d}, ${ops[0]}, ${ops[1]}`),
    sim: { kind: "thread", make: () => SEMANTICS[op] as ThreadFn },
  };
}

/** One record per comparison, keyed by `CompareOp`. */
export const COMPARE_OPS: Readonly<Record<CompareOp, OpDef>> = {
  eq: compareRecord("eq"),
  ne: compareRecord("ne"),
  lt: compareRecord("lt"),
  le: compareRecord("le"),
  gt: compareRecord("gt"),
  ge: compareRecord("ge"),
};

/** The record of comparison `op` (the `Compare` IR node's operator). */
export function compareOpDef(op: CompareOp): OpDef {
  return COMPARE_OPS[op];
}
