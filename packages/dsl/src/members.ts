/**
 * The member names of an object as a "did you mean" lists them: its own enumerable and
 * non-enumerable string keys and its prototypes' (class methods), up to Object.prototype, without
 * `constructor` or private-looking `_`-prefixed names.
 * @param obj Any object (a T namespace, a PrimExpr, a TileView).
 * @returns The names, each once, in the order found. Never throws.
 */
export function memberNames(obj: object): string[] {
  const out = new Set<string>();
  for (let o: object | null = obj; o !== null && o !== Object.prototype;) {
    for (const k of Object.getOwnPropertyNames(o)) {
      if (k !== "constructor" && !k.startsWith("_")) out.add(k);
    }
    o = Object.getPrototypeOf(o) as object | null;
  }
  return [...out];
}
