import { dtypeBytes } from "../dtype.js";
import { binary, logical } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { showSwizzle, swizzleAtomBytes } from "../layout/swizzle.js";
import { bufferPtr } from "../layout/view.js";
import { checkOpCall } from "../ops/check.js";
import { ldmatrixName, stmatrixName, type MatrixCount } from "../ops/mma/ldmatrix.js";
import { opOf } from "../ops/registry.js";
import { laneSlots, matchMmaTiling, matrixShape, slotPtr, type MmaTiling } from "./mma-fragment.js";
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

/** The direction of a matrix move: shared → registers (ldmatrix) or registers → shared (stmatrix). */
export type MatrixMoveKind = "ldmatrix" | "stmatrix";

/** The lowest sm of each matrix move (PTX ISA, ldmatrix: sm_75; stmatrix: sm_90). */
export const MATRIX_MOVE_SM: Readonly<Record<MatrixMoveKind, number>> = {
  ldmatrix: 75,
  stmatrix: 90,
};

/**
 * The mma.sync fragment tiling a matrix move serves for `t`: A or B fragments of m16n8k16, or
 * the C/accumulator fragments of m16n8k16 when `t` holds a 16-bit dtype (e.g. a float16 C tile
 * after `T.tile.cast`); every such fragment keeps two b16 elements of one matrix row per 32-bit
 * register. Undefined when `t` is none of them (or not a laid-out 16-bit tile).
 */
export function matrixTiling(t: RegisterTile): MmaTiling | undefined {
  if (!t.laidOut || dtypeBytes(t.dtype) !== 2) return undefined;
  for (const operand of ["A", "B", "C"] as const) {
    const m = matchMmaTiling(t, operand, "m16n8k16");
    if (typeof m !== "string") return m;
  }
  return undefined;
}

/**
 * Copy's rule between a warp register tile of mma.sync fragments and a shared view, one concept
 * for both directions: the fragment grid is a set of 8 × 8 b16 matrices. Each 32-bit register of
 * the lane's array (slots 2q, 2q + 1) is an 8 × 8 matrix whose lane (g, t) = (lane / 4, lane % 4)
 * holds [g][2t + h] (a memory row is 8 contiguous elements: the plain form) or [2t + h][g]
 * (`.trans`, e.g. B of a row-major K × N tile); runs of 4, 2 or 1 consecutive registers of one
 * orientation become one `.x4`, `.x2` or `.x1`, lane 8·j + r giving the address of row r of
 * matrix j. Row addresses go through the buffer's swizzle like any access.
 * - `ldmatrix` (PTX ISA, `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16`, sm_75):
 *   shared → `reg`;
 * - `stmatrix` (PTX ISA, `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16`, sm_90, PTX
 *   7.8): `reg` → shared. When the scope has more warps than the layout names (e.g. a warp tile
 *   stored at cta scope), only the first of those implicit replicas stores (`storeOnceConds`).
 * `reg` is A, B or a 16-bit C tile (see {@link matrixTiling}).
 * `forced` (copy's `{ dispatch: "ldmatrix" | "stmatrix" }`) turns each of those refusals into
 * TX2022; forced stmatrix without a known target is left to the op table's arch check.
 * @returns undefined when `reg` is not such a tile, `mem` is not shared, or the target is below
 *   the instruction's sm (for stmatrix: `ctx.sm` unknown or below 90): the plain copy then serves.
 * @throws TirxError TX2022 when a 16-byte matrix row would be split: the shared view does not
 *   keep the 8 elements of each matrix row contiguous, a row does not start 16-byte aligned, or
 *   the buffer's swizzle keeps fewer than 16 bytes together; the message names the register and
 *   the nearest layout that works; when `forced`, also for each refusal above (a target below the
 *   instruction's sm names the vectorized path).
 */
export function matrixMoveCopy(
  kind: MatrixMoveKind,
  reg: RegisterTile,
  mem: MemoryTile,
  ctx: TileContext,
  forced = false,
): TileLowering | undefined {
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
      `${showTile(reg)} is not a warp tile of m16n8k16 A, B or 16-bit C fragments`,
      `T.layout.mma_sync_tile_layout("A" | "B" | "C", "m16n8k16", ...) over a ${reg.dtype === "float16" || reg.dtype === "bfloat16" ? reg.dtype : "16-bit"} tile, or ${vector}`,
    );
  }
  const what = `${kind} ${kind === "ldmatrix" ? "into" : "from"} ${showTile(reg)} (${tiling.shape} ${tiling.operand} fragments)`;
  if (view.dtype !== reg.dtype || buf.dtype !== reg.dtype) {
    throw tileDispatchError(
      ctx,
      `${what} moves ${reg.dtype} bits; ${buf.name} holds ${buf.dtype} (view ${view.dtype})`,
      `a ${reg.dtype} shared tile`,
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
  const ls = laneSlots(reg);
  if (typeof ls === "string") return undefined;
  // (lane, slot) → memory offset of the element in the view.
  const at = new Map<number, number>();
  const C = shape[1];
  ls.slot.forEach((s, e) => {
    at.set(ls.lane[e]! * 4096 + s, Math.floor(e / C) * vs.strides[0] + (e % C) * vs.strides[1]);
  });
  const maxSlot = Math.max(...ls.slot);
  const regs: (MatrixReg | undefined)[] = [];
  for (let q = 0; 2 * q <= maxSlot; q++) {
    const off = (lane: number, h: number): number | undefined => at.get(lane * 4096 + 2 * q + h);
    if (off(0, 0) === undefined) {
      regs.push(undefined);
      continue;
    }
    const m = matrixRows(off, false) ?? matrixRows(off, true);
    if (!m) {
      throw tileDispatchError(
        ctx,
        `${what}: register ${q} (slots ${2 * q}, ${2 * q + 1}) of every lane is an 8 × 8 matrix whose 16-byte rows must each be 8 contiguous elements of ${buf.name}, but the view [${view.shape.join(", ")}] : [${view.strides.join(", ")}] splits them (neither its rows nor its columns are contiguous)`,
        `a shared view whose ${tiling.operand === "A" ? "K" : tiling.operand === "C" ? "N" : "N or K"} dim is contiguous (stride 1) in runs of 8 elements`,
      );
    }
    const bad = m.rows.find((r) => (r * 2) % ROW_BYTES !== 0);
    if (bad !== undefined) {
      throw tileDispatchError(
        ctx,
        `${what}: a row of register ${q}'s 8 × 8 matrix starts at element ${bad} of the view, byte ${bad * 2}: ${kind === "ldmatrix" ? "an ldmatrix" : "a stmatrix"} row must start 16-byte aligned, or the 16-byte row is split`,
        `row strides that are multiples of 8 elements (16 bytes)`,
      );
    }
    regs.push(m);
  }
  const lane = axisCoord("laneid", ctx);
  const stmts: Stmt[] = [];
  const counts: string[] = [];
  for (let q = 0; q < regs.length;) {
    const r = regs[q];
    if (!r) {
      q++;
      continue;
    }
    const run = (n: number): boolean =>
      q % n === 0 &&
      q + n <= regs.length &&
      regs.slice(q, q + n).every((x) => x !== undefined && x.trans === r.trans);
    const num: MatrixCount = run(4) ? 4 : run(2) ? 2 : 1;
    const table = Array.from({ length: 32 }, (_, l) => regs[q + ((l >> 3) % num)]!.rows[l & 7]!);
    const addr = laneLinear(table, lane);
    if (!addr) {
      throw tileDispatchError(
        ctx,
        `${what}: the row addresses of registers ${q}..${q + num - 1} are not affine in the lane's bits`,
        `T.layout.mma_sync_tile_layout over a row-major shared tile`,
      );
    }
    const name = kind === "ldmatrix" ? ldmatrixName(num, r.trans) : stmatrixName(num, r.trans);
    const args = [
      slotPtr(reg, 2 * q, ctx.span),
      bufferPtr(buf, binary("add", view.offset, addr), ctx.span),
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
    explain: `${kind} ${tally.join(", ")}: ${reg.buffer.name} is ${tiling.grid[0]} × ${tiling.grid[1]} ${tiling.shape} ${tiling.operand} fragments and ${buf.name}${buf.layout ? ` (${showSwizzle(buf.layout)})` : ""} keeps each 16-byte row contiguous${kind === "stmatrix" ? " (sm_90)" : ""}${once.length > 0 ? "; one warp of the scope stores" : ""}`,
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
 * `table[lane]` as an int32 expression of `lane` when it is linear in the lane's bits
 * (`Σ bit_b(lane) · table[2^b]`, table[0] = 0); runs of bits with doubling weights become one
 * `(lane >> b) % 2^n · w` term. Undefined otherwise.
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
  const w = [1, 2, 4, 8, 16].map((b) => table[b]!);
  for (let l = 0; l < 32; l++) {
    const v = w.reduce((s, x, b) => s + ((l >> b) & 1) * x, 0);
    if (v !== table[l]) return undefined;
  }
  let e: Expr | undefined;
  for (let b = 0; b < 5;) {
    if (w[b] === 0) {
      b++;
      continue;
    }
    let n = 1;
    while (b + n < 5 && w[b + n] === w[b]! * 2 ** n) n++;
    let digit: Expr = b === 0 ? lane : binary("floordiv", lane, intImm(2 ** b));
    if (b + n < 5) digit = binary("floormod", digit, intImm(2 ** n));
    const term = w[b] === 1 ? digit : binary("mul", digit, intImm(w[b]!));
    e = e ? binary("add", e, term) : term;
    b += n;
  }
  return e ?? intImm(0);
}
