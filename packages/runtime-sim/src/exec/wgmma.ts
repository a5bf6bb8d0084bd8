import type { Access, SharedAccess, SimContext, WgmmaPort } from "./context.js";
import type { Placed } from "./memory.js";
import { WarpgroupAligned } from "./warpgroup-aligned.js";
import { WgmmaReads } from "./wgmma-reads.js";

/** One issued wgmma.mma_async of one warp, until a wgmma.wait_group retires it. */
interface Pending {
  readonly site: number;
  readonly warp: number;
  /** Per lane: the accumulator's first byte, relative to the thread's local memory. */
  readonly accStart: Int32Array;
  readonly accBytes: number;
  /** The accumulator buffer: its name and first byte (relative to local memory), for messages. */
  readonly accName: string;
  readonly accBase: number;
  /** Per lane: the first byte of A's register fragment (A from registers), or -1. */
  readonly aStart: Int32Array;
  /** Bytes of A's fragment per lane (16: 8 16-bit elements), 0 when A comes from shared. */
  readonly aBytes: number;
  /** The A fragment's buffer (A from registers): its name and first byte, for messages. */
  readonly aName: string;
  readonly aBase: number;
  /**
   * Shared 16-byte chunks (absolute byte offsets) the instruction reads, in the order it reaches
   * them; one may come more than once (WgmmaReads.issue keeps the first).
   */
  readonly chunks: Int32Array;
}

/**
 * A Pending with the record of its warpgroup's shared reads, and the local bytes [lo, hi)
 * (relative to a thread's local memory, over the warp's lanes) of its accumulators and A fragment.
 */
type Issued = Pending & {
  readonly rec: ReturnType<WgmmaReads["issue"]>;
  readonly lo: number;
  readonly hi: number;
};

/** The local bytes [lo, hi) of `p`'s accumulators and A fragment over its lanes (see Issued). */
function spanOf(p: Pending): { lo: number; hi: number } {
  let lo = Infinity;
  let hi = -Infinity;
  for (let l = 0; l < 32; l++) {
    const a = p.accStart[l]!;
    lo = Math.min(lo, a);
    hi = Math.max(hi, a + p.accBytes);
    if (p.aBytes > 0) {
      const s0 = p.aStart[l]!;
      lo = Math.min(lo, s0);
      hi = Math.max(hi, s0 + p.aBytes);
    }
  }
  return { lo, hi };
}

/**
 * The wgmma unit of a CTA (PTX ISA, wgmma.mma_async / commit_group / wait_group). The simulator
 * does a wgmma's math when it is issued, but until a `wgmma.wait_group` retires it the hardware
 * may still read its shared operands and write its accumulators, so:
 * - any other access to those accumulator registers by the thread is TX6023, and so is a write
 *   of A's registers (A from registers: the instruction may still read them);
 * - any write to those shared bytes (a store, an async copy) is TX6024.
 * Groups are per warp: the 4 warps of a warpgroup run the same commit/wait sequence
 * (`.sync.aligned`), and each warp's part of the instruction (its 16 rows of D) is kept apart.
 * A wgmma-group belongs to the warpgroup (PTX ISA, wgmma.commit_group: "a new wgmma-group per
 * warpgroup"), so a warp's wait_group completes only once every warp of its warpgroup has
 * issued and committed its part of the groups it retires (siblingsCommitted): with warps as
 * coroutines the waiting warp yields until then (compile/blocking.ts), as the GPU's wait blocks
 * until the warpgroup's MMAs have run. Its shared operands are then complete for the whole
 * warpgroup (WgmmaReads); each warp's registers still wait for its own wait_group.
 *
 * wgmma.fence (PTX ISA, wgmma.fence): a warp's wgmma.mma_async needs a fence of the warp before
 * it, and none of its accumulator (or A) registers written by other instructions since that
 * fence (TX6027). Local writes through ordinary stores are marked per byte from a warp's fence
 * on; a wgmma's own accumulator writes are not marks. Each write is reported once per CTA
 * (the wgmmas after it in an unrolled k loop add nothing). Reports name registers as the author
 * indexes their buffer (`acc[16]`), whatever the wgmma's accumulator offset.
 */
export class WgmmaUnit implements WgmmaPort {
  /** The warpgroups' wgmma sequences (the .sync.aligned rule, TX6011). */
  readonly aligned = new WarpgroupAligned();
  /** Issued, not yet retired wgmmas in the CTA (fast check for the load/store hooks). */
  live = 0;
  /** The shared reads of issued wgmmas, until a retirement is ordered before a write (TX6024). */
  readonly reads: WgmmaReads;
  #uncommitted: Issued[][] = [];
  #groups: Issued[][][] = [];
  /**
   * Per warp: the local bytes [lo, hi) that its wgmmas not retired cover (the union of their
   * Issued spans; lo = Infinity when none), so that checkLocal passes an access outside them
   * without looking at each wgmma.
   */
  #lo: number[] = [];
  #hi: number[] = [];

  /** Per warp: its wgmma.commit_group count (in this CTA). */
  #commits: number[] = [];
  /** A warp that waited in wgmma.wait_group for its warpgroup in the last round (-1: none). */
  blockedWarp = -1;
  /** That wait's site and its `keep`. */
  #blockedSite = -1;
  #blockedKeep = 0;

  /** Per warp: whether it executed a wgmma.fence (in this CTA). */
  #fenced: boolean[] = [];
  /** Per thread-local byte: written by an ordinary store since the thread's warp's last fence. */
  dirty: Uint8Array | undefined;
  /** Per thread-local byte: the site of that write. */
  #dirtySite: Int32Array | undefined;
  /**
   * Per warp: 1 when a byte of its threads' local memory is marked in `dirty` (a write since
   * its fence), else 0, so that a wgmma of a warp with none skips the byte scan.
   */
  #dirtyWarp: Uint8Array | undefined;
  /** Local bytes of one warp's threads (32 · the thread stride). */
  #warpBytes = 1;
  /** Write sites already reported by TX6027 in this CTA (one report per write). */
  #reportedWrites = new Set<number>();

  constructor(sharedBytes: number) {
    this.reads = new WgmmaReads(sharedBytes);
  }

  /** Records of shared reads that a write may conflict with (fast check for the store hooks). */
  get tracked(): number {
    return this.reads.tracked;
  }

  /** A fresh CTA: nothing pending, no warp fenced (lists already empty are kept). */
  reset(): void {
    this.reads.reset();
    this.live = 0;
    if (this.#uncommitted.length > 0) this.#uncommitted = [];
    if (this.#groups.length > 0) this.#groups = [];
    if (this.#commits.length > 0) this.#commits = [];
    this.blockedWarp = -1;
    if (this.#lo.length > 0) {
      this.#lo = [];
      this.#hi = [];
    }
    if (this.#fenced.length > 0) this.#fenced = [];
    // Only warps with a mark have marked bytes.
    const dw = this.#dirtyWarp;
    if (dw) {
      for (let w = 0; w < dw.length; w++) {
        if (dw[w] === 0) continue;
        this.dirty!.fill(0, w * this.#warpBytes, (w + 1) * this.#warpBytes);
        dw[w] = 0;
      }
    }
    this.aligned.reset();
    // Set.prototype.clear allocates a new table even for an empty set.
    if (this.#reportedWrites.size > 0) this.#reportedWrites.clear();
  }

  /** wgmma.fence by `warp` (threads of `stride` local bytes each): its writes so far are ordered. */
  fence(warp: number, threads: number, stride: number): void {
    this.#fenced[warp] = true;
    if (!this.dirty) {
      this.dirty = new Uint8Array(threads * stride);
      this.#dirtySite = new Int32Array(threads * stride);
      this.#dirtyWarp = new Uint8Array(Math.ceil(threads / 32));
      this.#warpBytes = 32 * stride;
    } else if (this.#dirtyWarp![warp] !== 0) {
      // A warp with no mark since its last fence (or the CTA's start) has none to clear.
      this.dirty.fill(0, warp * 32 * stride, (warp + 1) * 32 * stride);
      this.#dirtyWarp![warp] = 0;
    }
  }

  /** An ordinary write of thread-local bytes [a, a + n) (absolute in local memory) at `site`. */
  noteLocalWrite(a: number, n: number, site: number): void {
    const dirty = this.dirty!;
    const dirtySite = this.#dirtySite!;
    // A register write is a few bytes: a plain loop costs less than two fill calls.
    for (let b = a; b < a + n; b++) {
      dirty[b] = 1;
      dirtySite[b] = site;
    }
    // One thread's bytes: within one warp's.
    this.#dirtyWarp![Math.floor(a / this.#warpBytes)] = 1;
  }

  /**
   * Before a wgmma.mma_async of `warp`: TX6027 when the warp has no fence, or a lane's registers
   * [start, start + bytes) (absolute local bytes, per lane; `what` names them) were written since.
   * @returns whether the wgmma may go on.
   */
  checkFence(
    m: SimContext,
    warp: number,
    ranges: readonly {
      start: Int32Array;
      bytes: number;
      what: string;
      /** The registers' buffer: its name, first byte (relative to local memory), element bytes. */
      name: string;
      base: number;
      elem: number;
    }[],
    site: number,
  ): boolean {
    if (!this.#fenced[warp]) {
      m.hazard(
        "TX6027",
        `wgmma.mma_async in warp ${warp} of CTA ${m.cta()} with no wgmma.fence before it; the warpgroup's first wgmma.mma_async needs T.ptx.wgmma.fence() (PTX ISA, wgmma.fence)`,
        site,
      );
      return false;
    }
    // The ranges are the warp's threads' registers: nothing marked there since the fence.
    if (this.#dirtyWarp![warp] === 0) return true;
    const dirty = this.dirty!;
    for (const { start, bytes, what, name, base, elem } of ranges) {
      for (let l = 0; l < 32; l++) {
        const s0 = start[l]!;
        if (s0 < 0) continue;
        for (let b = s0; b < s0 + bytes; b++) {
          if (dirty[b] === 0) continue;
          // One report per write: later wgmmas of the same unfenced registers add nothing.
          const at = this.#dirtySite![b]!;
          if (this.#reportedWrites.has(at)) continue;
          this.#reportedWrites.add(at);
          const t = (warp << 5) + l;
          const e = Math.floor((b - t * m.localStride - base) / elem);
          m.hazard(
            "TX6027",
            `wgmma.mma_async in warp ${warp} of CTA ${m.cta()}: thread ${m.thread(t)} wrote ${name}[${e}] (${what}) after the warp's last wgmma.fence; a wgmma.fence must come between other writes of these registers and the wgmma.mma_async (PTX ISA, wgmma.fence)`,
            site,
            [{ message: "the register is written here", span: m.sites[at] }],
          );
          return false;
        }
      }
    }
    return true;
  }

  /** Record an issued wgmma of `warp`. */
  issue(p: Pending): void {
    const rec = this.reads.issue(p.warp, p.site, p.chunks);
    const { lo, hi } = spanOf(p);
    // Field by field (no spread): one shape for every Issued.
    (this.#uncommitted[p.warp] ??= []).push({
      site: p.site,
      warp: p.warp,
      accStart: p.accStart,
      accBytes: p.accBytes,
      accName: p.accName,
      accBase: p.accBase,
      aStart: p.aStart,
      aBytes: p.aBytes,
      aName: p.aName,
      aBase: p.aBase,
      chunks: p.chunks,
      rec,
      lo,
      hi,
    });
    this.#lo[p.warp] = Math.min(this.#lo[p.warp] ?? Infinity, lo);
    this.#hi[p.warp] = Math.max(this.#hi[p.warp] ?? -Infinity, hi);
    this.live++;
  }

  /** wgmma.commit_group by `warp`: its uncommitted wgmmas become one group (possibly empty). */
  commit(warp: number): void {
    (this.#groups[warp] ??= []).push(this.#uncommitted[warp] ?? []);
    this.#uncommitted[warp] = [];
    this.#commits[warp] = (this.#commits[warp] ?? 0) + 1;
  }

  /**
   * Whether wgmma.wait_group `keep` by `warp` can complete: every other warp of its warpgroup
   * (warps 4⌊warp/4⌋ … + 3 of the CTA's `warps`) has committed the groups it retires, all but
   * its `keep` most recent.
   */
  siblingsCommitted(warp: number, keep: number, warps: number): boolean {
    const need = (this.#commits[warp] ?? 0) - keep;
    // A warpgroup already reported for breaking .sync.aligned is not waited for.
    if (need <= 0 || this.aligned.isBroken(warp)) return true;
    const first = warp & ~3;
    for (let w = first; w < Math.min(first + 4, warps); w++) {
      if ((this.#commits[w] ?? 0) < need) return false;
    }
    return true;
  }

  /**
   * TX6011 when a warp waited in wgmma.wait_group for the other warps of its warpgroup in the
   * last round and every thread is blocked (a warp of the warpgroup never commits the group:
   * the instructions are `.sync.aligned`); true if it reported.
   */
  reportDeadlock(m: SimContext): boolean {
    const w = this.blockedWarp;
    if (w < 0) return false;
    const warps = Math.ceil(m.threads / 32);
    const keep = this.#blockedKeep;
    const need = (this.#commits[w] ?? 0) - keep;
    const first = w & ~3;
    const behind: number[] = [];
    for (let x = first; x < Math.min(first + 4, warps); x++) {
      if ((this.#commits[x] ?? 0) < need) behind.push(x);
    }
    m.hazard(
      "TX6011",
      `wgmma.wait_group ${keep} in warp ${w} of CTA ${m.cta()} waits forever: it retires its wgmma-group ${need}, which belongs to the whole warpgroup, but warp${behind.length > 1 ? "s" : ""} ${behind.join(", ")} of the warpgroup never commit${behind.length > 1 ? "" : "s"} it and every thread is blocked; .sync.aligned needs every thread of the warpgroup to execute the same wgmma sequence (PTX ISA, wgmma.commit_group)`,
      this.#blockedSite,
    );
    m.bars.deadlocked = true;
    return true;
  }

  /** Warp `warp` waits at `site` in wgmma.wait_group `keep` in this round. */
  blocked(warp: number, keep: number, site: number): void {
    this.blockedWarp = warp;
    this.#blockedKeep = keep;
    this.#blockedSite = site;
  }

  /** wgmma.wait_group `keep` by `warp` at `site`: retire all but its `keep` most recent groups. */
  wait(m: SimContext, warp: number, keep: number, site: number): void {
    const gs = this.#groups[warp];
    if (!gs || gs.length <= keep) return;
    while (gs.length > keep) {
      for (const p of gs.shift()!) {
        this.reads.retire(m, p.rec, warp, site);
        this.live--;
      }
    }
    // The span of what is left.
    let lo = Infinity;
    let hi = -Infinity;
    for (const p of this.#uncommitted[warp] ?? []) {
      lo = Math.min(lo, p.lo);
      hi = Math.max(hi, p.hi);
    }
    for (const g of gs) {
      for (const p of g) {
        lo = Math.min(lo, p.lo);
        hi = Math.max(hi, p.hi);
      }
    }
    this.#lo[warp] = lo;
    this.#hi[warp] = hi;
  }

  /**
   * An ordinary access `acc` (`verb`) by a thread to its local bytes [addr, addr + n) (`addr`
   * relative to the thread's local memory): TX6023 when they are the accumulators (or, written,
   * the A fragment) of a wgmma of its warp that is not retired.
   */
  checkLocal(acc: Access<Placed>): void {
    const warp = acc.thread >> 5;
    // Bytes outside every not retired wgmma's registers of the warp: none can report them.
    const lo = this.#lo[warp] ?? Infinity;
    if (acc.addr + acc.n <= lo || acc.addr >= this.#hi[warp]!) return;
    // The warp's wgmmas not retired, uncommitted first, then by group: issue and commit keep
    // each warp's own at its index, so no other warp's need be looked at.
    const own = this.#uncommitted[warp];
    if (own) for (const p of own) if (this.#reportLocal(acc, p)) return;
    const groups = this.#groups[warp];
    if (groups) for (const g of groups) for (const p of g) if (this.#reportLocal(acc, p)) return;
  }

  /** checkLocal's TX6023 for the not retired wgmma `p` of the accessing thread's warp: reported? */
  #reportLocal(acc: Access<Placed>, p: Issued): boolean {
    const { m, thread: t, addr: rel, n, site, verb } = acc;
    const lane = t & 31;
    const s0 = p.aStart[lane]!;
    if (verb === "writes" && p.aBytes > 0 && rel < s0 + p.aBytes && s0 < rel + n) {
      m.hazard(
        "TX6023",
        `thread ${m.thread(t)} of CTA ${m.cta()} writes ${p.aName}[${Math.floor((rel - p.aBase) / 2)}], in the A fragment of a wgmma.mma_async that no wgmma.wait_group has retired; the tensor cores may still read it`,
        site,
        [{ message: "the wgmma is issued here", span: m.sites[p.site] }],
      );
      return true;
    }
    const a = p.accStart[lane]!;
    if (rel < a + p.accBytes && a < rel + n) {
      m.hazard(
        "TX6023",
        `thread ${m.thread(t)} of CTA ${m.cta()} ${verb} ${p.accName}[${Math.floor((rel - p.accBase) / 4)}], an accumulator of a wgmma.mma_async that no wgmma.wait_group has retired; the tensor cores may still write it (wait with T.ptx.wgmma.wait_group first)`,
        site,
        [{ message: "the wgmma is issued here", span: m.sites[p.site] }],
      );
      return true;
    }
    return false;
  }

  /** A write of shared bytes (the access `acc`): see WgmmaReads.checkWrite (TX6024). */
  checkWrite(acc: SharedAccess): void {
    this.reads.checkWrite(acc);
  }
}
