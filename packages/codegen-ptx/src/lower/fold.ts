import { compareInt, dtypeBits, dtypeKind, foldInt, isFloat, type Expr } from "@tirx-ts/core";

export { compareInt, foldInt };

/**
 * The value of an integer expression built from constants and variables that `lookup` knows
 * (unrolled loop variables bound to their iteration, lets of such values), with PTX's wrap-around
 * semantics; undefined when any part is unknown or unspecified (a load, a thread index, a
 * division by zero). Used for the element index of register arrays and for alignment proofs.
 */
export function evalInt(e: Expr, lookup: (id: number) => bigint | undefined): bigint | undefined {
  if (isFloat(e.dtype) || e.dtype === "bool") return undefined;
  switch (e.kind) {
    case "IntImm":
      return BigInt(e.value);
    case "Var":
      return lookup(e.id);
    case "Binary": {
      const a = evalInt(e.a, lookup);
      const b = a === undefined ? undefined : evalInt(e.b, lookup);
      return b === undefined ? undefined : foldInt(e.op, a!, b, e.dtype);
    }
    case "Cast": {
      const v = evalInt(e.value, lookup);
      if (v === undefined) return undefined;
      const bits = dtypeBits(e.dtype);
      return dtypeKind(e.dtype) === "int" ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
    }
    default:
      return undefined;
  }
}

/**
 * True when {@link evalInt} can evaluate `e` once the variables in `known` are bound: it is built
 * only from integer constants, those variables, integer binary operators and integer casts.
 */
export function isStaticInt(e: Expr, known: ReadonlySet<number>): boolean {
  if (isFloat(e.dtype) || e.dtype === "bool") return false;
  switch (e.kind) {
    case "IntImm":
      return true;
    case "Var":
      return known.has(e.id);
    case "Binary":
      return isStaticInt(e.a, known) && isStaticInt(e.b, known);
    case "Cast":
      return !isFloat(e.value.dtype) && e.value.dtype !== "bool" && isStaticInt(e.value, known);
    default:
      return false;
  }
}
