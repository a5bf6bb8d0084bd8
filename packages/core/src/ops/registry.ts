import { TirxError } from "../diagnostics.js";
import { didYouMean } from "../suggest.js";
import type { Span } from "../span.js";
import type { OpDef, OpFamily } from "./op.js";
import { invariant } from "../invariant.js";

const table = new Map<string, OpDef>();

/**
 * Add ops to the table. Each name is registered once.
 * @throws InternalError for a name registered twice (a bug in the table, not a user error).
 */
export function registerOps(ops: readonly OpDef[]): void {
  for (const op of ops) {
    invariant(!table.has(op.name), `op "${op.name}" is registered twice`);
    table.set(op.name, op);
  }
}

/** The op named `name`, or undefined. */
export function findOp(name: string): OpDef | undefined {
  return table.get(name);
}

/**
 * The op named `name` of form `form`.
 * @throws TirxError TX2010 for an unknown op, with the nearest name as a suggestion.
 */
export function opOf(name: string, form: OpDef["form"], span?: Span): OpDef {
  const op = table.get(name);
  if (op && op.form === form) return op;
  const names = [...table.values()].filter((o) => o.form === form).map((o) => o.name);
  const guess = didYouMean(name, names);
  throw new TirxError(
    "TX2010",
    `unknown ${form === "value" ? "value " : ""}intrinsic "${name}"${guess ? `; did you mean "${guess}"?` : ""}`,
    span,
  );
}

/** Every op, in registration order; optionally one family. */
export function allOps(family?: OpFamily): OpDef[] {
  const ops = [...table.values()];
  return family ? ops.filter((o) => o.family === family) : ops;
}
