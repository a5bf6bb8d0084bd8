import type { Expr } from "@tirx-ts/core";

/**
 * A key that is equal for two expressions exactly when they compute the same value at the same
 * program point: structure, dtypes, constants, variables by identity and buffers by identity.
 * Undefined for an expression that reads memory or calls an intrinsic (its value may change
 * between two evaluations), so such expressions are never reused.
 */
export function exprKey(e: Expr): string | undefined {
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
      return join(`${e.op}:${e.dtype}`, [e.a, e.b]);
    case "Not":
      return join("not", [e.a]);
    case "Cast":
      return join(`cast:${e.dtype}`, [e.value]);
    case "IfThenElse":
      return join("select", [e.cond, e.t, e.f]);
    case "BufferPtr":
      return join(`ptr:${e.buffer.id}:${e.dtype}`, [e.offset]);
    case "BufferLoad":
    case "CallExpr":
      return undefined;
  }
}

function join(head: string, args: readonly Expr[]): string | undefined {
  const keys: string[] = [];
  for (const a of args) {
    const k = exprKey(a);
    if (k === undefined) return undefined;
    keys.push(k);
  }
  return `(${head} ${keys.join(" ")})`;
}
