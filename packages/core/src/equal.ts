/**
 * Structural equality and hashing of IR, in the manner of TVM's `structural_equal`: two trees
 * are equal when they have the same shape and fields, where variables and buffers are matched by
 * the position at which they are first met (so renaming is invisible) and source spans are
 * ignored, as is an access's author index (`AccessIndex`: the form the author wrote the access
 * in, which the printer does not write; the flat offset is the access).
 */

const IGNORED = new Set(["span", "id"]);

/** Whether key `k` of node `o` is left out of equality and hashing. */
const ignored = (o: { kind?: unknown }, k: string): boolean =>
  IGNORED.has(k) || (k === "index" && (o.kind === "BufferLoad" || o.kind === "Store"));

function isBinding(x: { kind?: unknown }): boolean {
  // A tensor map is a binding too: its uses share one kernel parameter.
  return x.kind === "Var" || x.kind === "Buffer" || x.kind === "TensorMap";
}

/**
 * True when `a` and `b` are structurally equal IR (any node: PrimFunc, Stmt, Expr, View).
 * Compared from an explicit stack in the order recursion would take (fields in key order, each
 * node before its children), so bindings pair up by first meeting and any depth is safe.
 */
export function structuralEqual(a: unknown, b: unknown): boolean {
  const mapAB = new Map<object, object>();
  const mapBA = new Map<object, object>();
  const work: [unknown, unknown][] = [[a, b]];
  while (work.length > 0) {
    const [x, y] = work.pop()!;
    if (x === y) continue;
    if (typeof x !== typeof y) return false;
    if (typeof x !== "object" || x === null || y === null) return false;
    if (Array.isArray(x) !== Array.isArray(y)) return false;
    if (Array.isArray(x)) {
      const ya = y as unknown[];
      if (x.length !== ya.length) return false;
      for (let i = x.length - 1; i >= 0; i--) work.push([x[i], ya[i]]);
      continue;
    }
    const xo = x as Record<string, unknown> & { kind?: unknown };
    const yo = y as Record<string, unknown> & { kind?: unknown };
    if (xo.kind !== yo.kind) return false;
    if (isBinding(xo)) {
      const m = mapAB.get(xo);
      if (m) {
        if (m !== yo) return false;
        continue;
      }
      if (mapBA.has(yo)) return false;
      mapAB.set(xo, yo);
      mapBA.set(yo, xo);
    }
    const kx = Object.keys(xo).filter((k) => !ignored(xo, k) && xo[k] !== undefined);
    const ky = Object.keys(yo).filter((k) => !ignored(yo, k) && yo[k] !== undefined);
    if (kx.length !== ky.length) return false;
    for (let i = kx.length - 1; i >= 0; i--) {
      const k = kx[i]!;
      if (!(isBinding(xo) && k === "name")) work.push([xo[k], yo[k]]);
    }
  }
  return true;
}

/**
 * A hash consistent with `structuralEqual`: equal trees hash equal. Variables and buffers hash
 * by first-visit order. Used to cache compiled modules. Iterative (any depth is safe).
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
  // A value to hash, or text to mix once the values pushed after it are done.
  const work: ({ readonly text: string } | { readonly value: unknown })[] = [{ value: node }];
  while (work.length > 0) {
    const w = work.pop()!;
    if ("text" in w) {
      mix(w.text);
      continue;
    }
    const x = w.value;
    if (x === null || typeof x !== "object") {
      mix(`${typeof x}:${String(x)};`);
      continue;
    }
    if (Array.isArray(x)) {
      mix(`[${x.length}`);
      work.push({ text: "]" });
      for (let i = x.length - 1; i >= 0; i--) work.push({ value: x[i] });
      continue;
    }
    const o = x as Record<string, unknown> & { kind?: unknown };
    if (isBinding(o)) {
      const seen = ids.get(o);
      if (seen !== undefined) {
        mix(`#${seen};`);
        continue;
      }
      ids.set(o, ids.size);
    }
    mix("{");
    work.push({ text: "}" });
    const keys = Object.keys(o)
      .sort()
      .filter((k) => !(ignored(o, k) || o[k] === undefined || (isBinding(o) && k === "name")));
    for (let i = keys.length - 1; i >= 0; i--) {
      work.push({ value: o[keys[i]!] });
      work.push({ text: keys[i]! + "=" });
    }
  }
  return (h1 >>> 0).toString(16).padStart(8, "0") + (h2 >>> 0).toString(16).padStart(8, "0");
}

/**
 * Equality of two expressions of one scope: variables and buffers must be the same objects
 * (by id); spans are ignored. `bar[s]` and `bar[t]` differ even though they are structurally
 * equal. Iterative (any depth is safe).
 */
export function exactEqual(a0: unknown, b0: unknown): boolean {
  const work: [unknown, unknown][] = [[a0, b0]];
  while (work.length > 0) {
    const [a, b] = work.pop()!;
    if (a === b) continue;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
    if (Array.isArray(a) || Array.isArray(b)) {
      if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
      a.forEach((x, i) => work.push([x, b[i]]));
      continue;
    }
    const x = a as Record<string, unknown> & { kind?: unknown; id?: unknown };
    const y = b as Record<string, unknown> & { kind?: unknown; id?: unknown };
    if (x.kind !== y.kind) return false;
    if (isBinding(x)) {
      if (x.id !== y.id) return false;
      continue;
    }
    const keys = new Set([...Object.keys(x), ...Object.keys(y)]);
    for (const k of keys) if (k !== "span") work.push([x[k], y[k]]);
  }
  return true;
}
