import { createHash } from "node:crypto";
import { structuralEqual, structuralHash, type PrimFunc, type Span } from "@tirx-ts/core";

/** structuralHash by PrimFunc object (see {@link funcHash}). */
const HASHES = new WeakMap<PrimFunc, string>();

/**
 * core's `structuralHash` of `fn`, computed once per PrimFunc object (the IR is plain readonly
 * data): autotune's check of a cached choice and compile's cache hash the same kernel once.
 */
export function funcHash(fn: PrimFunc): string {
  let h = HASHES.get(fn);
  if (h === undefined) HASHES.set(fn, (h = structuralHash(fn)));
  return h;
}

/**
 * A fingerprint of every source span in `fn` (file:line:col:length and its code frame's lines,
 * in visiting order) and of every access's author index (core's `AccessIndex`, which structural
 * equality leaves out as it does spans; the verifier proves each index within its axis): two
 * functions that are structurally equal and have the same fingerprint report every diagnostic
 * and hazard at the same places with the same code frames, so one compilation can serve both.
 */
export function spanFingerprint(fn: PrimFunc): string {
  const h = createHash("sha1");
  const seen = new Set<object>();
  const stack: unknown[] = [fn];
  while (stack.length > 0) {
    const x = stack.pop();
    if (x === null || typeof x !== "object" || seen.has(x)) continue;
    seen.add(x);
    if (Array.isArray(x)) {
      for (let i = x.length - 1; i >= 0; i--) stack.push(x[i]);
      continue;
    }
    const o = x as Record<string, unknown>;
    const span = o["span"] as Span | undefined;
    if (span && typeof span === "object") {
      h.update(`${span.file}:${span.line}:${span.col}:${span.length ?? ""}:`);
      for (const t of [span.lineAbove, span.lineText, span.lineBelow]) {
        h.update(`${t?.length ?? -1}:${t ?? ""}`);
      }
      h.update(";");
    } else h.update(".");
    if ((o["kind"] === "BufferLoad" || o["kind"] === "Store") && o["index"] !== undefined) {
      h.update(`index ${structuralHash(o["index"])};`);
    }
    for (const k of Object.keys(o)) if (k !== "span") stack.push(o[k]);
  }
  return h.digest("hex");
}

/**
 * An in-process cache of compilations keyed by the structural hash of the IR, its span
 * fingerprint and the options (`key`), with a structural-equality check on a hit (hashes can
 * collide). Identity hits (the same PrimFunc object) skip both walks.
 */
export class CompileCache<V> {
  readonly #byFn = new WeakMap<PrimFunc, Map<string, V>>();
  readonly #byHash = new Map<string, { fn: PrimFunc; value: V }[]>();
  readonly #limit: number;

  constructor(limit = 1024) {
    this.#limit = limit;
  }

  get(fn: PrimFunc, options: string, make: () => V): V {
    const own = this.#byFn.get(fn)?.get(options);
    if (own !== undefined) return own;
    const key = `${funcHash(fn)}|${spanFingerprint(fn)}|${options}`;
    const bucket = this.#byHash.get(key);
    const hit = bucket?.find((e) => structuralEqual(e.fn, fn));
    const value = hit ? hit.value : make();
    if (!hit) {
      if (this.#byHash.size >= this.#limit) this.#byHash.clear();
      const b = this.#byHash.get(key) ?? [];
      b.push({ fn, value });
      this.#byHash.set(key, b);
    }
    let perFn = this.#byFn.get(fn);
    if (!perFn) this.#byFn.set(fn, (perFn = new Map()));
    perFn.set(options, value);
    return value;
  }

  /** Forget everything (tests). */
  clear(): void {
    this.#byHash.clear();
  }

  get size(): number {
    let n = 0;
    for (const b of this.#byHash.values()) n += b.length;
    return n;
  }
}
