import type { Note } from "@tirx-ts/core";
import type { SimContext } from "./context.js";
import { warpList, type NamedBarrierFacts, type NamedBarrierWaitFacts } from "./deadlock-facts.js";
import { Tracer } from "./trace.js";

/**
 * The barrier resources of a CTA as barrier instances (PTX ISA, bar/barrier): each CTA has
 * barriers 0..15; `bar.sync a, b` and `bar.arrive a, b` signal the arrival of the executing
 * threads at barrier `a`, whatever statement they execute; when `b` threads arrived the barrier
 * instance completes and the barrier is reinitialised for the next one. `cta_sync` is bar.sync 0
 * with all of the CTA's threads. A thread that arrives with bar.sync waits for its instance to
 * complete; then it acquires what every arriver of the instance did before arriving (PTX ISA,
 * bar/barrier "memory ordering"). One with bar.arrive does not wait and acquires nothing.
 *
 * Used when the kernel has a named barrier (`bar_sync`, `bar_arrive`): each warp then runs as its
 * own coroutine (compile/blocking.ts) and a warp that waits at a barrier yields to the others.
 *
 * Reports (TX6012; TX6009 for cta_sync):
 * - an instance that never completes (every warp is blocked, or the CTA ends): too few threads
 *   arrive for its count;
 * - a thread that joins an instance with a count other than the instance's first arriver's: all
 *   threads of one instance must agree on the count;
 * - a thread that arrives at a barrier while nothing orders it after the arrivals of the
 *   barrier's previous instance: on hardware it may arrive before that instance completes and
 *   join it, so which threads form an instance is not determined (more threads than the count,
 *   or two groups sharing one barrier id, or a partial bar.sync 0 beside cta_sync). A report
 *   depends on the happens-before relation only, not on the order the simulator ran the warps.
 *
 * Reports TX6009 for a cta_sync instance whose threads arrive from two statements: cta_sync is
 * `bar.sync 0`, i.e. barrier.sync.aligned, and "all threads in the CTA execute the same barrier
 * instruction" (PTX ISA, bar/barrier, .aligned), as in lockstep (compile/stmt.ts). Named
 * barriers are `bar.sync a, b` / `bar.arrive a, b`, .aligned too, and a barrier counts the
 * arrival of a warp's threads together ("waits for all non-exited threads from its warp"): warps
 * may meet at one instance from different statements (producer/consumer), but the lanes of one
 * warp must arrive from one statement, else TX6009 (lanes that parted ways at a wait, or the two
 * arms of an `if`).
 */

/** Barrier resources per CTA, plus one pseudo-barrier for a one-CTA cluster's barrier.cluster. */
export const BARRIER_IDS = 17;
/** The pseudo-barrier id of barrier.cluster in a cluster of one CTA. */
export const CLUSTER_BARRIER = 16;

/** How a statement arrives at a barrier. */
export interface Arrival {
  /** Barrier id (0..15, or CLUSTER_BARRIER). */
  readonly id: number;
  /** Thread count; for cta_sync the CTA's threads. */
  readonly count: number;
  /** bar.sync (waits) or bar.arrive (does not). */
  readonly sync: boolean;
  /** The statement as messages name it: `bar_sync(1, 64)`, `cta_sync`. */
  readonly what: string;
  /** cta_sync or barrier.cluster.wait: all the CTA's threads (TX6009 when it never completes). */
  readonly whole: boolean;
  /**
   * .aligned over the CTA (cta_sync): every arrival of an instance comes from one statement, else
   * TX6009 (PTX ISA, bar/barrier).
   */
  readonly aligned: boolean;
  readonly site: number;
}

interface Instance {
  count: number;
  /** The first arrival, for messages. */
  first: Arrival;
  firstThread: number;
  /** Arrived threads and their clocks at the arrival: `[t, clock, ...]`. */
  readonly arrivals: number[];
  /** Threads waiting in bar.sync. */
  readonly syncers: number[];
  /** Every arrival is a bar.sync. */
  allSync: boolean;
  /** For an .aligned instance whose arrivals came from several statements: per site, its threads. */
  split: Map<number, number[]> | undefined;
  /** Named barriers: per warp, the statement its first lane arrived from and that lane. */
  readonly warpSite: Map<number, { site: number; thread: number; what: string; sync: boolean }>;
  /** Warps already reported as split (once per instance). */
  readonly warpSplit: Set<number>;
}

interface Done {
  readonly arrivals: readonly number[];
  readonly first: Arrival;
  readonly firstThread: number;
}

export class NamedBarriers {
  /** Per key (`rank * BARRIER_IDS + id`): the instance that is filling, if any. */
  readonly #cur: (Instance | undefined)[];
  /** Per key: the last completed instance. */
  readonly #last: (Done | undefined)[];
  /** Per key: completed instances in this CTA. */
  readonly #gen: Int32Array;
  /** Per key, per thread: the number of the last instance the thread completed in bar.sync, plus 1. */
  readonly #synced: (Int32Array | undefined)[];

  constructor(ctas: number) {
    this.#cur = new Array<Instance | undefined>(ctas * BARRIER_IDS).fill(undefined);
    this.#last = new Array<Done | undefined>(ctas * BARRIER_IDS).fill(undefined);
    this.#gen = new Int32Array(ctas * BARRIER_IDS);
    this.#synced = new Array<Int32Array | undefined>(ctas * BARRIER_IDS).fill(undefined);
  }

  /** True when a thread arrived at a barrier since the last reset (the state changed). */
  #used = false;

  /**
   * Forget every instance (CTA start), and the named barrier releases `m`'s Clocks keep;
   * nothing to do after a CTA that arrived at no barrier.
   */
  reset(m: SimContext): void {
    if (!this.#used) return;
    this.#used = false;
    this.#cur.fill(undefined);
    this.#last.fill(undefined);
    this.#gen.fill(0);
    for (const a of this.#synced) a?.fill(0);
    m.clocks.resetNamed();
  }

  /** Instances of barrier `key` completed so far. */
  generation(key: number): number {
    return this.#gen[key]!;
  }

  /**
   * Threads `lanes[0..n)` (all of one CTA) arrive at barrier `a.id`. Returns the number of the
   * instance they joined: they may go on once `generation(key)` exceeds it.
   */
  arrive(m: SimContext, lanes: ArrayLike<number>, n: number, a: Arrival): number {
    const rank = m.rank[lanes[0]!]!;
    const key = rank * BARRIER_IDS + a.id;
    const clocks = m.clocks;
    this.#used = true;
    m.bars.progress++;
    for (let i = 0; i < n; i++) {
      const t = lanes[i]!;
      this.#checkOrder(m, key, t, a);
      let inst = this.#cur[key];
      if (!inst) {
        inst = {
          count: a.count,
          first: a,
          firstThread: t,
          arrivals: [],
          syncers: [],
          allSync: true,
          split: undefined,
          warpSite: new Map(),
          warpSplit: new Set(),
        };
        this.#cur[key] = inst;
      } else if (inst.count !== a.count) {
        m.hazard(
          "TX6012",
          `${a.what} in CTA ${m.cta()}: thread ${m.thread(t)} arrives at barrier ${idName(a.id)} with count ${a.count}, but the barrier instance it joins has count ${inst.count}; all threads of one barrier instance must give the same count (PTX ISA, bar/barrier)`,
          a.site,
          [
            {
              message: `thread ${m.thread(inst.firstThread)} arrived at that instance here with count ${inst.count} (${inst.first.what})`,
              span: m.sites[inst.first.site],
            },
          ],
        );
      }
      if (!inst.split && inst.first.aligned && a.aligned && a.site !== inst.first.site) {
        inst.split = new Map([[inst.first.site, threadsOf(inst.arrivals)]]);
      }
      if (inst.split) {
        const at = inst.split.get(a.site);
        if (at) at.push(t);
        else inst.split.set(a.site, [t]);
      }
      if (!a.whole) this.#checkWarp(m, inst, t, a);
      if (a.sync) {
        inst.syncers.push(t);
        inst.arrivals.push(t, clocks.clock[t]!);
      } else {
        inst.allSync = false;
        inst.arrivals.push(t, clocks.onNamedArrive(key, t));
      }
      if (inst.arrivals.length / 2 >= inst.count) this.#complete(m, key, rank, inst);
    }
    return this.#gen[key]! - (this.#cur[key] ? 0 : 1);
  }

  /**
   * TX6009 when thread `t` arrives at named barrier instance `inst` from another statement than
   * an earlier lane of its warp did (bar.sync / bar.arrive are .aligned: a warp's threads execute
   * the same barrier instruction; PTX ISA, bar/barrier). Once per warp and instance.
   */
  #checkWarp(m: SimContext, inst: Instance, t: number, a: Arrival): void {
    const w = t >> 5;
    const first = inst.warpSite.get(w);
    if (!first) {
      inst.warpSite.set(w, { site: a.site, thread: t, what: a.what, sync: a.sync });
      return;
    }
    if (first.site === a.site || inst.warpSplit.has(w)) return;
    inst.warpSplit.add(w);
    m.hazard(
      "TX6009",
      `${a.what} in CTA ${m.cta()}: thread ${m.thread(t)} arrives at barrier ${idName(a.id)} from another statement than thread ${m.thread(first.thread)} of its warp (${first.what}); bar.sync and bar.arrive are .aligned: every thread of a warp must execute the same barrier instruction (PTX ISA, bar/barrier)`,
      a.site,
      [
        {
          message: `thread ${m.thread(first.thread)} arrived at the same barrier instance here`,
          span: m.sites[first.site],
        },
      ],
    );
  }

  /**
   * TX6012 when nothing orders thread `t`'s arrival after every arrival of the previous
   * instance of barrier `key`.
   */
  #checkOrder(m: SimContext, key: number, t: number, a: Arrival): void {
    const last = this.#last[key];
    // A thread that waited in the previous instance acquired every arrival of it.
    if (!last || this.#synced[key]?.[t] === this.#gen[key]) return;
    const arr = last.arrivals;
    const clocks = m.clocks;
    for (let i = 0; i < arr.length; i += 2) {
      const u = arr[i]!;
      if (clocks.ordered(u, arr[i + 1]!, t)) continue;
      m.hazard(
        "TX6012",
        `${a.what} in CTA ${m.cta()}: thread ${m.thread(t)} arrives at barrier ${idName(a.id)} with nothing ordering it after thread ${m.thread(u)}'s arrival at the barrier's previous instance (count ${last.first.count}); on hardware it may arrive before that instance completes and join it, so which threads a barrier instance pairs is not determined (threads beyond the count, or two groups sharing one barrier id: give each group its own id, or order them)`,
        a.site,
        [
          {
            message: `thread ${m.thread(u)} arrived at barrier ${idName(a.id)} here (${last.first.what})`,
            span: m.sites[last.first.site],
          },
        ],
      );
      return;
    }
  }

  /**
   * TX6009 at each statement that threads of .aligned instance `inst` (of CTA rank `rank`)
   * arrived from, when they arrived from several: as in lockstep, each names how many threads
   * reached it and a thread that reached another one.
   */
  #reportSplit(m: SimContext, rank: number, inst: Instance): void {
    const split = inst.split;
    if (!split) return;
    const sites = [...split.keys()];
    const cta = m.ctas > 1 ? m.ctaOfRank(rank) : m.cta();
    for (let i = 0; i < sites.length; i++) {
      const site = sites[i]!;
      const other = sites[i === 0 ? 1 : 0]!;
      const u = split.get(other)![0]!;
      const n = split.get(site)!.length;
      m.hazard(
        "TX6009",
        `${inst.first.what} reached by ${n} of the ${m.ctaThreads} threads of CTA ${cta}; thread ${m.thread(u)} reaches another ${inst.first.what} instead (bar.sync 0 is .aligned: every thread of the CTA must execute the same barrier instruction, PTX ISA, bar/barrier)`,
        site,
        [{ message: `thread ${m.thread(u)} reached this one`, span: m.sites[other] }],
      );
    }
  }

  #complete(m: SimContext, key: number, rank: number, inst: Instance): void {
    this.#reportSplit(m, rank, inst);
    const whole = inst.count === m.ctaThreads;
    if (whole && inst.allSync && m.ctas === 1) {
      // Every thread of the CTA waits here: cta_sync (Clocks.onBarrier, SharedShadow.onBarrier).
      m.clocks.onBarrier();
      m.shadow.onBarrier();
      m.bars.barSync();
      m.wgmma.aligned.settle(m, "before a cta_sync that every thread reaches");
      m.wgmma.reads.onBarrier();
    } else {
      m.clocks.onNamedComplete(key, inst.syncers);
      if (whole && inst.allSync) m.bars.barSync(rank * m.ctaThreads, (rank + 1) * m.ctaThreads);
    }
    m.epoch++;
    m.bars.progress++;
    m.opts.tracer?.barrier(
      Tracer.warpsOf(Int32Array.from(inst.syncers), inst.syncers.length),
      inst.first.what,
    );
    this.#last[key] = { arrivals: inst.arrivals, first: inst.first, firstThread: inst.firstThread };
    this.#cur[key] = undefined;
    this.#gen[key]!++;
    const synced = (this.#synced[key] ??= new Int32Array(m.threads));
    for (const p of inst.syncers) synced[p] = this.#gen[key]!;
  }

  /**
   * TX6012 (TX6009 for cta_sync) for each barrier instance that never completes: at a deadlock
   * (`blocked`: only instances some thread waits in) or at the CTA's end. True if it reported.
   */
  reportIncomplete(m: SimContext, blocked: boolean): boolean {
    let any = false;
    for (let key = 0; key < this.#cur.length; key++) {
      const inst = this.#cur[key];
      if (!inst || (blocked && inst.syncers.length === 0)) continue;
      any = true;
      const n = inst.arrivals.length / 2;
      const a = inst.first;
      if (a.whole && inst.count === m.ctaThreads) {
        const rank = Math.floor(key / BARRIER_IDS);
        if (inst.split) {
          this.#reportSplit(m, rank, inst);
          continue;
        }
        const seen = new Uint8Array(m.ctaThreads);
        for (let i = 0; i < inst.arrivals.length; i += 2) {
          seen[inst.arrivals[i]! - rank * m.ctaThreads] = 1;
        }
        const missing = rank * m.ctaThreads + seen.indexOf(0);
        const cta = m.ctas > 1 ? m.ctaOfRank(rank) : m.cta();
        m.hazard(
          "TX6009",
          `${a.what} reached by ${n} of the ${m.ctaThreads} threads of CTA ${cta}; thread ${m.thread(missing)} does not reach it, so the barrier never releases`,
          a.site,
        );
        continue;
      }
      m.hazard(
        "TX6012",
        `${a.what} in CTA ${m.cta()} is reached by ${n} threads, but its count is ${inst.count}; it never releases${inst.syncers.length === 0 ? " (the CTA ends with the barrier instance incomplete)" : ""}`,
        a.site,
        incompleteNotes(m, key, inst),
      );
    }
    return any;
  }
}

/**
 * The notes of named barrier instance `inst` (barrier `key`) that never completes: the count
 * against the threads that arrived (NamedBarrierFacts), then per statement the warps that arrived
 * there (NamedBarrierWaitFacts), at its span.
 */
function incompleteNotes(m: SimContext, key: number, inst: Instance): Note[] {
  const id = key % BARRIER_IDS;
  const first = inst.firstThread;
  const cta = m.ctaOf(first);
  const perWarp = new Map<number, number>();
  for (let i = 0; i < inst.arrivals.length; i += 2) {
    const w = (inst.arrivals[i]! % m.ctaThreads) >> 5;
    perWarp.set(w, (perWarp.get(w) ?? 0) + 1);
  }
  const warps = [...perWarp.keys()].sort((p, q) => p - q);
  const arrived = inst.arrivals.length / 2;
  const facts: NamedBarrierFacts = {
    kind: "named-barrier",
    id,
    cta,
    expected: inst.count,
    arrived,
    warps,
  };
  const notes: Note[] = [
    {
      message: `barrier ${idName(id)} of CTA ${cta} expects ${inst.count} threads in this instance; ${arrived} arrived (${warpList(warps)}), ${inst.count - arrived} never arrive (PTX ISA, bar/barrier: the instance completes when b threads arrived)`,
      facts,
    },
  ];
  const bySite = new Map<
    number,
    { warps: number[]; threads: number; what: string; sync: boolean }
  >();
  const siteOf = new Map<number, { site: number; what: string; sync: boolean }>();
  for (const v of inst.warpSite.values()) siteOf.set((v.thread % m.ctaThreads) >> 5, v);
  for (const w of warps) {
    const at = siteOf.get(w);
    const site = at?.site ?? inst.first.site;
    let g = bySite.get(site);
    if (!g) {
      g = {
        warps: [],
        threads: 0,
        what: at?.what ?? inst.first.what,
        sync: at?.sync ?? inst.first.sync,
      };
      bySite.set(site, g);
    }
    g.warps.push(w);
    g.threads += perWarp.get(w)!;
  }
  for (const [site, g] of bySite) {
    const f: NamedBarrierWaitFacts = {
      kind: "named-barrier-wait",
      id,
      cta,
      warps: g.warps,
      threads: g.threads,
      sync: g.sync,
    };
    notes.push({
      message: `${warpList(g.warps)} of CTA ${cta} (${g.threads} threads) arrived here (${g.what})${g.sync ? " and wait for the instance to complete" : ""}`,
      span: m.sites[site],
      facts: f,
    });
  }
  return notes;
}

/** The threads of an arrival list `[t, clock, ...]`. */
function threadsOf(arrivals: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < arrivals.length; i += 2) out.push(arrivals[i]!);
  return out;
}

function idName(id: number): string {
  return id === CLUSTER_BARRIER ? "barrier.cluster" : String(id);
}
