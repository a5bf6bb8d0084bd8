import type { DType, LaunchConfig, PrimFunc, SwizzleLayout, TileLayout } from "@tirx-ts/core";
import type { PrimExpr } from "../expr.js";
import type { FlatView } from "../flat.js";
import type { TileView } from "../view.js";
import type { T as BuilderT } from "../T.js";

// The declarations that make a script-mode kernel body type-check under `tsc --strict`: a
// kernel is never run, so these types only describe what the parser accepts. Scalars are JS
// numbers (bigints for 64-bit integers, booleans for bool), so `+ - * / % < && ?:` type-check.

/** A script-mode int8 value (a JS number to the type checker). */
export type int8 = number;
/** A script-mode int16 value. */
export type int16 = number;
/** A script-mode int32 value: loop indices, thread indices, offsets. */
export type int32 = number;
/** A script-mode int64 value (a bigint: write literals as `1n`). */
export type int64 = bigint;
/** A script-mode uint8 value. */
export type uint8 = number;
/** A script-mode uint16 value. */
export type uint16 = number;
/** A script-mode uint32 value. */
export type uint32 = number;
/** A script-mode uint64 value (a bigint). */
export type uint64 = bigint;
/** A script-mode float16 value. */
export type float16 = number;
/** A script-mode bfloat16 value. */
export type bfloat16 = number;
/** A script-mode float32 value. */
export type float32 = number;
/** A script-mode float64 value. */
export type float64 = number;
/** A script-mode bool value. */
export type bool = boolean;

/** The JS type a script-mode element of `D` has. */
export type Elem<D extends DType> = D extends "int64" | "uint64"
  ? bigint
  : D extends "bool"
    ? boolean
    : number;

/** A buffer addressed by flat element offset (`A.flat()[k]`), as the script printer writes accesses. */
export interface Flat<D extends DType> {
  [k: number]: Elem<D>;
  /** Address of element `[k]` (uint32 in shared memory, uint64 in global). */
  ptr(index: readonly [number]): number;
}

/** The methods every script-mode tensor or view has (the builder's `TileView`). */
export interface TileMethods<D extends DType> {
  readonly dtype: D;
  readonly name: string;
  readonly shape: readonly number[];
  rearrange(pattern: string, sizes?: Readonly<Record<string, number>>): Tile<D>;
  sub(...index: (number | bigint | string | { kind: "Slice" })[]): Tile<D>;
  view_as<E extends DType>(dtype: E): Tile<E>;
  flat(): Flat<D>;
  flat<E extends DType>(dtype: E): Flat<E>;
  as_strided(opts: {
    dtype?: DType;
    offset?: number;
    shape: readonly number[];
    strides: readonly number[];
    axes?: readonly string[];
  }): Tile<D>;
  ptr(indices?: readonly number[]): number;
}

/** A view of any rank (what `rearrange` and `sub` make): an operand of `T.cuda.tile.apply`. */
export type Tile<D extends DType = DType> = TileMethods<D> & { readonly [i: number]: unknown };

/**
 * A tensor parameter or allocation in script mode: `A: Tensor<[128, 32], "float16">`; `A[i][j]`
 * is an element (a load, or a store on the left of `=`), `A[i]` alone is not a value. A string
 * dim names an int32 scalar parameter: `(n: int32, A: Tensor<["n"], "float32">)`.
 */
export type Tensor<S extends readonly (number | string)[], D extends DType> = TileMethods<D> &
  (S extends readonly [unknown]
    ? { [i: number]: Elem<D> }
    : S extends readonly [unknown, ...infer R extends readonly (number | string)[]]
      ? { readonly [i: number]: Tensor<R, D> }
      : { readonly [i: number]: unknown });

/** A builder signature as script mode sees it: PrimExpr → number, TileView → Tile. */
export type Script<X> = X extends PrimExpr
  ? number
  : X extends TileView
    ? Tile
    : X extends FlatView
      ? Flat<DType>
      : X extends (...a: infer A) => infer R
        ? ((...a: { [K in keyof A]: Script<A[K]> }) => Script<R>) & { [K in keyof X]: Script<X[K]> }
        : X extends Iterable<infer E>
          ? Iterable<Script<E>>
          : X extends object
            ? { [K in keyof X]: Script<X[K]> }
            : X;

type Overridden =
  | "prim_func"
  | "alloc_shared"
  | "alloc_local"
  | "SwizzleLayout"
  | "swizzle_mode"
  | "TileLayout"
  | "ComposeLayout"
  | "S"
  | "R"
  | "O"
  | "layout"
  | "range"
  | "serial"
  | "unroll"
  | "grid"
  | "vectorized"
  | "let_"
  | "if_then_else"
  | "cuda";

/**
 * `T` as a script-mode kernel sees it (the same object at run time): every `T.*` and
 * `T.ptx.*` call of the builder, with values typed as JS numbers, plus `T.prim_func`.
 */
export type ScriptT = Omit<Script<typeof BuilderT>, Overridden> & {
  /**
   * Define a kernel from a TypeScript function that is never run: its source is parsed
   * (ts-morph) at this call's file and position and lowered through the builder.
   */
  prim_func(fn: (...args: never[]) => void): PrimFunc;
  alloc_shared<const S extends readonly number[], D extends DType>(
    shape: S,
    dtype: D,
    opts?: { layout?: "default" | SwizzleLayout; align?: number; dynamic?: boolean; name?: string },
  ): Tensor<S, D>;
  SwizzleLayout(
    per_element: number,
    swizzle_len: number,
    atom_len: number,
    swizzle_inner?: boolean,
  ): SwizzleLayout;
  swizzle_mode(mode: 1 | 2 | 3 | "32B" | "64B" | "128B"): SwizzleLayout;
  /** The layout surface takes and returns plain data: the builder's signatures as they are. */
  TileLayout: (typeof BuilderT)["TileLayout"];
  ComposeLayout: (typeof BuilderT)["ComposeLayout"];
  S: (typeof BuilderT)["S"];
  R: (typeof BuilderT)["R"];
  O: (typeof BuilderT)["O"];
  layout: (typeof BuilderT)["layout"];
  alloc_local<const S extends readonly number[], D extends DType>(
    shape: S,
    dtype: D,
    opts?: { name?: string; layout?: TileLayout },
  ): Tensor<S, D>;
  range(start: number, stop?: number, step?: number): Iterable<int32>;
  serial(start: number, stop?: number, step?: number): Iterable<int32>;
  unroll(start: number, stop?: number, step?: number): Iterable<int32>;
  vectorized(start: number, stop?: number): Iterable<int32>;
  /** Nested loops (`for (const [i, j] of T.grid(4, 8))`): one int32 index per extent. */
  grid<const E extends readonly number[]>(
    ...extents: E
  ): Iterable<{ -readonly [K in keyof E]: int32 }>;
  let_<V extends number | bigint | boolean>(name: string, value: V): V;
  if_then_else<V extends number | bigint | boolean>(cond: boolean | number, t: V, f: V): V;
  cuda: Omit<Script<(typeof BuilderT)["cuda"]>, "LaunchConfig"> & {
    LaunchConfig(cfg: {
      grid: number | readonly number[];
      block: number | readonly number[];
      dynamic_shared_bytes?: number;
      cluster?: number | readonly number[];
      min_ctas_per_sm?: number;
    }): LaunchConfig;
  };
};
