import type { PrimFunc } from "./ir/func.js";
import { TirxError } from "./diagnostics.js";
import type { Span } from "./span.js";
import { withArticle } from "./article.js";

export { withArticle };

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_STRING = 40;
const MAX_ITEMS = 6;

/**
 * A short, readable rendering of any JS value for error messages. Never throws: bigint prints
 * as `5n`, symbols as `Symbol(x)`, objects with a null prototype, throwing getters or odd
 * `toString`s as what they are. `special` may describe objects a caller knows (DSL handles);
 * IR nodes print by kind and dtype.
 */
export function showValue(x: unknown, special?: (x: object) => string | undefined): string {
  try {
    return show(x, 0, special);
  } catch {
    return "an unprintable value";
  }
}

function show(x: unknown, depth: number, special?: (x: object) => string | undefined): string {
  switch (typeof x) {
    case "undefined":
      return "undefined";
    case "boolean":
      return x ? "true" : "false";
    case "number":
      return Object.is(x, -0) ? "-0" : Number.prototype.toString.call(x);
    case "bigint":
      return `${BigInt.prototype.toString.call(x)}n`;
    case "string":
      return JSON.stringify(x.length > MAX_STRING ? `${x.slice(0, MAX_STRING)}…` : x);
    case "symbol":
      return Symbol.prototype.toString.call(x);
    case "function": {
      const name = Object.getOwnPropertyDescriptor(x, "name")?.value;
      return typeof name === "string" && name ? `function ${name}` : "a function";
    }
  }
  if (x === null) return "null";
  const obj = x as object;
  const own = special?.(obj);
  if (own !== undefined) return own;
  const ir = irNode(obj);
  if (ir !== undefined) return ir;
  if (Array.isArray(obj)) {
    if (depth >= 2) return `an array of ${obj.length}`;
    const items: string[] = [];
    for (let i = 0; i < Math.min(obj.length, MAX_ITEMS); i++) {
      items.push(i in obj ? show(obj[i], depth + 1, special) : "<empty>");
    }
    if (obj.length > MAX_ITEMS) items.push(`… ${obj.length - MAX_ITEMS} more`);
    return `[${items.join(", ")}]`;
  }
  const proto: unknown = Object.getPrototypeOf(obj);
  if (proto !== null && proto !== Object.prototype) {
    const ctor: unknown = Object.getOwnPropertyDescriptor(proto, "constructor")?.value;
    const name =
      typeof ctor === "function" ? Object.getOwnPropertyDescriptor(ctor, "name")?.value : undefined;
    return typeof name === "string" && name ? `a ${name}` : "an object";
  }
  const keys = Reflect.ownKeys(obj);
  const prefix = proto === null ? "a null-prototype object " : "";
  if (keys.length === 0) return `${prefix}{}`;
  if (depth >= 2) return `${prefix}{…}`;
  const parts: string[] = [];
  for (const k of keys.slice(0, MAX_ITEMS)) {
    const d = Object.getOwnPropertyDescriptor(obj, k);
    const key =
      typeof k === "symbol"
        ? `[${Symbol.prototype.toString.call(k)}]`
        : IDENT.test(k)
          ? k
          : JSON.stringify(k);
    const value = d && "value" in d ? show(d.value, depth + 1, special) : "<getter>";
    parts.push(`${key}: ${value}`);
  }
  if (keys.length > MAX_ITEMS) parts.push("…");
  return `${prefix}{ ${parts.join(", ")} }`;
}

/** IR nodes (expressions, views, buffers) by what they are, not by their fields. */
function irNode(x: object): string | undefined {
  const kind = Object.getOwnPropertyDescriptor(x, "kind")?.value;
  const dtype = Object.getOwnPropertyDescriptor(x, "dtype")?.value;
  if (typeof kind !== "string") return undefined;
  if (kind === "IntImm" || kind === "FloatImm") {
    const v: unknown = Object.getOwnPropertyDescriptor(x, "value")?.value;
    return `${show(v, 2)} (${String(dtype)})`;
  }
  if (kind === "View" || kind === "Buffer")
    return `${withArticle(String(dtype))} ${kind.toLowerCase()}`;
  if (typeof dtype === "string") return `${withArticle(dtype)} expression`;
  return undefined;
}

/**
 * Throw TX1002 unless `fn` looks like a PrimFunc built by `T.function` (what `verify`,
 * `compile` and `compileToPtx` take).
 */
export function checkPrimFunc(fn: unknown, what: string, span?: Span): asserts fn is PrimFunc {
  const f = fn as Partial<PrimFunc> | null | undefined;
  if (
    typeof f !== "object" ||
    f === null ||
    f.kind !== "PrimFunc" ||
    typeof f.name !== "string" ||
    !Array.isArray(f.params) ||
    typeof f.body !== "object" ||
    f.body === null
  ) {
    throw new TirxError(
      "TX1002",
      `${what} needs a kernel made by T.function(...), got ${showValue(fn)}`,
      span,
    );
  }
}
