import type { Buffer, View } from "./buffer.js";
import type { Expr } from "./expr.js";
import type { TensorMap } from "./tensor-map.js";

/**
 * Verified tile plans: the normalised form the verifier gives each `tile.apply` (contracts in
 * `patterns/`), which the `lower-tile` pass moves into a `TileOp` node and the code generator and
 * the simulated device consume alike. Plain data, discriminated by `kind`.
 */

/** One operand of a tile pattern, in bytes: origin plus strides of the group and repeat axes. */
export interface AtomSide {
  readonly view: View;
  readonly buffer: Buffer;
  /** Byte offset of the view's origin from the buffer's start (int32). */
  readonly baseBytes: Expr;
  /** Byte strides of the (warp, lane) group axes; empty at thread scope. */
  readonly groupStridesBytes: readonly number[];
  /** Byte strides of the repeat axes (row-major repeat order). */
  readonly repeatStridesBytes: readonly number[];
}

/** Parsed `cp.async.{ca|cg}.shared{::cta}.global{.L2::cache_hint}{.L2::64B|128B|256B}`. */
export interface CpAsyncOpcode {
  readonly cache: "ca" | "cg";
  readonly dstSpace: "shared" | "shared::cta";
  readonly cacheHint: boolean;
  readonly prefetch?: 64 | 128 | 256;
  /** The L2 qualifiers in the author's order (either order is legal PTX). */
  readonly qualifiers: readonly string[];
}

/**
 * The verified, normalised form of one cp.async `tile.apply`, consumed alike by the PTX
 * emitter and the simulated device. Atom address for the thread with linear index L and
 * repeat index r: `base + (L / 32) * group[0] + (L % 32) * group[1] + Σ r_k * repeat[k]` bytes.
 */
export interface CpAsyncPlan {
  readonly kind: "cp.async";
  readonly opcode: CpAsyncOpcode;
  readonly chunkBytes: 4 | 8 | 16;
  readonly scope: "thread" | "cta";
  readonly repeatShape: readonly number[];
  readonly dst: AtomSide;
  readonly src: AtomSide;
  /** uint32 byte count in 0..chunkBytes: copy the prefix, zero-fill the rest. */
  readonly srcSize?: Expr;
  /** bool: true zero-fills the whole chunk. */
  readonly ignoreSrc?: Expr;
  /** uint64 L2 cache policy (with `.L2::cache_hint`). */
  readonly cachePolicy?: Expr;
  /** bool guard: false issues nothing and does no group accounting. */
  readonly pred?: Expr;
  /** Lowest PTX ISA version with every feature used: 7.0, 7.4 (L2 qualifiers), 7.5 (ignore-src). */
  readonly ptxVersion: readonly [number, number];
}

/** Parsed cp.async.bulk opcode: the two directions this toolchain supports. */
export interface BulkOpcode {
  /** "g2s": global → shared::cta, completes on an mbarrier; "s2g": shared::cta → global, bulk async-group. */
  readonly direction: "g2s" | "s2g";
  /** Destination spelling for g2s: `.shared::cta` (PTX 8.6) or `.shared::cluster` (PTX 8.0). */
  readonly dstSpace: "shared::cta" | "shared::cluster" | "global";
  readonly cacheHint: boolean;
  /**
   * The `cp.reduce.async.bulk` form (s2g only): the destination's elements become
   * `dst redOp src` instead of `src` (PTX ISA, "cp.reduce.async.bulk"). Absent for a copy.
   */
  readonly reduce?: BulkReduce;
}

/** The reduction operators of `cp.reduce.async.bulk` (PTX ISA, "cp.reduce.async.bulk": .redOp). */
export type BulkRedOp = "and" | "or" | "xor" | "add" | "inc" | "dec" | "min" | "max";

/** The element types of `cp.reduce.async.bulk` to global memory (PTX ISA: .type). */
export type BulkRedType =
  "b32" | "b64" | "u32" | "s32" | "u64" | "s64" | "f16" | "bf16" | "f32" | "f64";

/**
 * A bulk reduction's operator and element type, as the opcode spells them:
 * `.redOp{.noftz}.type` (`.noftz` is spelled exactly for `.add` on `.f16`/`.bf16`).
 */
export interface BulkReduce {
  readonly op: BulkRedOp;
  readonly type: BulkRedType;
  readonly noftz: boolean;
}

/**
 * The verified form of one cp.async.bulk `tile.apply`: one bulk copy of `chunkBytes` per repeat
 * index, issued by every thread that executes it (guard it with an `if` to elect one thread).
 * Address of repeat r: `base + Σ r_k * repeat[k]` bytes on each side.
 */
export interface BulkCopyPlan {
  readonly kind: "cp.async.bulk";
  readonly opcode: BulkOpcode;
  readonly chunkBytes: number;
  readonly repeatShape: readonly number[];
  readonly dst: AtomSide;
  readonly src: AtomSide;
  /** Shared address of the mbarrier the g2s copy completes on (BufferPtr, uint32). */
  readonly mbar?: Expr;
  readonly cachePolicy?: Expr;
  readonly pred?: Expr;
  /** Bytes all repeats of one execution complete (chunkBytes × repeat count). */
  readonly totalBytes: number;
  readonly ptxVersion: readonly [number, number];
}

/** A parsed TMA opcode (PTX ISA, "cp.async.bulk.tensor", "cp.async.bulk.prefetch.tensor"). */
export interface TmaOpcode {
  /**
   * "g2s": global → shared, completes on an mbarrier; "s2g": shared::cta → global, bulk
   * async-group; "prefetch": global → L2 only; "descriptor": `prefetch.tensormap`, the map
   * itself into the cache (no coordinates).
   */
  readonly direction: "g2s" | "s2g" | "prefetch" | "descriptor";
  /** Tensor rank, 1..5 (the `.Nd` token); 0 for `prefetch.tensormap` (the map's own rank). */
  readonly rank: number;
  /** Destination state space: `shared::cluster` (PTX 8.0) or `shared::cta` (8.6) for loads. */
  readonly dstSpace: "shared::cluster" | "shared::cta" | "global" | "L2" | "tensormap";
  /** `.multicast::cluster`: the box lands in every CTA of the cluster named by `cta_mask`. */
  readonly multicast: boolean;
  readonly cacheHint: boolean;
}

/**
 * The verified form of one TMA `tile.apply`: every thread that executes it issues one tensor copy
 * of the box at `coords` (guard it with an `if` to elect one thread).
 */
export interface TmaPlan {
  readonly kind: "cp.async.bulk.tensor";
  readonly opcode: TmaOpcode;
  readonly map: TensorMap;
  /** Box origin per tensor axis (outermost first), int32 elements; may lie outside the tensor. */
  readonly coords: readonly Expr[];
  /** The shared tile (loads) or the whole global tensor (stores, prefetches). */
  readonly dst: AtomSide;
  /** The whole global tensor (loads, prefetches) or the shared tile (stores). */
  readonly src: AtomSide;
  readonly mbar?: Expr;
  /** uint16 mask of destination CTA ranks in the cluster (multicast). */
  readonly ctaMask?: Expr;
  readonly cachePolicy?: Expr;
  readonly pred?: Expr;
  /** Bytes of the shared tile, out-of-bounds fill included: what complete_tx counts per CTA. */
  readonly boxBytes: number;
  readonly ptxVersion: readonly [number, number];
}

/** The verified plan of every `tile.apply` of a function, by statement. */
export type TilePlan = CpAsyncPlan | BulkCopyPlan | TmaPlan;

/** The kind of a tile plan: what each backend keys its emitter or compiler by. */
export type TilePlanKind = TilePlan["kind"];

/** The plan of kind `K`. */
export type TilePlanOf<K extends TilePlanKind> = Extract<TilePlan, { readonly kind: K }>;

/** The fields of plan `P` that hold runtime expressions: one expression (maybe absent) or a list. */
export type TilePlanExprField<P> = {
  [F in keyof P]-?: NonNullable<P[F]> extends Expr | readonly Expr[] ? F : never;
}[keyof P];

/**
 * What each kind of plan declares about itself, for every stage to read instead of testing
 * kinds: the one list of its runtime expressions, how a printed kernel shows it, the mbarrier
 * transaction bytes it completes and the tensor map it reads.
 */
export interface TilePlanRecord<P extends TilePlan> {
  /**
   * The plan's runtime expressions besides its two sides (whose view offset and byte base come
   * first), in evaluation order: the one list that `planExprs` (visit.ts: what the verifier, the
   * code generator and the simulator evaluate) and `mapPlan` (transform/map.ts: what passes
   * rewrite) read. A name that is no expression field does not compile, nor does an expression
   * field left out (`UnlistedExprField`).
   */
  readonly exprs: readonly TilePlanExprField<P>[];
  /** The plan as a printed kernel's comment shows it after its kind, e.g. `box 4096 bytes`. */
  show(p: P): string;
  /**
   * The mbarrier whose transaction count one execution completes (PTX ISA, "mbarrier":
   * complete_tx), with the bytes when they are static and this CTA's alone (`undefined` under a
   * predicate or for a multicast); `undefined` for a plan that completes none.
   */
  completeTx(p: P): { readonly mbar: Expr; readonly bytes: number | undefined } | undefined;
  /**
   * The tensor map the plan reads (a `.param` of the kernel: PTX ISA "Tensor-map"), or
   * `undefined`.
   */
  tensorMap(p: P): TensorMap | undefined;
}

const showChunks = (p: CpAsyncPlan | BulkCopyPlan): string =>
  `chunk ${p.chunkBytes} bytes, repeat [${p.repeatShape.join(", ")}]`;

/**
 * The record of each plan kind: a kind without one does not compile (`satisfies`). Sources: PTX
 * ISA "cp.async" (no mbarrier), "cp.async.bulk" (complete_tx of every repeat's bytes),
 * "cp.async.bulk.tensor" (the box, out-of-bounds fill included, on each destination CTA).
 */
export const TILE_PLANS = {
  "cp.async": {
    exprs: ["srcSize", "ignoreSrc", "cachePolicy", "pred"],
    show: showChunks,
    completeTx: () => undefined,
    tensorMap: () => undefined,
  },
  "cp.async.bulk": {
    exprs: ["mbar", "cachePolicy", "pred"],
    show: showChunks,
    completeTx: (p) =>
      p.mbar ? { mbar: p.mbar, bytes: p.pred ? undefined : p.totalBytes } : undefined,
    tensorMap: () => undefined,
  },
  "cp.async.bulk.tensor": {
    exprs: ["coords", "mbar", "ctaMask", "cachePolicy", "pred"],
    show: (p) => `box ${p.boxBytes} bytes`,
    // A multicast copy also completes bytes on other CTAs' barriers (and theirs on ours).
    completeTx: (p) =>
      p.mbar
        ? { mbar: p.mbar, bytes: p.pred || p.opcode.multicast ? undefined : p.boxBytes }
        : undefined,
    tensorMap: (p) => p.map,
  },
} as const satisfies { readonly [K in TilePlanKind]: TilePlanRecord<TilePlanOf<K>> };

/** Expression fields of a plan that its record's `exprs` leaves out: `never` when none. */
export type UnlistedExprField = {
  [K in TilePlanKind]: Exclude<
    TilePlanExprField<TilePlanOf<K>>,
    (typeof TILE_PLANS)[K]["exprs"][number]
  >;
}[TilePlanKind];

// Fails to compile, naming the field, when a plan has an expression field its list leaves out.
const everyExprFieldListed: [UnlistedExprField] extends [never] ? true : UnlistedExprField = true;
void everyExprFieldListed;

/** The record of `p`'s kind, typed for `p` (TypeScript cannot pair a kind's record with its plan). */
export function tilePlanRecord(p: TilePlan): TilePlanRecord<TilePlan> {
  return TILE_PLANS[p.kind] as unknown as TilePlanRecord<TilePlan>;
}

/**
 * The expression fields of `p` that are present, as `[name, value]` in its record's `exprs`
 * order: a value is one expression or a list of them (TMA coordinates).
 */
export function planExprFields(p: TilePlan): [string, Expr | readonly Expr[]][] {
  const out: [string, Expr | readonly Expr[]][] = [];
  const fields = p as unknown as Readonly<Record<string, Expr | readonly Expr[] | undefined>>;
  for (const f of TILE_PLANS[p.kind].exprs) {
    const v = fields[f];
    if (v !== undefined) out.push([f, v]);
  }
  return out;
}
