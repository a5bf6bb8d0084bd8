import {
  mkTensorMap,
  TirxError,
  type TensorMap,
  type TmaL2Promotion,
  type TmaOobFill,
  type TmaSwizzle,
} from "@tirx-ts/core";
import { checkOptions } from "./check.js";
import { show } from "./expr.js";
import { callerSpan } from "./span.js";
import { TileView } from "./view.js";

/** Options of {@link tensormap_encode_tiled}; names as TIRx's `tensormap_encode_tiled`. */
export interface TensorMapOptions {
  /** Box extent per tensor axis (outermost first), in elements, each in [1, 256]. */
  readonly box: readonly number[];
  /** Traversal stride per axis within the box, each in [1, 8] (default all 1). */
  readonly element_strides?: readonly number[];
  /** Shared-memory swizzle of the box: "none" (default), "32B", "64B" or "128B". */
  readonly swizzle?: TmaSwizzle;
  /** L2 sector promotion: "none" (default), "64B", "128B", "256B". */
  readonly l2_promotion?: TmaL2Promotion;
  /** Out-of-bounds fill: "none" (zeros, default) or "nan" (NaN for float tensors). */
  readonly oob_fill?: TmaOobFill;
  /** Name of the map (default `<tensor>_tmap`), for PTX comments and messages. */
  readonly name?: string;
}

const SWIZZLES: readonly TmaSwizzle[] = ["none", "32B", "64B", "128B"];
const PROMOTIONS: readonly TmaL2Promotion[] = ["none", "64B", "128B", "256B"];
const FILLS: readonly TmaOobFill[] = ["none", "nan"];

function oneOf<T extends string>(v: unknown, all: readonly T[], what: string, dflt: T): T {
  if (v === undefined) return dflt;
  if (typeof v === "string" && (all as readonly string[]).includes(v)) return v as T;
  throw new TirxError(
    "TX1002",
    `${what} must be one of ${all.map((x) => `"${x}"`).join(", ")}, got ${show(v)}`,
    callerSpan(),
  );
}

function intList(v: unknown, what: string): number[] {
  if (!Array.isArray(v) || v.some((n) => typeof n !== "number" || !Number.isSafeInteger(n))) {
    throw new TirxError(
      "TX1002",
      `${what} must be a list of integers, got ${show(v)}`,
      callerSpan(),
    );
  }
  return [...(v as number[])];
}

/**
 * A tiled tensor map of the global tensor parameter `tensor` (TIRx `tensormap_encode_tiled`;
 * CUDA `cuTensorMapEncodeTiled`), for TMA copies: pass it as `tensor_map` to
 * `T.cuda.tile.apply(T.ptx["cp.async.bulk.tensor.2d…"], …)`. The runtime encodes it at each
 * launch from the tensor's argument and passes it as a 128-byte `__grid_constant__`-style
 * parameter; the caller's argument list does not change. `tensor` may have symbolic dims
 * (`T.Tensor(["m", "n"], ...)`): the box stays static and the map's dims and strides are the
 * launch's (a stride that is not a multiple of 16 bytes is TX4024 at launch); the whole tensor
 * is then the copy's global operand as it is. Fields are checked by the verifier (TX4017 box,
 * TX4024 dtype and static strides).
 * @example
 *   const mapA = T.tensormap_encode_tiled(A, { box: [64, 64], swizzle: "128B" });
 * @throws TirxError TX1002 for a malformed option.
 */
export function tensormap_encode_tiled(tensor: TileView, opts: TensorMapOptions): TensorMap {
  const span = callerSpan();
  if (!(tensor instanceof TileView)) {
    throw new TirxError(
      "TX1002",
      `tensormap_encode_tiled takes a global tensor parameter, got ${show(tensor)}`,
      span,
    );
  }
  const o = checkOptions(
    opts,
    ["box", "element_strides", "swizzle", "l2_promotion", "oob_fill", "name"],
    "T.tensormap_encode_tiled",
    span,
  );
  const buffer = tensor.symbolicTensor ?? tensor.view.buffer;
  const box = intList(o["box"], "box");
  const es =
    o["element_strides"] === undefined
      ? box.map(() => 1)
      : intList(o["element_strides"], "element_strides");
  const name = o["name"];
  if (name !== undefined && typeof name !== "string")
    throw new TirxError("TX1002", `name must be a string, got ${show(name)}`, span);
  return mkTensorMap({
    buffer,
    box,
    elementStrides: es,
    swizzle: oneOf(o["swizzle"], SWIZZLES, "swizzle", "none"),
    l2Promotion: oneOf(o["l2_promotion"], PROMOTIONS, "l2_promotion", "none"),
    oobFill: oneOf(o["oob_fill"], FILLS, "oob_fill", "none"),
    ...(typeof name === "string" ? { name } : {}),
    ...(span ? { span } : {}),
  });
}
