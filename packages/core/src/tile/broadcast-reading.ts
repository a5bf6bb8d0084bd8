// The shape an elementwise primitive reads dst and its broadcast inputs under when a tile's dims
// do not line up with its layout's iters: dst's dims merged into runs that broadcast alike.
import { showTileLayout } from "../layout/tile-layout.js";
import {
  groupedTile,
  reshapedTile,
  tileDispatchError,
  type RegisterTile,
  type TileContext,
} from "./operand.js";

/**
 * dst and its register inputs (`ins`, undefined for other operands) read under one shape whose
 * dims line up with the layouts' iters, when an input broadcasts (its shape differs from dst's)
 * and dst's shape or the input's does not group its layout (TIRx docs, "Tensor Layout": a
 * tile's elements are the shard's by row-major index, whatever its dims): dst's dims of extent
 * above 1, merged into runs that every broadcast input keeps whole or broadcasts whole (`[2, 3,
 * 16]` with a per-row `[2, 3, 1]` is `[6, 16]` with `[6, 1]`). As given otherwise (no broadcast,
 * every shape grouping, or shapes that do not broadcast: broadcastSlot says why).
 * @throws TirxError TX2022 when dst or a broadcast input does not group under the merged shape
 *   either (naming the shape and a layout that works).
 */
export function broadcastReading(
  dst: RegisterTile,
  ins: readonly (RegisterTile | undefined)[],
  ctx: TileContext,
): { dst: RegisterTile; ins: readonly (RegisterTile | undefined)[] } {
  const bcast = ins.filter(
    (a): a is RegisterTile => a !== undefined && a.shape.join() !== dst.shape.join(),
  );
  const fits = (a: RegisterTile): boolean =>
    a.shape.length === dst.shape.length && a.shape.every((e, d) => e === dst.shape[d] || e === 1);
  if (bcast.length === 0 || (dst.dims && bcast.every((a) => a.dims)) || !bcast.every(fits)) {
    return { dst, ins };
  }
  const status = (d: number): string => bcast.map((a) => (a.shape[d] === 1 ? "b" : "k")).join();
  const runs: { dims: number[]; n: number }[] = [];
  dst.shape.forEach((n, d) => {
    if (n === 1) return;
    const last = runs[runs.length - 1];
    if (last && status(last.dims[0]!) === status(d)) {
      last.dims.push(d);
      last.n *= n;
    } else runs.push({ dims: [d], n });
  });
  const merged = runs.length > 0 ? runs.map((r) => r.n) : [1];
  const of = (a: RegisterTile): number[] =>
    runs.length > 0 ? runs.map((r) => (a.shape[r.dims[0]!] === 1 ? 1 : r.n)) : [1];
  const refuse = (t: RegisterTile, role: string, shape: readonly number[]): never => {
    throw tileDispatchError(
      ctx,
      `${role} ${t.buffer.name} [${t.shape.join(", ")}] ${showTileLayout(t.layout)} takes part in a broadcast, which reads each dim's iters, but its dims do not line up with the layout's iters even as [${shape.join(", ")}] (the dims that broadcast alike merged)`,
      `${role} with a shape whose dims line up with its layout's iters (its shard's [${t.layout.shard.map((x) => x.extent).join(", ")}]), or a layout whose iters line up with [${t.shape.join(", ")}]`,
    );
  };
  const d2 = reshapedTile(dst, merged) ?? refuse(dst, "dst", merged);
  return {
    dst: d2,
    ins: ins.map((a) => {
      if (a === undefined) return undefined;
      if (a.shape.join() === dst.shape.join()) return groupedTile(a.buffer, merged, a.layout);
      return reshapedTile(a, of(a)) ?? refuse(a, "an input", of(a));
    }),
  };
}
