// A tile reduction over a tile whose dims do not line up with its layout's iters: the same
// registers read as [outer, axis, inner] and reduced along the middle dim.
import { groupLayout } from "../layout/tile-layout.js";
import { TirxError } from "../diagnostics.js";
import {
  reshapedTile,
  showTile,
  tileDispatchError,
  type RegisterTile,
  type TileContext,
  type TileLowering,
} from "./operand.js";

/**
 * A reduction of a tile whose shape's dims do not line up with runs of its layout's iters (or a
 * dst's that do not): the same registers read as [outer, n, inner] (the dims before `axis`
 * merged, the axis, the dims after it merged; dst as [outer, 1, inner]), reduced along the
 * middle dim, when that shape groups both layouts (TIRx docs, "Tensor Layout": a tile's
 * elements are the shard's by row-major index, whatever its dims).
 * @throws TirxError TX2022 when dst's shape is not src's with the axis 1 or dropped, or when the
 *   axis's elements are no run of the layout's iters (naming the shape that groups); the
 *   reduction's own errors otherwise.
 * `reduce` is the reduction itself, called with dst and src so read (their axis 1).
 */
export function reduceViaRun(
  dst: RegisterTile,
  src: RegisterTile,
  axis: number,
  ctx: TileContext,
  reduce: (dst: RegisterTile, src: RegisterTile) => TileLowering,
): TileLowering {
  const outer = src.shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const n = src.shape[axis]!;
  const inner = src.shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const dShape = src.shape.map((e, d) => (d === axis ? 1 : e));
  const dropped = src.shape.filter((_, d) => d !== axis);
  const shapeOk =
    dst.shape.join() === dShape.join() ||
    (dropped.length > 0 && dst.shape.join() === dropped.join());
  if (!shapeOk) {
    throw tileDispatchError(
      ctx,
      `dst ${dst.buffer.name} [${dst.shape.join(", ")}] must have src's shape [${src.shape.join(", ")}] with axis ${axis} of extent 1 (or dropped)`,
      `T.alloc_local([${dShape.join(", ")}], "${src.dtype}", { layout })`,
    );
  }
  const run = [outer, n, inner];
  const s3 = reshapedTile(src, run);
  const d3 = s3 && reshapedTile(dst, [outer, 1, inner]);
  if (!s3 || !d3) {
    const which = s3 ? dst : src;
    const as = s3 ? [outer, 1, inner] : run;
    let why = "";
    try {
      groupLayout(which.layout, as);
    } catch (e) {
      if (!(e instanceof TirxError)) throw e;
      why = e.text.slice(e.text.indexOf("]: ") + 3);
    }
    throw tileDispatchError(
      ctx,
      `${s3 ? "dst" : "src"} ${showTile(which)} [${which.shape.join(", ")}]: a reduction along axis ${axis} needs the axis's elements to be a run of the layout's iters, but read as [${as.join(", ")}] (the dims before the axis merged, the axis, the dims after it merged)${why ? `, ${why}` : ""}, so no slot, lane or warp pattern reduces it`,
      `a shape whose dims line up with the layout's iters (its shard's [${which.layout.shard.map((x) => x.extent).join(", ")}]), or a layout whose iters line up with [${which.shape.join(", ")}]`,
    );
  }
  const low = reduce(d3, s3);
  return {
    stmts: low.stmts,
    explain: `${low.explain} (src [${src.shape.join(", ")}] read as [${run.join(", ")}]: its dims do not line up with the layout's iters)`,
  };
}
