import type { DType } from "../dtype.js";
import { freshVarId } from "./ids.js";
import type { Span } from "../span.js";
import type { SwizzleLayout } from "./swizzle-layout.js";
import type { TileLayout } from "./tile-layout.js";
import { checkLiteral } from "./literal.js";

/**
 * Expressions: immutable plain data, discriminated by `kind`, in the manner of TVM TIR's
 * `PrimExpr`. Every node has a dtype; `span` points at the author's source when known.
 */
export type Expr =
  | IntImm
  | FloatImm
  | Var
  | Special
  | Binary
  | Compare
  | Logical
  | Not
  | Cast
  | IfThenElse
  | BufferLoad
  | BufferPtr
  | CallExpr;

interface ExprBase {
  readonly dtype: DType;
  readonly span?: Span;
}

/** Integer or bool constant. 64-bit values may be bigint to keep every bit. */
export interface IntImm extends ExprBase {
  readonly kind: "IntImm";
  readonly value: number | bigint;
}

/** Floating-point constant. */
export interface FloatImm extends ExprBase {
  readonly kind: "FloatImm";
  readonly value: number;
}

/** A variable; identity is `id` (names need not be unique). */
export interface Var extends ExprBase {
  readonly kind: "Var";
  readonly name: string;
  readonly id: number;
}

/** Hardware index registers of PTX (`%tid.x`, `%ctaid.y`, `%ntid.z`, ...). int32. */
export type SpecialName =
  | "tid.x"
  | "tid.y"
  | "tid.z"
  | "ctaid.x"
  | "ctaid.y"
  | "ctaid.z"
  | "ntid.x"
  | "ntid.y"
  | "ntid.z"
  | "nctaid.x"
  | "nctaid.y"
  | "nctaid.z";

/** Read of a PTX special register. Legal only inside `device_entry`. */
export interface Special extends ExprBase {
  readonly kind: "Special";
  readonly name: SpecialName;
}

/**
 * Arithmetic and bitwise operators. `div`/`mod` truncate toward zero (C semantics); `floordiv`
 * and `floormod` round toward negative infinity (Python/TIR semantics). Operands share `dtype`.
 */
export type BinaryOp =
  | "add"
  | "sub"
  | "mul"
  | "div"
  | "mod"
  | "floordiv"
  | "floormod"
  | "min"
  | "max"
  | "bitand"
  | "bitor"
  | "bitxor"
  | "shl"
  | "shr";

/** Every binary operator, in a stable order. */
export const BINARY_OPERATORS: readonly BinaryOp[] = [
  "add",
  "sub",
  "mul",
  "div",
  "mod",
  "floordiv",
  "floormod",
  "min",
  "max",
  "bitand",
  "bitor",
  "bitxor",
  "shl",
  "shr",
];

/** Arithmetic or bitwise `a op b` (BinaryOp), e.g. `add`, `shl`. */
export interface Binary extends ExprBase {
  readonly kind: "Binary";
  readonly op: BinaryOp;
  readonly a: Expr;
  readonly b: Expr;
}

/** A comparison's operator: ==, !=, <, <=, >, >=. */
export type CompareOp = "eq" | "ne" | "lt" | "le" | "gt" | "ge";

/** Every comparison operator, in a stable order. */
export const COMPARE_OPERATORS: readonly CompareOp[] = ["eq", "ne", "lt", "le", "gt", "ge"];

/** Comparison of two operands of one dtype; result dtype is bool. */
export interface Compare extends ExprBase {
  readonly kind: "Compare";
  readonly op: CompareOp;
  readonly a: Expr;
  readonly b: Expr;
}

/** Short-circuit-free logical and/or of two bools. */
export interface Logical extends ExprBase {
  readonly kind: "Logical";
  readonly op: "and" | "or";
  readonly a: Expr;
  readonly b: Expr;
}

/** Logical negation of a bool. */
export interface Not extends ExprBase {
  readonly kind: "Not";
  readonly a: Expr;
}

/** Value conversion (not a bit reinterpretation) to `dtype`. Float to int truncates. */
export interface Cast extends ExprBase {
  readonly kind: "Cast";
  readonly value: Expr;
}

/** `cond ? t : f` with both arms evaluated (TIR `if_then_else` / PTX `selp`). */
export interface IfThenElse extends ExprBase {
  readonly kind: "IfThenElse";
  readonly cond: Expr;
  readonly t: Expr;
  readonly f: Expr;
}

/** Load of one element at `offset` (elements from the buffer's start). */
export interface BufferLoad extends ExprBase {
  readonly kind: "BufferLoad";
  readonly buffer: Buffer;
  readonly offset: Expr;
  /**
   * The author's per-axis indices of the load, where the offset does not bound them (after the
   * `axis-checks` pass: those left to the run).
   */
  readonly index?: AccessIndex;
}

/**
 * One index an author gave an element access (`B.get([i, j])`, `B.set([i, j], v)`, or a runtime
 * index of the `sub` its view came from), with the extent of the axis it indexes: the verifier
 * proves it within [0, extent) (TX2006), because a flat offset can stay inside the buffer while
 * an index leaves its axis (`B[i, 32]` of a [128, 32] tensor is `B[i + 1, 0]`).
 */
export interface AxisIndex {
  /** The index, int32, in elements of the access's dtype along the axis. */
  readonly index: Expr;
  /** The axis's extent: static, or a symbolic dim of a tensor parameter. */
  readonly extent: Dim;
  /** The axis's position in the tensor or view it indexes. */
  readonly axis: number;
  /** The axis's name from `rearrange`, "" where unnamed. */
  readonly name: string;
  /** True for an axis of a view (`sub`, `rearrange`, `view_as`, `as_strided`), false for one of the tensor or buffer itself. */
  readonly view: boolean;
  /** True for an index `sub` fixed (the axis is gone from the view that was accessed). */
  readonly sub: boolean;
}

/**
 * The author's indices of one element access whose flat offset does not bound them (core's
 * `accessAxes` picks them: not constants, which the builder checks (TX1005), nor axis 0 of the
 * tensor itself, which the offset bounds once the other axes are). Like a span, it records the
 * author's form of the access for the verifier: structural equality and hashing ignore it and
 * the printer writes the flat offset. Passes rewrite its expressions with the offset's
 * (`mapExpr` / `mapStmt`); the `axis-checks` pass, right after `lower-tile`, keeps only the
 * indices the verifier left to the run (they read data), which the simulator checks (TX6005)
 * and codegen's `checkBounds` guards.
 */
export type AccessIndex = readonly AxisIndex[];

/**
 * Address of the element at `offset` of `buffer`, in the buffer's state space: a 32-bit
 * shared-window address for shared buffers (dtype uint32), a 64-bit generic-to-global address
 * for global buffers (dtype uint64). Used as an operand of intrinsics such as mbarrier calls.
 */
export interface BufferPtr extends ExprBase {
  readonly kind: "BufferPtr";
  readonly buffer: Buffer;
  readonly offset: Expr;
}

/** Value-returning intrinsic (for example `mbarrier.try_wait.parity`). */
export interface CallExpr extends ExprBase {
  readonly kind: "CallExpr";
  readonly op: string;
  readonly args: readonly Expr[];
}

/*
 * Buffers are declared with the expressions: a buffer's dims are expressions (`Var`) and a load
 * names its buffer, so the two types are one recursive family (`ir/buffer.ts` re-exports them
 * with the functions on buffers and views).
 */

/** PTX state spaces a buffer can live in. `shared.dyn` is dynamic (extern) shared memory. */
export type Scope = "global" | "shared" | "shared.dyn" | "local";

/**
 * One extent of a buffer, in elements: a static number, or an int32 scalar parameter of the
 * kernel (a symbolic dim, TVMScript's `n = T.int32()` in `T.match_buffer(a, (n,))`), whose value
 * is the launch argument and is checked against the tensor's shape at launch.
 */
export type Dim = number | Var;

/**
 * A multi-dimensional array in one state space, in elements, row-major. Shared and local
 * buffers have static shapes; a global tensor parameter may have symbolic dims (`Dim`).
 * Identity is `id`; two buffers with equal fields are still different storage.
 */
export interface Buffer {
  readonly kind: "Buffer";
  readonly name: string;
  readonly id: number;
  readonly dtype: DType;
  readonly shape: readonly Dim[];
  readonly scope: Scope;
  /** Alignment of the first element in bytes (shared allocations: 16 unless asked otherwise). */
  readonly align: number;
  /**
   * An XOR swizzle of the buffer's byte offsets (shared buffers only; `"byte"` units): every
   * access to logical byte offset x touches byte `applySwizzle(layout, x)`. Absent: row-major.
   */
  readonly layout?: SwizzleLayout;
  /**
   * A local tile's TIRx layout (`T.alloc_local(shape, dtype, { layout })`): which thread holds
   * each logical element and at which slot `m` of its array. Absent: today's meaning, every
   * thread holds the whole row-major array. Only on local buffers (verifier TX2021).
   */
  readonly tileLayout?: TileLayout;
  readonly span?: Span;
}

/** A fresh variable. */
export function mkVar(name: string, dtype: DType, span?: Span): Var {
  return { kind: "Var", name, dtype, id: freshVarId(), ...(span ? { span } : {}) };
}

/**
 * Integer constant of `dtype` (default int32).
 * @throws TirxError TX1015 when `value` is outside `dtype`'s range (see `checkLiteral`).
 */
export function intImm(value: number | bigint, dtype: DType = "int32", span?: Span): IntImm {
  checkLiteral(value, dtype, span);
  return { kind: "IntImm", value, dtype, ...(span ? { span } : {}) };
}

/** Bool constant. */
export function boolImm(value: boolean, span?: Span): IntImm {
  return intImm(value ? 1 : 0, "bool", span);
}

/**
 * Floating-point constant of `dtype` (default float32).
 * @throws TirxError TX1015 for a finite float16/bfloat16 literal that rounds to infinity.
 */
export function floatImm(value: number, dtype: DType = "float32", span?: Span): FloatImm {
  checkLiteral(value, dtype, span);
  return { kind: "FloatImm", value, dtype, ...(span ? { span } : {}) };
}

/** Constant value of an IntImm as a number, or undefined when `e` is not an integer constant. */
export function constInt(e: Expr): number | undefined {
  if (e.kind !== "IntImm") return undefined;
  return typeof e.value === "bigint" ? Number(e.value) : e.value;
}
