import {
  ldmatrixName,
  findMmaForm,
  findMmaSpForm,
  MMA_SP_FORMS,
  mmaSpFormName,
  showMmaSpForm,
  mmaFormName,
  nearestMmaForm,
  opOf,
  showMmaForm,
  stmatrixName,
  TirxError,
  type Expr,
  type MatrixCount,
  type MmaBitOp,
  type MmaFormShape,
  type MmaType,
  type Span,
} from "@tirx-ts/core";
import { recordStmtOp, staticOperand } from "./op-call.js";
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

/** The dtype spellings `T.ptx.mma` takes, TIRx's and PTX's, by PTX type token. */
const TOKEN: Readonly<Record<string, MmaType>> = {
  fp16: "f16",
  f16: "f16",
  float16: "f16",
  bf16: "bf16",
  bfloat16: "bf16",
  tf32: "tf32",
  fp32: "f32",
  f32: "f32",
  float32: "f32",
  fp64: "f64",
  f64: "f64",
  float64: "f64",
  e4m3: "e4m3",
  fp8_e4m3: "e4m3",
  float8_e4m3: "e4m3",
  e4m3_float8: "e4m3",
  e5m2: "e5m2",
  fp8_e5m2: "e5m2",
  float8_e5m2: "e5m2",
  e5m2_float8: "e5m2",
  int8: "s8",
  s8: "s8",
  uint8: "u8",
  u8: "u8",
  int4: "s4",
  s4: "s4",
  uint4: "u4",
  u4: "u4",
  int1: "b1",
  uint1: "b1",
  b1: "b1",
  int32: "s32",
  s32: "s32",
};

const token = (x: unknown): MmaType | undefined =>
  typeof x === "string" && Object.hasOwn(TOKEN, x) ? TOKEN[x] : undefined;

/**
 * Why a request is refused where a reason says more than the nearest form: a form of the PTX ISA
 * left out (m8n8k4 .f16), layouts other than .row.col, `saturate` on a float form, a b1 form
 * without its operator, or an operator on another form.
 */
function refusalReason(
  shape: unknown,
  layouts: [unknown, unknown],
  a: MmaType | undefined,
  c: MmaType | undefined,
  saturate: boolean,
  operator: unknown,
): string | undefined {
  if (shape === "m8n8k4" && a === "f16") {
    return "m8n8k4 .f16 is sm_70's shape (four 8×8×4 products per warp on quad-pairs; the PTX ISA warns of reduced performance on later targets) and is not offered";
  }
  if (layouts[0] !== "row" || layouts[1] !== "col") {
    return "every offered form is .row.col (the PTX ISA has other layouts only for m8n8k4 .f16)";
  }
  if (saturate && c !== "s32") return "saturate (.satfinite) belongs to the integer forms";
  if (a === "b1" && operator === undefined) return 'a b1 form needs operator "xor" or "and"';
  if (a !== "b1" && operator !== undefined) return "operator belongs to the b1 forms";
  return undefined;
}

/**
 * `T.ptx.mma(shape, "row", "col", aDtype, bDtype, cDtype, a, aOffset, b, bOffset, c, cOffset,
 * saturate = false, operator?)`: the warp computes `D = A·B + C` on tensor cores and writes D over
 * C (PTX ISA, "Warp Level Matrix Multiply-Accumulate Instructions: mma",
 * `mma.sync.aligned.{shape}.row.col{.satfinite}.{c}.{a}.{b}.{c}{.xor|.and.popc}`). Every form of
 * core's `MMA_FORMS` (docs/mma-sync-forms.md):
 * - fp16 · fp16 → fp32 or fp16: m16n8k8, m16n8k16; bf16 → fp32: m16n8k8, m16n8k16;
 *   tf32 → fp32: m16n8k4, m16n8k8 (float32 registers holding tf32);
 * - fp64: m8n8k4, and m16n8k4/k8/k16 on sm_90;
 * - int8/uint8 (any mix) → int32: m8n8k16, m16n8k16, m16n8k32; int4/uint4: m8n8k32, m16n8k32,
 *   m16n8k64 (8 nibbles per uint32 or int32 array element, the first in the low bits); with
 *   `saturate` (.satfinite) D clamps to the int32 range, else it wraps;
 * - int1 (b1) → int32: m8n8k128, m16n8k128, m16n8k256 (32 bits per uint32 / int32 element), with
 *   `operator` "xor" (.xor.popc) or "and" (.and.popc);
 * - float8 e4m3/e5m2 (any mix) → fp32 or fp16: m16n8k16, m16n8k32 (sm_89).
 * Fragments are register arrays at element offsets holding the counts core's `mmaFragment`
 * gives (e.g. m16n8k16 fp16: a 8, b 4, c 4 elements per lane); the lane ↔ element mapping is the
 * PTX ISA's (groupID = lane / 4, threadID_in_group = lane % 4). Mirrors TIRx `T.ptx.mma(shape,
 * a_layout, b_layout, a_dtype, b_dtype, c_dtype, a_ptr, a_offset, b_ptr, b_offset, acc_ptr,
 * c_offset, saturate, operator)`.
 * @example T.ptx.mma("m16n8k32", "row", "col", "int8", "uint8", "int32", a, 0, b, 0, c, 0, true)
 * @throws TirxError TX7004 for a form outside the table (naming the nearest offered form and, for
 *   a form of the PTX ISA not offered, why), `saturate` on a float form, or `operator` missing on
 *   a b1 form or given on another; TX7001 (fragments).
 */
export function mma(
  shape: MmaFormShape,
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
  operator?: MmaBitOp,
): void {
  const span = callerSpan();
  const [ta, tb, tc] = [token(aDtype), token(bDtype), token(cDtype)];
  const bitOp = operator === "xor" || operator === "and" ? operator : undefined;
  const f =
    ta && tb && tc && aLayout === "row" && bLayout === "col" && operator === bitOp
      ? findMmaForm(shape, ta, tb, tc, saturate === true, bitOp)
      : undefined;
  if (!f) {
    const asked = `${show(shape)} ${show(aLayout)}.${show(bLayout)} ${show(cDtype)} = ${show(aDtype)} · ${show(bDtype)}${saturate ? " with saturate" : ""}${operator !== undefined ? ` with operator ${show(operator)}` : ""}`;
    const unknown = [aDtype, bDtype, cDtype].find((x) => token(x) === undefined);
    const why =
      unknown !== undefined
        ? `dtype ${show(unknown)} is none of ${Object.keys(TOKEN).join(", ")}`
        : refusalReason(shape, [aLayout, bLayout], ta, tc, saturate === true, operator);
    const near = nearestMmaForm(String(shape), ta, tb, tc, saturate === true, bitOp);
    throw new TirxError(
      "TX7004",
      `T.ptx.mma has no form ${asked}${why ? ` (${why})` : ""}; nearest offered: ${showMmaForm(near)} (${mmaFormName(near)}); docs/mma-sync-forms.md lists every form`,
      span,
    );
  }
  recordStmtOp(
    mmaFormName(f),
    [
      fragmentPtr("a of T.ptx.mma", a, aOffset, span),
      fragmentPtr("b of T.ptx.mma", b, bOffset, span),
      fragmentPtr("c of T.ptx.mma", c, cOffset, span),
    ],
    span,
  );
}

/**
 * `T.ptx.mma_sp(shape, "row", "col", aDtype, bDtype, cDtype, a, aOffset, b, bOffset, c, cOffset,
 * e, eOffset, selector)`: the warp computes `D = A·B + C` with a 2:4 structured-sparse A and
 * writes D over C (PTX ISA, "mma.sp::ordered_metadata",
 * `mma.sp::ordered_metadata.sync.aligned.{shape}.row.col.{c}.{a}.{b}.{c} d, a, b, c, e, f`).
 * Forms (core's `MMA_SP_FORMS`, docs/mma-sync-forms.md): fp16 · fp16 → fp32 or fp16 and
 * bf16 → fp32 at m16n8k16 and m16n8k32 (sm_80), float8 e4m3/e5m2 (any mix) → fp32 at m16n8k64
 * (sm_89); PTX 8.5. `a` holds each lane's kept elements of A (K / 2 per row: a[0..] as core's
 * `mmaSpFragment(form, "A")` places them, e.g. m16n8k32 fp16: 8 halves), `b` and `c` the dense
 * fragments (m16n8k32 fp16: 8 and 4), `e[eOffset]` a uint32 (or int32) register of metadata:
 * per 4-wide chunk of a row of A, the two column indices of its kept elements in increasing
 * order, 2 bits each (core's `mmaSpMetadataAt` says which lane and bits). `selector` is the
 * sparsity selector: which lanes of each quad hold the metadata (0..3 for m16n8k16, 0..1 for
 * m16n8k32, 0 for m16n8k64). Mirrors TIRx/TVM's `ptx_mma_sp(..., metadata, meta_index,
 * sparse_selector)` without `saturate` (every offered form is a float form).
 * @example T.ptx.mma_sp("m16n8k32", "row", "col", "fp16", "fp16", "fp32", a, 0, b, 0, c, 0, e, 0, 1)
 * @throws TirxError TX7004 for a form outside the table (naming the nearest offered sparse form),
 *   TX7013 for a selector the form does not allow, TX7001 (fragments).
 */
export function mma_sp(
  shape: string,
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
  e: TileView,
  eOffset: ExprLike,
  selector: number,
): void {
  const span = callerSpan();
  const [ta, tb, tc] = [token(aDtype), token(bDtype), token(cDtype)];
  const f =
    ta && tb && tc && aLayout === "row" && bLayout === "col"
      ? findMmaSpForm(shape, ta, tb, tc)
      : undefined;
  if (!f) {
    const asked = `${show(shape)} ${show(aLayout)}.${show(bLayout)} ${show(cDtype)} = sparse ${show(aDtype)} · ${show(bDtype)}`;
    const unknown = [aDtype, bDtype, cDtype].find((x) => token(x) === undefined);
    const why =
      unknown !== undefined
        ? ` (dtype ${show(unknown)} is none of ${Object.keys(TOKEN).join(", ")})`
        : aLayout !== "row" || bLayout !== "col"
          ? " (every sparse form is .row.col)"
          : "";
    const near =
      MMA_SP_FORMS.find((g) => g.a === ta && g.c === tc && g.shape === shape) ??
      MMA_SP_FORMS.find((g) => g.a === ta && g.c === tc) ??
      MMA_SP_FORMS.find((g) => g.a === ta) ??
      MMA_SP_FORMS.find((g) => g.shape === shape) ??
      MMA_SP_FORMS[0]!;
    throw new TirxError(
      "TX7004",
      `T.ptx.mma_sp has no form ${asked}${why}; nearest offered: ${showMmaSpForm(near)} (${mmaSpFormName(near)}); docs/mma-sync-forms.md lists the sparse forms`,
      span,
    );
  }
  const op = opOf(mmaSpFormName(f), "stmt", span);
  recordStmtOp(
    op,
    [
      fragmentPtr("a of T.ptx.mma_sp", a, aOffset, span),
      fragmentPtr("b of T.ptx.mma_sp", b, bOffset, span),
      fragmentPtr("c of T.ptx.mma_sp", c, cOffset, span),
      fragmentPtr("e (the metadata) of T.ptx.mma_sp", e, eOffset, span),
      staticOperand(op, "sparsity selector", selector, span),
    ],
    span,
  );
}
