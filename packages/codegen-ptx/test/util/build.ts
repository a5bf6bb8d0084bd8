// Small builders over core constructors, so tests read like the kernels they describe.
import {
  elementOffset,
  mkBuffer,
  seq,
  viewOf,
  type Buffer,
  type DType,
  type Expr,
  type LaunchConfig,
  type Param,
  type PrimFunc,
  type Scope,
  type SpecialName,
  type Stmt,
  type TileParam,
  type Var,
  type View,
} from "@tirx-ts/core";

export const special = (name: SpecialName): Expr => ({ kind: "Special", name, dtype: "int32" });
export const tidx = special("tid.x");

export function launch(
  block: number | [number, number, number],
  grid: number | [number, number, number] = 1,
  dyn = 0,
): LaunchConfig {
  const b = typeof block === "number" ? ([block, 1, 1] as const) : block;
  const g = typeof grid === "number" ? ([grid, 1, 1] as const) : grid;
  return { grid: g, block: b, dynamicSharedBytes: dyn };
}

export const tensor = (name: string, shape: number[], dtype: DType): Buffer =>
  mkBuffer(name, shape, dtype, "global");
export const alloc = (
  name: string,
  shape: number[],
  dtype: DType,
  scope: Scope = "shared",
): Buffer => mkBuffer(name, shape, dtype, scope);

/** A kernel: buffers and scalar vars become parameters in order; `body` runs on the device. */
export function kernel(
  name: string,
  params: (Buffer | Var)[],
  l: LaunchConfig,
  body: Stmt[],
): PrimFunc {
  const ps: Param[] = params.map((p) =>
    p.kind === "Buffer"
      ? { kind: "buffer", name: p.name, buffer: p }
      : { kind: "scalar", name: p.name, var: p },
  );
  return {
    kind: "PrimFunc",
    name,
    params: ps,
    body: { kind: "DeviceEntry", launch: l, body: seq(body) },
  };
}

export const allocStmt = (buffer: Buffer): Stmt => ({ kind: "Alloc", buffer });

/** `buffer[indices] = value` with row-major indexing. */
export function store(buffer: Buffer, indices: (Expr | number)[], value: Expr): Stmt {
  return {
    kind: "Store",
    buffer,
    dtype: value.dtype,
    offset: elementOffset(viewOf(buffer), indices),
    value,
  };
}

/** `buffer[indices]` with row-major indexing. */
export function load(
  buffer: Buffer,
  indices: (Expr | number)[],
  dtype: DType = buffer.dtype,
): Expr {
  return { kind: "BufferLoad", buffer, offset: elementOffset(viewOf(buffer), indices), dtype };
}

export const call = (op: string, ...args: Expr[]): Stmt => ({ kind: "Call", op, args });

export function apply(
  opcode: string,
  dst: View,
  src: View,
  params: Record<string, TileParam>,
): Stmt {
  return { kind: "TileApply", opcode, dst, src, params };
}

export function loop(
  v: Var,
  extent: Expr,
  body: Stmt[],
  annotation: "serial" | "unroll" = "serial",
  min?: Expr,
): Stmt {
  return {
    kind: "For",
    var: v,
    min: min ?? { kind: "IntImm", value: 0, dtype: v.dtype },
    extent,
    annotation,
    body: seq(body),
  };
}
