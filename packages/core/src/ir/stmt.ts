import type { DType } from "../dtype.js";
import type { Span } from "../span.js";
import type { Buffer, View } from "./buffer.js";
import type { AccessIndex, Expr, Var } from "./expr.js";
import type { TensorMap } from "./tensor-map.js";
import type { TilePlan } from "./tile-plan.js";

/**
 * Statements: immutable plain data, discriminated by `kind`. `Let` and `Alloc` are flat: they
 * define their variable or buffer for the statements that follow them in the enclosing `Seq`
 * (and everything nested in those), which is what a builder that traces straight-line code
 * records.
 */
export type Stmt =
  Seq | For | While | If | Let | Store | Alloc | Call | TileApply | TileOp | DeviceEntry;

/** Every statement kind. */
export const STMT_KINDS: ReadonlySet<Stmt["kind"]> = new Set<Stmt["kind"]>([
  "Seq",
  "For",
  "While",
  "If",
  "Let",
  "Store",
  "Alloc",
  "Call",
  "TileApply",
  "TileOp",
  "DeviceEntry",
]);

/** True when `node` (a statement or an expression) is a statement. */
export function isStmt(node: { readonly kind: string }): node is Stmt {
  return (STMT_KINDS as ReadonlySet<string>).has(node.kind);
}

interface StmtBase {
  readonly span?: Span;
}

/** Statements run in order. */
export interface Seq extends StmtBase {
  readonly kind: "Seq";
  readonly stmts: readonly Stmt[];
}

/** How codegen treats a `For`: all three run the iterations in order. */
export type ForAnnotation = "serial" | "unroll" | "vectorized";

/**
 * `for (var = min; var < min + extent; var++)`. `unroll` asks codegen to unroll it fully;
 * `vectorized` (TIRx `T.vectorized`) asks it to turn the body's contiguous accesses `base + var`
 * into vector loads and stores (a constant trip count; codegen unrolls what it cannot vectorize).
 */
export interface For extends StmtBase {
  readonly kind: "For";
  readonly var: Var;
  readonly min: Expr;
  readonly extent: Expr;
  readonly annotation: ForAnnotation;
  readonly body: Stmt;
}

/** `while (cond) body`; used for spin loops such as mbarrier waits. */
export interface While extends StmtBase {
  readonly kind: "While";
  readonly cond: Expr;
  readonly body: Stmt;
}

/** `if (cond) then else otherwise`, with a bool `cond`. */
export interface If extends StmtBase {
  readonly kind: "If";
  readonly cond: Expr;
  readonly then: Stmt;
  readonly else?: Stmt;
}

/** Binds `var` to `value` for the rest of the enclosing sequence. */
export interface Let extends StmtBase {
  readonly kind: "Let";
  readonly var: Var;
  readonly value: Expr;
}

/** Store of one element of `dtype` at `offset` (in elements of `dtype`) of `buffer`. */
export interface Store extends StmtBase {
  readonly kind: "Store";
  readonly buffer: Buffer;
  readonly dtype: DType;
  readonly offset: Expr;
  readonly value: Expr;
  /**
   * The author's per-axis indices of the store, where the offset does not bound them (after the
   * `axis-checks` pass: those left to the run).
   */
  readonly index?: AccessIndex;
}

/** Allocation of a shared or local buffer for the rest of the enclosing sequence. */
export interface Alloc extends StmtBase {
  readonly kind: "Alloc";
  readonly buffer: Buffer;
}

/**
 * An intrinsic with no result, named by its PTX spelling or TIRx name, e.g.
 * `cp.async.commit_group`, `cp.async.wait_group` (args: [n]), `bar.sync` (args: [id]).
 * The catalog of intrinsics and their operand types lives in `intrinsics.ts`.
 */
export interface Call extends StmtBase {
  readonly kind: "Call";
  readonly op: string;
  readonly args: readonly Expr[];
}

/**
 * A parameter value of a tile pattern: a runtime expression, a static number or string, a view,
 * a tensor map (TMA copies) or a list of expressions (TMA coordinates).
 */
export type TileParam = Expr | View | number | string | boolean | TensorMap | readonly Expr[];

/**
 * `T.cuda.tile.apply(T.ptx[opcode], dst, src, params)`: one tile-pattern instruction applied at
 * every repeat index of its operand views. Parameters are kept as the author gave them (unknown
 * keys included) so that the verifier can refuse them with the author's span.
 */
export interface TileApply extends StmtBase {
  readonly kind: "TileApply";
  readonly opcode: string;
  readonly dst: View;
  readonly src: View;
  readonly params: Readonly<Record<string, TileParam>>;
}

/**
 * A verified `tile.apply` lowered to an instruction node (pass `lower-tile`): it carries the
 * verifier's plan (atom addresses, repeat shape, parameters as expressions), so later passes
 * and code generators need no side table keyed by node identity. `source` is the statement the
 * author wrote, kept for diagnostics.
 */
export interface TileOp extends StmtBase {
  readonly kind: "TileOp";
  readonly plan: TilePlan;
  readonly source: TileApply;
}

/**
 * One grid extent in CTAs: a static number, or an int32 expression of the kernel's scalar
 * parameters (`T.ceildiv(n, 256)`), evaluated on the host at each launch.
 */
export type GridExtent = number | Expr;

/**
 * Launch configuration of a kernel: 3-D grid of CTAs (static or runtime extents) and 3-D CTA
 * of threads (static).
 */
export interface LaunchConfig {
  readonly grid: readonly [GridExtent, GridExtent, GridExtent];
  readonly block: readonly [number, number, number];
  /** Bytes of dynamic shared memory (`shared.dyn` buffers); 0 when none. */
  readonly dynamicSharedBytes: number;
  /**
   * CTAs per cluster along x, y, z (sm_90 thread-block clusters); absent: no cluster launch.
   * The grid is a whole number of clusters.
   */
  readonly cluster?: readonly [number, number, number];
  /**
   * CTAs that must fit on one SM at once (CUDA `__launch_bounds__(threads, minBlocks)`; PTX
   * `.minnctapersm`): ptxas then caps registers per thread at 65536 / (threads · n), rounded
   * down to its allocation granule. Absent: no cap.
   */
  readonly minCtasPerSm?: number;
}

/** The device part of a function: everything in `body` runs on every thread of the launch. */
export interface DeviceEntry extends StmtBase {
  readonly kind: "DeviceEntry";
  readonly launch: LaunchConfig;
  readonly body: Stmt;
}

/** Sequence of `stmts`, flattening nested sequences. */
export function seq(stmts: readonly Stmt[], span?: Span): Stmt {
  const flat: Stmt[] = [];
  for (const s of stmts) {
    if (s.kind === "Seq") flat.push(...s.stmts);
    else flat.push(s);
  }
  if (flat.length === 1 && !span) return flat[0]!;
  return { kind: "Seq", stmts: flat, ...(span ? { span } : {}) };
}
