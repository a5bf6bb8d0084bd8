import {
  intImm,
  mkVar,
  TirxError,
  type LaunchConfig,
  type SpecialName,
  type TileParam,
} from "@tirx-ts/core";
import { builder } from "./builder.js";
import { describe, PrimExpr } from "./expr.js";
import { PtxOp } from "./ptx.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";

type Dim3 =
  number | readonly [number] | readonly [number, number] | readonly [number, number, number];

function dim3(d: Dim3, what: string): [number, number, number] {
  const a = typeof d === "number" ? [d] : [...d];
  if (a.length < 1 || a.length > 3 || a.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new TirxError(
      "TX2007",
      `${what} must be a positive integer or up to 3 of them, got ${JSON.stringify(d)}`,
      callerSpan(),
    );
  }
  while (a.length < 3) a.push(1);
  return a as [number, number, number];
}

/**
 * Launch configuration: `T.cuda.LaunchConfig({ grid: 1, block: 128 })`; grid in CTAs, block in
 * threads, each up to 3-D; `dynamic_shared_bytes` for `shared.dyn` buffers.
 */
export function LaunchConfig(cfg: {
  grid: Dim3;
  block: Dim3;
  dynamic_shared_bytes?: number;
}): LaunchConfig {
  return {
    grid: dim3(cfg.grid, "grid"),
    block: dim3(cfg.block, "block"),
    dynamicSharedBytes: cfg.dynamic_shared_bytes ?? 0,
  };
}

function special(kind: "tid" | "ctaid" | "ntid" | "nctaid", axis: string, label: string): PrimExpr {
  const span = callerSpan();
  const b = builder(label, span);
  if (axis !== "x" && axis !== "y" && axis !== "z") {
    throw new TirxError(
      "TX1002",
      `${label} takes "x", "y" or "z", got ${JSON.stringify(axis)}`,
      span,
    );
  }
  if (!b.deviceEntered) {
    throw new TirxError(
      "TX2002",
      `${label} is only defined inside T.device_entry; call T.device_entry first`,
      span,
    );
  }
  const names = {
    tid: "threadIdx",
    ctaid: "blockIdx",
    ntid: "blockDim",
    nctaid: "gridDim",
  } as const;
  const v = mkVar(`${names[kind]}_${axis}`, "int32", span);
  const value = {
    kind: "Special",
    name: `${kind}.${axis}` as SpecialName,
    dtype: "int32",
    ...(span ? { span } : {}),
  } as const;
  b.emit({ kind: "Let", var: v, value, ...(span ? { span } : {}) });
  return new PrimExpr(v);
}

/** `%tid.{x,y,z}`: this thread's index in its CTA (int32). */
export const thread_idx = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("tid", axis, "T.cuda.thread_idx");
/** `%ctaid.{x,y,z}`: this CTA's index in the grid (int32). */
export const block_idx = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("ctaid", axis, "T.cuda.block_idx");
/** `%ntid.{x,y,z}`: threads per CTA along an axis (int32). */
export const block_dim = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("ntid", axis, "T.cuda.block_dim");
/** `%nctaid.{x,y,z}`: CTAs per grid along an axis (int32). */
export const grid_dim = (axis: "x" | "y" | "z" = "x"): PrimExpr =>
  special("nctaid", axis, "T.cuda.grid_dim");

/** CTA-wide barrier (`bar.sync 0`): every thread of the CTA waits here (PTX ISA, bar.sync). */
export function cta_sync(): void {
  const span = callerSpan();
  builder("T.cuda.cta_sync", span).emit({
    kind: "Call",
    op: "bar.sync",
    args: [intImm(0)],
    ...(span ? { span } : {}),
  });
}

function toParam(key: string, v: unknown): TileParam {
  if (v instanceof PrimExpr) return v.expr;
  if (v instanceof TileView) return v.view;
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "bigint") return { kind: "IntImm", value: v, dtype: "uint64" };
  throw new TirxError(
    "TX1002",
    `parameter ${key} must be an expression, a view or a constant, got ${describe(v)}`,
    callerSpan(),
  );
}

/**
 * Explicit CUDA tile patterns (TIRx `T.cuda.tile`). `apply(T.ptx[opcode], dst, src, params)`
 * records one tile-pattern instruction; the verifier checks it against the opcode's contract.
 */
export const tile = {
  apply(
    op: PtxOp,
    dst: TileView,
    src: TileView,
    params: Readonly<Record<string, unknown>> = {},
  ): void {
    const span = callerSpan();
    const b = builder("T.cuda.tile.apply", span);
    if (!(op instanceof PtxOp)) {
      throw new TirxError(
        "TX1002",
        `the first operand of tile.apply is an opcode such as T.ptx["cp.async.cg.shared.global"], got ${describe(op)}`,
        span,
      );
    }
    for (const [name, v] of [
      ["dst", dst],
      ["src", src],
    ] as const) {
      if (!(v instanceof TileView)) {
        throw new TirxError(
          "TX1002",
          `${name} of tile.apply must be a tensor or view, got ${describe(v)}`,
          span,
        );
      }
    }
    if (typeof params !== "object" || params === null) {
      throw new TirxError(
        "TX1002",
        `tile.apply parameters must be an object like { chunk_bytes: 16 }`,
        span,
      );
    }
    const p: Record<string, TileParam> = {};
    for (const [k, v] of Object.entries(params))
      if (v !== undefined && v !== null) p[k] = toParam(k, v);
    b.emit({
      kind: "TileApply",
      opcode: op.opcode,
      dst: dst.view,
      src: src.view,
      params: p,
      ...(span ? { span } : {}),
    });
  },
};
