// The lane stage of a tile reduction (reduce.ts): the butterfly of shfl.sync steps over the lane
// bits of the reduced axis, padded to a power of two where the axis's lanes are fewer.
import { binary, compare, ifThenElse } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { loadSlot, storeSlot } from "./slot-loop.js";
import { tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { valueOp } from "./primitive.js";
import { axisCoord } from "./threads.js";

/** A lane iter as lanes of a warp: its extent and its stride in lanes. */
export interface LanePart {
  readonly extent: number;
  readonly stride: number;
}

/**
 * One shuffle step: the lane mask, and for the top step of a reduced lane iter whose extent is
 * no power of two, that iter padded to `size` lanes (digits `extent..size - 1` hold nothing).
 */
interface ButterflyStep {
  readonly mask: number;
  readonly pad?: LanePart & { readonly size: number };
}

/** The lane stage's plan: its steps in order, and how it reads its partners. */
export interface LaneButterfly {
  readonly steps: readonly ButterflyStep[];
  /** Partners by `shfl.sync.idx` (a lane offset off the butterfly's span) rather than `.bfly`. */
  readonly byIdx: boolean;
  /** The lanes the padding adds past the reduced iters' extents (for the warp-reach check). */
  readonly extraReach: number;
}

const pow2 = (n: number): boolean => (n & (n - 1)) === 0;

/**
 * The butterfly over the reduced lane iters `lanes` (PTX ISA, shfl.sync; the order of
 * `T.cuda.warp_sum`): one step per lane bit, highest first. A lane iter whose extent is no
 * power of two (24 lanes beside warp iters, `S[(4, 24) : (1@warpid, 1@laneid)]`) takes the bits
 * of the next power of two; its lanes past the extent hold nothing, so its top step comes
 * first and pairs by ownership (see {@link butterflyStmts}), after which every lane holds a
 * partial of owned elements and the other steps combine unconditionally. `allLanes` are every
 * lane iter of the layout (kept ones too): the padded lanes must stay below the next one's
 * stride, so that they are lanes that hold nothing. A lane offset that is not a multiple of the
 * butterfly's span reads partners by `shfl.sync.idx`.
 * @throws TirxError TX2022 for a lane iter whose stride is no power of two, or whose padded
 *   lanes reach the next lane iter.
 */
export function laneButterfly(
  lanes: readonly LanePart[],
  allLanes: readonly LanePart[],
  laneOff: number,
  ctx: TileContext,
): LaneButterfly {
  const tops: ButterflyStep[] = [];
  const rest: number[] = [];
  let extraReach = 0;
  for (const l of lanes) {
    if (!pow2(l.stride)) {
      throw tileDispatchError(
        ctx,
        `a lane iter ${l.extent}:${l.stride}@laneid has a stride that is no power of two, so no butterfly pattern covers it`,
        "lane iters with power-of-two strides",
      );
    }
    let size = 1;
    while (size < l.extent) size *= 2;
    if (size !== l.extent) {
      const next = allLanes
        .filter((x) => x.stride > l.stride)
        .sort((a, b) => a.stride - b.stride)[0];
      if (next && next.stride < size * l.stride) {
        throw tileDispatchError(
          ctx,
          `a lane iter ${l.extent}:${l.stride}@laneid has no power-of-two extent, and the ${size} lanes a butterfly pads it to reach the lanes of the next lane iter ${next.extent}:${next.stride}@laneid`,
          `lane iters with power-of-two extents, or lanes that hold nothing up to the next power of two (${size}:${l.stride}@laneid's span, ${size * l.stride} lanes, below the next iter's stride)`,
        );
      }
      extraReach += (size - l.extent) * l.stride;
      tops.push({ mask: (size / 2) * l.stride, pad: { ...l, size } });
    }
    for (let b = l.stride; b < l.stride * size; b *= 2) {
      if (size === l.extent || b !== (size / 2) * l.stride) rest.push(b);
    }
  }
  tops.sort((a, b) => b.mask - a.mask);
  rest.sort((a, b) => b - a);
  const steps = [...tops, ...rest.map((mask) => ({ mask }))];
  const highest = Math.max(0, ...steps.map((s) => s.mask));
  // A thread offset on lanes (e.g. 16 lanes from lane 8, O[8@laneid]) shifts the reduced
  // digits off the lane id's bits: unless it leaves the masks' bits clear, each lane reads
  // lane off + ((lane - off) ^ mask) by shfl.sync.idx, the partner a butterfly on the
  // digits would give (PTX ISA, shfl.sync: the source lane is b's low 5 bits).
  const byIdx = steps.length > 0 && laneOff % (2 * highest) !== 0;
  return { steps, byIdx, extraReach };
}

/**
 * The butterfly's statements for one slot `ds` of `dst` (the thread's partial, combined in
 * place by `combine`). A padded step (lane digit `r` of its iter, read modulo its padded size):
 * a lane with `r` past the extent holds nothing and takes its partner's partial (its partner's
 * digit `r` − size/2 is held); a lane whose partner's digit `r` XOR size/2 is past the extent
 * keeps its own; the others combine. So a partial never takes a value of a lane that holds
 * nothing, and every lane leaves the step with a partial of held elements.
 */
export function butterflyStmts(
  plan: LaneButterfly,
  dst: RegisterTile,
  ds: Expr,
  laneOff: number,
  combine: (a: Expr, b: Expr) => Expr,
  ctx: TileContext,
): Stmt[] {
  const span = ctx.span ? { span: ctx.span } : {};
  const lane = axisCoord("laneid", ctx);
  const fromOff = laneOff === 0 ? lane : binary("sub", lane, intImm(laneOff));
  const partner = (mask: number): Expr =>
    binary("add", binary("bitxor", fromOff, intImm(mask)), intImm(laneOff));
  return plan.steps.flatMap(({ mask, pad }) => {
    const p = ctx.freshVar("shfl", dst.dtype);
    const val = valueOp(
      plan.byIdx ? "shfl.sync.idx" : "shfl.sync.bfly",
      [
        intImm(0xffffffff, "uint32"),
        loadSlot(dst, ds),
        plan.byIdx ? partner(mask) : intImm(mask),
        intImm(32),
      ],
      ctx,
    );
    const got: Stmt = { kind: "Let", var: p, value: val, ...span };
    const mine = loadSlot(dst, ds);
    if (!pad) return [got, storeSlot(dst, ds, combine(mine, p), ctx)];
    const r = ctx.freshVar("digit", "int32");
    const shifted = pad.stride === 1 ? fromOff : binary("floordiv", fromOff, intImm(pad.stride));
    const digit: Stmt = {
      kind: "Let",
      var: r,
      value: binary("floormod", shifted, intImm(pad.size)),
      ...span,
    };
    const held = (e: Expr): Expr => compare("lt", e, intImm(pad.extent));
    const theirs = binary("bitxor", r, intImm(pad.size / 2));
    const next = ifThenElse(held(r), ifThenElse(held(theirs), combine(mine, p), mine), p);
    return [got, digit, storeSlot(dst, ds, next, ctx)];
  });
}
