import { dtypeBytes, type DType } from "../dtype.js";
import { binary } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { View } from "../ir/buffer.js";
import type { Stmt } from "../ir/stmt.js";
import { residueMod } from "../analysis/bounds.js";
import { MAX_REGISTER_ARRAY } from "../analysis/register-arrays.js";
import { wgmmaOperandLayout, wgmmaTileLayout } from "../layout/fragments.js";
import { swizzleModeOf } from "../layout/swizzle.js";
import { applyLayout, showTileLayout } from "../layout/tile-layout.js";
import { bufferPtr } from "../layout/view.js";
import { checkOpCall } from "../ops/check.js";
import { opOf } from "../ops/registry.js";
import { operandOffset } from "../ops/wgmma/operand.js";
import { wgmmaName } from "../ops/wgmma/mma-async.js";
import type { TileLayout } from "../ir/tile-layout.js";
import { matrixShape, slotPtr } from "./mma-fragment.js";
import {
  showTile,
  tileDispatchError,
  type RegisterTile,
  type TileContext,
  type TileLowering,
} from "./operand.js";
import {
  ALL_SCOPES,
  asArg,
  checkLaidOut,
  needRegister,
  valueOp,
  type TileInput,
  type TilePrimitive,
} from "./primitive.js";

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
  /** Bytes one k16 step moves the start address. */
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
}

/**
 * The view as a 2-D matrix: its dims of extent > 1 (one or two), as [rows, cols] with their
 * element strides; undefined for a view of rank > 2 once extent-1 dims are dropped.
 */
function matrixOf(
  v: View,
): { rows: number; cols: number; rowStride: number; colStride: number } | undefined {
  const big = v.shape.flatMap((n, d) => (n === 1 ? [] : [d]));
  if (big.length > 2) return undefined;
  const last = big[big.length - 1];
  const first = big.length === 2 ? big[0] : undefined;
  return {
    rows: first === undefined ? 1 : v.shape[first]!,
    cols: last === undefined ? 1 : v.shape[last]!,
    rowStride: first === undefined ? 0 : v.strides[first]!,
    colStride: last === undefined ? 1 : v.strides[last]!,
  };
}

/**
 * The descriptor fields that read `opRows` × 16 elements of `x` (2-byte elements, the buffer's
 * swizzle `sw`) where the view holds them: the PTX ISA's canonical layouts ("Shared Memory Matrix
 * Layout"; `operandOffset`), K-major tried first, then MN-major. LBO and SBO are read off the
 * view's strides (SBO: 8 rows apart K-major, 8 k apart MN-major; LBO: 8 k apart without swizzle,
 * one swizzle row of elements apart MN-major swizzled, 16 — unused — K-major swizzled), then
 * every element is checked.
 * @returns the fields, or one sentence naming the element the nearest candidate misplaces.
 */
function deriveDescriptor(
  x: SharedOperand,
  opRows: number,
  sw: 0 | 1 | 2 | 3,
  eb: number,
): Derived | string {
  const d0 = (r: number, k: number): number => eb * (x.off(r, k) - x.off(0, 0));
  const W = 16 << sw;
  const E = W / eb;
  const kMajor = sw === 0 ? { ldo: d0(0, 8), sdo: d0(8, 0) } : { ldo: 16, sdo: d0(8, 0) };
  const mnMajor =
    sw === 0
      ? { ldo: d0(0, 8), sdo: d0(8, 0) }
      : { ldo: opRows > E ? d0(E, 0) : 8 * W, sdo: d0(0, 8) };
  // A swizzled K-major operand of 8 rows, or a swizzled MN-major one within a swizzle row, never
  // reads its SBO / LBO: keep the canonical value then.
  if (sw !== 0 && opRows <= 8) kMajor.sdo = 8 * W;
  let first: string | undefined;
  for (const [mn, f] of [
    [false, kMajor],
    [true, mnMajor],
  ] as const) {
    const fits = (o: number): boolean => o >= 0 && o <= MAX_OFFSET && o % 16 === 0;
    let bad: string | undefined = !fits(f.ldo)
      ? `LBO ${f.ldo} B`
      : !fits(f.sdo)
        ? `SBO ${f.sdo} B`
        : undefined;
    if (bad)
      bad = `the ${mn ? "MN" : "K"}-major descriptor would need ${bad}, not a multiple of 16 in 0..${MAX_OFFSET}`;
    for (let r = 0; r < opRows && !bad; r++) {
      for (let k = 0; k < 16 && !bad; k++) {
        const got = operandOffset({ ...f, swizzle: sw }, mn, r, k);
        const want = d0(r, k);
        if (got !== want) {
          bad = `element (${r}, ${k}) of ${x.role} lies ${want} bytes from the operand's start, where a ${mn ? "MN" : "K"}-major ${MODE_NAME[sw]} descriptor (LBO ${f.ldo}, SBO ${f.sdo}) reads byte ${got}`;
        }
      }
    }
    if (!bad) {
      const ldoUsed = sw === 0 || (mn && opRows > E);
      return { ...f, swizzle: sw, mn, kStep: d0(0, 16), ldoUsed };
    }
    first ??= bad;
  }
  return first!;
}

/** The nearest shared tile that a descriptor reads, as text for TX2022. */
function nearestShared(x: SharedOperand, dtype: DType): string {
  return `a K-major ${x.role} [${x.rows}, 64] ${dtype} tile with T.swizzle_mode("128B") and align 1024 (rows of one 128-byte swizzle row; "64B" / "32B" take 32 / 16 columns), K in tiles of 64`;
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
  const at: { tid: number; slot: number }[] = [];
  for (let e = 0; e < ar * ac; e++) {
    const c = applyLayout(atom, e);
    at.push({ tid: c.tid_in_wg ?? 0, slot: c.m ?? 0 });
  }
  const base: number[][] = [];
  for (let I = 0; I < R / ar; I++) {
    const row: number[] = [];
    for (let J = 0; J < C / ac; J++) {
      let b: number | undefined;
      for (let r = 0; r < ar; r++) {
        for (let c = 0; c < ac; c++) {
          const g = applyLayout(l, (I * ar + r) * C + J * ac + c);
          const a = at[r * ac + c]!;
          const tid = g.tid_in_wg ?? 0;
          const slot = g.m ?? 0;
          b ??= slot - a.slot;
          if (tid !== a.tid || slot !== b + a.slot) {
            return `element [${I * ar + r}, ${J * ac + c}] of ${t.buffer.name} is at thread ${tid} slot ${slot}, but the ${what} fragment of its block puts it at thread ${a.tid} slot ${b + a.slot}`;
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
  return base;
}

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
      `accum is a ${String(e.dtype)} expression; wgmma's scale-d takes a bool or int32`,
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
 *   A and B are float16 or bfloat16, one dtype.
 * - C is `T.layout.wgmma_tile_layout("D", M, N, "float32")` (for M = 64 and N ≤ 256 that is
 *   `wgmma_operand_layout("D", N, "float32")`): M = 64·r issues r wgmmas on 64-row blocks; N > 256
 *   would be split into column blocks of the largest multiple of 8 ≤ 256 dividing N (each block's
 *   slots are contiguous in that layout), but C holds M·N/128 float32 per thread and a register
 *   array at most `MAX_REGISTER_ARRAY` (128), so M·N ≤ 16384: 64 × 256 or 128 × 128 at most, and
 *   N ≤ 256 in practice. K is a multiple of 16: one wgmma per k16 step, per row and column
 *   block, k outermost.
 * - Descriptors come from the views: the buffer's swizzle (`T.swizzle_mode`) is the descriptor's;
 *   LBO/SBO are read off the view's strides and every element of each operand is checked against
 *   the PTX ISA's canonical layout ("Matrix Descriptor Format", "Shared Memory Matrix Layout",
 *   the rule of CUTLASS's `make_gmma_desc`): K-major swizzled: rows of exactly one swizzle row
 *   (W = 128 / 64 / 32 bytes), SBO = 8·W between 8-row groups, LBO unused (16); MN-major swizzled:
 *   k rows of W bytes, SBO = 8·W between 8-deep k groups, LBO between W-byte column groups;
 *   without swizzle the 8 × 16-byte core matrices, which a 2-D strided view holds only in
 *   degenerate shapes. The trans bits are the derived major-ness. A k16 step moves the start
 *   address (32 bytes K-major for 2-byte types; 16 k rows MN-major).
 * - Emission: `wgmma.fence` (the registers of C, and of A in RS, may have been written by other
 *   instructions: PTX ISA, wgmma.fence), the wgmmas (scale-d on the first k step: 0 when
 *   `accum: false`, the expression's value when `accum` is a runtime bool / int32 (e.g.
 *   `kt.gt(0)` in a k-tile loop), else 1; 1 on the later steps), then `wgmma.commit_group`. The wait is the author's
 *   (`T.ptx.wgmma.wait_group(n)`), so that a pipeline keeps groups in flight; C (and A) must not be
 *   touched before it (the simulator's TX6023).
 * - A start whose alignment is not evident (a runtime stage index) is checked by the verifier and
 *   the simulator (TX7007, TX6026) instead of here.
 * @example T.tile.wg.gemm_async(acc, sA.sub(st), sB.sub(st), { transB: true }) // 4 × m64n256k16
 * @throws TirxError TX2022 when the scope is not `wg`, the target is below sm_90, C is not a
 *   float32 register tile in the D layout or holds more than 128 elements per thread (naming the element that breaks it and the nearest
 *   layout), A is not shared or a register tile in the A layout, B is not shared, A and B are not
 *   one f16/bf16 dtype, M, N, K disagree or are not multiples of 64, 8, 16, a shared operand's
 *   view has no descriptor (naming the misplaced element), its buffer's swizzle is not one of
 *   wgmma's or it is aligned below the swizzle atom (1024/512/256 bytes), or an operand's start is
 *   not 16-byte aligned or lies past row 0 of its swizzle atom.
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
  scopes: ALL_SCOPES,
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
  if ((ab !== "float16" && ab !== "bfloat16") || bd !== ab) {
    throw tileDispatchError(
      ctx,
      `wgmma multiplies float16 or bfloat16 A and B of one dtype; A is ${ab}, B ${bd}`,
      "A and B both float16 or both bfloat16 (T.tile.cast a register A first)",
    );
  }
  for (const x of rs ? [b] : [a as { view: View }, b]) {
    if (x.view.buffer.dtype !== x.view.dtype) {
      throw tileDispatchError(
        ctx,
        `${x.view.buffer.name} is ${x.view.buffer.dtype}, read as ${x.view.dtype}; a descriptor reads the buffer's own elements`,
        `a ${ab} shared buffer`,
      );
    }
  }
  if (c.dtype !== "float32") {
    throw tileDispatchError(
      ctx,
      `C is ${c.dtype}; the f16/bf16 wgmma accumulates into float32`,
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
      `C, A and B must be matrices (two dims of extent > 1 at most): C [${c.shape.join(", ")}], A [${rs ? a.shape.join(", ") : (a as { view: View }).view.shape.join(", ")}], B [${b.view.shape.join(", ")}]`,
      "C [M, N], A [M, K], B [K, N] (or [N, K] with transB)",
    );
  }
  const [M, N] = cm;
  const [aRows, aCols] = Array.isArray(am) ? am : [am.rows, am.cols];
  const [M2, K] = !rs && transA ? [aCols, aRows] : [aRows, aCols];
  const [K2, N2] = transB ? [bm.cols, bm.rows] : [bm.rows, bm.cols];
  if (M !== M2 || N !== N2 || K !== K2 || M % 64 !== 0 || N % 8 !== 0 || K % 16 !== 0) {
    throw tileDispatchError(
      ctx,
      `C [${M}, ${N}] += A [${M2}, ${K}] · B [${K2}, ${N2}]${transB ? " (B read as [N, K])" : ""}: M, N and K must agree, M a multiple of 64, N of 8, K of 16 (wgmma m64nNk16)`,
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
      `C must be a grid of wgmma m64n${nb}k16 accumulator (D) fragments: ${cBase}`,
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
    // [rows, K] when not transposed (A [M, K]; B [N, K] is transB), else [K, rows].
    const kMajorView = role === "A" ? !trans : trans;
    return kMajorView
      ? {
          role,
          view: v,
          rows: mx.rows,
          k: mx.cols,
          off: (r, k) => r * mx.rowStride + k * mx.colStride,
        }
      : {
          role,
          view: v,
          rows: mx.cols,
          k: mx.rows,
          off: (r, k) => k * mx.rowStride + r * mx.colStride,
        };
  };
  const describe = (x: SharedOperand, opRows: number): Derived => {
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
    const d = deriveDescriptor(x, opRows, sw, eb);
    if (typeof d === "string") {
      throw tileDispatchError(
        ctx,
        `no wgmma descriptor reads ${x.role} (${buf.name} view [${x.view.shape.join(", ")}] strides [${x.view.strides.join(", ")}], ${MODE_NAME[sw]}): ${d}`,
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
  const xa = rs ? undefined : operandOf("A", (a as { view: View }).view, transA);
  const xb = operandOf("B", b.view, transB);
  const da = xa ? describe(xa, 64) : undefined;
  const db = describe(xb, nb);
  const abTok = ab === "float16" ? "f16" : "bf16";
  const name = wgmmaName({ n: nb, ab: abTok, abDtype: ab, a: rs ? "rs" : "ss" });
  const op = opOf(name, "stmt", ctx.span);
  const at = ctx.span ? { span: ctx.span } : {};
  const stmts: Stmt[] = [{ kind: "Call", op: "wgmma.fence.sync.aligned", args: [], ...at }];
  checkOpCall(opOf("wgmma.fence.sync.aligned", "stmt", ctx.span), [], ctx.span);
  const mBlocks = M / 64;
  const nBlocks = N / nb;
  for (let s = 0; s < K / 16; s++) {
    for (let I = 0; I < mBlocks; I++) {
      const aArg = xa
        ? descExpr(xa, da!, startOf(xa, da!, 64 * I, 16 * s))
        : slotPtr(a as RegisterTile, aBase![I]![s]!, ctx.span);
      for (let J = 0; J < nBlocks; J++) {
        const bArg = descExpr(xb, db, startOf(xb, db, nb * J, 16 * s));
        const ops: Expr[] = [
          slotPtr(c, cBase[I]![J]!, ctx.span),
          aArg,
          bArg,
          s > 0 || accum === true ? intImm(1) : accum === false ? intImm(0) : accum,
          intImm(1),
          intImm(1),
          ...(xa ? [intImm(da!.mn ? 1 : 0)] : []),
          intImm(db.mn ? 1 : 0),
        ];
        checkOpCall(op, ops, ctx.span);
        stmts.push({ kind: "Call", op: name, args: ops, ...at });
      }
    }
  }
  stmts.push({ kind: "Call", op: "wgmma.commit_group.sync.aligned", args: [], ...at });
  const count = (K / 16) * mBlocks * nBlocks;
  const side = (role: string, d: Derived): string =>
    `${role} ${d.mn ? "MN" : "K"}-major, ${MODE_NAME[d.swizzle]}: ${d.ldoUsed ? `LBO ${d.ldo} B, ` : ""}SBO ${d.sdo} B, k16 step +${d.kStep} B`;
  const how = [
    rs ? `A from registers ${showTile(a as RegisterTile)}` : side("A", da!),
    side("B", db),
  ].join("; ");
  return {
    stmts,
    explain: `wgmma.fence, wgmma m64n${nb}k16 ×${count} (${rs ? "RS" : "SS"}: ${how}${mBlocks > 1 || nBlocks > 1 ? `; ${mBlocks} × ${nBlocks} blocks of C` : ""}${accum === true ? "" : accum === false ? "; scale-d 0 on the first k step" : "; scale-d of the first k step is accum"}) then commit_group; the wait is the author's`,
  };
}
