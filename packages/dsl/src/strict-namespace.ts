import { PROBE_KEYS, readByAuthor } from "./author-read.js";
import { callerSpan } from "./span.js";
import { unknownMemberError } from "./unknown-member.js";

/** The proxy of each namespace object met under T, made on its first read. */
const wrapped = new WeakMap<object, object>();

/** A namespace of T: a plain object or a module namespace (not a function, class or array). */
function isNamespace(v: unknown): v is object {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === null || proto === Object.prototype;
}

/**
 * `obj` (spelled `owner` in a kernel's text: "T", "T.cuda") behind a proxy that reads every
 * member it has as before and throws TX1024 for a string key it lacks, with the nearest member
 * name, at the author's line; its namespace members (plain objects: `T.cuda`, `T.tile.warp`) are
 * wrapped the same way, once each, so a misspelled member read through an alias
 * (`const w = T.tile.warp; w.sums(…)`) is TX1024 too, not a TypeError. Symbol keys, the
 * well-known probe keys (`then`, `toJSON`, `$$typeof`, …) and any key read by code that is not the
 * author's (Node's modules, installed libraries, tirx-ts's own packages) read as on `obj`.
 * @param obj A namespace object: T (T.ts: the builder's members and prim_func) or one of its members.
 * @param owner Its spelling in a kernel, for the message.
 * @returns The proxy; its type is `obj`'s.
 * @throws TirxError TX1024 (dsl/unknown-name) from the proxy, when a missing member is read.
 */
export function strictNamespace<X extends object>(obj: X, owner: string): X {
  return new Proxy(obj, {
    get(target, key, receiver) {
      // Read first: a namespace may answer keys it does not list (T.ptx's PTX spellings,
      // `T.ptx["cp.async.cg.shared.global"]`, come from its own proxy).
      const v: unknown = Reflect.get(target, key, receiver);
      if (v !== undefined || typeof key === "symbol" || key in target || PROBE_KEYS.has(key)) {
        if (typeof key !== "string" || !isNamespace(v)) return v;
        // A non-configurable read-only member must read as itself (a Proxy invariant).
        const d = Object.getOwnPropertyDescriptor(target, key);
        if (d && !d.configurable && d.writable === false) return v;
        // One proxy per namespace object: two names of one namespace (T.ptx.cp.async and
        // T.ptx.cp.async_) read as one object, as before.
        let w = wrapped.get(v);
        if (w === undefined) wrapped.set(v, (w = strictNamespace(v, `${owner}.${key}`)));
        return w;
      }
      if (!readByAuthor()) return v;
      throw unknownMemberError(key, owner, target, callerSpan());
    },
  });
}
