import {
  ldmatrixName,
  mmaName,
  MMA_VARIANTS,
  stmatrixName,
  TirxError,
  type Expr,
  type MatrixCount,
  type Span,
} from "@tirx-ts/core";
import { recordStmtOp } from "./op-call.js";
import { PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";

/** `frag.ptr([offset])` of a register array (a rank-1 `T.alloc_local`), or TX7001. */
function fragmentPtr(what: string, frag: unknown, offset: ExprLike, span?: Span): Expr {
  if (!(frag instanceof TileView) || frag.buffer.scope !== "local") {
    throw new TirxError(
      "TX7001",
      `${what} must be a register array (T.alloc_local([n], dtype)), got ${show(frag)}`,
      span,
    );
  }
  if (frag.shape.length !== 1) {
    throw new TirxError(
      "TX7001",
      `${what} must be a rank-1 register array, got shape [${frag.shape.join(", ")}]`,
      span,
    );
  }
  const off = toExpr(offset, "int32", span);
  return {
    kind: "BufferPtr",
    buffer: frag.buffer,
    offset: off,
    dtype: "uint32",
    ...(span ? { span } : {}),
  };
}

/** A shared element's address `buf.ptr([...])` moved on by `offset` elements. */
function sharedPtr(what: string, smem: unknown, offset: ExprLike, span?: Span): Expr {
  const e = smem instanceof PrimExpr ? smem.expr : undefined;
  if (e?.kind !== "BufferPtr") {
    throw new TirxError(
      "TX7002",
      `${what} must be the address of a shared element (buf.ptr([...])), got ${show(smem)}`,
      span,
    );
  }
  const off = toExpr(offset, "int32", span);
  const moved =
    off.kind === "IntImm" && Number(off.value) === 0
      ? e.offset
      : ({ kind: "Binary", op: "add", a: e.offset, b: off, dtype: e.offset.dtype } as Expr);
  return { ...e, offset: moved };
}

function matrixArgs(
  what: "T.ptx.ldmatrix" | "T.ptx.stmatrix",
  trans: unknown,
  num: unknown,
  dtype: unknown,
  span?: Span,
): { trans: boolean; num: MatrixCount } {
  if (typeof trans !== "boolean") {
    throw new TirxError(
      "TX7004",
      `trans of ${what} must be true or false, got ${show(trans)}`,
      span,
    );
  }
  if (num !== 1 && num !== 2 && num !== 4) {
    throw new TirxError(
      "TX7004",
      `num of ${what} must be 1, 2 or 4 (.x1/.x2/.x4), got ${show(num)}`,
      span,
    );
  }
  if (dtype !== ".b16" && dtype !== "b16") {
    throw new TirxError("TX7004", `${what} moves .b16 elements; got dtype ${show(dtype)}`, span);
  }
  return { trans, num };
}

/**
 * `T.ptx.ldmatrix(trans, num, ".b16", frag, fragOffset, smemPtr, smemOffset = 0)`: the warp
 * loads `num` 8 × 8 matrices of 16-bit elements from shared memory (PTX ISA,
 * `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16`, sm_75). Lane `8·j + r` gives the
 * address of row r of matrix j (16 bytes, 16-byte aligned); each lane receives `2·num`
 * elements into `frag[fragOffset ..]` (a register array of a 16-bit dtype): matrix j's
 * elements `[lane / 4][2·(lane % 4) + h]`, or with `trans` `[2·(lane % 4) + h][lane / 4]`.
 * Mirrors TIRx `T.ptx.ldmatrix(trans, num, dtype, local_ptr, local_offset, smem_ptr, smem_offset)`.
 * Every lane of the warp must execute it.
 * @throws TirxError TX7004 (trans, num, dtype), TX7001 (fragment), TX7002 (address).
 */
export function ldmatrix(
  trans: boolean,
  num: MatrixCount,
  dtype: ".b16" | "b16",
  frag: TileView,
  fragOffset: ExprLike,
  smem: PrimExpr,
  smemOffset: ExprLike = 0,
): void {
  const span = callerSpan();
  const a = matrixArgs("T.ptx.ldmatrix", trans, num, dtype, span);
  recordStmtOp(
    ldmatrixName(a.num, a.trans),
    [
      fragmentPtr("the destination of T.ptx.ldmatrix", frag, fragOffset, span),
      sharedPtr("the address of T.ptx.ldmatrix", smem, smemOffset, span),
    ],
    span,
  );
}

/**
 * `T.ptx.stmatrix(trans, num, ".b16", frag, fragOffset, smemPtr, smemOffset = 0)`: the inverse
 * of ldmatrix (PTX ISA, `stmatrix.sync.aligned.m8n8.{x1,x2,x4}{.trans}.shared.b16`, sm_90):
 * lane `8·j + r` gives the address of row r of matrix j, each lane's `2·num` elements go where
 * ldmatrix would have read them.
 * @throws TirxError TX7004, TX7001, TX7002 as ldmatrix.
 */
export function stmatrix(
  trans: boolean,
  num: MatrixCount,
  dtype: ".b16" | "b16",
  frag: TileView,
  fragOffset: ExprLike,
  smem: PrimExpr,
  smemOffset: ExprLike = 0,
): void {
  const span = callerSpan();
  const a = matrixArgs("T.ptx.stmatrix", trans, num, dtype, span);
  recordStmtOp(
    stmatrixName(a.num, a.trans),
    [
      fragmentPtr("the source of T.ptx.stmatrix", frag, fragOffset, span),
      sharedPtr("the address of T.ptx.stmatrix", smem, smemOffset, span),
    ],
    span,
  );
}

const TOKEN: Readonly<Record<string, string>> = {
  fp16: "f16",
  f16: "f16",
  float16: "f16",
  bf16: "bf16",
  bfloat16: "bf16",
  tf32: "tf32",
  int8: "s8",
  s8: "s8",
  fp32: "f32",
  f32: "f32",
  float32: "f32",
  int32: "s32",
  s32: "s32",
};

/**
 * `T.ptx.mma(shape, "row", "col", aDtype, bDtype, cDtype, a, aOffset, b, bOffset, c, cOffset,
 * saturate = false)`: the warp computes `D = A·B + C` on tensor cores and writes D over C
 * (PTX ISA, `mma.sync.aligned.{shape}.row.col.{c}.{ab}.{ab}.{c}`, sm_80). Variants:
 * - `m16n8k16` fp16/bf16 → fp32: a 8, b 4, c 4 elements per lane (float16/bfloat16, float32);
 * - `m16n8k8` tf32 → fp32: a 4, b 2, c 4 (float32 registers holding tf32);
 * - `m16n8k32` int8 → int32: a 16, b 8, c 4 (int8, int32; the sum wraps).
 * Fragments are register arrays at element offsets; the lane ↔ element mapping is the PTX
 * ISA's (groupID = lane / 4, threadID_in_group = lane % 4). Mirrors TIRx `T.ptx.mma(shape,
 * a_layout, b_layout, a_dtype, b_dtype, c_dtype, a_ptr, a_offset, b_ptr, b_offset, acc_ptr,
 * c_offset, saturate)`.
 * @throws TirxError TX7004 for a variant outside the table (or `saturate`), TX7001 (fragments).
 */
export function mma(
  shape: "m16n8k16" | "m16n8k8" | "m16n8k32",
  aLayout: "row",
  bLayout: "col",
  aDtype: string,
  bDtype: string,
  cDtype: string,
  a: TileView,
  aOffset: ExprLike,
  b: TileView,
  bOffset: ExprLike,
  c: TileView,
  cOffset: ExprLike,
  saturate = false,
): void {
  const span = callerSpan();
  const ab = TOKEN[aDtype];
  const cd = TOKEN[cDtype];
  const v = MMA_VARIANTS.find(
    (x) => x.shape === shape && x.ab === ab && x.cd === cd && TOKEN[bDtype] === ab,
  );
  if (!v || aLayout !== "row" || bLayout !== "col" || saturate) {
    throw new TirxError(
      "TX7004",
      `T.ptx.mma has no variant ${show(shape)} ${show(aLayout)}.${show(bLayout)} ${show(cDtype)} = ${show(aDtype)} · ${show(bDtype)}${saturate ? " with saturate" : ""}; supported: ${MMA_VARIANTS.map((x) => `${x.shape} row.col ${x.ab}→${x.cd}`).join(", ")}`,
      span,
    );
  }
  recordStmtOp(
    mmaName(v),
    [
      fragmentPtr("a of T.ptx.mma", a, aOffset, span),
      fragmentPtr("b of T.ptx.mma", b, bOffset, span),
      fragmentPtr("c of T.ptx.mma", c, cOffset, span),
    ],
    span,
  );
}
