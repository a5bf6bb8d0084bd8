import type { DType, PackedDType } from "../dtype.js";
import { binary } from "../ir/arith.js";
import { intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { showTileLayout } from "../layout/tile-layout.js";
import { opOf } from "../ops/registry.js";
import { loadSlot, storeSlot } from "./slot-loop.js";
import {
  memoryIters,
  type RegisterTile,
  type TileArg,
  type TileContext,
  type TileLowering,
} from "./operand.js";
import { checkLaidOut, checkScope, valueOp, type TileInput } from "./primitive.js";
import { loopNest, ownedOnly } from "./threads.js";
import { elementMapShift } from "./same-map.js";

/** The packed pair a 16-bit float dst is converted into, two float32 at a time. */
const PAIR_OF: Partial<Record<DType, PackedDType>> = {
  float16: "float16x2",
  bfloat16: "bfloat16x2",
};

/** The pair conversion's op record name (core ops/arith/packed.ts `cvtRecord`). */
const CVT_OP: Readonly<Record<PackedDType, string>> = {
  float16x2: "cvt.rn.f16x2.f32",
  bfloat16x2: "cvt.rn.bf16x2.f32",
};

const isRegister = (a: TileInput): a is RegisterTile =>
  typeof a === "object" && a !== null && (a as TileArg).kind === "register";

/**
 * The paired lowering of `T.tile.<scope>.cast(dst, src)` from float32 to float16 or bfloat16: two
 * float32 slots at a time into one packed 32-bit register, `cvt.rn.{f16x2,bf16x2}.f32 d, hi, lo`
 * (PTX ISA, cvt: the first source into the upper half; `.rn` rounds each value once to nearest
 * even, as the scalar `cvt.rn.{f16,bf16}.f32` does, so the result is bit for bit the element-wise
 * cast's; sm_80, PTX 7.0), then its halves into dst (`mov.b32 {lo, hi}`, `T.ptx.unpack`). A wgmma
 * accumulator (or mma.sync C fragment) holds adjacent columns of a row in slots 2i, 2i + 1, the
 * pairs wgmma's register A operand takes, so the converted pair is already the operand's register
 * (one F2FP per pair on sm_90, where the element-wise form costs one per element plus the PRMTs
 * that pair them).
 * Taken when dst is a float16 / bfloat16 register tile, src a float32 register tile of dst's shape
 * and layout (slot for slot: not a broadcast, not a scalar), and dst's `m` iter of stride 1 (the
 * one whose slots are adjacent in the register array) has an even extent: each pair is slots
 * `2k` and `2k + 1` along it (the lower slot into lane 0, the low half), the pairs in register
 * order (the `m` iters looped by stride, largest outermost). Every target tirx-ts compiles for is
 * sm_80 or newer (core target.ts `ARCHS`; `T.device_entry` takes no other arch, codegen none
 * either), so the op record's sm_80 always holds; a known target below the record's sm would get
 * the element-wise form.
 * @returns the lowering, or undefined for every other cast (the element-wise slot loop serves it).
 * @throws TirxError TX2022 for a dst without a TileLayout at warp/wg/cta scope or spread beyond
 *   the scope's threads (the errors the element-wise form throws).
 */
export function pairedCast(args: readonly TileInput[], ctx: TileContext): TileLowering | undefined {
  const [dst, src] = args;
  if (!isRegister(dst) || !isRegister(src) || src.dtype !== "float32") return undefined;
  const pair = PAIR_OF[dst.dtype];
  const shift = pair === undefined ? undefined : elementMapShift(dst, src, ctx);
  if (pair === undefined || shift === undefined) return undefined;
  checkLaidOut(dst, ctx);
  checkScope(dst, ctx);
  const op = CVT_OP[pair];
  const need = opOf(op, "value", ctx.span).sm;
  if (need !== undefined && ctx.sm !== undefined && ctx.sm < need) return undefined;
  // Loops in register order: the m iters of extent > 1 by stride, largest outermost.
  const ms = memoryIters(dst.layout)
    .map((x) => x.iter)
    .filter((x) => x.extent > 1)
    .sort((a, b) => b.stride - a.stride);
  const p = ms.findIndex((x) => x.stride === 1);
  if (p < 0 || ms[p]!.extent % 2 !== 0) return undefined;
  const base = dst.layout.offset.m ?? 0;
  const stmts = loopNest(
    ctx,
    ms.map((x, i) => (i === p ? x.extent / 2 : x.extent)),
    (vars) => {
      let lo: Expr = intImm(base);
      vars.forEach((v, i) => {
        const s = i === p ? 2 : ms[i]!.stride;
        lo = binary("add", lo, s === 1 ? v : binary("mul", v, intImm(s)));
      });
      const hi = binary("add", lo, intImm(1));
      const v = ctx.freshVar("p2", pair);
      const span = ctx.span ? { span: ctx.span } : {};
      // src holds dst's slot s at s + shift (0 unless two parts of one tile).
      const at = (x: Expr): Expr => (shift === 0 ? x : binary("add", x, intImm(shift)));
      const cvt = valueOp(op, [loadSlot(src, at(hi)), loadSlot(src, at(lo))], ctx);
      const body: Stmt[] = [
        { kind: "Let", var: v, value: cvt, ...span },
        storeSlot(dst, lo, valueOp("x2.unpack.0", [v], ctx), ctx),
        storeSlot(dst, hi, valueOp("x2.unpack.1", [v], ctx), ctx),
      ];
      return body;
    },
  );
  const slots = ms.reduce((n, x) => n * x.extent, 1);
  return {
    stmts: ownedOnly(dst.layout, ctx, stmts),
    explain: `per-thread loop, ${slots} slots as ${slots / 2} pairs of adjacent slots (${op}: two float32 into one packed register, then its halves): ${dst.buffer.name} ${showTileLayout(dst.layout)}`,
  };
}
