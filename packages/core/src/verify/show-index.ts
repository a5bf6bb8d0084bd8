import type { Expr } from "../ir/expr.js";

/** Most characters of an expression shown in a note. */
const MAX_SHOWN = 60;

/**
 * A short rendering of an index expression for a bounds diagnostic (TX2006): names, constants,
 * `%tid.x`, `+ - *` infix and other operators as calls (`floordiv(i, 4)`); `…` for anything
 * else, below 6 levels and past MAX_SHOWN characters.
 */
export function showIndex(e: Expr): string {
  const go = (x: Expr, depth: number): string => {
    if (depth > 6) return "…";
    switch (x.kind) {
      case "Var":
        return x.name;
      case "IntImm":
        return String(x.value);
      case "Special":
        return `%${x.name}`;
      case "Binary": {
        const a = go(x.a, depth + 1);
        const b = go(x.b, depth + 1);
        const infix: Record<string, string> = { add: "+", sub: "-", mul: "*" };
        const op = infix[x.op];
        return op ? `(${a} ${op} ${b})` : `${x.op}(${a}, ${b})`;
      }
      default:
        return "…";
    }
  };
  const t = go(e, 0).replace(/^\((.*)\)$/, "$1");
  return t.length > MAX_SHOWN ? `${t.slice(0, MAX_SHOWN)}…` : t;
}
