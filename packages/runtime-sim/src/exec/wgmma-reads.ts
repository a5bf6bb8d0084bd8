import { bufferName } from "@tirx-ts/core";
import type { SharedAccess, SimContext } from "./context.js";
import type { Placed } from "./memory.js";

/** A retirement of a wgmma: a warp of its warpgroup passed a wgmma.wait_group that retires it. */
interface Retirement {
  readonly warp: number;
  readonly site: number;
  /** The clocks of the warp's 32 lanes at the wait_group (Clocks stamps). */
  readonly clocks: Int32Array;
}

/** The shared reads of one wgmma.mma_async of a warpgroup (all 4 warps' parts of it). */
interface ReadRecord {
  readonly site: number;
  readonly group: number;
  /** Shared 16-byte chunks (absolute byte offsets) it reads that no ordered write took over. */
  readonly chunks: Set<number>;
  readonly retired: Retirement[];
  /** Warps of the warpgroup that issued their part (the record stops being matched at 4). */
  issuers: number;
  /** Its place in the order records are made (the order of WgmmaReads' set of records). */
  readonly seq: number;
  /** checkWrite's scratch: the write that last found it (a count), and its first chunk there. */
  seen: number;
  hit: number;
}

/**
 * The shared operands of wgmma.mma_async as reads of the async proxy that last until a
 * wgmma.wait_group retires the instruction (PTX ISA, wgmma.mma_async: "the contents of the
 * shared memory operands must not be modified until the wgmma operation is complete";
 * wgmma.wait_group completes it). The instruction belongs to the warpgroup: once any warp of the
 * warpgroup passes a wait_group that retires it, all of it (every warp's rows of A, and B) is
 * complete. So a write of those bytes (a store, an atomic, a cp.async or bulk / TMA copy issued)
 * by thread t is fine only when a retirement happens before t's current point: t is a lane of a
 * retiring warp (program order, the wait_group is `.sync`), or t acquired the retiring lane's
 * clock through a barrier or an mbarrier phase (Clocks.ordered) — the pipeline handing the
 * stage back after `wgmma.wait_group` (CUTLASS: warpgroup_wait, then one thread releases the
 * stage). Otherwise TX6024, whether the wgmma is still live in the simulator or was retired in a
 * way that does not order it before the write (the wait_group after the release).
 *
 * A write that covers a whole chunk and is ordered after every retirement ends the records'
 * claim on the chunk (a later write either is ordered after that write or races with it,
 * TX6014); a cta_sync ends the claims of every retired record. With race tracking off only
 * live records count.
 */
export class WgmmaReads {
  /** Records with a claim on a chunk (fast check for the store hooks). */
  get tracked(): number {
    return this.#records.size;
  }
  readonly #records = new Set<ReadRecord>();
  /** Per 16-byte chunk of shared memory: the number of records claiming it. */
  readonly #claims: Int32Array;
  /**
   * Per 16-byte chunk: the records claiming it (each counted in `#claims`), in no order; made
   * at the first issue, a chunk's list at its first claim.
   */
  #claimers: (ReadRecord[] | undefined)[] | undefined;
  /** Records made so far, and checkWrite calls that found a claimed chunk (ReadRecord.seen). */
  #made = 0;
  #writes = 0;
  /** checkWrite's scratch: the records with a chunk in the write's range. */
  readonly #hits: ReadRecord[] = [];
  /** Per warpgroup and issue index: the record its warps' k-th mma_async adds to. */
  readonly #open = new Map<string, ReadRecord>();
  /** Per warp: its mma_async issues so far in this CTA. */
  #issued: number[] = [];
  /** checkWrite's scratch: the chunk indexes of a write's range that some record claims. */
  #claimed = new Int32Array(64);

  constructor(sharedBytes: number) {
    this.#claims = new Int32Array(Math.ceil(sharedBytes / 16));
  }

  /** A fresh CTA: no records (collections already empty are kept). */
  reset(): void {
    if (this.#records.size > 0) {
      this.#claims.fill(0);
      for (const list of this.#claimers ?? []) if (list && list.length > 0) list.length = 0;
      this.#records.clear();
    }
    // Map.prototype.clear allocates a new table even for an empty map.
    if (this.#open.size > 0) this.#open.clear();
    if (this.#issued.length > 0) this.#issued = [];
  }

  /**
   * Warp `warp` issues its part of a wgmma.mma_async at `site` reading `chunks` (a chunk listed
   * again adds nothing): the record of its warpgroup's instruction (the warp's k-th issue is the
   * warpgroup's k-th instruction, the .sync.aligned rule) that its retirement will end.
   */
  issue(warp: number, site: number, chunks: Int32Array): ReadRecord {
    const k = this.#issued[warp] ?? 0;
    this.#issued[warp] = k + 1;
    const group = warp >> 2;
    const key = `${group}:${k}`;
    let r = this.#open.get(key);
    if (!r) {
      r = {
        site,
        group,
        chunks: new Set(),
        retired: [],
        issuers: 0,
        seq: this.#made++,
        seen: 0,
        hit: 0,
      };
      this.#open.set(key, r);
      this.#records.add(r);
    }
    if (++r.issuers === 4) this.#open.delete(key);
    const claims = this.#claims;
    const claimers = (this.#claimers ??= new Array<ReadRecord[] | undefined>(claims.length).fill(
      undefined,
    ));
    for (const c of chunks) {
      if (r.chunks.has(c)) continue;
      r.chunks.add(c);
      claims[c >> 4]!++;
      (claimers[c >> 4] ??= []).push(r);
    }
    return r;
  }

  /** Warp `warp` passes a wgmma.wait_group at `site` that retires record `r`. */
  retire(m: SimContext, r: ReadRecord, warp: number, site: number): void {
    const clocks = m.clocks.clock.slice(warp << 5, (warp << 5) + 32);
    r.retired.push({ warp, site, clocks });
  }

  /** A cta_sync every thread reached: retired records claim nothing any more. */
  onBarrier(): void {
    for (const r of this.#records) if (r.retired.length > 0) this.#drop(r);
  }

  #drop(r: ReadRecord): void {
    const claims = this.#claims;
    for (const c of r.chunks) {
      claims[c >> 4]!--;
      this.#unclaim(c >> 4, r);
    }
    this.#records.delete(r);
  }

  /** Take `r` off the claimers of chunk index `c`. */
  #unclaim(c: number, r: ReadRecord): void {
    const list = this.#claimers![c]!;
    const j = list.indexOf(r);
    list[j] = list[list.length - 1]!;
    list.pop();
  }

  /** Is a retirement of `r` ordered before thread `t`'s current point? */
  #ordered(m: SimContext, r: ReadRecord, t: number): boolean {
    if (r.retired.length === 0) return false;
    if (!m.opts.track) return true;
    const clocks = m.clocks;
    for (const x of r.retired) {
      if (x.warp === t >> 5) return true;
      const base = x.warp << 5;
      for (let l = 0; l < 32; l++) if (clocks.ordered(base + l, x.clocks[l]!, t)) return true;
    }
    return false;
  }

  /**
   * A write of shared bytes (the access `acc`: `n` bytes at absolute byte `addr` of `buf` by
   * `thread` at `site`, `verb`): TX6024 when a wgmma reading them has no retirement ordered
   * before the write.
   */
  checkWrite(acc: SharedAccess): void {
    const { m, buf, addr: a, n, thread: t, site, verb } = acc;
    const base = buf.base;
    const claims = this.#claims;
    const c0 = a >> 4;
    const c1 = (a + n - 1) >> 4;
    // The claimed chunks of the range, ascending: a record's chunk is claimed (counted in
    // `claims` while the record is kept), and the loop below only takes chunks away.
    let k = 0;
    for (let c = c0; c <= c1; c++) {
      if (claims[c]! > 0) {
        if (k === this.#claimed.length) {
          const more = new Int32Array(2 * k);
          more.set(this.#claimed);
          this.#claimed = more;
        }
        this.#claimed[k++] = c;
      }
    }
    if (k === 0) return;
    const cs = this.#claimed;
    // The records kept with a chunk in the range, each with its first one there (the range's
    // claimed chunks ascending), in the order of the set of records (the order they were made):
    // the records the loop over the set would stop at, and what it would find in each. Only the
    // record at hand loses chunks in the loop, so the others' first chunks stay.
    const stamp = ++this.#writes;
    const hits = this.#hits;
    hits.length = 0;
    for (let i = 0; i < k; i++) {
      for (const r of this.#claimers?.[cs[i]!] ?? []) {
        if (r.seen === stamp) continue;
        r.seen = stamp;
        r.hit = cs[i]! << 4;
        // A record no longer in the set (ended, or dropped at a barrier) claims nothing.
        if (this.#records.has(r)) hits.push(r);
      }
    }
    if (hits.length > 1) hits.sort((x, y) => x.seq - y.seq);
    for (const r of hits) {
      const hit = r.hit;
      if (this.#ordered(m, r, t)) {
        // Whole chunks this write covers are its own from now on.
        for (let i = 0; i < k; i++) {
          const at = cs[i]! << 4;
          if (at >= a && at + 16 <= a + n && r.chunks.delete(at)) {
            claims[cs[i]!]!--;
            this.#unclaim(cs[i]!, r);
          }
        }
        if (r.chunks.size === 0) this.#records.delete(r);
        continue;
      }
      const b = Math.max(a, hit);
      const who = `thread ${m.thread(t)} of CTA ${m.cta()}`;
      const what = `shared ${bufferName(buf)} byte ${m.ctaLocal(b) - base}`;
      const wg = `warpgroup ${r.group} (warps ${4 * r.group}..${4 * r.group + 3})`;
      const notes = [{ message: "the wgmma is issued here", span: m.sites[r.site] }];
      if (r.retired.length === 0) {
        m.hazard(
          "TX6024",
          `${who} ${verb} ${what}, which a wgmma.mma_async of ${wg} still reads: no wgmma.wait_group has retired it yet (wait with T.ptx.wgmma.wait_group before the operand's bytes are handed over)`,
          site,
          notes,
        );
        return;
      }
      const x = r.retired[0]!;
      m.hazard(
        "TX6024",
        `${who} ${verb} ${what}, which a wgmma.mma_async of ${wg} still reads: the wgmma.wait_group that retires it (warp ${x.warp}) is not ordered before this write; the synchronization that hands the bytes over (an mbarrier arrive, a barrier) must come after the wait_group`,
        site,
        [
          ...notes,
          { message: "the wgmma.wait_group that retires it is here", span: m.sites[x.site] },
        ],
      );
      return;
    }
  }
}
