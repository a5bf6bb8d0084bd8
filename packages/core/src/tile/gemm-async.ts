import { dtypeBytes, isFloat8, type DType } from "../dtype.js";
import { binary } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { View } from "../ir/buffer.js";
import type { Stmt } from "../ir/stmt.js";
import { residueMod } from "../analysis/bounds.js";
import { MAX_REGISTER_ARRAY } from "../analysis/register-arrays.js";
import { wgmmaOperandLayout, wgmmaTileLayout } from "../layout/fragments.js";
import { swizzleModeOf } from "../layout/swizzle.js";
import { layoutAxisValues, layoutSize, showTileLayout } from "../layout/tile-layout.js";
import { bufferPtr } from "../layout/view.js";
import { checkOpCall } from "../ops/check.js";
import { opOf } from "../ops/registry.js";
import { operandOffset } from "../ops/wgmma/operand.js";
import { wgmmaName } from "../ops/wgmma/mma-async.js";
import { wgmmaFp8Name, type WgmmaFp8 } from "../ops/wgmma/mma-fp8.js";
import type { TileLayout } from "../ir/tile-layout.js";
import { matrixShape, slotPtr } from "./mma-fragment.js";
import {
  showTile,
  tileDispatchError,
  viewRows,
  type RegisterTile,
  type TileContext,
  type TileLowering,
} from "./operand.js";
import {
  asArg,
  checkLaidOut,
  needRegister,
  valueOp,
  type TileInput,
  type TilePrimitive,
} from "./primitive.js";
import { withArticle } from "../show.js";

/** The largest N of one wgmma.mma_async (PTX ISA, wgmma.mma_async: m64nNk16, N ≤ 256). */
const MAX_N = 256;
/** Descriptor LBO/SBO fields: 14 bits of byte offset >> 4 (PTX ISA, Matrix Descriptor Format). */
const MAX_OFFSET = 0x3fff0;
/** Swizzle names by TMA-numbered mode (`T.swizzle_mode`, the descriptor op's numbering). */
const MODE_NAME = ["no swizzle", "32B swizzle", "64B swizzle", "128B swizzle"] as const;

/** A shared operand's descriptor fields, as derived from its view. */
interface Derived {
  readonly ldo: number;
  readonly sdo: number;
  readonly swizzle: 0 | 1 | 2 | 3;
  /** MN-major (the instruction's trans bit), else K-major. */
  readonly mn: boolean;
  /** Bytes the next k16 step's start lies past this one's (within a column block), for explain. */
  readonly kStep: number;
  /** Whether the operand's shape reads LBO (a K-major swizzled one, or one swizzle row, never does). */
  readonly ldoUsed: boolean;
}

/** A shared operand as the logical matrix the wgmma reads: `rows` along M (A) or N (B) × K. */
interface SharedOperand {
  readonly role: "A" | "B";
  readonly view: View;
  readonly rows: number;
  readonly k: number;
  /** Element offset (from the view's start) of logical element (r, k). */
  readonly off: (r: number, k: number) => number;
  /** The view's column blocks, and which logical dim they split (K, or the rows: M / N). */
  readonly blocks?: { readonly count: number; readonly size: number; readonly stride: number };
  readonly blockDim?: "K" | "M" | "N";
  /** The view is [K, rows] (its contiguous dim M / N): a failure names the MN-major candidate's. */
  readonly mnView: boolean;
}

/** A view read as a matrix [rows, cols]: its row dim and its column dim(s). */
interface ViewMatrix {
  readonly rows: number;
  readonly cols: number;
  readonly rowStride: number;
  /** Element offset (from the view's start) of column c. */
  readonly colOff: (c: number) => number;
  /** The columns as `count` blocks of `size` elements `stride` elements apart (a 3-D view). */
  readonly blocks?: { readonly count: number; readonly size: number; readonly stride: number };
}

/**
 * The view as a matrix: its dims of extent > 1 (one, two or three), as [rows, cols] with the row's
 * element stride and each column's element offset. Three dims are [rows, blocks, size], the
 * columns split in blocks (`s.rearrange("b r c -> r b c")` of a column-blocked buffer [b, r, c],
 * as a TMA load cut at the swizzle span writes it): column c = (⌊c / size⌋, c % size).
 * Undefined for a view of rank > 3 once extent-1 dims are dropped.
 */
function matrixOf(v: View): ViewMatrix | undefined {
  const big = v.shape.flatMap((n, d) => (n === 1 ? [] : [d]));
  if (big.length > 3) return undefined;
  if (big.length === 3) {
    const [r, b, c] = big as [number, number, number];
    const size = v.shape[c]!;
    const sb = v.strides[b]!;
    const sc = v.strides[c]!;
    return {
      rows: v.shape[r]!,
      cols: v.shape[b]! * size,
      rowStride: v.strides[r]!,
      colOff: (k) => Math.floor(k / size) * sb + (k % size) * sc,
      blocks: { count: v.shape[b]!, size, stride: sb },
    };
  }
  const m = viewRows(v);
  return { rows: m.rows, cols: m.cols, rowStride: m.rowStride, colOff: (k) => k * m.colStride };
}

/**
 * The descriptor fields that read the `opRows` × 16 elements of `x` from (r0, k0) on (2-byte
 * elements `eb`, the buffer's swizzle `sw`: one k16 step of one row block) where the view holds
 * them: the PTX ISA's canonical layouts ("Shared Memory Matrix Layout"; `operandOffset`), K-major
 * tried first, then MN-major. LBO and SBO are read off the operand's offsets (SBO: 8 rows apart
 * K-major, 8 k apart MN-major; LBO: 8 k apart without swizzle, one swizzle row of elements apart
 * MN-major swizzled — the stride between W-byte column blocks —, 16 — unused — K-major
 * swizzled), every element is checked, then a swizzled LBO / SBO that is read must be a multiple
 * of the swizzle atom (8 swizzle rows: each block starts at row 0 of an atom, base offset 0).
 * @returns the fields, or one sentence naming the element (of the whole operand) that the
 *   candidate of the view's own major-ness (`x.mnView`) misplaces.
 */
function deriveDescriptor(
  x: SharedOperand,
  opRows: number,
  sw: 0 | 1 | 2 | 3,
  eb: number,
  r0 = 0,
  k0 = 0,
): Derived | string {
  const base = x.off(r0, k0);
  const d0 = (r: number, k: number): number => eb * (x.off(r0 + r, k0 + k) - base);
  const W = 16 << sw;
  const E = W / eb;
  // One k step is 32 bytes of a row: 16 elements of a 2-byte type, 32 of float8; a no-swizzle
  // core matrix is 16 bytes wide (8 or 16 elements).
  const kStep = 32 / eb;
  const kMajor = sw === 0 ? { ldo: d0(0, 16 / eb), sdo: d0(8, 0) } : { ldo: 16, sdo: d0(8, 0) };
  const mnMajor =
    sw === 0
      ? { ldo: d0(0, 8), sdo: d0(8, 0) }
      : { ldo: opRows > E ? d0(E, 0) : 8 * W, sdo: d0(0, 8) };
  // A swizzled K-major operand of 8 rows, or a swizzled MN-major one within a swizzle row, never
  // reads its SBO / LBO: keep the canonical value then.
  if (sw !== 0 && opRows <= 8) kMajor.sdo = 8 * W;
  let why: string | undefined;
  // float8 operands are K-major only (PTX ISA, wgmma.mma_async: imm-trans for .f16/.bf16 alone).
  const candidates =
    eb === 1
      ? ([[false, kMajor]] as const)
      : ([
          [false, kMajor],
          [true, mnMajor],
        ] as const);
  for (const [mn, f] of candidates) {
    const fits = (o: number): boolean => o >= 0 && o <= MAX_OFFSET && o % 16 === 0;
    let bad: string | undefined = !fits(f.ldo)
      ? `LBO ${f.ldo} B`
      : !fits(f.sdo)
        ? `SBO ${f.sdo} B`
        : undefined;
    if (bad)
      bad = `the ${mn ? "MN" : "K"}-major descriptor would need ${bad}, not a multiple of 16 in 0..${MAX_OFFSET}`;
    const desc = { ...f, swizzle: sw };
    for (let r = 0; r < opRows && !bad; r++) {
      for (let k = 0; k < kStep && !bad; k++) {
        const got = operandOffset(desc, mn, r, k, eb);
        const want = d0(r, k);
        if (got !== want) {
          bad = `element (${r0 + r}, ${k0 + k}) of ${x.role} lies ${want} bytes from ${r0 || k0 ? `element (${r0}, ${k0}), the start of its wgmma's operand` : "the operand's start"}, where ${mn ? "an MN" : "a K"}-major ${MODE_NAME[sw]} descriptor (LBO ${f.ldo}, SBO ${f.sdo}) reads byte ${got}`;
        }
      }
    }
    const atom = 8 * W;
    if (!bad && sw !== 0) {
      const ldoUsed = mn && opRows > E;
      const off =
        f.sdo % atom !== 0
          ? `SBO ${f.sdo}`
          : ldoUsed && f.ldo % atom !== 0
            ? `LBO ${f.ldo}`
            : undefined;
      if (off) {
        bad = `the ${mn ? "MN" : "K"}-major ${MODE_NAME[sw]} descriptor would need ${off} B, not a multiple of the ${atom}-byte swizzle atom (each ${off.startsWith("SBO") ? `8-${mn ? "deep k" : "row"} group` : `${E}-wide column block`} must start at row 0 of an atom)`;
      }
    }
    if (!bad) {
      const ldoUsed = sw === 0 || (mn && opRows > E);
      return { ...f, swizzle: sw, mn, kStep: d0(0, kStep), ldoUsed };
    }
    if (mn === x.mnView || eb === 1) why = bad;
  }
  return why!;
}

/**
 * The nearest shared tile that a descriptor reads, as text for TX2022: of the view's own
 * major-ness, 128B-swizzled rows of 64 elements, a longer K (K-major) or M / N (MN-major) as
 * 64-wide column blocks.
 */
function nearestShared(x: SharedOperand, dtype: DType): string {
  const alt = `("64B" / "32B" take 32 / 16 columns)`;
  if (x.mnView) {
    const dim = x.role === "A" ? "M" : "N";
    const blocks =
      x.rows > 64
        ? `; ${dim} = ${x.rows} as 64-wide column blocks: a buffer [${Math.ceil(x.rows / 64)}, ${x.k}, 64] read as s.rearrange("b k c -> k b c")`
        : "";
    return `an MN-major ${x.role} [${x.k}, 64] ${dtype} tile with T.swizzle_mode("128B") and align 1024 (k rows of one 128-byte swizzle row) ${alt}${blocks}`;
  }
  const blocks =
    x.k > 64
      ? `; K = ${x.k} as 64-wide column blocks: a buffer [${Math.ceil(x.k / 64)}, ${x.rows}, 64] read as s.rearrange("b r c -> r b c")`
      : "";
  return `a K-major ${x.role} [${x.rows}, 64] ${dtype} tile with T.swizzle_mode("128B") and align 1024 (rows of one 128-byte swizzle row) ${alt}${blocks}`;
}

/**
 * Recognise register tile `t` as a grid of wgmma fragments of `atom` (`ar` × `ac` elements):
 * every element of block (I, J) must sit at the thread (tid_in_wg) the atom gives it and at slot
 * `base[I][J] + s` for the atom's slot s, `base` a multiple of `align`.
 * @returns the bases, or one sentence naming the element that breaks it.
 */
function matchGrid(
  t: RegisterTile,
  atom: TileLayout,
  ar: number,
  ac: number,
  what: string,
  align: number,
): number[][] | string {
  const dims = matrixShape(t.shape);
  if (!dims) return `${t.buffer.name} [${t.shape.join(", ")}] is not a matrix`;
  const [R, C] = dims;
  // A kernel issues many wgmmas on one accumulator tile (every K step, every unrolled
  // iteration): its grid is matched once per layout, atom and shape.
  const key = `${showTileLayout(t.layout)}|${R}x${C}|${showTileLayout(atom)}|${ar}x${ac}|${align}`;
  const hit = matched.get(key);
  if (hit) return hit.map((row) => [...row]);
  if (R % ar !== 0 || C % ac !== 0) {
    return `${t.buffer.name} is ${R} × ${C}, not a grid of ${ar} × ${ac} ${what} fragments`;
  }
  const l = t.layout;
  const other = [...l.shard, ...l.replica].find(
    (x) => x.extent > 1 && x.axis !== "m" && x.axis !== "tid_in_wg",
  );
  if (other)
    return `${t.buffer.name} binds ${other.axis}; a wgmma fragment binds only tid_in_wg and m`;
  if (l.replica.some((x) => x.extent > 1)) return `${t.buffer.name} has a replica`;
  // Each element's thread and slot, the atom's and the tile's, by row-major index (one pass
  // over each layout: a fragment grid of 64 × 256 has 16,384 elements).
  if (layoutSize(l) !== R * C) {
    return `${t.buffer.name} is ${R} × ${C}, but its layout ${showTileLayout(l)} holds ${layoutSize(l)} elements`;
  }
  const atTid = layoutAxisValues(atom, "tid_in_wg");
  const atSlot = layoutAxisValues(atom, "m");
  const tids = layoutAxisValues(l, "tid_in_wg");
  const slots = layoutAxisValues(l, "m");
  const base: number[][] = [];
  for (let I = 0; I < R / ar; I++) {
    const row: number[] = [];
    for (let J = 0; J < C / ac; J++) {
      let b: number | undefined;
      for (let r = 0; r < ar; r++) {
        for (let c = 0; c < ac; c++) {
          const e = (I * ar + r) * C + J * ac + c;
          const aTid = atTid[r * ac + c]!;
          const aSlot = atSlot[r * ac + c]!;
          const tid = tids[e]!;
          const slot = slots[e]!;
          b ??= slot - aSlot;
          if (tid !== aTid || slot !== b + aSlot) {
            return `element [${I * ar + r}, ${J * ac + c}] of ${t.buffer.name} is at thread ${tid} slot ${slot}, but the ${what} fragment of its block puts it at thread ${aTid} slot ${b + aSlot}`;
          }
        }
      }
      if (b! % align !== 0 || b! < 0) {
        return `block [${I}, ${J}] of ${t.buffer.name} starts at slot ${b}, not at a 32-bit register`;
      }
      row.push(b!);
    }
    base.push(row);
  }
  if (matched.size >= MATCHED_LIMIT) matched.clear();
  matched.set(
    key,
    base.map((row) => [...row]),
  );
  return base;
}

/** matchGrid's successful matches by layout, shape, atom and alignment. */
const matched = new Map<string, number[][]>();
const MATCHED_LIMIT = 1000;

/** The largest multiple of 8 that divides `n` and is at most 256: N of each wgmma. */
function blockN(n: number): number {
  for (let b = Math.min(n, MAX_N); b >= 8; b -= 8) if (n % b === 0) return b;
  return 8;
}

/** A boolean option (default `dflt`). @throws TirxError TX2022 for another value. */
function flag(
  o: Readonly<Record<string, unknown>> | undefined,
  k: string,
  dflt: boolean,
  ctx: TileContext,
): boolean {
  const v = o?.[k];
  if (v === undefined) return dflt;
  if (typeof v === "boolean") return v;
  throw tileDispatchError(ctx, `option ${k} must be true or false, got ${String(v)}`);
}

/**
 * Option `accum`: true (default: C += A · B), false (C = A · B: scale-d 0 on the first k step), or
 * a runtime bool / int32 expression (nonzero accumulates; e.g. `kt.gt(0)` in a k-tile loop).
 * @throws TirxError TX2022 for another value.
 */
function accumOption(
  o: Readonly<Record<string, unknown>> | undefined,
  ctx: TileContext,
): boolean | Expr {
  const v = o?.accum;
  if (v === undefined) return true;
  if (typeof v === "boolean") return v;
  const e = v as Partial<Expr>;
  if (typeof v === "object" && v !== null && typeof e.kind === "string" && "dtype" in e) {
    if (e.dtype === "bool" || e.dtype === "int32") return v as Expr;
    throw tileDispatchError(
      ctx,
      `accum is ${withArticle(String(e.dtype))} expression; wgmma's scale-d takes a bool or int32`,
      "accum: true, false, or a bool expression such as kt.gt(0)",
    );
  }
  throw tileDispatchError(
    ctx,
    `option accum must be true, false or a bool expression, got ${String(v)}`,
    "accum: true, false, or a bool expression such as kt.gt(0)",
  );
}

/**
 * `T.tile.wg.gemm_async(C, A, B, { transA, transB, accum })` (TIRx `Tx.tile.gemm_async`, its
 * option names; TIRx lowers it to tcgen05 on Blackwell, here to Hopper's wgmma): the warpgroup
 * issues C (M × N float32 register tile) = A · B (+ C when `accum`) on the tensor cores with
 * `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}` (PTX ISA, wgmma.mma_async;
 * sm_90a, PTX 8.0), asynchronously.
 * - A is M × K: a shared view ([M, K], or [K, M] with `transA`) → SS, or a register tile [M, K]
 *   in `T.layout.wgmma_tile_layout("A", M, K, dtype)` (K/16 register-A fragments of 8 slots per
 *   k step, 64-row blocks after one another) → RS. B is K × N: a shared view [K, N], or [N, K]
 *   with `transB` (the instruction-level examples/gemm_hopper.ts's `A · Bᵀ` is `transB: true`).
 *   A and B are float16 or bfloat16, one dtype; or float8 (float8_e4m3 / float8_e5m2, either
 *   for each): then both are shared and K-major (A [M, K], B [N, K] with `transB`), K a multiple
 *   of 32, one `wgmma.mma_async….m64nNk32.f32.{e4m3,e5m2}.{e4m3,e5m2}` per k32 step (32 bytes
 *   of a row, as a k16 step of a 2-byte type; the PTX ISA has no transposed float8 operand).
 * - A shared view may also be 3-D, its last two dims (block, element) splitting its columns:
 *   [R, b, c] is the matrix [R, b·c]. That is how a row longer than the swizzle span is stored,
 *   the way TMA writes it (`T.tile.copy_async`'s boxes are cut at the span): a buffer [b, R, 64]
 *   (128B swizzle, 16-bit) read as `s.rearrange("b r c -> r b c")`. K-major (Q, K of
 *   FlashAttention at head dim 128: [64, 2, 64] = [rows, K = 128]) each k16 step's descriptor
 *   starts in its K block; MN-major (V [kv, 2, 64] = [K, N = 128] for O += P·V) the N blocks are
 *   LBO apart.
 * - C is `T.layout.wgmma_tile_layout("D", M, N, "float32")` (for M = 64 and N ≤ 256 that is
 *   `wgmma_operand_layout("D", N, "float32")`): M = 64·r issues r wgmmas on 64-row blocks; N > 256
 *   would be split into column blocks of the largest multiple of 8 ≤ 256 dividing N (each block's
 *   slots are contiguous in that layout), but C holds M·N/128 float32 per thread and a register
 *   array at most `MAX_REGISTER_ARRAY` (128), so M·N ≤ 16384: 64 × 256 or 128 × 128 at most, and
 *   N ≤ 256 in practice. K is a multiple of 16: one wgmma per k16 step, per row and column
 *   block, k outermost.
 * - Descriptors come from the views: the buffer's swizzle (`T.swizzle_mode`) is the descriptor's;
 *   each operand is a logical matrix [M / N, K] with an element offset off(r, k); per k16 step and
 *   row (A) / column (B) block, that wgmma's operand starts at off(r0, k0), its LBO/SBO are read
 *   off the offsets and every one of its elements is checked against
 *   the PTX ISA's canonical layout ("Matrix Descriptor Format", "Shared Memory Matrix Layout",
 *   the rule of CUTLASS's `make_gmma_desc`): K-major swizzled: rows of exactly one swizzle row
 *   (W = 128 / 64 / 32 bytes), SBO = 8·W between 8-row groups, LBO unused (16); MN-major swizzled:
 *   k rows of W bytes, SBO = 8·W between 8-deep k groups, LBO between W-byte column groups; a
 *   swizzled SBO / LBO that is read must be a multiple of the 8·W-byte swizzle atom (each group
 *   starts at row 0 of an atom: base offset 0); without swizzle the 8 × 16-byte core matrices, which a 2-D strided view holds only in
 *   degenerate shapes. The trans bits are the derived major-ness. A k16 step moves the start
 *   address (32 bytes K-major for 2-byte types; 16 k rows MN-major).
 * - Emission: each operand block's descriptor encoded once, before the fence, and each later k16
 *   step's as that one plus its start's distance in 16-byte units (one 64-bit add; fields that
 *   differ by step are encoded afresh); `wgmma.fence` (the registers of C, and of A in RS, may have been written by other
 *   instructions: PTX ISA, wgmma.fence), the wgmmas (scale-d on the first k step: 0 when
 *   `accum: false`, the expression's value when `accum` is a runtime bool / int32 (e.g.
 *   `kt.gt(0)` in a k-tile loop), else 1; 1 on the later steps), then `wgmma.commit_group`. The wait is the author's
 *   (`T.ptx.wgmma.wait_group(n)`), so that a pipeline keeps groups in flight; C (and A) must not be
 *   touched before it (the simulator's TX6023).
 * - A start whose alignment is not evident (a runtime stage index) is checked by the verifier and
 *   the simulator (TX7007, TX6026) instead of here.
 * @example T.tile.wg.gemm_async(acc, sA.sub(st), sB.sub(st), { transB: true }) // 4 × m64n256k16
 * @example // FlashAttention, head dim 128: sQ [2, 64, 64], sK / sV [2, 128, 64] (128B swizzle)
 * T.tile.wg.gemm_async(S, sQ.rearrange("b r c -> r b c"), sK.rearrange("b r c -> r b c"), {
 *   transB: true, accum: false }) // 8 × m64n128k16, K in 2 blocks of 64
 * T.tile.wg.gemm_async(acc, P, sV.rearrange("b k c -> k b c"), { accum: true }) // LBO 8192 B
 * @throws TirxError TX2022 when the scope is not `wg`, the target is below sm_90, C is not a
 *   float32 register tile in the D layout or holds more than 128 elements per thread (naming the element that breaks it and the nearest
 *   layout), A is not shared or a register tile in the A layout, B is not shared, A and B are not
 *   one f16/bf16 dtype nor both float8 (float8: a register A or an MN-major operand), M, N, K disagree or are not multiples of 64, 8, 16, a shared operand's
 *   view has no descriptor (naming the misplaced element), its buffer's swizzle is not one of
 *   wgmma's or it is aligned below the swizzle atom (1024/512/256 bytes), or an operand's start is
 *   not 16-byte aligned or lies past row 0 of its swizzle atom (a column block whose stride is
 *   not a multiple of the atom), or a view has more than three dims of extent > 1.
 */
export const gemm_async: TilePrimitive<
  readonly [
    { readonly name: "C"; readonly kind: "register" },
    { readonly name: "A"; readonly kind: "tile" },
    { readonly name: "B"; readonly kind: "tile" },
    { readonly name: "options"; readonly kind: "options" },
  ]
> = {
  name: "gemm_async",
  doc: "C (+)= A · B on Hopper tensor cores (wgmma.mma_async, SS or RS) from the operands' layouts; commit is issued, the wait is the author's",
  scopes: ["wg"],
  operands: [
    { name: "C", kind: "register" },
    { name: "A", kind: "tile" },
    { name: "B", kind: "tile" },
    { name: "options", kind: "options" },
  ],
  options: ["transA", "transB", "accum"],
  lower: (args, ctx) => lowerGemmAsync(args, ctx),
};

function lowerGemmAsync(args: readonly TileInput[], ctx: TileContext): TileLowering {
  if (ctx.scope !== "wg") {
    throw tileDispatchError(
      ctx,
      `wgmma.mma_async is issued by the 128 threads of a warpgroup together (.sync.aligned), not by a ${ctx.scope === "thread" ? "single thread" : ctx.scope}`,
      "T.tile.wg.gemm_async",
    );
  }
  if (ctx.sm !== undefined && ctx.sm < 90) {
    throw tileDispatchError(
      ctx,
      `wgmma.mma_async needs sm_90a; the target is sm_${ctx.sm}`,
      `compile for sm_90a, or T.tile.warp.gemm (mma.sync) on sm_${ctx.sm}`,
    );
  }
  const o = args[3] as Readonly<Record<string, unknown>> | undefined;
  const transA = flag(o, "transA", false, ctx);
  const transB = flag(o, "transB", false, ctx);
  const accum = accumOption(o, ctx);
  const c = needRegister(args[0], "C", ctx);
  checkLaidOut(c, ctx);
  const a = asArg(args[1]);
  const b = asArg(args[2]);
  const shared = (x: typeof a): x is { kind: "memory"; view: View } =>
    x?.kind === "memory" && x.view.buffer.scope.startsWith("shared");
  if (!shared(b)) {
    throw tileDispatchError(
      ctx,
      "B must be a shared view (wgmma reads B through a shared-memory descriptor)",
      'T.alloc_shared([N, K], dtype, { layout: T.swizzle_mode("128B"), align: 1024 }) with transB',
    );
  }
  const rs = a?.kind === "register";
  if (!rs && !shared(a)) {
    throw tileDispatchError(
      ctx,
      "A must be a shared view (SS) or a register tile (RS)",
      `a shared [M, K] tile, or T.alloc_local([64, K], dtype, { layout: T.layout.wgmma_tile_layout("A", 64, K, dtype) })`,
    );
  }
  const ab = rs ? a.dtype : (a as { view: View }).view.dtype;
  const bd = b.view.dtype;
  const fp8 = isFloat8(ab) && isFloat8(bd);
  if (!fp8 && ((ab !== "float16" && ab !== "bfloat16") || bd !== ab)) {
    throw tileDispatchError(
      ctx,
      `wgmma multiplies float8 A and B (e4m3 / e5m2, either), or float16 or bfloat16 A and B of one dtype; A is ${ab}, B ${bd}`,
      "A and B both float16 or both bfloat16 (T.tile.cast a register A first), or both float8 in shared memory",
    );
  }
  if (fp8 && (rs || transA || !transB)) {
    throw tileDispatchError(
      ctx,
      `float8 wgmma reads A and B K-major from shared memory (no register A, no transposed operand: PTX ISA, wgmma.mma_async); A is ${rs ? "a register tile" : transA ? "read as [K, M] (transA)" : "[M, K]"}, B ${transB ? "[N, K]" : "read as [K, N]"}`,
      "A a shared [M, K] view and B a shared [N, K] view with transB: true",
    );
  }
  for (const x of rs ? [b] : [a as { view: View }, b]) {
    if (x.view.buffer.dtype !== x.view.dtype) {
      throw tileDispatchError(
        ctx,
        `${x.view.buffer.name} is ${x.view.buffer.dtype}, read as ${x.view.dtype}; a descriptor reads the buffer's own elements`,
        `${withArticle(ab)} shared buffer`,
      );
    }
  }
  if (c.dtype !== "float32") {
    throw tileDispatchError(
      ctx,
      `C is ${c.dtype}; the wgmma of gemm_async accumulates into float32`,
      `T.alloc_local([M, N], "float32", { layout: T.layout.wgmma_tile_layout("D", M, N, "float32") })`,
    );
  }
  // Logical shapes: A M × K, B K × N, C M × N.
  const cm = matrixShape(c.shape);
  const am = rs ? matrixShape(a.shape) : matrixOf((a as { view: View }).view);
  const bm = matrixOf(b.view);
  if (!cm || !am || !bm) {
    throw tileDispatchError(
      ctx,
      `C, A and B must be matrices (two dims of extent > 1 at most; a shared view may split its columns in blocks, [rows, blocks, cols]): C [${c.shape.join(", ")}], A [${rs ? a.shape.join(", ") : (a as { view: View }).view.shape.join(", ")}], B [${b.view.shape.join(", ")}]`,
      "C [M, N], A [M, K], B [K, N] (or [N, K] with transB); a column-blocked shared view as [rows, blocks, cols]",
    );
  }
  const [M, N] = cm;
  const [aRows, aCols] = Array.isArray(am)
    ? am
    : [(am as ViewMatrix).rows, (am as ViewMatrix).cols];
  const [M2, K] = !rs && transA ? [aCols, aRows] : [aRows, aCols];
  const [K2, N2] = transB ? [bm.cols, bm.rows] : [bm.rows, bm.cols];
  /** K of one wgmma: 32 bytes of a row (k16, or k32 for float8). */
  const kk = 32 / dtypeBytes(ab);
  if (M !== M2 || N !== N2 || K !== K2 || M % 64 !== 0 || N % 8 !== 0 || K % kk !== 0) {
    throw tileDispatchError(
      ctx,
      `C [${M}, ${N}] += A [${M2}, ${K}] · B [${K2}, ${N2}]${transB ? " (B read as [N, K])" : ""}: M, N and K must agree, M a multiple of 64, N of 8, K of ${kk} (wgmma m64nNk${kk})`,
      `C [64·r, N], A [64·r, K]${transA ? " ([K, M] with transA)" : ""}, B [K, N] ([N, K] with transB)`,
    );
  }
  if (rs && transA) {
    throw tileDispatchError(
      ctx,
      "transA needs A in shared memory (register A is M × K)",
      "transA: false",
    );
  }
  if ((M * N) / 128 > MAX_REGISTER_ARRAY) {
    throw tileDispatchError(
      ctx,
      `C [${M}, ${N}] is ${(M * N) / 128} float32 per thread; a wgmma accumulator lives in registers, and a register array holds at most ${MAX_REGISTER_ARRAY} elements (M · N ≤ ${128 * MAX_REGISTER_ARRAY})`,
      `one gemm_async per C tile of at most 64 × 256 or 128 × 128 (B's rows, or columns, split among them)`,
    );
  }
  const nb = blockN(N);
  // C: a grid of (M/64) × (N/nb) D fragments.
  const cBase = matchGrid(c, wgmmaOperandLayout("D", nb, "float32"), 64, nb, `m64n${nb} D`, 1);
  if (typeof cBase === "string") {
    throw tileDispatchError(
      ctx,
      `C must be a grid of wgmma m64n${nb}k${kk} accumulator (D) fragments: ${cBase}`,
      `${showTileLayout(wgmmaTileLayout("D", M, N, "float32"))} (T.layout.wgmma_tile_layout("D", ${M}, ${N}, "float32"))`,
    );
  }
  let aBase: number[][] | undefined;
  if (rs) {
    const g = matchGrid(a, wgmmaOperandLayout("A", 16, ab), 64, 16, "register-A", 2);
    if (typeof g === "string") {
      throw tileDispatchError(
        ctx,
        `a register A must be a grid of wgmma m64nNk16 A fragments (64 × 16 each): ${g}`,
        `${showTileLayout(wgmmaTileLayout("A", M, K, ab))} (T.layout.wgmma_tile_layout("A", ${M}, ${K}, "${ab}"))`,
      );
    }
    aBase = g;
  }
  const eb = dtypeBytes(ab);
  const operandOf = (role: "A" | "B", v: View, trans: boolean): SharedOperand => {
    const mx = matrixOf(v)!;
    // [rows, K] when not transposed (A [M, K]; B [N, K] is transB), else [K, rows]; the view's
    // columns (blocked or not) are K, or the rows.
    const kMajorView = role === "A" ? !trans : trans;
    const blocks = mx.blocks ? { blocks: mx.blocks } : {};
    return kMajorView
      ? {
          role,
          view: v,
          rows: mx.rows,
          k: mx.cols,
          off: (r, k) => r * mx.rowStride + mx.colOff(k),
          ...blocks,
          blockDim: "K",
          mnView: false,
        }
      : {
          role,
          view: v,
          rows: mx.cols,
          k: mx.rows,
          off: (r, k) => k * mx.rowStride + mx.colOff(r),
          ...blocks,
          blockDim: role === "A" ? "M" : "N",
          mnView: true,
        };
  };
  /** The descriptor of `x`'s wgmma operand at (r0, k0): `opRows` rows × one k16 step. */
  const describe = (x: SharedOperand, opRows: number, r0: number, k0: number): Derived => {
    const buf = x.view.buffer;
    const sw = buf.layout ? swizzleModeOf(buf.layout) : 0;
    if (sw === undefined) {
      throw tileDispatchError(
        ctx,
        `${buf.name}'s swizzle is none of wgmma's (a descriptor describes T.swizzle_mode("32B" | "64B" | "128B") or no swizzle)`,
        nearestShared(x, ab),
      );
    }
    const period = sw === 0 ? 16 : 128 << sw;
    if (buf.align < period) {
      throw tileDispatchError(
        ctx,
        `${buf.name} is aligned to ${buf.align} bytes; a ${MODE_NAME[sw]} wgmma operand needs its buffer aligned to ${period} (the swizzle atom, which the descriptor's pattern starts on)`,
        `T.alloc_shared(..., { align: ${period}, layout: T.swizzle_mode("${16 << sw}B") })`,
      );
    }
    const d = deriveDescriptor(x, opRows, sw, eb, r0, k0);
    if (typeof d === "string") {
      throw tileDispatchError(
        ctx,
        `no wgmma descriptor reads ${x.role}${r0 || k0 ? ` rows ${r0}..${r0 + opRows - 1}, k ${k0}..${k0 + kk - 1}` : ""} (${buf.name} view [${x.view.shape.join(", ")}] strides [${x.view.strides.join(", ")}], ${MODE_NAME[sw]}): ${d}`,
        nearestShared(x, ab),
      );
    }
    return d;
  };
  /** The element offset (in the buffer) of operand element (r, k), checked for the descriptor. */
  const startOf = (x: SharedOperand, d: Derived, r: number, k: number): Expr => {
    const rel = x.off(r, k);
    const off = rel === 0 ? x.view.offset : binary("add", x.view.offset, intImm(rel));
    const per16 = 16 / eb;
    const res = residueMod(off, per16);
    if (res !== undefined && res !== 0) {
      throw tileDispatchError(
        ctx,
        `${x.role}'s rows [${r}..] k ${k} start ${res * eb} bytes past a 16-byte boundary of ${x.view.buffer.name}; the descriptor keeps the start address >> 4`,
        `a view starting on a 16-byte boundary`,
      );
    }
    if (d.swizzle !== 0) {
      const W = 16 << d.swizzle;
      const atom = (8 * W) / eb;
      const ra = residueMod(off, atom);
      if (ra !== undefined && ra * eb >= W) {
        throw tileDispatchError(
          ctx,
          `${x.role}'s rows [${r}..] k ${k} start ${ra * eb} bytes into a ${8 * W}-byte swizzle atom of ${x.view.buffer.name} (row ${Math.floor((ra * eb) / W)}); the descriptor's swizzle pattern starts at row 0 of an atom`,
          `a view whose first row is a multiple of 8 rows into the buffer`,
        );
      }
    }
    return off;
  };
  const descExpr = (x: SharedOperand, d: Derived, start: Expr): Expr =>
    valueOp(
      "wgmma.encode_matrix_descriptor",
      [bufferPtr(x.view.buffer, start, ctx.span), intImm(d.ldo), intImm(d.sdo), intImm(d.swizzle)],
      ctx,
    );
  // Each operand block's descriptor is encoded once, at its first k16 step, into a variable
  // (before the fence); a later step whose fields (LBO, SBO, swizzle, major-ness) are the same
  // adds its start's distance from that step in 16-byte units (CUTLASS's descriptor iterator).
  // PTX ISA, wgmma, "Matrix Descriptor Format": the start address is bits 0–13, (addr & 0x3FFFF)
  // >> 4; a .shared::cta address is below 2^18 (227 KiB of shared memory) and so is the later
  // start inside the same buffer, so the add never carries out of the field and equals the
  // encoding of the later start. Per wgmma that is one add where the encoding took an and, a
  // shift, a conversion and an or (LOP3, SHF and R2UR were 14% of the warp samples of the
  // FlashAttention forward at head dim 64, causal, seq 1k: bench/results/
  // attention-fwd-ncu-2026-12-03g.md). The add is 32-bit, on the low word
  // (`wgmma.advance_descriptor`): a uint64 add took a 64-bit add with carry and moves of the
  // register pair before each wgmma's R2UR (that kernel: 97.3 M → 94.9 M instructions executed,
  // bench/results/attention-descriptor-2026-12-04.md).
  const lets: Stmt[] = [];
  const bases = new Map<string, { v: Expr; d: Derived; rel: number }>();
  const sameFields = (p: Derived, q: Derived): boolean =>
    p.ldo === q.ldo && p.sdo === q.sdo && p.swizzle === q.swizzle && p.mn === q.mn;
  /** The descriptor of operand block `key` of `x` at (r, k), checked (startOf) either way. */
  const descAt = (key: string, x: SharedOperand, d: Derived, r: number, k: number): Expr => {
    const start = startOf(x, d, r, k);
    const rel = x.off(r, k);
    const b = bases.get(key);
    if (b === undefined) {
      const v = ctx.freshVar(`desc${key}`, "uint64");
      lets.push({
        kind: "Let",
        var: v,
        value: descExpr(x, d, start),
        ...(ctx.span ? { span: ctx.span } : {}),
      });
      bases.set(key, { v, d, rel });
      return v;
    }
    const bytes = (rel - b.rel) * eb;
    if (!sameFields(b.d, d) || bytes < 0 || bytes % 16 !== 0) return descExpr(x, d, start);
    return bytes === 0
      ? b.v
      : valueOp("wgmma.advance_descriptor", [b.v, intImm(bytes / 16, "uint32")], ctx);
  };
  const xa = rs ? undefined : operandOf("A", (a as { view: View }).view, transA);
  const xb = operandOf("B", b.view, transB);
  // One descriptor per k16 step and row (A) / column (B) block, each derived and checked: a
  // column-blocked view need not step K (or N) uniformly.
  const mBlocks = M / 64;
  const nBlocks = N / nb;
  const steps = K / kk;
  const das = xa
    ? Array.from({ length: mBlocks }, (_, I) =>
        Array.from({ length: steps }, (_, s) => describe(xa, 64, 64 * I, kk * s)),
      )
    : undefined;
  const dbs = Array.from({ length: nBlocks }, (_, J) =>
    Array.from({ length: steps }, (_, s) => describe(xb, nb, nb * J, kk * s)),
  );
  const f8 = (dt: DType): WgmmaFp8 => (dt === "float8_e4m3" ? "e4m3" : "e5m2");
  const name = fp8
    ? wgmmaFp8Name({ n: nb, a: f8(ab), b: f8(bd), acc: "f32" })
    : wgmmaName({
        n: nb,
        ab: ab === "float16" ? "f16" : "bf16",
        abDtype: ab as "float16" | "bfloat16",
        a: rs ? "rs" : "ss",
      });
  const op = opOf(name, "stmt", ctx.span);
  const at = ctx.span ? { span: ctx.span } : {};
  const calls: Stmt[] = [];
  checkOpCall(opOf("wgmma.fence.sync.aligned", "stmt", ctx.span), [], ctx.span);
  for (let s = 0; s < steps; s++) {
    for (let I = 0; I < mBlocks; I++) {
      const da = das?.[I]![s];
      const aArg = xa
        ? descAt(`A${I}`, xa, da!, 64 * I, kk * s)
        : slotPtr(a as RegisterTile, aBase![I]![s]!, ctx.span);
      for (let J = 0; J < nBlocks; J++) {
        const db = dbs[J]![s]!;
        const bArg = descAt(`B${J}`, xb, db, nb * J, kk * s);
        const ops: Expr[] = [
          slotPtr(c, cBase[I]![J]!, ctx.span),
          aArg,
          bArg,
          s > 0 || accum === true ? intImm(1) : accum === false ? intImm(0) : accum,
          intImm(1),
          intImm(1),
          // float8 variants take no imm-trans operands (K-major only).
          ...(fp8 ? [] : [...(xa ? [intImm(da!.mn ? 1 : 0)] : []), intImm(db.mn ? 1 : 0)]),
        ];
        checkOpCall(op, ops, ctx.span);
        calls.push({ kind: "Call", op: name, args: ops, ...at });
      }
    }
  }
  const stmts: Stmt[] = [
    ...lets,
    { kind: "Call", op: "wgmma.fence.sync.aligned", args: [], ...at },
    ...calls,
    { kind: "Call", op: "wgmma.commit_group.sync.aligned", args: [], ...at },
  ];
  const count = (K / kk) * mBlocks * nBlocks;
  const side = (x: SharedOperand, ds: readonly (readonly Derived[])[]): string => {
    const d = ds[0]![0]!;
    const same = (e: Derived): boolean =>
      e.mn === d.mn && e.ldo === d.ldo && e.sdo === d.sdo && e.swizzle === d.swizzle;
    const bl = x.blocks;
    const split = !bl
      ? ""
      : `, ${x.blockDim} in ${bl.count} blocks of ${bl.size}${x.blockDim === "K" ? ` (+${bl.stride * eb} B)` : ""}`;
    return `${x.role} ${d.mn ? "MN" : "K"}-major, ${MODE_NAME[d.swizzle]}: ${d.ldoUsed ? `LBO ${d.ldo} B, ` : ""}SBO ${d.sdo} B, k${kk} step +${d.kStep} B${split}${ds.every((r) => r.every(same)) ? "" : " (fields differ by step; each checked)"}`;
  };
  const how = [
    rs ? `A from registers ${showTile(a as RegisterTile)}` : side(xa!, das!),
    side(xb, dbs),
  ].join("; ");
  return {
    stmts,
    explain: `wgmma.fence, wgmma m64n${nb}k${kk}${fp8 ? ` .${f8(ab)}.${f8(bd)}` : ""} ×${count} (${rs ? "RS" : "SS"}: ${how}${mBlocks > 1 || nBlocks > 1 ? `; ${mBlocks} × ${nBlocks} blocks of C` : ""}${accum === true ? "" : accum === false ? "; scale-d 0 on the first k step" : "; scale-d of the first k step is accum"}) then commit_group; the wait is the author's`,
  };
}
