import { dtypeBytes } from "../dtype.js";
import { binary, compare } from "../ir/arith.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import { knownDivisor } from "../analysis/bounds.js";
import type { View } from "../ir/buffer.js";
import type { Stmt } from "../ir/stmt.js";
import { decode } from "./for-range.js";
import { showTile, tileDispatchError, type TileContext } from "./operand.js";
import { asArg, asDType, ALL_SCOPES, type TilePrimitive } from "./primitive.js";
import { loopNest, scopeThreads } from "./threads.js";

/** The widest store one thread makes: 16 bytes (PTX ISA, "Vectors": `st.v4.b32`). */
const VECTOR_BYTES = 16;

/** The operands of memset: the destination view and the scalar. */
const OPERANDS = [
  { name: "dst", kind: "tile" },
  { name: "value", kind: "value" },
] as const;

/**
 * The view as rows of a contiguous run: `run` elements at stride 1 (the innermost dims merged
 * while they stay contiguous; 1 when the innermost stride is not 1) and the outer dims whose
 * digits give a row's offset (outermost first).
 */
function runsOf(v: View): { run: number; outer: { extent: number; stride: number }[] } {
  const dims = v.shape.flatMap((n, d) => (n === 1 ? [] : [{ extent: n, stride: v.strides[d]! }]));
  let run = 1;
  let k = dims.length;
  while (k > 0 && dims[k - 1]!.stride === run) {
    run *= dims[k - 1]!.extent;
    k--;
  }
  return { run, outer: dims.slice(0, k) };
}

/**
 * `T.tile.memset(dst, value)` (TIRx `Tx.tile.memset`: set every element of dst to a scalar):
 * fill a shared or global view with `value` (converted to the view's dtype), the stores shared by
 * the scope's threads (thread: the one thread; warp: its 32 lanes; wg: its 128 threads; cta:
 * every thread), item k to thread k mod n, as copy_async shares its chunks; each warp (wg) of a
 * warp (wg) scope fills the view it passes. The view is rows of a contiguous run (innermost dims
 * merged while contiguous): each row is filled by vector stores of `v` elements (`T.vectorized`,
 * up to 16 bytes: `st.v4.b32` for float32, PTX ISA "Vectors"), `v` the largest power of two whose
 * bytes fit 16 and that keeps every vector aligned (the view's static offset, every row stride and
 * the buffer's alignment multiples of v elements); the `run mod v` elements left at the end of a
 * row (a tail the author's shape forces) are scalar stores, and `explain` says so. A runtime view
 * offset keeps vector stores where it is provably a multiple of v elements (analysis/bounds.ts
 * knownDivisor: e.g. blockIdx.x · 4096), else gives scalar stores.
 * @example T.tile.cta.memset(S, 0) // S: T.alloc_shared([64, 64], "float32"): st.shared.v4 ×8 per thread
 * @throws TirxError TX2022 for a register tile dst (suggesting `T.tile.fill`), a register tile
 *   value (memset takes a scalar), or a local buffer view.
 */
export const memset: TilePrimitive<typeof OPERANDS> = {
  name: "memset",
  doc: "dst = value for every element of a shared/global view (vector stores shared by the scope's threads)",
  scopes: ALL_SCOPES,
  operands: OPERANDS,
  lower: (args, ctx) => {
    const dst = asArg(args[0]);
    const val = asArg(args[1]);
    if (dst?.kind === "register") {
      throw tileDispatchError(
        ctx,
        `memset fills a shared or global view; ${showTile(dst)} is a register tile`,
        `T.tile.${ctx.scope === "thread" ? "" : `${ctx.scope}.`}fill(${dst.buffer.name}, value)`,
      );
    }
    if (dst?.kind !== "memory") {
      throw tileDispatchError(ctx, "dst must be a shared or global view");
    }
    if (val?.kind !== "scalar") {
      throw tileDispatchError(
        ctx,
        `memset's value is one scalar for every element${val?.kind === "register" ? `; ${val.buffer.name} is a register tile` : ""}`,
        `T.tile.copy(dst, tile) to store a register tile`,
      );
    }
    const view = dst.view;
    const buf = view.buffer;
    const space = buf.scope.startsWith("shared") ? "shared" : "global";
    const bytes = dtypeBytes(view.dtype);
    const { run, outer } = runsOf(view);
    const rows = outer.reduce((p, x) => p * x.extent, 1);
    // The offset's known divisor (a constant's own value; for a runtime offset, e.g. a block
    // index times a block's size, what its terms share), as copy_async's chunks are proved.
    const baseDivisor = knownDivisor(view.offset);
    let v = 1;
    const aligned = (w: number): boolean =>
      baseDivisor % w === 0 &&
      outer.every((x) => x.stride % w === 0) &&
      buf.align % (w * bytes) === 0;
    while (2 * v * bytes <= VECTOR_BYTES && 2 * v <= run && aligned(2 * v)) v *= 2;
    const nv = Math.floor(run / v);
    const tail = run - nv * v;
    const value = asDType(val.expr, view.dtype);
    const { n, index } = scopeThreads(ctx);
    const at = (off: Expr): Stmt => ({
      kind: "Store",
      buffer: buf,
      dtype: view.dtype,
      offset: binary("add", view.offset, off),
      value,
      ...(ctx.span ? { span: ctx.span } : {}),
    });
    // `items` pieces of `width` elements shared by the n threads: piece k is row k / per, piece
    // k % per of the row, starting at element `first` of the row.
    const share = (items: number, per: number, width: number, first: number): Stmt[] => {
      if (items === 0) return [];
      const rounds = Math.ceil(items / n);
      return loopNest(
        ctx,
        [rounds],
        ([j]) => {
          const k = rounds === 1 ? index : binary("add", index, binary("mul", j!, intImm(n)));
          // Past the last piece a thread stores nothing (the guard below); its address is clamped
          // so that the verifier's bounds checks see the view's elements only.
          const kc = items % n === 0 ? k : binary("min", k, intImm(items - 1));
          const row = per === 1 ? kc : binary("floordiv", kc, intImm(per));
          const col = per === 1 ? intImm(0) : binary("floormod", kc, intImm(per));
          const off = binary(
            "add",
            decode(row, outer),
            binary("add", binary("mul", col, intImm(width)), intImm(first)),
          );
          const body =
            width === 1
              ? [at(off)]
              : loopNest(ctx, [width], ([e]) => [at(binary("add", off, e!))], "vectorized");
          if (items % n === 0) return body;
          return [
            {
              kind: "If",
              cond: compare("lt", k, intImm(items)),
              then: body.length === 1 ? body[0]! : { kind: "Seq", stmts: body },
              ...(ctx.span ? { span: ctx.span } : {}),
            },
          ];
        },
        rounds > 16 ? "serial" : "unroll",
      );
    };
    const stmts = [...share(rows * nv, nv, v, 0), ...share(rows * tail, tail, 1, nv * v)];
    const per = (items: number): string =>
      items % n === 0 ? `${items / n}` : `≤${Math.ceil(items / n)}`;
    const how =
      v > 1
        ? `st.${space} vectors of ${v * bytes} B (${v} × ${view.dtype}) ×${per(rows * nv)} per thread`
        : `scalar st.${space} ×${per(rows * nv)} per thread`;
    const why =
      v > 1
        ? `rows of ${run} contiguous elements`
        : baseDivisor % 2 !== 0 && constInt(view.offset) === undefined
          ? "the view's runtime offset is not provably a multiple of 2 elements, so no vector alignment is known"
          : run === 1
            ? "no dim of the view is contiguous"
            : `rows of ${run} contiguous elements whose start is not aligned to 2 elements`;
    const tailNote =
      tail > 0 ? ` + scalar tail of ${tail} per row (${run} is not a multiple of ${v})` : "";
    return {
      stmts,
      explain: `${how}${tailNote} over ${n} thread${n === 1 ? "" : "s"}: ${why} of ${buf.name} [${view.shape.join(", ")}]`,
    };
  },
};
