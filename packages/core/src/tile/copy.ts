import { dtypeBytes } from "../dtype.js";
import { withArticle } from "../show.js";
import { binary, logical } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import { bufferPtr } from "../layout/view.js";
import { knownDivisor } from "../analysis/bounds.js";
import { checkOpCall } from "../ops/check.js";
import { opOf } from "../ops/registry.js";
import type { View } from "../ir/buffer.js";
import type { Stmt } from "../ir/stmt.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { loadSlot, storeSlot } from "./slot-loop.js";
import { matrixMoveCopy, matrixTiling, MATRIX_MOVE_SM } from "./matrix-move.js";
import { reshapedTile, tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { elementMapShift } from "./same-map.js";
import { shardPlaces, threadIndexPart, unflatten } from "./flat-index.js";
import { slotScratch } from "./slot-scratch.js";
import {
  ALL_SCOPES,
  asArg,
  checkLaidOut,
  checkScope,
  DST_SRC,
  type TilePrimitive,
} from "./primitive.js";
import {
  iterValue,
  loopNest,
  ownedOnly,
  ownsGuard,
  storeOnceConds,
  underGuard,
} from "./threads.js";

const VECTOR_BYTES = 16;

/** dst, src, then the options { dispatch, reduce }. */
const OPERANDS = [...DST_SRC, { name: "options", kind: "options" }] as const;

/** Dims of `shape` whose extent is not 1, with their index. */
function bigDims(shape: readonly number[]): number[] {
  return shape.flatMap((n, d) => (n === 1 ? [] : [d]));
}

/**
 * The register tile `t` as view `view` reads it, and the memory stride of each of its shard
 * iters when its logical element (row-major over `t.shape`) is element `coord` of `view` (the
 * two shapes equal once extent-1 dims are dropped). A shape whose dims do not line up with runs
 * of the layout's iters is read as the view's shape with its contiguous dims merged (a view
 * `[2, 48]` of rows 48 apart is `[96]`), when that groups the layout; `undefined` when it does
 * not either: each element is then addressed through its row-major index ({@link flatCopy}).
 * @throws TirxError TX2022 when the shapes differ.
 */
function memoryStrides(
  t: RegisterTile,
  view: View,
  ctx: TileContext,
): { tile: RegisterTile; strides: number[] } | undefined {
  const a = bigDims(t.shape);
  const b = bigDims(view.shape);
  const same = a.length === b.length && a.every((d, i) => t.shape[d] === view.shape[b[i]!]);
  if (!same) {
    throw tileDispatchError(
      ctx,
      `the register tile ${t.buffer.name} [${t.shape.join(", ")}] and the view of ${view.buffer.name} [${view.shape.join(", ")}] must have one shape (extent-1 dims aside)`,
      `a view of shape [${t.shape.join(", ")}] (sub / rearrange the tensor)`,
    );
  }
  if (t.dims) {
    return { tile: t, strides: iterStrides(t, t.dims, new Map(a.map((d, i) => [d, b[i]!])), view) };
  }
  // The view's dims merged where one steps by the whole of the next (row-major contiguous).
  const merged: { n: number; s: number }[] = [];
  for (const d of b) {
    const last = merged[merged.length - 1];
    const n = view.shape[d]!;
    const s = view.strides[d]!;
    if (last && last.s === s * n) merged[merged.length - 1] = { n: last.n * n, s };
    else merged.push({ n, s });
  }
  const r = reshapedTile(t, merged.length > 0 ? merged.map((m) => m.n) : [1]);
  if (!r?.dims) return undefined;
  const asView: View = {
    ...view,
    shape: merged.map((m) => m.n),
    strides: merged.map((m) => m.s),
    axes: merged.map(() => ""),
  };
  const toView = new Map(merged.map((_, i) => [i, i]));
  return { tile: r, strides: iterStrides(r, r.dims, toView, asView) };
}

/** Each shard iter's memory stride: its dim's view stride times the extents inside it. */
function iterStrides(
  t: RegisterTile,
  dims: readonly number[],
  toView: ReadonlyMap<number, number>,
  view: View,
): number[] {
  return t.layout.shard.map((x, i) => {
    const d = dims[i]!;
    const vd = toView.get(d);
    if (vd === undefined) return 0;
    let inner = 1;
    for (let k = i + 1; k < t.layout.shard.length; k++)
      if (dims[k] === d) inner *= t.layout.shard[k]!.extent;
    return view.strides[vd]! * inner;
  });
}

/**
 * `T.tile.copy(dst, src)` between a register tile and a shared or global view (TIRx
 * `Tx.tile.copy`), either way, same dtype. Each thread moves its own elements: the thread iters
 * of the layout give its base address, the `m` iters a loop. When the innermost `m` iter is
 * contiguous in both the registers (stride 1) and memory (stride 1), it becomes vectorized
 * accesses of up to 16 bytes (`T.vectorized`; codegen emits `ld/st.v*` where it proves the
 * alignment, PTX ISA "Vectors"); otherwise the layout gives each thread scalar elements and the
 * loop is scalar. A tile whose shape's dims do not line up with runs of its layout's iters
 * (`[2, 48]` over `S[(3, 32) : (1, 1@laneid)]`; TIRx maps an element by its row-major index) is
 * read as the view's shape with its contiguous dims merged (`[96]` for a contiguous view) when
 * that lines up, else each element is addressed through its row-major index, one scalar access
 * each (`flatCopy`). Stores to shared or global memory are made by one replica only (replicas never
 * race) and only by threads that hold elements (a local buffer is per thread: every holder stores); threads of the scope the layout does not name (e.g. the other warps
 * of a CTA for a layout over laneid only) are replicas too, and only the first of them stores.
 * Register to register copies need equal layouts.
 * Dispatch order between a register tile and shared memory: a warp tile of mma.sync fragments
 * (A, B, or C of a 16-bit dtype), or a warpgroup tile of a 16-bit dtype in the wgmma accumulator
 * layout (`T.layout.wgmma_tile_layout("D", 64·k, N, "float32")`, e.g. P after `T.tile.wg.cast`:
 * each warp's 16 rows are m16n8k16 C fragments, PTX ISA wgmma "Matrix fragments for accumulator
 * D"), moves by `ldmatrix` (shared → registers, sm_75) or `stmatrix` (registers → shared, sm_90;
 * PTX ISA, stmatrix: each 32-bit register an 8 × 8 b16 matrix, one 16-byte row per lane address;
 * the target is `T.device_entry`'s `arch`, and without one, or below sm_90, the vectorized
 * `st.shared` path serves and `explain` says why); see `matrixMoveCopy` in `matrix-move.ts`.
 * Either is chosen only when every 16-byte matrix row address is provably 16-byte aligned (PTX
 * ISA, ldmatrix / stmatrix): the view's element offset (its constant value, or a runtime offset's
 * evident factors) and the buffer's alignment put its first element on the 16-byte grid, so no
 * swizzle of 16-byte atoms splits a row; otherwise (e.g. `s.sub(":", "4:20")` of float16, rows at
 * byte 8 of 16) the vectorized path serves and `explain` says which row starts at which byte.
 * Every other pair takes the vector / scalar path. `{ dispatch }` forces one:
 * `"ldmatrix"` / `"stmatrix"` (TX2022 naming why when the tile, the view or the target cannot
 * take it, e.g. stmatrix below sm_90 names the vectorized path, and a view whose rows are not
 * provably 16-byte aligned names the row's byte and suggests `{ dispatch: "vector" }` or an
 * aligned slice) or `"vector"` (the vector / scalar path even for fragment tiles).
 * `{ reduce: "add" }` (registers → global or shared memory, float32, int32, uint32 or uint64)
 * adds each element into memory with `red.add` instead of storing it (PTX ISA, red: relaxed, gpu
 * scope; one replica adds, so an element is added once): the accumulation of partial results of
 * several CTAs, e.g. FlashAttention backward's dQ. Scalar, one `red` per element.
 * @throws TirxError TX2022 for two memory operands, different dtypes or shapes, layouts
 *   spread beyond the scope, a tile without a TileLayout at warp/wg/cta scope, or a shared layout
 *   that splits a 16-byte ldmatrix / stmatrix row whatever the view's offset (rows not contiguous,
 *   a row pitch off the 16-byte grid, a swizzle of atoms under 16 bytes); an unknown dispatch, or
 *   a forced one that cannot serve the call (including forced ldmatrix / stmatrix on a view whose
 *   rows are not provably 16-byte aligned).
 */
export const copy: TilePrimitive<typeof OPERANDS> = {
  name: "copy",
  doc: "dst = src between a register tile and a shared/global view (vectorized when contiguous)",
  scopes: ALL_SCOPES,
  operands: OPERANDS,
  options: ["dispatch", "reduce"],
  lower: (args, ctx) => {
    const o = (args[2] ?? {}) as { dispatch?: unknown; reduce?: unknown };
    const forced = o.dispatch;
    const reduce = o.reduce;
    if (reduce !== undefined && reduce !== "add") {
      throw tileDispatchError(
        ctx,
        `reduce must be "add", got ${JSON.stringify(reduce)}`,
        `{ reduce: "add" } (red.add into memory), or no reduce option (a plain store)`,
      );
    }
    if (
      forced !== undefined &&
      forced !== "ldmatrix" &&
      forced !== "stmatrix" &&
      forced !== "vector"
    ) {
      throw tileDispatchError(
        ctx,
        `dispatch must be "ldmatrix", "stmatrix" or "vector", got ${JSON.stringify(forced)}`,
        `no dispatch option (the layouts and the target choose)`,
      );
    }
    const dst = asArg(args[0]);
    const src = asArg(args[1]);
    if (dst?.kind === "register" && src?.kind === "register") {
      const shift = elementMapShift(dst, src, ctx);
      if (shift === undefined || dst.dtype !== src.dtype) {
        throw tileDispatchError(
          ctx,
          `a register-to-register copy needs one dtype and one layout; ${src.buffer.name} has ${src.dtype} ${showTileLayout(src.layout)}, ${dst.buffer.name} ${dst.dtype} ${showTileLayout(dst.layout)}`,
          `T.tile.cast for a dtype change; T.tile.permute_layout for a layout change`,
        );
      }
      checkLaidOut(dst, ctx);
      checkScope(dst, ctx);
      const n = dst.layout.shard.filter((x) => x.axis === "m").reduce((p, x) => p * x.extent, 1);
      // Overlapping parts of one tile: through a scratch, so no slot is overwritten before it
      // is read.
      const scratch =
        shift !== 0 && src.buffer.id === dst.buffer.id ? slotScratch(dst, ctx) : undefined;
      const moves = scratch
        ? [
            ...slotLoopCopy(scratch.tile, src, shift, ctx),
            ...slotLoopCopy(dst, scratch.tile, 0, ctx),
          ]
        : slotLoopCopy(dst, src, shift, ctx);
      return {
        stmts: [...(scratch ? [scratch.alloc] : []), ...ownedOnly(dst.layout, ctx, moves)],
        explain: `register moves, ${n} slots per thread: ${dst.buffer.name} ${showTileLayout(dst.layout)}`,
      };
    }
    const toMemory = dst?.kind === "memory";
    const reg = toMemory ? src : dst;
    const mem = toMemory ? dst : src;
    if (reg?.kind !== "register" || mem?.kind !== "memory") {
      throw tileDispatchError(
        ctx,
        "copy moves between a register tile and a shared or global view (or two register tiles)",
        dst?.kind === "memory" && src?.kind === "memory"
          ? dst.view.buffer.scope.startsWith("shared")
            ? `a register tile in between (T.tile.${ctx.scope === "thread" ? "" : `${ctx.scope}.`}copy(regs, ${src.view.buffer.name}) then copy(${dst.view.buffer.name}, regs)), or T.tile.copy_async(${dst.view.buffer.name}, ${src.view.buffer.name}) for shared ← global async copies (cp.async / TMA)`
            : `a register tile in between (T.tile.${ctx.scope === "thread" ? "" : `${ctx.scope}.`}copy(regs, ${src.view.buffer.name}) then copy(${dst.view.buffer.name}, regs)), or T.tile.copy_async(${dst.view.buffer.name}, ${src.view.buffer.name}) at thread scope (inside T.if_(tid.eq(0), ...)) for global ← shared bulk / TMA stores`
          : "a register tile (T.alloc_local with a TileLayout) as one operand",
      );
    }
    checkLaidOut(reg, ctx);
    checkScope(reg, ctx);
    if (reduce !== undefined) {
      if (!toMemory || !REDUCE_DTYPES.includes(reg.dtype) || forced !== undefined) {
        throw tileDispatchError(
          ctx,
          !toMemory
            ? `{ reduce: "add" } adds registers into memory; this copy loads`
            : forced !== undefined
              ? `{ reduce: "add" } is one red.add per element; it takes no dispatch option`
              : `{ reduce: "add" } needs a dtype red.add takes (${REDUCE_DTYPES.join(", ")}); ${reg.buffer.name} is ${reg.dtype}`,
          !toMemory
            ? `T.tile.copy(${mem.view.buffer.name}, regs, { reduce: "add" })`
            : forced !== undefined
              ? `{ reduce: "add" } alone`
              : `T.tile.cast into a float32 tile first`,
        );
      }
    }
    const kind = toMemory ? "stmatrix" : "ldmatrix";
    if (forced !== undefined && forced !== "vector" && forced !== kind) {
      throw tileDispatchError(
        ctx,
        `{ dispatch: "${forced}" } moves ${forced === "ldmatrix" ? "shared → registers" : "registers → shared"}, but this copy goes the other way`,
        `{ dispatch: "${kind}" }`,
      );
    }
    const matrices =
      forced === "vector" || reduce !== undefined
        ? undefined
        : matrixMoveCopy(kind, reg, mem, ctx, forced === kind);
    if (matrices && "stmts" in matrices) return matrices;
    // Why a fragment tile did not take ldmatrix / stmatrix (for explain): rows not provably
    // 16-byte aligned, or (stored to shared memory) the target or the dispatch option.
    const noMatrixMove = matrices
      ? ` (not ${kind}: ${matrices.declined})`
      : toMemory && mem.view.buffer.scope.startsWith("shared") && matrixTiling(reg)
        ? forced === "vector"
          ? ` ({ dispatch: "vector" })`
          : ctx.sm === undefined
            ? ` (stmatrix needs sm_90: T.device_entry({ launch, arch: "sm_90" }) selects it)`
            : ` (stmatrix needs sm_${MATRIX_MOVE_SM.stmatrix}; the target is sm_${ctx.sm})`
        : "";
    const view = mem.view;
    if (view.dtype !== reg.dtype) {
      throw tileDispatchError(
        ctx,
        `copy moves bits: ${reg.buffer.name} is ${reg.dtype}, ${view.buffer.name} ${view.dtype}`,
        `T.tile.cast into ${withArticle(view.dtype)} tile first`,
      );
    }
    const read = memoryStrides(reg, view, ctx);
    // One element between slot `slot` of the registers and offset `off` of the view.
    const move = (slot: Expr, off: Expr): Stmt =>
      reduce
        ? redAdd(view, off, loadSlot(reg, slot), ctx)
        : toMemory
          ? {
              kind: "Store",
              buffer: view.buffer,
              dtype: view.dtype,
              offset: off,
              value: loadSlot(reg, slot),
              ...(ctx.span ? { span: ctx.span } : {}),
            }
          : storeSlot(
              reg,
              slot,
              { kind: "BufferLoad", buffer: view.buffer, offset: off, dtype: view.dtype },
              ctx,
            );
    // Only holders move, and one copy of each element stores: explicit replicas and unnamed
    // threads alike (a local buffer is each thread's own, so there every holder stores its copy).
    const holders = (): Expr | undefined => {
      let guard = ownsGuard(reg.layout, ctx);
      if (toMemory && view.buffer.scope !== "local") {
        for (const c of storeOnceConds(reg.layout, ctx))
          guard = guard ? logical("and", guard, c) : c;
      }
      return guard;
    };
    const space = view.buffer.scope.startsWith("shared") ? "shared" : view.buffer.scope;
    const verb = reduce ? "red" : toMemory ? "st" : "ld";
    if (!read) {
      const flat = flatCopy(reg, view, move, ctx);
      return {
        stmts: underGuard(holders(), flat.stmts, ctx),
        explain: `scalar ${verb}.${space} ×${flat.count} per thread, each address through the element's row-major index: the dims of [${reg.shape.join(", ")}] do not line up with the layout's iters, nor do the view's (contiguous dims merged); ${reg.buffer.name} ${showTileLayout(reg.layout)}${noMatrixMove}`,
      };
    }
    const { tile, strides } = read;
    const shard = tile.layout.shard;
    let thread: Expr = view.offset;
    shard.forEach((x, i) => {
      if (x.axis === "m" || strides[i] === 0 || x.extent === 1) return;
      const v = iterValue(tile.layout, x, ctx);
      thread = binary("add", thread, binary("mul", v, intImm(strides[i]!)));
    });
    // The m iters, outermost first; the innermost may split into a vector.
    const ms = shard.flatMap((x, i) =>
      x.axis === "m" && x.extent > 1 ? [{ x, g: strides[i]! }] : [],
    );
    const last = ms[ms.length - 1];
    let vec = 1;
    if (last && last.x.stride === 1 && last.g === 1 && reduce === undefined) {
      const bytes = dtypeBytes(reg.dtype);
      while (vec * 2 * bytes <= VECTOR_BYTES && last.x.extent % (vec * 2) === 0) vec *= 2;
    }
    type Loop = { extent: number; m: number; g: number };
    const loops: Loop[] = ms.map(({ x, g }) => ({ extent: x.extent, m: x.stride, g }));
    if (vec > 1) {
      const l = loops.pop()!;
      if (l.extent / vec > 1) loops.push({ extent: l.extent / vec, m: l.m * vec, g: l.g * vec });
      loops.push({ extent: vec, m: 1, g: 1 });
    }
    // Codegen issues the vectors only where it proves each start aligned to the vector's bytes,
    // else scalar accesses with a PTX comment: say so when the start's known factors fall short.
    const known = knownDivisor(thread);
    const vecBytes = vec * dtypeBytes(reg.dtype);
    const startBytes = known === 0 ? vecBytes : known * dtypeBytes(reg.dtype);
    const vecNote =
      vec > 1 && (startBytes % vecBytes !== 0 || view.buffer.align % vecBytes !== 0)
        ? ` where codegen proves them ${vecBytes}-byte aligned (the start is known to be a multiple of ${Math.min(startBytes & -startBytes, view.buffer.align)} B only: scalar accesses otherwise)`
        : "";
    const mBase = reg.layout.offset.m ?? 0;
    let body = loopNest(
      ctx,
      loops.map((l) => l.extent),
      (vars) => {
        let slot: Expr = intImm(mBase);
        let off: Expr = thread;
        vars.forEach((v, i) => {
          const l = loops[i]!;
          slot = binary("add", slot, l.m === 1 ? v : binary("mul", v, intImm(l.m)));
          off = binary("add", off, l.g === 1 ? v : binary("mul", v, intImm(l.g)));
        });
        return [move(slot, off)];
      },
      vec > 1 ? "vectorized" : "unroll",
    );
    body = underGuard(holders(), body, ctx);
    const count = loops.reduce((p, l) => p * l.extent, 1) / vec;
    const how = reduce
      ? `red.${space}.add.${reg.dtype} ×${count} per thread (one replica adds each element)`
      : vec > 1
        ? `${verb}.${space} vectors of ${vec * dtypeBytes(reg.dtype)} B (${vec} × ${reg.dtype}) ×${count} per thread: the innermost m iter is contiguous in registers and memory${vecNote}`
        : `scalar ${verb}.${space} ×${count} per thread: no m iter is contiguous in both registers and memory`;
    const readAs =
      tile === reg
        ? ""
        : ` (read as [${tile.shape.join(", ")}], the view's contiguous dims merged)`;
    return {
      stmts: body,
      explain: `${how}; ${reg.buffer.name} ${showTileLayout(reg.layout)}${readAs}${noMatrixMove}`,
    };
  },
};

/**
 * A copy between register tile `t` and `view` when no reading of the tile's shape lines up with
 * the view ({@link memoryStrides}): per slot, the element's row-major index (the thread's part,
 * bound once, plus the `m` iters' values times their places), its indices over the view's
 * shape, and their offset in the view; one scalar access each (`move`). TIRx docs, "Tensor
 * Layout": a tile's elements are the shard's by row-major index.
 * @throws TirxError TX2022 as iterValue.
 */
function flatCopy(
  t: RegisterTile,
  view: View,
  move: (slot: Expr, off: Expr) => Stmt,
  ctx: TileContext,
): { stmts: Stmt[]; count: number } {
  const places = shardPlaces(t.layout);
  const ms = t.layout.shard.flatMap((x, i) =>
    x.axis === "m" && x.extent > 1 ? [{ x, place: places[i]! }] : [],
  );
  const stmts: Stmt[] = [];
  let base = threadIndexPart(t, ctx);
  if (base.kind !== "IntImm") {
    const v = ctx.freshVar("elem", "int32");
    stmts.push({ kind: "Let", var: v, value: base, ...(ctx.span ? { span: ctx.span } : {}) });
    base = v;
  }
  const mBase = t.layout.offset.m ?? 0;
  stmts.push(
    ...loopNest(
      ctx,
      ms.map((m) => m.x.extent),
      (vars) => {
        let slot: Expr = intImm(mBase);
        let f: Expr = base;
        vars.forEach((v, i) => {
          const { x, place } = ms[i]!;
          slot = binary("add", slot, x.stride === 1 ? v : binary("mul", v, intImm(x.stride)));
          f = binary("add", f, place === 1 ? v : binary("mul", v, intImm(place)));
        });
        let off: Expr = view.offset;
        unflatten(f, view.shape).forEach((idx, d) => {
          const s = view.strides[d]!;
          if (view.shape[d]! > 1 && s !== 0)
            off = binary("add", off, s === 1 ? idx : binary("mul", idx, intImm(s)));
        });
        return [move(slot, off)];
      },
    ),
  );
  return { stmts, count: ms.reduce((p, m) => p * m.x.extent, 1) };
}

/** The dtypes `{ reduce: "add" }` takes: those of `red.add` (PTX ISA, red). */
const REDUCE_DTYPES: readonly string[] = ["float32", "int32", "uint32", "uint64"];

/** `red.add [view.buffer + off], value` (the `T.cuda.red_add` op), checked against its record. */
function redAdd(view: View, off: Expr, value: Expr, ctx: TileContext): Stmt {
  const args = [bufferPtr(view.buffer, off, ctx.span), value];
  checkOpCall(opOf("red.add", "stmt", ctx.span), args, ctx.span);
  return { kind: "Call", op: "red.add", args, ...(ctx.span ? { span: ctx.span } : {}) };
}

/** dst's slots from src's, src's slot `shift` past dst's (two parts of one tile). */
function slotLoopCopy(
  dst: RegisterTile,
  src: RegisterTile,
  shift: number,
  ctx: TileContext,
): Stmt[] {
  const ms = dst.layout.shard.filter((x) => x.axis === "m");
  return loopNest(
    ctx,
    ms.map((x) => x.extent),
    (vars) => {
      let slot: Expr = intImm(dst.layout.offset.m ?? 0);
      vars.forEach((v, i) => (slot = binary("add", slot, binary("mul", v, intImm(ms[i]!.stride)))));
      const from = shift === 0 ? slot : binary("add", slot, intImm(shift));
      return [storeSlot(dst, slot, loadSlot(src, from), ctx)];
    },
  );
}
