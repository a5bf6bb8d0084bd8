/**
 * Structural equality and hashing of IR, in the manner of TVM's `structural_equal`: two trees
 * are equal when they have the same shape and fields, where variables and buffers are matched by
 * the position at which they are first met (so renaming is invisible) and source spans are
 * ignored.
 */

const IGNORED = new Set(["span", "id"]);

function isBinding(x: { kind?: unknown }): boolean {
  // A tensor map is a binding too: its uses share one kernel parameter.
  return x.kind === "Var" || x.kind === "Buffer" || x.kind === "TensorMap";
}

/** True when `a` and `b` are structurally equal IR (any node: PrimFunc, Stmt, Expr, View). */
export function structuralEqual(a: unknown, b: unknown): boolean {
  const mapAB = new Map<object, object>();
  const mapBA = new Map<object, object>();
  const eq = (x: unknown, y: unknown): boolean => {
    if (x === y) return true;
    if (typeof x !== typeof y) return false;
    if (typeof x !== "object" || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      const ya = y as unknown[];
      return x.length === ya.length && x.every((v, i) => eq(v, ya[i]));
    }
    const xo = x as Record<string, unknown> & { kind?: unknown };
    const yo = y as Record<string, unknown> & { kind?: unknown };
    if (xo.kind !== yo.kind) return false;
    if (isBinding(xo)) {
      const m = mapAB.get(xo);
      if (m) return m === yo;
      if (mapBA.has(yo)) return false;
      mapAB.set(xo, yo);
      mapBA.set(yo, xo);
    }
    const kx = Object.keys(xo).filter((k) => !IGNORED.has(k) && xo[k] !== undefined);
    const ky = Object.keys(yo).filter((k) => !IGNORED.has(k) && yo[k] !== undefined);
    if (kx.length !== ky.length) return false;
    return kx.every((k) => (isBinding(xo) && k === "name") || eq(xo[k], yo[k]));
  };
  return eq(a, b);
}

/**
 * A hash consistent with `structuralEqual`: equal trees hash equal. Variables and buffers hash
 * by first-visit order. Used to cache compiled modules.
 */
export function structuralHash(node: unknown): string {
  const ids = new Map<object, number>();
  let h1 = 0x811c9dc5;
  let h2 = 0x12345678;
  const mix = (s: string): void => {
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 13);
    }
  };
  const go = (x: unknown): void => {
    if (x === null || typeof x !== "object") {
      mix(`${typeof x}:${String(x)};`);
      return;
    }
    if (Array.isArray(x)) {
      mix(`[${x.length}`);
      x.forEach(go);
      mix("]");
      return;
    }
    const o = x as Record<string, unknown> & { kind?: unknown };
    if (isBinding(o)) {
      const seen = ids.get(o);
      if (seen !== undefined) {
        mix(`#${seen};`);
        return;
      }
      ids.set(o, ids.size);
    }
    mix("{");
    for (const k of Object.keys(o).sort()) {
      if (IGNORED.has(k) || o[k] === undefined || (isBinding(o) && k === "name")) continue;
      mix(k + "=");
      go(o[k]);
    }
    mix("}");
  };
  go(node);
  return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0");
}

/**
 * Equality of two expressions of one scope: variables and buffers must be the same objects
 * (by id); spans are ignored. `bar[s]` and `bar[t]` differ even though they are structurally equal.
 */
export function exactEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => exactEqual(x, b[i]))
    );
  }
  const x = a as Record<string, unknown> & { kind?: unknown; id?: unknown };
  const y = b as Record<string, unknown> & { kind?: unknown; id?: unknown };
  if (x.kind !== y.kind) return false;
  if (isBinding(x)) return x.id === y.id;
  const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
  for (const k of keys) if (k !== "span" && !exactEqual(x[k], y[k])) return false;
  return true;
}
