import type { SimContext } from "./context.js";

/** One wgmma instruction of a warpgroup's sequence, and the warps that executed it so far. */
interface Round {
  /** The compiled op (one per statement of the IR). */
  readonly op: number;
  readonly site: number;
  readonly surface: string;
  /** Bit q: warp q of the warpgroup executed it. */
  mask: number;
}

/** Warps of a warpgroup (PTX ISA, wgmma: "a warpgroup is a set of four contiguous warps"). */
const WARPS = 4;
const ALL = (1 << WARPS) - 1;

/**
 * The `.sync.aligned` rule of wgmma.fence / mma_async / commit_group / wait_group (PTX ISA,
 * wgmma: "all threads in the warpgroup must execute the same wgmma instruction"; TX7010 is the
 * static form): the 4 warps of a warpgroup (warps 4g..4g+3 of a CTA, whose block is a multiple of
 * 128 threads) must execute one sequence of wgmma instructions. The simulator may run the warps
 * of a warpgroup in different calls and orders (varied schedules run stretches warp by warp,
 * compile/schedule.ts), so each warpgroup keeps a queue of rounds, like an aligned barrier per
 * instruction: warp q's k-th wgmma instruction must be the op of round k, and a round is done
 * when all 4 warps executed it. TX6011 (the warp-collective code, at the warpgroup's scale):
 * - at once, when a warp's k-th instruction is another op than the other warps' k-th;
 * - at a cta_sync (every warp is past its earlier wgmma instructions) or the CTA's end, for the
 *   first round that only some warps executed, naming the warps that did and did not.
 * One report per warpgroup per CTA: a broken warpgroup is not checked further.
 */
export class WarpgroupAligned {
  #ops = 0;
  #rounds: Round[][] = [];
  /** Per warp (of the launch's thread space): its next round, relative to its queue's head. */
  #pos: number[] = [];
  /** Warpgroups already reported in this CTA. */
  #broken = new Set<number>();

  /** A fresh id for a compiled wgmma statement. */
  newOp(): number {
    return this.#ops++;
  }

  /** A fresh CTA: no rounds (collections already empty are kept). */
  reset(): void {
    if (this.#rounds.length > 0) this.#rounds = [];
    if (this.#pos.length > 0) this.#pos = [];
    // Set.prototype.clear allocates a new table even for an empty set.
    if (this.#broken.size > 0) this.#broken.clear();
  }

  /** Whether the warpgroup of `warp` was reported (TX6011) in this CTA. */
  isBroken(warp: number): boolean {
    return this.#broken.has(Math.floor(warp / WARPS));
  }

  /** Stop checking the warpgroup of `warp` in this CTA (it was reported otherwise). */
  breakGroupOf(warp: number): void {
    this.#broken.add(Math.floor(warp / WARPS));
  }

  /**
   * Warp `warp` (an index of the launch's thread space / 32) executes wgmma op `op` at `site`.
   * TX6011 when the other warps of its warpgroup executed another op at this point of their
   * sequences.
   */
  arrive(m: SimContext, warp: number, op: number, site: number, surface: string): void {
    const g = Math.floor(warp / WARPS);
    if (this.#broken.has(g)) return;
    const q = warp % WARPS;
    const rounds = (this.#rounds[g] ??= []);
    const p = this.#pos[warp] ?? 0;
    this.#pos[warp] = p + 1;
    const r = rounds[p];
    if (r === undefined) {
      rounds.push({ op, site, surface, mask: 1 << q });
      return;
    }
    if (r.op !== op) {
      this.#broken.add(g);
      m.hazard(
        "TX6011",
        `${surface} in warp ${warp} of CTA ${m.cta()}: ${this.#group(g)} does not execute one sequence of wgmma instructions; at this point of it ${listWarps(g, r.mask)} executed ${r.surface} instead. .sync.aligned needs all 4 warps of the warpgroup (128 threads) to execute the same instruction`,
        site,
        [{ message: `${listWarps(g, r.mask)} executed ${r.surface} here`, span: m.sites[r.site] }],
      );
      return;
    }
    r.mask |= 1 << q;
    if (p === 0 && r.mask === ALL) {
      // Retire every completed round at the queue's head.
      let k = 0;
      while (k < rounds.length && rounds[k]!.mask === ALL) k++;
      rounds.splice(0, k);
      for (let i = 0; i < WARPS; i++) {
        const w = g * WARPS + i;
        this.#pos[w] = (this.#pos[w] ?? 0) - k;
      }
    }
  }

  /**
   * Every warp is past its earlier wgmma instructions (`where`: a cta_sync, the CTA's end):
   * TX6011 for each warpgroup with a round only some of its warps executed. Then no rounds.
   */
  settle(m: SimContext, where: string): void {
    for (let g = 0; g < this.#rounds.length; g++) {
      const rounds = this.#rounds[g];
      if (!rounds || rounds.length === 0 || this.#broken.has(g)) continue;
      const r = rounds.find((x) => x.mask !== ALL)!;
      m.hazard(
        "TX6011",
        `${r.surface} in CTA ${m.cta()} is executed by ${listWarps(g, r.mask)} of ${this.#group(g)} but not by ${listWarps(g, ALL & ~r.mask)} (${where}); .sync.aligned needs all 4 warps of the warpgroup (128 threads) to execute the same instruction, so the warps that skip it leave the tensor-core operation incomplete`,
        r.site,
      );
      this.#broken.add(g);
    }
    this.#rounds = [];
    this.#pos = [];
  }

  /** "warpgroup g (warps a..b)", in CTA-local warp numbers. */
  #group(g: number): string {
    return `warpgroup ${g} (warps ${g * WARPS}..${g * WARPS + WARPS - 1})`;
  }
}

/** "warps 0, 1" / "warp 3": the warps of warpgroup `g` in `mask`. */
function listWarps(g: number, mask: number): string {
  const ws: number[] = [];
  for (let q = 0; q < WARPS; q++) if (mask & (1 << q)) ws.push(g * WARPS + q);
  return `${ws.length === 1 ? "warp" : "warps"} ${ws.join(", ")}`;
}
