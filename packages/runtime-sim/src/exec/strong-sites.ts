import type { Clocks } from "./clocks.js";
import { THREAD_BITS, THREAD_MASK } from "./packed.js";

/**
 * The strong sites of a kernel (atom, red, cas, st.relaxed/release, ld.relaxed/acquire, bulk
 * reductions) with each one's scope and element size, and the rule that tells when two strong
 * accesses of different threads are morally strong, so do not race (PTX ISA, Memory Consistency
 * Model, "Morally strong operations" and "Data races"): two operations are morally strong when
 * each is strong and specifies a scope that includes the thread executing the other, and, being
 * memory operations, they overlap completely (the same proxy too: see below). Scopes: `.cta`
 * includes the threads of the CTA, `.cluster` those of the cluster, `.gpu` every thread of the
 * device, `.sys` every thread of the program. So `atom.cta` of two CTAs on one word race, as do
 * `atom.cta` and `atom.gpu` of two CTAs, and `atom.cluster` of two clusters; any scope of two
 * threads of one CTA do not.
 *
 * The simulator's threads: a record whose clock is below the running group's first clock
 * (Clocks.ctaBase) comes from another group (CTA, or cluster) of the launch; within the group a
 * thread's CTA is its rank (Machine.rank). A multi-PE launch groups the PEs' CTAs of one index
 * (Machine.pes): threads of two PEs are on two devices, so only `.sys` includes both. Otherwise
 * the simulator has one device and `.sys` is `.gpu`.
 *
 * Elements are naturally aligned (an element op addresses element i of its buffer), so two
 * overlapping accesses overlap completely exactly when they have the same size. A site of no
 * fixed size (a bulk reduction's chunk, 0 bytes here) is taken to overlap completely.
 *
 * The proxy condition: a bulk reduction is performed through the async proxy, atomics and
 * strong loads and stores through the generic proxy, so a bulk reduction is morally strong only
 * with another bulk reduction (of a wide enough scope), never with a generic atomic on the same
 * bytes: those race unless ordered (a `fence.proxy.async` and a synchronization between them).
 *
 * Costs: one typed-array read per site; moral() is a few integer comparisons.
 */

/** Scope codes, in the order of core's MEMORY_SCOPES. */
export const SCOPE_CTA = 0;
export const SCOPE_CLUSTER = 1;
export const SCOPE_GPU = 2;
export const SCOPE_SYS = 3;
const SCOPE_NAMES = ["cta", "cluster", "gpu", "sys"] as const;

/** The strong sites of one Machine (see the file comment). */
export class StrongSites {
  readonly #clocks: Clocks;
  readonly #rank: Int32Array;
  readonly #pes: number;
  /** Per site: its scope (SCOPE_*), or -1 when the site is not strong. */
  #scope = new Int8Array(64).fill(-1);
  /** Per site: its element's bytes (0: any). */
  #bytes = new Uint8Array(64);
  /** Per site: 1 when performed through the async proxy (a bulk reduction), 0 the generic one. */
  #proxy = new Uint8Array(64);
  /** Per site: its PTX name for messages (`atom.relaxed.cta.add`, `st.release.gpu`, ...). */
  readonly #names: string[] = [];

  /**
   * The sites of a Machine whose threads are ordered by `clocks`, thread t in the CTA of rank
   * `rank[t]` of its group; `pes` the PEs of a multi-PE launch (1 otherwise).
   */
  constructor(clocks: Clocks, rank: Int32Array, pes: number) {
    this.#clocks = clocks;
    this.#rank = rank;
    this.#pes = pes;
    this.widest = pes > 1 ? SCOPE_SYS : SCOPE_GPU;
    this.clusterWide = pes > 1 ? SCOPE_SYS : SCOPE_CLUSTER;
  }

  /** The narrowest scope that includes every thread of the launch (`.gpu`; `.sys` over PEs). */
  readonly widest: number;
  /** The narrowest scope that includes every thread of the running group. */
  readonly clusterWide: number;

  /** The rank of thread `u`'s CTA in its group (Machine.rank). */
  rankOf(u: number): number {
    return this.#rank[u]!;
  }

  /** The PE of thread `u` in a multi-PE launch, else 0. */
  peOf(u: number): number {
    return this.#pes > 1 ? this.#rank[u]! : 0;
  }

  /**
   * Site `site` is strong, of scope `scope` (SCOPE_*) on elements of `bytes` bytes (0: any),
   * performed through the async proxy when `async` (a bulk reduction), else the generic proxy.
   */
  add(site: number, scope: number, bytes: number, name: string, async = false): void {
    if (site >= this.#scope.length) {
      let n = this.#scope.length;
      while (n <= site) n *= 2;
      const s = new Int8Array(n).fill(-1);
      s.set(this.#scope);
      this.#scope = s;
      const b = new Uint8Array(n);
      b.set(this.#bytes);
      this.#bytes = b;
      const p = new Uint8Array(n);
      p.set(this.#proxy);
      this.#proxy = p;
    }
    this.#scope[site] = scope;
    this.#bytes[site] = bytes;
    this.#proxy[site] = async ? 1 : 0;
    this.#names[site] = name;
  }

  /** True for the site of a strong access. */
  isStrong(site: number): boolean {
    return site >= 0 && site < this.#scope.length && this.#scope[site]! >= 0;
  }

  /**
   * The scope of `site` (SCOPE_*), -1 when it is not strong; site -1 (a caller that names none:
   * a bulk reduction, relaxed at gpu scope) is SCOPE_GPU.
   */
  scopeOf(site: number): number {
    if (site < 0) return SCOPE_GPU;
    return site < this.#scope.length ? this.#scope[site]! : -1;
  }

  /** 1 when `site` is performed through the async proxy (site -1: a bulk reduction), else 0. */
  proxyOf(site: number): number {
    if (site < 0) return 1;
    return site < this.#proxy.length ? this.#proxy[site]! : 0;
  }

  /** The element bytes of `site` (0: any). */
  bytesOf(site: number): number {
    return site >= 0 && site < this.#bytes.length ? this.#bytes[site]! : 0;
  }

  /**
   * The narrowest scope that includes thread `u` (of the record stamped `c`) and thread `t` of
   * the running group: SCOPE_CTA in one CTA, SCOPE_CLUSTER in one cluster, else SCOPE_GPU (two
   * PEs: SCOPE_SYS).
   */
  reach(u: number, c: number, t: number): number {
    const rank = this.#rank;
    if (c < this.#clocks.ctaBase) {
      return this.#pes > 1 && rank[u] !== rank[t] ? SCOPE_SYS : SCOPE_GPU;
    }
    if (rank[u] === rank[t]) return SCOPE_CTA;
    return this.#pes > 1 ? SCOPE_SYS : SCOPE_CLUSTER;
  }

  /**
   * Are the earlier access packed `w` (site and thread) at clock `c` and thread `t`'s access at
   * `site` (-1: a bulk reduction, relaxed.gpu on any size) morally strong? Both strong, the
   * narrower scope including both threads, the same size, the same proxy. False when either is
   * not strong.
   */
  moral(w: number, c: number, t: number, site: number): boolean {
    const s = w >> THREAD_BITS;
    if (this.proxyOf(s) !== this.proxyOf(site)) return false;
    const sb = this.bytesOf(s);
    const xb = this.bytesOf(site);
    if (sb !== xb && sb !== 0 && xb !== 0) return false;
    const a = this.scopeOf(s);
    const b = this.scopeOf(site);
    return (a < b ? a : b) >= this.reach(w & THREAD_MASK, c, t);
  }

  /**
   * Does thread `t`'s strong access at `site` stand for the earlier strong access packed `w` at
   * clock `c` (ordered before it), for every later access that is morally strong with it?
   * When both are of one CTA, the earlier one's scope at least as wide, the same size: then an
   * access morally strong with the later one is morally strong with the earlier one.
   */
  dominates(site: number, t: number, w: number, c: number): boolean {
    const s = w >> THREAD_BITS;
    if (c < this.#clocks.ctaBase || this.#rank[w & THREAD_MASK] !== this.#rank[t]) return false;
    return (
      this.bytesOf(s) === this.bytesOf(site) &&
      this.proxyOf(s) === this.proxyOf(site) &&
      this.scopeOf(s) >= this.scopeOf(site)
    );
  }

  /**
   * Why the strong load packed `r` (a read record: ld.relaxed / ld.acquire) and a write at `site`
   * that is not strong (a plain store, a copy, a bulk reduction, which the async proxy performs)
   * are not morally strong, for a write-after-read report; undefined when `r` is not strong or
   * `site` is.
   */
  whyNotWithLoad(r: number, site: number): string | undefined {
    const s = r >> THREAD_BITS;
    if (!this.isStrong(s) || this.isStrong(site)) return undefined;
    return `; the ${this.#names[s]!} is strong, but this write is not a strong operation of the generic proxy, and two operations are morally strong only when both are strong and performed through the same proxy (PTX ISA, Memory Consistency Model, "Morally strong operations", "Data races")`;
  }

  /**
   * Why the strong accesses packed `w` (clock `c`; `other` names its thread) and thread `t`'s at
   * `site` (`me` names the thread) are not morally strong, for a race report; undefined when
   * either is not strong (or they are morally strong).
   */
  whyNot(
    w: number,
    c: number,
    other: string,
    t: number,
    site: number,
    me: string,
  ): string | undefined {
    const s = w >> THREAD_BITS;
    if (!this.isStrong(s) || !this.isStrong(site) || this.moral(w, c, t, site)) return undefined;
    const mine = this.#names[site]!;
    const theirs = this.#names[s]!;
    const sb = this.bytesOf(s);
    const xb = this.bytesOf(site);
    const cite = `PTX ISA, Memory Consistency Model, "Morally strong operations"`;
    if (this.proxyOf(s) !== this.proxyOf(site)) {
      const [bulk, generic] = this.proxyOf(site) === 1 ? [mine, theirs] : [theirs, mine];
      return `; both are strong, but not morally strong: the ${bulk} is performed through the async proxy and the ${generic} through the generic proxy (${cite}: both must be performed through the same proxy); order them with fence.proxy.async and a synchronization`;
    }
    if (sb !== xb && sb !== 0 && xb !== 0) {
      return `; both are strong, but not morally strong: this ${mine} of ${xb} bytes and the ${theirs} of ${sb} bytes do not overlap completely (${cite})`;
    }
    const need = this.reach(w & THREAD_MASK, c, t);
    const parts: string[] = [];
    if (this.scopeOf(site) < need)
      parts.push(`the scope of this ${mine} does not include ${other}`);
    if (this.scopeOf(s) < need) {
      const of = parts.length > 0 ? "and that of" : "the scope of";
      parts.push(`${of} the ${theirs} does not include ${me}`);
    }
    const each = `each must specify a scope that includes the other's thread: .${SCOPE_NAMES[need]} or wider here`;
    return `; both are strong, but not morally strong: ${parts.join(", ")} (${cite}: ${each})`;
  }
}

/** The PTX name of a scope code (`cta`, `cluster`, `gpu`, `sys`). */
export function scopeName(scope: number): string {
  return SCOPE_NAMES[scope]!;
}
