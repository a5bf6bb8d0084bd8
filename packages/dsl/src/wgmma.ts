import {
  checkOpCall,
  intImm,
  opOf,
  TirxError,
  WGMMA_NS,
  wgmmaFp8Name,
  wgmmaName,
  type WgmmaFp8,
  type Expr,
  type Span,
} from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, show, toExpr, type ExprLike } from "./expr.js";
import { callerSpan } from "./span.js";
import { checkOptions } from "./check.js";
import { callValueOp, recordStmtOp, staticOperand } from "./op-call.js";
import { TileView } from "./view.js";

/** `frag.ptr([offset])` of a rank-1 register array (T.alloc_local), or TX7001. */
function registerPtr(what: string, frag: unknown, offset: ExprLike, span?: Span): Expr {
  if (!(frag instanceof TileView) || frag.buffer.scope !== "local" || frag.shape.length !== 1) {
    throw new TirxError(
      "TX7001",
      `${what} must be a rank-1 register array (T.alloc_local([n], dtype)), got ${show(frag)}`,
      span,
    );
  }
  return {
    kind: "BufferPtr",
    buffer: frag.buffer,
    offset: toExpr(offset, "int32", span),
    dtype: "uint32",
    ...(span ? { span } : {}),
  };
}

/** Options of `T.ptx.wgmma.mma_async` (PTX ISA operand names). */
export interface WgmmaOptions {
  /** 1 (or true): D = A·B + D; 0: D = A·B. Static or a runtime int32/bool. Default 1. */
  readonly scale_d?: ExprLike | boolean;
  /** 1 or -1: negate A / B. Default 1. */
  readonly scale_a?: number;
  readonly scale_b?: number;
  /** 1: the shared operand is MN-major (transposed). Default 0. `trans_a` needs A in shared. */
  readonly trans_a?: number | boolean;
  readonly trans_b?: number | boolean;
  /** Element offset of A's 8-element fragment when A is a register array. Default 0. */
  readonly a_offset?: ExprLike;
  /** float8 (m64nNk32) only: B's dtype where it differs from A's (`"float8_e5m2"`, `"e5m2"`). */
  readonly b_dtype?: string;
  /** float8 (m64nNk32) only: the accumulator dtype, `"float32"` (default) or `"float16"`. */
  readonly acc_dtype?: string;
}

/** The keys of {@link WgmmaOptions}. */
const WGMMA_OPTIONS = [
  "scale_d",
  "scale_a",
  "scale_b",
  "trans_a",
  "trans_b",
  "a_offset",
  "b_dtype",
  "acc_dtype",
] as const;

const SHAPE = /^m64n(\d+)k16$/;
const SHAPE_K32 = /^m64n(\d+)k32$/;

/** The float8 type token of a dtype spelling, or undefined. */
function fp8Token(dt: unknown): WgmmaFp8 | undefined {
  if (dt === "float8_e4m3" || dt === "e4m3") return "e4m3";
  if (dt === "float8_e5m2" || dt === "e5m2") return "e5m2";
  return undefined;
}

/**
 * The float8 form of `mma_async` (`m64nNk32`, SS, K-major): `wgmma.mma_async.sync.aligned.m64nNk32
 * .{f32,f16}.{e4m3,e5m2}.{e4m3,e5m2} d, a-desc, b-desc, scale-d, imm-scale-a, imm-scale-b` (PTX ISA;
 * sm_90a, PTX 8.0).
 * @throws TirxError TX7004 (shape, dtypes, a register A, a transpose: float8 operands are K-major).
 */
function mmaAsyncFp8(
  shape: string,
  dtype: string,
  acc: TileView,
  accOffset: ExprLike,
  a: ExprLike | TileView,
  bDesc: ExprLike,
  opts: WgmmaOptions,
  span: Span | undefined,
): void {
  const o = checkOptions(opts, WGMMA_OPTIONS, "T.ptx.wgmma.mma_async", span) as WgmmaOptions;
  const n = Number(SHAPE_K32.exec(String(shape))?.[1]);
  const at = fp8Token(dtype);
  const bt = o.b_dtype === undefined ? at : fp8Token(o.b_dtype);
  const accDt = o.acc_dtype ?? "float32";
  const accTok = accDt === "float32" ? "f32" : accDt === "float16" ? "f16" : undefined;
  if (!WGMMA_NS.includes(n) || !at || !bt || !accTok) {
    throw new TirxError(
      "TX7004",
      `T.ptx.wgmma.mma_async has no float8 variant ${show(shape)} ${show(dtype)} (b_dtype ${show(o.b_dtype)}, acc_dtype ${show(o.acc_dtype)}); supported: m64nNk32 with N a multiple of 8 in 8..256, A and B float8_e4m3 or float8_e5m2, accumulators float32 or float16`,
      span,
    );
  }
  if (a instanceof TileView) {
    throw new TirxError(
      "TX7004",
      `float8 wgmma takes A from shared memory (a descriptor) here; A in registers (the RS form) is not offered for float8`,
      span,
    );
  }
  if (o.trans_a || o.trans_b) {
    throw new TirxError(
      "TX7004",
      `float8 wgmma operands are K-major: imm-trans-a/b exist for .f16/.bf16 only (PTX ISA, wgmma.mma_async)`,
      span,
    );
  }
  const op = opOf(wgmmaFp8Name({ n, a: at, b: bt, acc: accTok }), "stmt", span);
  const st = (k: "scale_a" | "scale_b"): Expr => staticOperand(op, k, o[k] ?? 1, span);
  const sd = o.scale_d ?? 1;
  const scaleD =
    typeof sd === "boolean" ? intImm(sd ? 1 : 0) : toExpr(sd as ExprLike, "int32", span);
  recordStmtOp(
    op,
    [
      registerPtr("acc of T.ptx.wgmma.mma_async", acc, accOffset, span),
      toExpr(a, "uint64", span),
      toExpr(bDesc, "uint64", span),
      scaleD,
      st("scale_a"),
      st("scale_b"),
    ],
    span,
  );
}

/**
 * `T.ptx.wgmma.mma_async(shape, dtype, acc, accOffset, a, bDesc, opts)`: the warpgroup (4
 * consecutive warps from a warp index divisible by 4, all 128 threads) issues
 * `wgmma.mma_async.sync.aligned.{shape}.f32.{dtype}.{dtype}` (PTX ISA; sm_90a):
 * `acc[accOffset .. + N/2)` (float32 per thread) = A·B + scale_d·acc, asynchronously — read the
 * accumulators only after `T.ptx.wgmma.wait_group`. `shape` is `m64nNk16`, N a multiple of 8 in
 * 8..256; `dtype` `"float16"` or `"bfloat16"`. `a` is a descriptor (uint64, from
 * `T.ptx.wgmma.encode_matrix_descriptor`) of the 64×16 A tile in shared memory, or a register
 * array holding 8 elements per thread (mma.sync's A fragment layout, from `opts.a_offset`);
 * `bDesc` describes B (N × 16, K-major unless trans_b). Accumulator element `4j + i` of a thread
 * (lane l of warp q of the warpgroup) is D[16q + l/4 + 8·(i ≥ 2)][8j + 2(l % 4) + i % 2].
 * float8: `shape` `m64nNk32`, `dtype` `"float8_e4m3"` / `"float8_e5m2"` (A; `opts.b_dtype` B's when
 * it differs), `opts.acc_dtype` `"float32"` or `"float16"` (N/2 elements per thread either way),
 * both operands K-major descriptors of 64×32 / N×32 one-byte elements (32 bytes per row, as k16).
 * @example T.ptx.wgmma.mma_async("m64n64k32", "float8_e4m3", acc, 0, aDesc, bDesc, { b_dtype: "float8_e5m2" })
 * @throws TirxError TX7004 (shape, dtype, scales, transposes), TX7001 (register arrays),
 *   TX2010 (operand dtypes), TX1002 (`opts` not an object, or an unknown option: a "did you mean").
 */
export function mma_async(
  shape: string,
  dtype: string,
  acc: TileView,
  accOffset: ExprLike,
  a: ExprLike | TileView,
  bDesc: ExprLike,
  opts: WgmmaOptions = {},
): void {
  const span = callerSpan();
  if (SHAPE_K32.test(String(shape)) || fp8Token(dtype)) {
    return mmaAsyncFp8(shape, dtype, acc, accOffset, a, bDesc, opts, span);
  }
  const n = Number(SHAPE.exec(String(shape))?.[1]);
  const ab =
    dtype === "float16" || dtype === "f16"
      ? "f16"
      : dtype === "bfloat16" || dtype === "bf16"
        ? "bf16"
        : undefined;
  if (!WGMMA_NS.includes(n) || !ab) {
    throw new TirxError(
      "TX7004",
      `T.ptx.wgmma.mma_async has no variant ${show(shape)} ${show(dtype)}; supported: m64nNk16 with N a multiple of 8 in 8..256, float16 or bfloat16 inputs, float32 accumulators`,
      span,
    );
  }
  const aRegs = a instanceof TileView;
  const abDtype = ab === "f16" ? "float16" : "bfloat16";
  const name = wgmmaName({ n, ab, abDtype, a: aRegs ? "rs" : "ss" });
  const o = checkOptions(opts, WGMMA_OPTIONS, "T.ptx.wgmma.mma_async", span) as WgmmaOptions;
  if (o.b_dtype !== undefined || o.acc_dtype !== undefined) {
    throw new TirxError(
      "TX7004",
      `b_dtype and acc_dtype are options of the float8 (m64nNk32) wgmma; ${show(dtype)} takes float32 accumulators and one A/B dtype`,
      span,
    );
  }
  const op = opOf(name, "stmt", span);
  const st = (k: "scale_a" | "scale_b" | "trans_a" | "trans_b", dflt: number): Expr =>
    staticOperand(op, k, o[k] ?? dflt, span, k.startsWith("trans"));
  const sd = o.scale_d ?? 1;
  const scaleD =
    typeof sd === "boolean" ? intImm(sd ? 1 : 0) : toExpr(sd as ExprLike, "int32", span);
  if (aRegs && o.trans_a) {
    throw new TirxError("TX7004", `trans_a needs A in shared memory (a descriptor)`, span);
  }
  const args: Expr[] = [
    registerPtr("acc of T.ptx.wgmma.mma_async", acc, accOffset, span),
    aRegs
      ? registerPtr("a of T.ptx.wgmma.mma_async", a, o.a_offset ?? 0, span)
      : toExpr(a as ExprLike, "uint64", span),
    toExpr(bDesc, "uint64", span),
    scaleD,
    st("scale_a", 1),
    st("scale_b", 1),
    ...(aRegs ? [] : [st("trans_a", 0)]),
    st("trans_b", 0),
  ];
  recordStmtOp(op, args, span);
}

/**
 * `T.ptx.wgmma.encode_matrix_descriptor(addr, ldo, sdo, swizzle)` → uint64 (TIRx
 * `T.ptx.wgmma_encode_matrix_descriptor`): `addr` is `smem.ptr([...])`, `ldo`/`sdo` static byte
 * offsets, `swizzle` the TMA-numbered mode (0 none, 1 32B, 2 64B, 3 128B; the `T.swizzle_mode`
 * of the buffer). @throws TirxError TX7007 when they disagree with the buffer.
 */
export function encode_matrix_descriptor(
  addr: PrimExpr,
  ldo: number,
  sdo: number,
  swizzle: number,
): PrimExpr {
  const span = callerSpan();
  const name = "wgmma.encode_matrix_descriptor";
  const op = opOf(name, "value", span);
  const a = addr instanceof PrimExpr ? addr.expr : undefined;
  if (a?.kind !== "BufferPtr") {
    throw new TirxError(
      "TX7007",
      `the address of T.ptx.wgmma.encode_matrix_descriptor must be smem.ptr([...]), got ${show(addr)}`,
      span,
    );
  }
  const args: Expr[] = [
    a,
    staticOperand(op, "ldo", ldo, span),
    staticOperand(op, "sdo", sdo, span),
    staticOperand(op, "swizzle", swizzle, span),
  ];
  const dtype = checkOpCall(op, args, span)!;
  builder(op.surface, span);
  return new PrimExpr({ kind: "CallExpr", op: name, args, dtype, ...(span ? { span } : {}) });
}

/**
 * `T.ptx.wgmma.advance_descriptor(desc, n)` → uint64: descriptor `desc` (uint64) with `n`
 * (uint32, 16-byte units) added to its low 32 bits, its high 32 bits kept: the descriptor of the
 * matrix `16 · n` bytes further on in the same shared buffer (PTX ISA, wgmma: Matrix Descriptor
 * Format). One 32-bit add on the GPU, where `desc + n` on a uint64 is a 64-bit add with carry.
 * @throws TirxError TX2005 for operands that are not (uint64, uint32-convertible), TX7006 below
 *   sm_90.
 */
export function advance_descriptor(desc: ExprLike, n: ExprLike): PrimExpr {
  return callValueOp("wgmma.advance_descriptor", [desc, n], callerSpan());
}

/** `T.ptx.wgmma`: warpgroup MMA (PTX ISA, wgmma; sm_90a). */
export const wgmma = {
  mma_async,
  encode_matrix_descriptor,
  advance_descriptor,
  /** `wgmma.fence.sync.aligned`: order register/shared accesses before the next wgmma.mma_async. */
  fence(): void {
    recordStmtOp("wgmma.fence.sync.aligned", [], callerSpan());
  },
  /** `wgmma.commit_group.sync.aligned`: batch the warpgroup's uncommitted wgmmas into a group. */
  commit_group(): void {
    recordStmtOp("wgmma.commit_group.sync.aligned", [], callerSpan());
  },
  /** `wgmma.wait_group.sync.aligned n`: wait until at most `n` (static, 0..7) groups are pending. */
  wait_group(n: number): void {
    const span = callerSpan();
    const op = opOf("wgmma.wait_group.sync.aligned", "stmt", span);
    recordStmtOp(op, [staticOperand(op, "n", n, span)], span);
  },
};

/**
 * `T.ptx.setmaxnreg(inc, count)`: `setmaxnreg.{inc,dec}.sync.aligned.u32 count` (PTX ISA; sm_90a):
 * the warpgroup's per-thread register limit becomes `count` (24..256, a multiple of 8).
 * @throws TirxError TX7008 (count), TX7009 (launch: whole warpgroups, register budget).
 */
export function setmaxnreg(inc: boolean, count: number): void {
  const span = callerSpan();
  if (typeof inc !== "boolean") {
    throw new TirxError("TX1002", `inc of T.ptx.setmaxnreg must be true or false`, span);
  }
  const op = opOf(`setmaxnreg.${inc ? "inc" : "dec"}.sync.aligned.u32`, "stmt", span);
  recordStmtOp(op, [staticOperand(op, "count", count, span)], span);
}
