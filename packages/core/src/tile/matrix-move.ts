import { knownDivisor, residueMod } from "../analysis/bounds.js";
import { withArticle } from "../show.js";
import { dtypeBytes } from "../dtype.js";
import { binary, logical } from "../ir/arith.js";
import type { View } from "../ir/buffer.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { showSwizzle, swizzleAtomBytes } from "../layout/swizzle.js";
import { bufferElementOffset, bufferPtr } from "../layout/view.js";
import { checkOpCall } from "../ops/check.js";
import { ldmatrixName, stmatrixName, type MatrixCount } from "../ops/mma/ldmatrix.js";
import { opOf } from "../ops/registry.js";
import { wgmmaTileLayout } from "../layout/fragments.js";
import { applyLayout } from "../layout/tile-layout.js";
import { laneSlots, matchMmaTiling, matrixShape, slotPtr } from "./mma-fragment.js";
import {
  showTile,
  tileDispatchError,
  type MemoryTile,
  type RegisterTile,
  type TileContext,
  type TileLowering,
} from "./operand.js";
import { axisCoord, storeOnceConds } from "./threads.js";

/** Bytes of one ldmatrix / stmatrix row: 8 b16 elements (PTX ISA, ldmatrix, stmatrix). */
const ROW_BYTES = 16;

/** One 32-bit register of the lane's array as an 8 × 8 b16 matrix of ldmatrix / stmatrix. */
interface MatrixReg {
  readonly trans: boolean;
  /** Element offset (in the view, before any swizzle) of row r of the matrix, r = 0..7. */
  readonly rows: readonly number[];
}

/**
 * A copy the matrix move would serve but declines (not forced): its rows are not provably
 * 16-byte aligned. `declined` says which row starts at which byte, for `explain`; the vectorized
 * path serves the copy.
 */
export interface MatrixMoveDeclined {
  readonly declined: string;
}

/** The direction of a matrix move: shared → registers (ldmatrix) or registers → shared (stmatrix). */
export type MatrixMoveKind = "ldmatrix" | "stmatrix";

/** The lowest sm of each matrix move (PTX ISA, ldmatrix: sm_75; stmatrix: sm_90). */
export const MATRIX_MOVE_SM: Readonly<Record<MatrixMoveKind, number>> = {
  ldmatrix: 75,
  stmatrix: 90,
};

/**
 * A register tile a matrix move serves: every 32-bit register (slots 2q, 2q + 1) of every warp
 * that holds it is one 8 × 8 b16 matrix in ldmatrix / stmatrix's lane order.
 * - `axis` `"laneid"`: a warp tile of mma.sync m16n8k16 fragments (A, B, or C of a 16-bit
 *   dtype), one warp;
 * - `axis` `"tid_in_wg"`: a warpgroup tile in the wgmma accumulator layout
 *   (`T.layout.wgmma_tile_layout("D", 64·k, N, "float32")`, held as a 16-bit dtype, e.g. after
 *   `T.tile.wg.cast`), four warps: warp w of a 64-row block holds its rows 16w..16w+15 exactly
 *   as the m16n8k16 C fragments of a 16 × N warp tile (PTX ISA, wgmma "Matrix fragments for
 *   accumulator D" of .m64nNk16: d_i of lane (g, t) at [16w + g + 8·((i >> 1) & 1),
 *   8·(i >> 2) + 2t + (i & 1)]; mma.sync "Matrix fragments for mma.m16n8k16": c_i of lane (g, t)
 *   at [g + 8·(i >> 1), 2t + (i & 1)]), so each of its registers is such a matrix too.
 */
export interface MatrixTiling {
  /** The thread axis that names the holders: one warp's lanes, or a warpgroup's threads. */
  readonly axis: "laneid" | "tid_in_wg";
  /** The fragments, for messages: "m16n8k16 B fragments", "wgmma D fragments". */
  readonly kind: string;
  /** The whole tile, for explain: "2 × 2 m16n8k16 B fragments", "64 × 64 wgmma D fragments …". */
  readonly grid: string;
  /** The dim(s) the shared view must keep contiguous, for the TX2022 hint. */
  readonly contiguous: string;
  /** Per logical element (row-major over the tile's shape): its holder on `axis`, its slot. */
  readonly thread: readonly number[];
  readonly slot: readonly number[];
}

/**
 * The matrix-move tiling of `t` (see {@link MatrixTiling}): A or B fragments of mma.sync
 * m16n8k16, the C/accumulator fragments of m16n8k16 when `t` holds a 16-bit dtype (e.g. a
 * float16 C tile after `T.tile.cast`), or a 16-bit warpgroup tile whose element → (tid_in_wg,
 * slot) map is that of `wgmmaTileLayout("D", rows, cols, "float32")` (element by element, so any
 * notation of that map). Every such fragment keeps two b16 elements of one matrix row per 32-bit
 * register. Undefined when `t` is none of them (or not a laid-out 16-bit tile).
 */
export function matrixTiling(t: RegisterTile): MatrixTiling | undefined {
  if (!t.laidOut || dtypeBytes(t.dtype) !== 2) return undefined;
  for (const operand of ["A", "B", "C"] as const) {
    const m = matchMmaTiling(t, operand, "m16n8k16");
    if (typeof m === "string") continue;
    const ls = laneSlots(t) as { lane: number[]; slot: number[] };
    return {
      axis: "laneid",
      kind: `${m.shape} ${m.operand} fragments`,
      grid: `${m.grid[0]} × ${m.grid[1]} ${m.shape} ${m.operand} fragments`,
      contiguous: m.operand === "A" ? "K" : m.operand === "C" ? "N" : "N or K",
      thread: ls.lane,
      slot: ls.slot,
    };
  }
  return wgmmaDTiling(t);
}

/** `t` as a warpgroup tile of wgmma D fragments (see {@link matrixTiling}), or undefined. */
function wgmmaDTiling(t: RegisterTile): MatrixTiling | undefined {
  const l = t.layout;
  const dims = matrixShape(t.shape);
  if (!dims || dims[0] % 64 !== 0 || dims[1] % 8 !== 0) return undefined;
  if (l.replica.some((x) => x.extent > 1)) return undefined;
  if (l.shard.some((x) => x.extent > 1 && x.axis !== "m" && x.axis !== "tid_in_wg")) {
    return undefined;
  }
  if (Object.keys(l.offset).some((a) => a !== "m" && a !== "tid_in_wg")) return undefined;
  const want = wgmmaTileLayout("D", dims[0], dims[1], "float32");
  const thread: number[] = [];
  const slot: number[] = [];
  for (let e = 0; e < dims[0] * dims[1]; e++) {
    const c = applyLayout(l, e);
    const w = applyLayout(want, e);
    if ((c.tid_in_wg ?? 0) !== w.tid_in_wg || (c.m ?? 0) !== w.m) return undefined;
    thread.push(w.tid_in_wg!);
    slot.push(w.m!);
  }
  return {
    axis: "tid_in_wg",
    kind: "wgmma D fragments",
    grid: `${dims[0]} × ${dims[1]} wgmma D fragments (each warp's 16 rows of a 64-row block as m16n8k16 C fragments)`,
    contiguous: "N",
    thread,
    slot,
  };
}

/**
 * Copy's rule between a register tile of fragments ({@link matrixTiling}) and a shared view, one
 * concept for both directions: the fragment grid is a set of 8 × 8 b16 matrices. Each 32-bit
 * register of the lane's array (slots 2q, 2q + 1) is an 8 × 8 matrix whose lane (g, t) =
 * (lane / 4, lane % 4) holds [g][2t + h] (a memory row is 8 contiguous elements: the plain form)
 * or [2t + h][g] (`.trans`, e.g. B of a row-major K × N tile); runs of 4, 2 or 1 consecutive
 * registers of one orientation become one `.x4`, `.x2` or `.x1`, lane 8·j + r giving the address
 * of row r of matrix j. Row addresses go through the buffer's swizzle like any access. For a
 * warpgroup tile of wgmma D fragments every warp issues the same instructions on its own 16 rows
 * of each 64-row block (its rows the m16n8k16 C fragments of a warp tile: PTX ISA, wgmma "Matrix
 * fragments for accumulator D"); the row address is then affine in the bits of tid_in_wg.
 * - `ldmatrix` (PTX ISA, `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16`, sm_75):
 *   shared → `reg`;
 * - `stmatrix` (PTX ISA, `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16`, sm_90, PTX
 *   7.8): `reg` → shared. When the scope has more warps than the layout names (e.g. a warp tile
 *   stored at cta scope, or a warpgroup tile at cta scope with two warpgroups), only the first of
 *   those implicit replicas stores (`storeOnceConds`).
 * `reg` is A, B or a 16-bit C warp tile, or a 16-bit wgmma D warpgroup tile (see
 * {@link matrixTiling}).
 * Row addresses (PTX ISA, ldmatrix / stmatrix: each of the 8 rows of an 8 × 8 b16 matrix is 16
 * contiguous bytes whose shared address must be 16-byte aligned; the simulator checks each lane's,
 * TX6018): the instruction is chosen only when every row is provably aligned, i.e. the view keeps
 * each row's 8 elements contiguous (stride 1), the rows' offsets within the view are multiples of
 * 8 elements, and the view's first element is 16-byte aligned: the buffer's alignment is a
 * multiple of 16 and the view's element offset a multiple of 8, proved from its constant value or,
 * when it is known only at run time, from its evident factors (`residueMod`: constant factors,
 * shifts, exact divisions; see {@link rowMisalignment}). An aligned row lies in one atom of any
 * swizzle that keeps at least 16 bytes together (the atoms are aligned to their size), so it stays
 * 16 contiguous bytes after the swizzle; a row off the 16-byte grid would be split by a swizzle of
 * 16-byte atoms (e.g. TMA's 128B) and is misaligned anyway.
 * `forced` (copy's `{ dispatch: "ldmatrix" | "stmatrix" }`) turns each of those refusals into
 * TX2022; forced stmatrix without a known target is left to the op table's arch check.
 * @returns undefined when `reg` is not such a tile, `mem` is not shared, or the target is below
 *   the instruction's sm (for stmatrix: `ctx.sm` unknown or below 90); `{ declined }` (not
 *   forced) when the view's first element is not provably 16-byte aligned (a static offset off
 *   the 16-byte grid, a runtime offset without a factor of 8 elements, a buffer aligned to less
 *   than 16 bytes), `declined` saying which row and byte for explain. The vectorized path then
 *   serves.
 * @throws TirxError TX2022 when a 16-byte matrix row would be split whatever the view's offset:
 *   the shared view does not keep the 8 elements of each matrix row contiguous, a row's offset
 *   within the view is not a multiple of 8 elements (16 bytes: e.g. a row pitch of 36 float16),
 *   or the buffer's swizzle keeps fewer than 16 bytes together; the message names the register
 *   and the nearest layout that works; when `forced`, also for each refusal above (a target below
 *   the instruction's sm names the vectorized path; a view whose first element is not provably
 *   16-byte aligned names the row, its byte within 16, and `{ dispatch: "vector" }` or a slice
 *   that starts on the 16-byte grid).
 */
export function matrixMoveCopy(
  kind: MatrixMoveKind,
  reg: RegisterTile,
  mem: MemoryTile,
  ctx: TileContext,
  forced = false,
): TileLowering | MatrixMoveDeclined | undefined {
  const view = mem.view;
  const buf = view.buffer;
  const vector = `the vectorized ${kind === "ldmatrix" ? "ld" : "st"}.shared path (no dispatch option, or { dispatch: "vector" })`;
  const refuse = (why: string, nearest: string): undefined => {
    if (forced) throw tileDispatchError(ctx, `{ dispatch: "${kind}" }: ${why}`, nearest);
    return undefined;
  };
  if (buf.scope !== "shared" && buf.scope !== "shared.dyn") {
    return refuse(`${kind} moves to and from shared memory; ${buf.name} is ${buf.scope}`, vector);
  }
  // Every target of ARCHS has ldmatrix; stmatrix is chosen only for a known sm_90+ target
  // (forced, an unknown target is left to the op table's arch check at compile time).
  const need = MATRIX_MOVE_SM[kind];
  if (ctx.sm !== undefined && ctx.sm < need) {
    return refuse(`${kind} needs sm_${need}, but T.device_entry's arch is sm_${ctx.sm}`, vector);
  }
  if (ctx.sm === undefined && kind === "stmatrix" && !forced) return undefined;
  const tiling = matrixTiling(reg);
  if (!tiling) {
    return refuse(
      `${showTile(reg)} is not a warp tile of m16n8k16 A, B or 16-bit C fragments, nor a warpgroup tile of 16-bit wgmma D fragments`,
      `T.layout.mma_sync_tile_layout("A" | "B" | "C", "m16n8k16", ...) or T.layout.wgmma_tile_layout("D", 64, N, "float32") over a ${reg.dtype === "float16" || reg.dtype === "bfloat16" ? reg.dtype : "16-bit"} tile, or ${vector}`,
    );
  }
  const what = `${kind} ${kind === "ldmatrix" ? "into" : "from"} ${showTile(reg)} (${tiling.kind})`;
  // A view of a buffer of narrower elements (a byte buffer as float16: the kernel's shared
  // scratch) addresses whole view elements; a wider buffer element would split a row's address.
  if (view.dtype !== reg.dtype || dtypeBytes(buf.dtype) > dtypeBytes(reg.dtype)) {
    throw tileDispatchError(
      ctx,
      `${what} moves ${reg.dtype} bits; ${buf.name} holds ${buf.dtype} (view ${view.dtype})`,
      `${withArticle(reg.dtype)} shared tile`,
    );
  }
  const vs = viewMatrix(view.shape, view.strides);
  const shape = matrixShape(reg.shape)!;
  if (!vs || vs.shape[0] !== shape[0] || vs.shape[1] !== shape[1]) {
    throw tileDispatchError(
      ctx,
      `the register tile ${reg.buffer.name} is ${shape.join(" × ")} and the view of ${buf.name} [${view.shape.join(", ")}]; they must have one shape (extent-1 dims aside)`,
      `a view of shape [${shape.join(", ")}] (sub / rearrange the shared tile)`,
    );
  }
  if (buf.layout && buf.layout.swizzleLen > 0 && swizzleAtomBytes(buf.layout) < ROW_BYTES) {
    throw tileDispatchError(
      ctx,
      `${what}: ${kind === "ldmatrix" ? "an ldmatrix" : "a stmatrix"} row is 16 contiguous bytes, but ${buf.name}'s ${showSwizzle(buf.layout)} keeps only ${swizzleAtomBytes(buf.layout)} bytes together, so it splits every row`,
      `a swizzle that keeps 16-byte atoms, e.g. T.SwizzleLayout(3, ${buf.layout.swizzleLen}, ${Math.max(3 + buf.layout.swizzleLen, buf.layout.atomLen)}) in 16-bit elements`,
    );
  }
  // (thread on tiling.axis, slot) → memory offset of the element in the view.
  const at = new Map<number, number>();
  const C = shape[1];
  const KEY = 1 << 16;
  tiling.slot.forEach((s, e) => {
    at.set(
      tiling.thread[e]! * KEY + s,
      Math.floor(e / C) * vs.strides[0] + (e % C) * vs.strides[1],
    );
  });
  const maxSlot = Math.max(...tiling.slot);
  const warps = tiling.axis === "laneid" ? 1 : 4;
  // regs[q][w]: register q's matrix in warp w (every warp issues the same instructions).
  const regs: (MatrixReg[] | undefined)[] = [];
  for (let q = 0; 2 * q <= maxSlot; q++) {
    const off =
      (w: number) =>
      (lane: number, h: number): number | undefined =>
        at.get((32 * w + lane) * KEY + 2 * q + h);
    if (off(0)(0, 0) === undefined) {
      regs.push(undefined);
      continue;
    }
    const first = matrixRows(off(0), false) ?? matrixRows(off(0), true);
    const ms = first && [first, ...range(1, warps).map((w) => matrixRows(off(w), first.trans))];
    if (!ms || ms.some((m) => m === undefined)) {
      throw tileDispatchError(
        ctx,
        `${what}: register ${q} (slots ${2 * q}, ${2 * q + 1}) of every lane is an 8 × 8 matrix whose 16-byte rows must each be 8 contiguous elements of ${buf.name}, but the view [${view.shape.join(", ")}] : [${view.strides.join(", ")}] splits them (neither its rows nor its columns are contiguous)`,
        `a shared view whose ${tiling.contiguous} dim is contiguous (stride 1) in runs of 8 elements`,
      );
    }
    const bad = ms.flatMap((m) => m!.rows).find((r) => (r * 2) % ROW_BYTES !== 0);
    if (bad !== undefined) {
      throw tileDispatchError(
        ctx,
        `${what}: a row of register ${q}'s 8 × 8 matrix starts at element ${bad} of the view, byte ${bad * 2}: ${kind === "ldmatrix" ? "an ldmatrix" : "a stmatrix"} row must start 16-byte aligned, or the 16-byte row is split`,
        `row strides that are multiples of 8 elements (16 bytes)`,
      );
    }
    regs.push(ms as MatrixReg[]);
  }
  // Every row is 16-byte aligned relative to the view: the view's first element decides.
  const q0 = regs.findIndex((r) => r !== undefined);
  const off = q0 < 0 ? undefined : rowMisalignment(view, q0, regs[q0]![0]!.rows[0]!);
  if (off) {
    const rule = `${kind === "ldmatrix" ? "an ldmatrix" : "a stmatrix"} row address must be 16-byte aligned (PTX ISA, ${kind})`;
    if (!forced) return { declined: `${off.why}; ${rule}` };
    throw tileDispatchError(
      ctx,
      `{ dispatch: "${kind}" }: ${what}: ${off.why}; ${rule}`,
      `{ dispatch: "vector" } (or no dispatch option: the vectorized ${kind === "ldmatrix" ? "ld" : "st"}.shared path), or ${off.fix}`,
    );
  }
  const thread = axisCoord(tiling.axis, ctx);
  const stmts: Stmt[] = [];
  const counts: string[] = [];
  for (let q = 0; q < regs.length;) {
    const r = regs[q]?.[0];
    if (!r) {
      q++;
      continue;
    }
    const run = (n: number): boolean =>
      q % n === 0 &&
      q + n <= regs.length &&
      regs.slice(q, q + n).every((x) => x !== undefined && x[0]!.trans === r.trans);
    const num: MatrixCount = run(4) ? 4 : run(2) ? 2 : 1;
    // Thread 32·w + l gives row l % 8 of matrix (l / 8) % num of warp w.
    const table = Array.from(
      { length: 32 * warps },
      (_, i) => regs[q + (((i & 31) >> 3) % num)]![i >> 5]!.rows[i & 7]!,
    );
    const addr = laneLinear(table, thread);
    if (!addr) {
      throw tileDispatchError(
        ctx,
        `${what}: the row addresses of registers ${q}..${q + num - 1} are not affine in the bits of ${tiling.axis}`,
        `T.layout.mma_sync_tile_layout over a row-major shared tile`,
      );
    }
    const name = kind === "ldmatrix" ? ldmatrixName(num, r.trans) : stmatrixName(num, r.trans);
    const args = [
      slotPtr(reg, 2 * q, ctx.span),
      bufferPtr(
        buf,
        bufferElementOffset(buf, view.dtype, binary("add", view.offset, addr), what, ctx.span),
        ctx.span,
      ),
    ];
    checkOpCall(opOf(name, "stmt", ctx.span), args, ctx.span);
    stmts.push({ kind: "Call", op: name, args, ...(ctx.span ? { span: ctx.span } : {}) });
    counts.push(`x${num}${r.trans ? ".trans" : ""}`);
    q += num;
  }
  let out: readonly Stmt[] = stmts;
  const once = kind === "stmatrix" ? storeOnceConds(reg.layout, ctx) : [];
  if (once.length > 0) {
    out = [
      {
        kind: "If",
        cond: once.reduce((a, b) => logical("and", a, b)),
        then: stmts.length === 1 ? stmts[0]! : { kind: "Seq", stmts },
        ...(ctx.span ? { span: ctx.span } : {}),
      },
    ];
  }
  const tally = [...new Set(counts)].map((c) => `${c} ×${counts.filter((x) => x === c).length}`);
  return {
    stmts: out,
    explain: `${kind} ${tally.join(", ")}${warps > 1 ? " per warp" : ""}: ${reg.buffer.name} is ${tiling.grid} and ${buf.name}${buf.layout ? ` (${showSwizzle(buf.layout)})` : ""} keeps each 16-byte row contiguous${kind === "stmatrix" ? " (sm_90)" : ""}${once.length > 0 ? "; one warp of the scope stores" : ""}`,
  };
}

/**
 * Why the 16-byte rows of a matrix move through `view` are not provably 16-byte aligned, or
 * undefined when they are. The caller has checked that every row starts a multiple of 16 bytes
 * after the view's first element, so the rows are aligned exactly when that element is: the
 * buffer starts `align`-aligned (a multiple of 16 needed) and the view's element offset is a
 * multiple of 16 bytes, from its constant value or, for an offset known only at run time, from its
 * residue modulo the elements of 16 bytes where evident (`residueMod`: constant factors, shifts,
 * exact divisions). `q` and `row` (the offset within the view of row 0 of register q's matrix)
 * name the row in the message. `why` says which row starts at which byte of 16 (and, under a
 * swizzle of 16-byte atoms, that the row would straddle two atoms); `fix` an aligned slice.
 * Rule: PTX ISA, ldmatrix / stmatrix (each row's 16 bytes at a 16-byte aligned shared address).
 */
function rowMisalignment(
  view: View,
  q: number,
  row: number,
): { why: string; fix: string } | undefined {
  const buf = view.buffer;
  // A view's offset counts its own elements (a byte buffer's view as float16 included).
  const eb = dtypeBytes(view.dtype);
  const per = ROW_BYTES / eb;
  const which = `row 0 of register ${q}'s 8 × 8 matrix (element ${row} of the view)`;
  if (buf.align % ROW_BYTES !== 0) {
    return {
      why: `${buf.name} is only ${buf.align}-byte aligned, so no row of the view (e.g. ${which}) is provably 16-byte aligned`,
      fix: `a ${buf.name} allocated 16-byte aligned ({ align: 16 })`,
    };
  }
  const c = constInt(view.offset);
  const sw = buf.layout && buf.layout.swizzleLen > 0 ? buf.layout : undefined;
  const split = (byte: string): string =>
    sw && swizzleAtomBytes(sw) === ROW_BYTES
      ? `, and ${buf.name}'s ${showSwizzle(sw)} moves each 16-byte atom on its own, so a row from ${byte} would be split across two atoms`
      : "";
  if (c !== undefined) {
    const b = ((((c + row) * eb) % ROW_BYTES) + ROW_BYTES) % ROW_BYTES;
    if (b === 0) return undefined;
    const lo = c - b / eb;
    return {
      why: `the view starts at element ${c} of ${buf.name} (byte ${c * eb}), so its rows start at byte ${b} of 16: ${which} is byte ${(c + row) * eb} of ${buf.name}${split(`byte ${b} of an atom`)}`,
      fix: `a slice of ${buf.name} that starts on a multiple of ${per} elements (16 bytes): element ${lo} or ${lo + per} instead of ${c}`,
    };
  }
  const r = residueMod(view.offset, per);
  if (r === 0) return undefined;
  const d = knownDivisor(view.offset);
  const at =
    r !== undefined ? `byte ${((r + row) * eb) % ROW_BYTES} of 16` : "an unknown byte of 16";
  return {
    why:
      r !== undefined
        ? `the view's offset is known only at run time and is ${r} modulo ${per} elements, so its rows start at ${at} (e.g. ${which})${split(at)}`
        : `the view's offset is known only at run time and provably a multiple of ${d} element${d === 1 ? "" : "s"} (${d * eb} bytes), not of ${per} (16 bytes), so ${which} may start off the 16-byte grid${split("such a byte")}`,
    fix: `a view offset that is evidently a multiple of ${per} elements (e.g. ${per}·k + a multiple of ${per})`,
  };
}

/** The view as a matrix: its two dims of extent > 1 (or one, with a unit dim), and strides. */
function viewMatrix(
  shape: readonly number[],
  strides: readonly number[],
): { shape: [number, number]; strides: [number, number] } | undefined {
  const big = shape.flatMap((n, d) => (n === 1 ? [] : [d]));
  if (big.length === 2) {
    return {
      shape: [shape[big[0]!]!, shape[big[1]!]!],
      strides: [strides[big[0]!]!, strides[big[1]!]!],
    };
  }
  if (big.length === 1) return { shape: [1, shape[big[0]!]!], strides: [0, strides[big[0]!]!] };
  return undefined;
}

/**
 * The 8 row offsets of one register's 8 × 8 matrix when `off(lane, h)` follows ldmatrix's (and
 * stmatrix's)
 * pattern: plain, lane (g, t) holds row g's elements 2t + h; `.trans`, it holds element g of
 * rows 2t + h. Undefined when it does not.
 */
function matrixRows(
  off: (lane: number, h: number) => number | undefined,
  trans: boolean,
): MatrixReg | undefined {
  const rows: number[] = [];
  for (let r = 0; r < 8; r++) {
    const v = trans ? off(4 * 0 + (r >> 1), r & 1) : off(4 * r, 0);
    if (v === undefined) return undefined;
    rows.push(v);
  }
  for (let lane = 0; lane < 32; lane++) {
    const g = lane >> 2;
    const t = lane & 3;
    for (let h = 0; h < 2; h++) {
      const want = trans ? rows[2 * t + h]! + g : rows[g]! + 2 * t + h;
      if (off(lane, h) !== want) return undefined;
    }
  }
  return { trans, rows };
}

/**
 * `table[lane]` as an int32 expression of `lane` (a thread coordinate of `table.length` values, a
 * power of two: 32 lanes, or the 128 threads of a warpgroup) when it is affine in the lane's bits
 * (`table[0] + Σ bit_b(lane) · (table[2^b] - table[0])`); runs of bits with doubling weights
 * become one `(lane >> b) % 2^n · w` term. Undefined otherwise.
 */
function laneLinear(table: readonly number[], lane: Expr): Expr | undefined {
  if (table[0] !== 0) {
    const b0 = table[0]!;
    const rest = laneLinear(
      table.map((x) => x - b0),
      lane,
    );
    return rest && binary("add", rest, intImm(b0));
  }
  const bits = Math.log2(table.length);
  const w = range(0, bits).map((b) => table[1 << b]!);
  for (let l = 0; l < table.length; l++) {
    const v = w.reduce((s, x, b) => s + ((l >> b) & 1) * x, 0);
    if (v !== table[l]) return undefined;
  }
  let e: Expr | undefined;
  for (let b = 0; b < bits;) {
    if (w[b] === 0) {
      b++;
      continue;
    }
    let n = 1;
    while (b + n < bits && w[b + n] === w[b]! * 2 ** n) n++;
    let digit: Expr = b === 0 ? lane : binary("floordiv", lane, intImm(2 ** b));
    if (b + n < bits) digit = binary("floormod", digit, intImm(2 ** n));
    const term = w[b] === 1 ? digit : binary("mul", digit, intImm(w[b]!));
    e = e ? binary("add", e, term) : term;
    b += n;
  }
  return e ?? intImm(0);
}

/** The integers lo, lo + 1, …, hi - 1. */
function range(lo: number, hi: number): number[] {
  return Array.from({ length: Math.max(0, hi - lo) }, (_, i) => lo + i);
}
