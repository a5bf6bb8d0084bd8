import type { Expr } from "@tirx-ts/core";

/**
 * Longest key kept, in characters. A longer expression (hundreds of operations) gets no key and
 * is simply not reused: keys are for the common subexpressions of index arithmetic, and the cap
 * keeps building them linear however deep an expression is.
 */
const MAX_KEY = 4096;

/** The key of a node from its children's keys; undefined for a node that is never reused. */
function nodeKey(e: Expr, kids: readonly string[]): string | undefined {
  switch (e.kind) {
    case "IntImm":
    case "FloatImm":
      return `${e.value}:${e.dtype}`;
    case "Var":
      return `v${e.id}`;
    case "Special":
      return `%${e.name}`;
    case "Binary":
    case "Compare":
    case "Logical":
      return `(${e.op}:${e.dtype} ${kids.join(" ")})`;
    case "Not":
      return `(not ${kids.join(" ")})`;
    case "Cast":
      return `(cast:${e.dtype} ${kids.join(" ")})`;
    case "IfThenElse":
      return `(select ${kids.join(" ")})`;
    case "BufferPtr":
      return `(ptr:${e.buffer.id}:${e.dtype} ${kids.join(" ")})`;
    case "BufferLoad":
    case "CallExpr":
      return undefined;
  }
}

/** Sub-expressions of `e` that are part of its key (none for loads and calls). */
function keyed(e: Expr): readonly Expr[] {
  switch (e.kind) {
    case "Binary":
    case "Compare":
    case "Logical":
      return [e.a, e.b];
    case "Not":
      return [e.a];
    case "Cast":
      return [e.value];
    case "IfThenElse":
      return [e.cond, e.t, e.f];
    case "BufferPtr":
      return [e.offset];
    default:
      return [];
  }
}

/** Keys already built (null: none), by node; IR is immutable. */
const memo = new WeakMap<Expr, string | null>();

/**
 * A key that is equal for two expressions exactly when they compute the same value at the same
 * program point: structure, dtypes, constants, variables by identity and buffers by identity.
 * Undefined for an expression that reads memory or calls an intrinsic (its value may change
 * between two evaluations), so such expressions are never reused; undefined too past MAX_KEY
 * characters. Built bottom-up from an explicit stack and memoized per node: any depth is safe,
 * and a chain costs linear time over all the keys its nodes ask for.
 */
export function exprKey(e: Expr): string | undefined {
  const hit = memo.get(e);
  if (hit !== undefined) return hit ?? undefined;
  const stack: Expr[] = [e];
  while (stack.length > 0) {
    const x = stack[stack.length - 1]!;
    if (memo.has(x)) {
      stack.pop();
      continue;
    }
    const cs = keyed(x);
    const pending = cs.filter((c) => !memo.has(c));
    if (pending.length > 0) {
      stack.push(...pending);
      continue;
    }
    stack.pop();
    const kids = cs.map((c) => memo.get(c)!);
    const k = kids.some((c) => c === null) ? undefined : nodeKey(x, kids as string[]);
    memo.set(x, k === undefined || k.length > MAX_KEY ? null : k);
  }
  return memo.get(e) ?? undefined;
}
