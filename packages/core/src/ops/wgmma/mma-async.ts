import { bufferName } from "../../buffer-name.js";
import { TirxError } from "../../diagnostics.js";
import { dtypeBytes, type DType } from "../../dtype.js";
import { constInt, type Expr } from "../../ir/expr.js";
import type { Span } from "../../span.js";
import { staticArg, valueArg } from "../define.js";
import type { LowerCtx, OpDef, OperandSpec } from "../op.js";
import type { LaunchConfig } from "../../ir/stmt.js";
import { MMA_F32_BOUND } from "../mma/mma.js";
import { isStaticShape } from "../../ir/buffer.js";
import { operandDtypeConflict, operandLayoutHint, operandTileMismatch } from "./operand.js";
import { residueMod } from "../../analysis/bounds.js";

/** One wgmma.mma_async variant: N, the A/B type token, and where A comes from. */
export interface WgmmaVariant {
  /** N of m64nNk16: a multiple of 8 in 8..256. */
  readonly n: number;
  readonly ab: "f16" | "bf16";
  readonly abDtype: "float16" | "bfloat16";
  /** A from a shared-memory descriptor (`ss`) or from registers (`rs`, 8 elements per thread). */
  readonly a: "ss" | "rs";
}

/** Every N of `m64nNk16` for f16/bf16 inputs (PTX ISA, wgmma.mma_async: N = 8..256 step 8). */
export const WGMMA_NS: readonly number[] = Array.from({ length: 32 }, (_, i) => 8 * (i + 1));

/** The wgmma.mma_async variants of the op table: f32 accumulators, f16 or bf16 inputs. */
export const WGMMA_VARIANTS: readonly WgmmaVariant[] = WGMMA_NS.flatMap((n) =>
  (["f16", "bf16"] as const).flatMap((ab) =>
    (["ss", "rs"] as const).map((a): WgmmaVariant => ({
      n,
      ab,
      abDtype: ab === "f16" ? "float16" : "bfloat16",
      a,
    })),
  ),
);

/** The PTX spelling of a variant (identical for `ss` and `rs`; the operands differ). */
export const wgmmaPtx = (v: WgmmaVariant): string =>
  `wgmma.mma_async.sync.aligned.m64n${v.n}k16.f32.${v.ab}.${v.ab}`;

/** IR name of a variant: the PTX spelling, with `.rs` for A from registers. */
export const wgmmaName = (v: WgmmaVariant): string => wgmmaPtx(v) + (v.a === "rs" ? ".rs" : "");

/** Accumulator elements per thread of m64nN (float32): 64·N / 128. */
export const wgmmaAccCount = (n: number): number => n / 2;

/**
 * imm-scale-a and imm-scale-b (operands `from`, `from + 1`) are 1 or -1.
 * @throws TirxError TX7004 otherwise.
 */
export function checkScales(
  surface: string,
  args: readonly Expr[],
  from: number,
  span?: Span,
): void {
  for (const i of [from, from + 1]) {
    const v = constInt(args[i]!);
    if (v !== 1 && v !== -1) {
      throw new TirxError(
        "TX7004",
        `scale_${i === from ? "a" : "b"} of ${surface} must be 1 or -1 (imm-scale-a/b negate the operand), got ${v ?? "a runtime value"}`,
        args[i]!.span ?? span,
      );
    }
  }
}

/**
 * The static half of "the descriptor agrees with its tile" (PTX ISA, wgmma: Matrix Descriptor
 * Format and Shared Memory Matrix Layout), for a descriptor written inline as
 * `encode_matrix_descriptor(tile.ptr([...]), lbo, sbo, mode)`: the tile's dtype is the
 * instruction's; the start is 16-byte aligned where its residue is evident (the descriptor keeps
 * address bits 4–17 and drops the rest); for a tile of 2 or more dims, LBO/SBO read the tile's
 * row-major layout (see `operandTileMismatch`); a swizzled start lies in row 0 of its swizzle
 * atom (8 rows of W = 16·2^mode bytes) where its element offset's residue modulo 8·W bytes is
 * evident (`residueMod`). What depends on runtime values (the start's row in its swizzle atom
 * when not evident, the footprint) is the simulator's (TX6026, TX6018).
 * `v.abDtype` is the operand's dtype (2-byte, or float8 with k32 steps of the same 32 bytes).
 * @throws TirxError TX7007.
 */
export function checkOperandDescriptor(
  surface: string,
  v: { readonly n: number; readonly abDtype: DType },
  which: "A" | "B",
  desc: Expr,
  mn: boolean,
  span?: Span,
): void {
  if (desc.kind !== "CallExpr" || desc.op !== "wgmma.encode_matrix_descriptor") return;
  const ptr = desc.args[0]!;
  if (ptr.kind !== "BufferPtr") return;
  const b = ptr.buffer;
  const at = ptr.span ?? desc.span ?? span;
  const notes = b.span ? [{ message: `${bufferName(b)} is allocated here`, span: b.span }] : [];
  if (operandDtypeConflict(b.dtype, v.abDtype)) {
    throw new TirxError(
      "TX7007",
      `${surface} reads ${which} as ${v.abDtype}, but its descriptor points into ${bufferName(b)} of ${b.dtype}; the tensor cores would reinterpret the bits`,
      at,
      notes,
    );
  }
  const eb = dtypeBytes(b.dtype);
  const per16 = eb <= 16 ? 16 / eb : 1;
  const res = residueMod(ptr.offset, per16);
  if (res !== undefined && res !== 0) {
    throw new TirxError(
      "TX7007",
      `the descriptor of ${which} starts ${eb * res} bytes past a 16-byte boundary (${bufferName(b)} element offset ≡ ${res} mod ${per16}); the descriptor keeps the start address >> 4, so wgmma would read from ${eb * res} bytes earlier`,
      at,
      notes,
    );
  }
  const [ldo, sdo, sw] = desc.args.slice(1).map((a) => constInt(a));
  if (sw !== undefined && sw >= 1 && sw <= 3 && eb <= 16) {
    // PTX ISA, wgmma Matrix Descriptor Format: with base offset 0 the swizzle pattern starts at
    // the descriptor's start, so a swizzled start must lie in row 0 of its 8·W-byte atom.
    const W = 16 << sw;
    const atom = (8 * W) / eb;
    const r = residueMod(ptr.offset, atom);
    if (r !== undefined && r * eb >= W) {
      throw new TirxError(
        "TX7007",
        `the descriptor of ${which} starts ${r * eb} bytes into a ${8 * W}-byte swizzle atom of ${bufferName(b)} (row ${Math.floor((r * eb) / W)}); with base offset 0 the start must lie in the atom's row 0 (a multiple of 8 rows, plus a K offset within the row)`,
        at,
        notes,
      );
    }
  }
  if (ldo === undefined || sdo === undefined || sw === undefined) return;
  if (b.dtype !== v.abDtype || b.shape.length < 2 || !isStaticShape(b.shape)) return;
  const cols = Number(b.shape[b.shape.length - 1]);
  const rows = which === "A" ? 64 : v.n;
  const bad = operandTileMismatch(
    { ldo, sdo, swizzle: sw as 0 | 1 | 2 | 3 },
    mn,
    rows,
    cols,
    dtypeBytes(v.abDtype),
  );
  if (bad) {
    throw new TirxError(
      "TX7007",
      `the descriptor of ${which} (LBO ${ldo}, SBO ${sdo}, ${mn ? "MN" : "K"}-major) does not describe the layout of ${bufferName(b)}: it reads element (${bad.r}, ${bad.k}) at byte ${bad.got} from the start, where the tile holds it at byte ${bad.want}; ${operandLayoutHint(sw, mn, cols, dtypeBytes(v.abDtype))}`,
      at,
      notes,
    );
  }
}

/**
 * A wgmma op's launch check: the op is issued by whole warpgroups of 128 threads (PTX ISA,
 * wgmma: "warpgroup"), so the block's thread count (x·y·z) must be a multiple of 128.
 * @throws TirxError TX7010 naming `surface` and the block's thread count otherwise.
 */
export function checkWarpgroupBlock(surface: string, launch: LaunchConfig, span?: Span): void {
  const threads = launch.block[0] * launch.block[1] * launch.block[2];
  if (threads % 128 !== 0) {
    throw new TirxError(
      "TX7010",
      `${surface} is issued by warpgroups of 128 threads, but the block has ${threads} threads (not a multiple of 128)`,
      span,
    );
  }
}

/** `setp.ne` of an int32 operand into a predicate, or a bool operand as it is. */
export function predicate(c: LowerCtx, op: string, dt: DType): string {
  if (dt === "bool") return c.toReg(op, "bool");
  const p = c.tmp("bool");
  c.ins(`setp.ne.b32 ${p}, ${c.toReg(op, "int32")}, 0`);
  return p;
}

function wgmmaOp(v: WgmmaVariant): OpDef {
  const name = wgmmaName(v);
  const ptx = wgmmaPtx(v);
  const d: OperandSpec = {
    kind: "fragment",
    name: "d",
    count: wgmmaAccCount(v.n),
    dtypes: ["float32"],
    access: "readwrite",
  };
  const desc = (n: string): OperandSpec => valueArg(n, ["uint64"]);
  const aOperand: OperandSpec =
    v.a === "ss"
      ? desc("a_desc")
      : { kind: "fragment", name: "a", count: 8, dtypes: [v.abDtype], access: "read" };
  const tail: OperandSpec[] = [
    valueArg("scale_d", ["bool", "int32"]),
    staticArg("scale_a", -1, 1, "TX7004"),
    staticArg("scale_b", -1, 1, "TX7004"),
    ...(v.a === "ss" ? [staticArg("trans_a", 0, 1, "TX7004")] : []),
    staticArg("trans_b", 0, 1, "TX7004"),
  ];
  const surface = "T.ptx.wgmma.mma_async";
  return {
    name,
    family: "wgmma",
    surface,
    form: "stmt",
    operands: [d, aOperand, desc("b_desc"), ...tail],
    result: () => undefined,
    signatures: [],
    sm: 90,
    ptx: [8, 0],
    source: `PTX ISA, wgmma.mma_async (m64n${v.n}k16, .${v.ab}, A from ${v.a === "ss" ? "a shared-memory descriptor" : "registers"}); sm_90a`,
    archCode: "TX7006",
    archSpecific: true,
    warpgroupAligned: true,
    effects: true,
    approx: MMA_F32_BOUND,
    check: (args, span) => {
      checkScales(surface, args, 4, span);
      const transA = v.a === "ss" ? constInt(args[6]!) === 1 : false;
      const transB = constInt(args[v.a === "ss" ? 7 : 6]!) === 1;
      if (v.a === "ss") checkOperandDescriptor(surface, v, "A", args[1]!, transA, span);
      checkOperandDescriptor(surface, v, "B", args[2]!, transB, span);
    },
    checkLaunch: (_args, launch, span) => checkWarpgroupBlock(surface, launch, span),
    lower: (c, _d, ops, dts) => {
      const p = predicate(c, ops[3]!, dts[3]!);
      const rest = ops.slice(4).join(", ");
      c.ins(`${ptx} ${ops[0]}, ${ops[1]}, ${ops[2]}, ${p}, ${rest}`);
    },
    sim: {
      kind: "machine",
      effect: {
        unit: "wgmma",
        action: "mma",
        n: v.n,
        ab: v.abDtype,
        aRegs: v.a === "rs",
        needsFence: true,
      },
    },
  };
}

/**
 * `wgmma.mma_async.sync.aligned.m64nNk16.f32.{f16,bf16}.{f16,bf16}` (PTX ISA, wgmma.mma_async;
 * sm_90a, PTX 8.0), issued by a warpgroup (4 consecutive warps starting at a warp index divisible
 * by 4): `D = A·B + scale_d·D` with A 64×16 (from a shared descriptor, or 8 elements per thread
 * in registers), B 16×N from a shared descriptor, D N/2 float32 elements per thread.
 */
export const WGMMA_MMA_OPS: readonly OpDef[] = WGMMA_VARIANTS.map(wgmmaOp);
