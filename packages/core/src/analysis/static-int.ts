import type { Expr } from "../ir/expr.js";
import { dtypeBits, dtypeKind, isFloat, isInt } from "../dtype.js";
import { foldInt } from "../numeric/int-fold.js";
import { bottomUp, distinctPostOrder } from "./deep.js";

// Integer expressions whose value is known once unrolled loop variables are: the element index of
// a register array, which code generation needs as a constant, and alignment proofs.

/**
 * The value of an integer expression built from constants and variables that `lookup` knows
 * (unrolled loop variables bound to their iteration, lets of such values), with PTX's wrap-around
 * semantics; undefined when any part is unknown or unspecified (a load, a thread index, a
 * division by zero). Used for the element index of register arrays and for alignment proofs.
 */
export function evalInt(e: Expr, lookup: (id: number) => bigint | undefined): bigint | undefined {
  if (!intArithmetic(e)) return undefined;
  return bottomUp(e, (x, rec) => evalNode(x, lookup, rec));
}

/** Whether each node is built only of integer constants, variables, binary operators and casts. */
const shapes = new WeakMap<Expr, boolean>();

/**
 * True when `e` is integer arithmetic of constants and variables (what {@link evalInt} can
 * evaluate once its variables are known). Memoized per node, computed without recursion, so
 * asking at every level of a deep expression costs linear time.
 */
function intArithmetic(e: Expr): boolean {
  const hit = shapes.get(e);
  if (hit !== undefined) return hit;
  for (const x of distinctPostOrder(e, (y) => shapes.has(y))) {
    // Integers only: not floats, bool, or packed pairs (whose literals are their bits).
    let ok = isInt(x.dtype);
    if (ok && x.kind === "Binary") ok = shapes.get(x.a)! && shapes.get(x.b)!;
    else if (ok && x.kind === "Cast") ok = shapes.get(x.value)!;
    else if (ok) ok = x.kind === "IntImm" || x.kind === "Var";
    shapes.set(x, ok);
  }
  return shapes.get(e)!;
}

function evalNode(
  e: Expr,
  lookup: (id: number) => bigint | undefined,
  evalInt: (x: Expr) => bigint | undefined,
): bigint | undefined {
  if (isFloat(e.dtype) || e.dtype === "bool") return undefined;
  switch (e.kind) {
    case "IntImm":
      return BigInt(e.value);
    case "Var":
      return lookup(e.id);
    case "Binary": {
      const a = evalInt(e.a);
      const b = a === undefined ? undefined : evalInt(e.b);
      return b === undefined ? undefined : foldInt(e.op, a!, b, e.dtype);
    }
    case "Cast": {
      const v = evalInt(e.value);
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
  // Only integer arithmetic can be static (memoized shape test: a load anywhere answers at once).
  if (!intArithmetic(e)) return false;
  return bottomUp(e, (x, rec) => staticNode(x, known, rec));
}

function staticNode(
  e: Expr,
  known: ReadonlySet<number>,
  isStaticInt: (x: Expr) => boolean,
): boolean {
  if (!isInt(e.dtype)) return false;
  switch (e.kind) {
    case "IntImm":
      return true;
    case "Var":
      return known.has(e.id);
    case "Binary":
      return isStaticInt(e.a) && isStaticInt(e.b);
    case "Cast":
      return !isFloat(e.value.dtype) && e.value.dtype !== "bool" && isStaticInt(e.value);
    default:
      return false;
  }
}
