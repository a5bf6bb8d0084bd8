import { didYouMean, TirxError, type Span } from "@tirx-ts/core";
import { show } from "./expr.js";

/**
 * Argument checks shared by the T.* entry points. Each throws a TirxError with the author's
 * span and a short message naming the call, what it needs and what it got (via `show`).
 */

const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** True for a plain object (`{...}` or `Object.create(null)`), not an array or class instance. */
export function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (typeof x !== "object" || x === null || Array.isArray(x)) return false;
  const proto: unknown = Object.getPrototypeOf(x);
  return proto === null || proto === Object.prototype;
}

/** Throw TX1002 unless `name` is an identifier. */
export function checkIdent(name: unknown, what: string, span?: Span): asserts name is string {
  if (typeof name !== "string" || !IDENT.test(name)) {
    throw new TirxError("TX1002", `${what} must be an identifier, got ${show(name)}`, span);
  }
}

/**
 * Throw TX2003 unless `shape` is an array (no holes) of positive safe integers; `nonEmpty`
 * refuses `[]`. Returns a copy.
 */
export function checkShape(
  shape: unknown,
  what: string,
  span: Span | undefined,
  nonEmpty: boolean,
): number[] {
  const bad = (): never => {
    throw new TirxError(
      "TX2003",
      `${what} needs a static shape: a list of positive integers such as [128, 32], got ${show(shape)}`,
      span,
    );
  };
  if (!Array.isArray(shape) || (nonEmpty && shape.length === 0)) return bad();
  const out: number[] = [];
  for (let i = 0; i < shape.length; i++) {
    const n: unknown = shape[i];
    if (typeof n !== "number" || !Number.isSafeInteger(n) || n <= 0) return bad();
    out.push(n);
  }
  return out;
}

/**
 * Throw TX1002 unless `opts` is undefined or a plain object whose keys are all in `known`
 * (with a "did you mean" for a misspelt key). Returns the object (or `{}`).
 */
export function checkOptions(
  opts: unknown,
  known: readonly string[],
  what: string,
  span?: Span,
): Record<string, unknown> {
  if (opts === undefined) return {};
  if (!isPlainObject(opts)) {
    throw new TirxError(
      "TX1002",
      `${what} options must be an object like { ${known[0]}: ... }, got ${show(opts)}`,
      span,
    );
  }
  for (const k of Reflect.ownKeys(opts)) {
    if (typeof k === "string" && known.includes(k)) continue;
    const guess = typeof k === "string" ? didYouMean(k, known) : undefined;
    throw new TirxError(
      "TX1002",
      `${what} has no option ${show(k)}${guess ? `; did you mean "${guess}"?` : ""} (options: ${known.join(", ")})`,
      span,
    );
  }
  return opts;
}

/** Throw TX1002 unless `x` is undefined or a safe integer (at least `min`). */
export function checkOptInt(
  x: unknown,
  what: string,
  min: number,
  span?: Span,
): asserts x is number | undefined {
  if (x !== undefined && (typeof x !== "number" || !Number.isSafeInteger(x) || x < min)) {
    throw new TirxError(
      "TX1002",
      `${what} must be an integer${min === 0 ? " ≥ 0" : min === 1 ? " ≥ 1" : ""}, got ${show(x)}`,
      span,
    );
  }
}
