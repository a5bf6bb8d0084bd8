import type { Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { checkOpCall } from "../ops/check.js";
import { MMA_VARIANTS, mmaName } from "../ops/mma/mma.js";
import { opOf } from "../ops/registry.js";
import {
  matchMmaTiling,
  mmaShapesFor,
  nearestMmaLayout,
  slotPtr,
  type MmaTiling,
} from "./mma-fragment.js";
import { showTile, tileDispatchError, type RegisterTile, type TileContext } from "./operand.js";
import { checkScope, needRegister, type TilePrimitive } from "./primitive.js";
import type { MmaOperand, MmaSyncShape } from "../layout/fragments.js";

/**
 * `T.tile.warp.gemm(C, A, B)` (TIRx `Tx.tile.warp.gemm`): C += A · B over a warp's register
 * tiles, C (M × N), A (M × K), B (K × N), each a grid of mma.sync fragments
 * (`T.layout.mma_sync_tile_layout`). Dispatch reads the layouts and dtypes: A and B float16 or
 * bfloat16 with C float32 → `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}...`; A and B
 * float16 with C float16 → `mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16` (C in the float32
 * C's layout, `mma_sync_tile_layout("C", "m16n8k16", "float16", M, N)`: each atom's 4 slots
 * start at an even slot and travel as two .f16x2 registers, c0 c1 and c2 c3; each instruction
 * within MMA_F16_BOUND of its exact `A·B + C`); A and B float32 (tf32) → m16n8k8; int8 with
 * int32 C → m16n8k32. No mma.sync accumulates in bfloat16. One mma per (k atom, m atom, n atom),
 * k outermost, then m, then n (so each C atom accumulates its k atoms in order: the same
 * results as the instruction-level loop of examples/gemm_mma.ts). Every lane of the warp must
 * make the call (mma.sync is `.aligned`). Source: PTX ISA, mma ("Matrix Fragments for mma.m16n8k16 /
 * m16n8k8 / m16n8k32").
 * @throws TirxError TX2022 when an operand is not a register tile, its dtype has no mma.sync
 *   variant, its layout is not a grid of the shape's fragments (the message names the element
 *   that breaks it and the nearest layout), the shapes M, N, K disagree, or C shares its register
 *   tile with A or B.
 */
export const gemm: TilePrimitive<
  readonly [
    { readonly name: "C"; readonly kind: "register" },
    { readonly name: "A"; readonly kind: "register" },
    { readonly name: "B"; readonly kind: "register" },
  ]
> = {
  name: "gemm",
  doc: "C += A · B on tensor cores (mma.sync) over register tiles in mma fragment layouts (C float32, or float16 with float16 A and B)",
  scopes: ["warp"],
  operands: [
    { name: "C", kind: "register" },
    { name: "A", kind: "register" },
    { name: "B", kind: "register" },
  ],
  lower: (args, ctx) => {
    const c = needRegister(args[0], "C", ctx);
    const a = needRegister(args[1], "A", ctx);
    const b = needRegister(args[2], "B", ctx);
    for (const t of [c, a, b]) checkScope(t, ctx);
    // One mma per atom writes C's slots while later atoms still read A and B: C may not share
    // their registers (parts of one tile).
    for (const [x, name] of [
      [a, "A"],
      [b, "B"],
    ] as const) {
      if (x.buffer.id === c.buffer.id) {
        throw tileDispatchError(
          ctx,
          `C and ${name} are parts of one register tile ${c.buffer.name}: the mma of one atom writes C's registers while the mmas of later atoms still read ${name}'s`,
          `C in a tile of its own (T.alloc_local), copied back after the gemm`,
        );
      }
    }
    const v = MMA_VARIANTS.find((x) => x.abDtype === a.dtype && x.cdDtype === c.dtype);
    if (!v || b.dtype !== a.dtype) {
      const why =
        c.dtype === "bfloat16"
          ? " (mma.sync has no bfloat16 accumulator: bfloat16 A and B accumulate into a float32 C)"
          : "";
      throw tileDispatchError(
        ctx,
        `no mma.sync takes A ${a.dtype}, B ${b.dtype} into C ${c.dtype}${why}`,
        MMA_VARIANTS.map((x) => `${x.shape}: ${x.abDtype} · ${x.abDtype} → ${x.cdDtype}`).join(
          "; ",
        ),
      );
    }
    const shapes = mmaShapesFor("A", a.dtype).filter((s) => mmaShapesFor("C", c.dtype).includes(s));
    const shape = shapes[0]!;
    const ta = fragments(a, "A", shape, ctx);
    const tb = fragments(b, "B", shape, ctx);
    const tc = fragments(c, "C", shape, ctx);
    const [mi, ki] = ta.grid;
    const [kb, nb] = tb.grid;
    const [mc, nc] = tc.grid;
    if (ki !== kb || mi !== mc || nb !== nc) {
      throw tileDispatchError(
        ctx,
        `C [${tc.grid[0] * 16}, ${tc.grid[1] * 8}] += A [${mi * 16}, ${ki * ta.atom[1]}] · B [${kb * tb.atom[0]}, ${nb * 8}]: M, N and K must agree`,
        `A [M, K], B [K, N], C [M, N]`,
      );
    }
    const name = mmaName(v);
    const op = opOf(name, "stmt", ctx.span);
    const stmts: Stmt[] = [];
    for (let k = 0; k < ki; k++) {
      for (let i = 0; i < mi; i++) {
        for (let j = 0; j < nb; j++) {
          const ops: Expr[] = [
            slotPtr(a, ta.base[i]![k]!, ctx.span),
            slotPtr(b, tb.base[k]![j]!, ctx.span),
            slotPtr(c, tc.base[i]![j]!, ctx.span),
          ];
          checkOpCall(op, ops, ctx.span);
          stmts.push({
            kind: "Call",
            op: name,
            args: ops,
            ...(ctx.span ? { span: ctx.span } : {}),
          });
        }
      }
    }
    return {
      stmts,
      explain: `mma.sync.${shape}.${v.ab}→${v.cd} ×${stmts.length} (k ${ki} × m ${mi} × n ${nb} atoms): ${showTile(a)}, ${showTile(b)} and ${showTile(c)} are grids of ${shape} A/B/C fragments`,
    };
  },
};

/**
 * The tiling of `t` as `operand` fragments of `shape`.
 * @throws TirxError TX2022 naming the element that breaks it and the nearest layout.
 */
function fragments(
  t: RegisterTile,
  operand: MmaOperand,
  shape: MmaSyncShape,
  ctx: TileContext,
): MmaTiling {
  const m = matchMmaTiling(t, operand, shape);
  if (typeof m !== "string") return m;
  throw tileDispatchError(
    ctx,
    `${operand} must be a grid of mma.sync ${shape} ${operand} fragments: ${m}`,
    nearestMmaLayout(t, operand, shape),
  );
}
