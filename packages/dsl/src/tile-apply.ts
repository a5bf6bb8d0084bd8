// The explicit tile-pattern instruction: `T.cuda.tile.apply(T.ptx[opcode], dst, src, params)` and
// its call form `T.ptx[opcode](dst, src, params)` (the PtxOp), one module that both cuda.ts and
// ptx.ts import.
import {
  isTensorMap,
  intImm,
  tensorView,
  TirxError,
  type Span,
  type TileParam,
  type View,
} from "@tirx-ts/core";
import { builder } from "./builder.js";
import { PrimExpr, show } from "./expr.js";
import { isPlainObject } from "./check.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";

/**
 * An instruction named by its PTX opcode, e.g. `T.ptx["cp.async.cg.shared.global"]`: the first
 * operand of `T.cuda.tile.apply`, or called itself, `T.ptx[opcode](dst, src, params)` being
 * `T.cuda.tile.apply(T.ptx[opcode], dst, src, params)` (e.g.
 * `T.ptx["cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32"](dQ, sdQ, { chunk_bytes: 4096 })`).
 * Errors: those of tile.apply and of the opcode's contract.
 */
export class PtxOp {
  readonly opcode!: string;
  constructor(opcode: string) {
    const op = ((dst: TileView, src: TileView, params?: Readonly<Record<string, unknown>>) =>
      tile.apply(op, dst, src, params)) as unknown as PtxOp;
    Object.setPrototypeOf(op, PtxOp.prototype);
    Object.defineProperty(op, "opcode", { value: opcode, enumerable: true });
    return op;
  }
}

/** The call form of a PtxOp: `T.ptx[opcode](dst, src, params)` (see the class). */
export interface PtxOp {
  (dst: TileView, src: TileView, params?: Readonly<Record<string, unknown>>): void;
}

function toParam(key: string, v: unknown, span?: Span): TileParam {
  if (v instanceof PrimExpr) return v.expr;
  if (isTensorMap(v)) return v;
  if (Array.isArray(v)) {
    // TMA coordinates: int32 expressions or integers.
    return (v as unknown[]).map((x, i) => {
      if (x instanceof PrimExpr) return x.expr;
      if (typeof x === "number" && Number.isSafeInteger(x)) return intImm(x, "int32", span);
      throw new TirxError(
        "TX1002",
        `tile.apply parameter ${key}[${i}] must be an expression or an integer, got ${show(x)}`,
        span,
      );
    });
  }
  if (v instanceof TileView) return v.view;
  if (typeof v === "number" || typeof v === "string" || typeof v === "boolean") return v;
  if (typeof v === "bigint") return { kind: "IntImm", value: v, dtype: "uint64" };
  throw new TirxError(
    "TX1002",
    `tile.apply parameter ${key} must be an expression, a view or a constant, got ${show(v)}`,
    span,
  );
}

/**
 * Explicit CUDA tile patterns (TIRx `T.cuda.tile`). `apply(T.ptx[opcode], dst, src, params)`
 * records one tile-pattern instruction; the verifier checks it against the opcode's contract.
 * `op` is typed `PtxOp | undefined` because `T.ptx[opcode]` reads an index signature, which
 * `noUncheckedIndexedAccess` types as possibly undefined; `T.ptx` gives a PtxOp for every
 * dotted name, and anything that is not a PtxOp (undefined included) is TX1002 here.
 */
export const tile = {
  apply(
    op: PtxOp | undefined,
    dst: TileView,
    src: TileView,
    params: Readonly<Record<string, unknown>> = {},
  ): void {
    const span = callerSpan();
    const b = builder("T.cuda.tile.apply", span);
    if (!(op instanceof PtxOp)) {
      throw new TirxError(
        "TX1002",
        `the first operand of tile.apply is an opcode such as T.ptx["cp.async.cg.shared.global"], got ${show(op)}`,
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
          `${name} of tile.apply must be a tensor or view, got ${show(v)}`,
          span,
        );
      }
    }
    if (!isPlainObject(params)) {
      throw new TirxError(
        "TX1002",
        `tile.apply parameters must be an object like { chunk_bytes: 16 }, got ${show(params)}`,
        span,
      );
    }
    const p: Record<string, TileParam> = {};
    for (const k of Reflect.ownKeys(params)) {
      if (typeof k !== "string") {
        throw new TirxError(
          "TX1002",
          `tile.apply parameter names are strings, got ${show(k)}`,
          span,
        );
      }
      const v: unknown = Object.getOwnPropertyDescriptor(params, k)?.value;
      if (v === undefined || v === null) continue;
      Object.defineProperty(p, k, {
        value: toParam(k, v, span),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    // A whole tensor with symbolic dims is a TMA copy's global operand as its stand-in view
    // (tensorView): the tensor map gives the box position and reads the dims at launch.
    const operand = (v: TileView): View => {
      const t = v.symbolicTensor;
      return t && isTensorMap(p["tensor_map"]) ? tensorView(t, span) : v.view;
    };
    b.emit({
      kind: "TileApply",
      opcode: op.opcode,
      dst: operand(dst),
      src: operand(src),
      params: p,
      ...(span ? { span } : {}),
    });
  },
};
