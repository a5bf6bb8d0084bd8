import type { Span } from "@tirx-ts/core";

/** Bytes of one side of a lane's move: a shared or global buffer range, or fragment registers. */
export interface MovePiece {
  readonly space: "shared" | "global" | "register";
  /** The buffer (for registers: the fragment array and register, e.g. `a r2`). */
  readonly name: string;
  /** Byte offset in the buffer (physical, after any swizzle); register pieces: 0. */
  readonly byte: number;
  readonly bytes: number;
  /** Shared pieces: the shared-window address (what selects the bank). */
  readonly addr?: number;
}

/** One lane's part of one warp instruction: it moves `src` to `dst`. */
export interface LaneMove {
  readonly warp: number;
  readonly lane: number;
  readonly dst: MovePiece;
  readonly src: MovePiece;
  /** Set by the log: the move's shared bytes hit a bank that its phase asks for more than once. */
  conflict?: boolean;
}

/**
 * Shared-memory traffic of one access site (a `tile.apply` or an ldmatrix/stmatrix) over a
 * launch: warp instructions, and the wavefronts their shared accesses needed under the bank
 * model below against one wavefront per phase without conflicts; `first` holds every lane's
 * move of the site's first execution in CTA (0, 0, 0), for pictures.
 */
export interface SiteAccesses {
  readonly site: number;
  readonly span?: Span;
  readonly op: string;
  warpInstructions: number;
  phases: number;
  wavefronts: number;
  readonly first: LaneMove[];
}

/**
 * Wavefronts of one phase of shared accesses (32 banks of 4 bytes; PTX/CUDA shared memory
 * model): each bank serves one distinct 4-byte word per wavefront, and lanes reading the same
 * word share it (broadcast). Returns max over banks of the distinct words asked of it (≥ 1).
 */
export function phaseWavefronts(pieces: readonly { addr: number; bytes: number }[]): number {
  return Math.max(1, ...[...bankWords(pieces).values()].map((s) => s.size));
}

/** Bank → distinct 4-byte words asked of it by `pieces`. */
function bankWords(pieces: readonly { addr: number; bytes: number }[]): Map<number, Set<number>> {
  const words = new Map<number, Set<number>>();
  for (const p of pieces) {
    for (let w = Math.floor(p.addr / 4); w < Math.ceil((p.addr + p.bytes) / 4); w++) {
      const bank = w % 32;
      let s = words.get(bank);
      if (!s) words.set(bank, (s = new Set()));
      s.add(w);
    }
  }
  return words;
}

/** The banks of `p`. */
const banksOf = (p: { addr: number; bytes: number }): number[] => {
  const out: number[] = [];
  for (let w = Math.floor(p.addr / 4); w < Math.ceil((p.addr + p.bytes) / 4); w++) out.push(w % 32);
  return out;
};

/**
 * Lanes per phase of a warp's shared access of `bytes` per lane: a phase moves at most 128
 * bytes (32 lanes × 4 B, 16 × 8 B, 8 × 16 B; ldmatrix/stmatrix: one 8 × 16 B matrix).
 */
export const lanesPerPhase = (bytes: number): number => Math.max(1, Math.min(32, 128 / bytes));

/** The shared accesses of a launch, per access site (SimOptions.accesses). */
export class AccessLog {
  readonly sites = new Map<number, SiteAccesses>();
  private readonly frozen = new Set<number>();

  /** Start an execution of `site`: its first execution in CTA 0 is kept once it has moves. */
  enter(site: number): void {
    const s = this.sites.get(site);
    if (s && s.first.length > 0) this.frozen.add(site);
  }

  /**
   * One warp instruction of `site`: `moves` of the warp's lanes (in lane order), the shared
   * side being `side`; phases of `lanesPerPhase` consecutive moves. `firstCta` keeps the moves.
   */
  record(
    site: number,
    span: Span | undefined,
    op: string,
    moves: readonly LaneMove[],
    side: "dst" | "src",
    phaseLanes: number,
    firstCta: boolean,
  ): void {
    let s = this.sites.get(site);
    if (!s) {
      s = {
        site,
        ...(span ? { span } : {}),
        op,
        warpInstructions: 0,
        phases: 0,
        wavefronts: 0,
        first: [],
      };
      this.sites.set(site, s);
    }
    s.warpInstructions++;
    for (let i = 0; i < moves.length; i += phaseLanes) {
      const group = moves.slice(i, i + phaseLanes);
      const phase = group.map((mv) => {
        const p = mv[side];
        return { addr: p.addr ?? p.byte, bytes: p.bytes };
      });
      const words = bankWords(phase);
      let most = 1;
      for (const w of words.values()) most = Math.max(most, w.size);
      s.phases++;
      s.wavefronts += most;
      if (most > 1) {
        group.forEach((mv, j) => {
          if (banksOf(phase[j]!).some((b) => words.get(b)!.size > 1)) mv.conflict = true;
        });
      }
    }
    if (firstCta && !this.frozen.has(site)) s.first.push(...moves);
  }
}
