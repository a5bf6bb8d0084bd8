import { bufferName } from "../buffer-name.js";
import { dtypeBytes } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { numel, rowMajorStrides, showShape, type View } from "../ir/buffer.js";
import { constInt, type Expr } from "../ir/expr.js";
import type { TileApply } from "../ir/stmt.js";
import { showSwizzle, swizzleModeOf } from "../layout/swizzle.js";
import { SWIZZLE_BYTES, isTensorMap, tmaTileShape, type TensorMap } from "../ir/tensor-map.js";
import type { Span } from "../span.js";
import { didYouMean } from "../suggest.js";
import { isExpr, isExprList, isView } from "../visit.js";
import { knownDivisor, provableAlignment } from "../analysis/bounds.js";
import {
  cachePolicyParam,
  checkParamNames,
  checkViewBounds,
  exprParam,
  sideOf,
  type PatternContext,
} from "./common.js";
import { checkMbarrierOperand } from "./mbarrier.js";
import { TMA_DTYPES, checkTensorMapEncoding, tensorMapEncoding } from "./tensor-map-contract.js";
import { tensorView, viewStartPtr } from "../layout/view.js";
import type { AtomSide, TmaOpcode, TmaPlan } from "../ir/tile-plan.js";

const G2S = "mbarrier::complete_tx::bytes";

/**
 * Parse a TMA opcode:
 * `cp.async.bulk.tensor.Nd.{shared::cluster|shared::cta}.global[.tile].mbarrier::complete_tx::bytes[.multicast::cluster][.L2::cache_hint]`,
 * `cp.async.bulk.tensor.Nd.global.shared::cta[.tile].bulk_group[.L2::cache_hint]` or
 * `cp.async.bulk.prefetch.tensor.Nd.L2.global[.tile][.L2::cache_hint]`, N in 1..5, or
 * `prefetch.tensormap` (PTX ISA "prefetch": the tensor map into the cache). Only the
 * tile mode is supported (not im2col, gather4 or scatter4).
 * @throws TirxError TX4015. Source: PTX ISA "cp.async.bulk.tensor", "cp.async.bulk.prefetch.tensor".
 */
export function parseTmaOpcode(opcode: string, span?: Span): TmaOpcode {
  const fail = (why: string): never => {
    throw new TirxError("TX4015", `opcode "${opcode}": ${why}`, span);
  };
  const parts = opcode.split(".");
  if (opcode === "prefetch.tensormap") {
    return {
      direction: "descriptor",
      rank: 0,
      dstSpace: "tensormap",
      multicast: false,
      cacheHint: false,
    };
  }
  if (parts[0] === "prefetch") fail('the descriptor prefetch is spelled "prefetch.tensormap"');
  const prefetch = parts[3] === "prefetch";
  const head = prefetch ? 5 : 4;
  const rest = parts.slice(head);
  const dim = /^([1-5])d$/.exec(rest[0] ?? "");
  if (!dim)
    return fail(`expected a rank token .1d … .5d after "${parts.slice(0, head).join(".")}"`);
  const rank = Number(dim[1]);
  let [dst, src, ...quals] = rest.slice(1);
  if (quals[0] === "tile") quals = quals.slice(1);
  else if (quals[0] === "im2col" || quals[0]?.startsWith("tile::"))
    fail(`only the tile mode is supported, got ".${quals[0]}"`);
  let completion: string | undefined;
  if (!prefetch) [completion, ...quals] = quals;
  let multicast = false;
  let cacheHint = false;
  for (const q of quals) {
    if (q === "multicast::cluster" && !multicast && !cacheHint) multicast = true;
    else if (q === "L2::cache_hint" && !cacheHint) cacheHint = true;
    else {
      const g = didYouMean(q, ["multicast::cluster", "L2::cache_hint"]);
      fail(
        `unknown, repeated or misplaced qualifier ".${q}"${g && g !== q ? `; did you mean ".${g}"?` : ""} (order: .multicast::cluster, then .L2::cache_hint)`,
      );
    }
  }
  if (prefetch) {
    if (dst !== "L2" || src !== "global") fail("a tensor prefetch is .L2.global");
    if (multicast) fail(".multicast::cluster is for loads into shared memory");
    return { direction: "prefetch", rank, dstSpace: "L2", multicast, cacheHint };
  }
  if ((dst === "shared::cluster" || dst === "shared::cta") && src === "global") {
    if (completion !== G2S)
      fail(`global → shared tensor copies complete with .${G2S}, got ".${completion ?? ""}"`);
    if (multicast && dst !== "shared::cluster")
      fail(".multicast::cluster needs the .shared::cluster destination");
    return { direction: "g2s", rank, dstSpace: dst, multicast, cacheHint };
  }
  if (dst === "global" && src === "shared::cta") {
    if (completion !== "bulk_group")
      fail(`shared → global tensor copies complete with .bulk_group, got ".${completion ?? ""}"`);
    if (multicast) fail(".multicast::cluster is for loads into shared memory");
    return { direction: "s2g", rank, dstSpace: "global", multicast, cacheHint };
  }
  return fail(
    "supported forms are cp.async.bulk.tensor.Nd.shared::cluster.global.tile.mbarrier::complete_tx::bytes (or .shared::cta; + .multicast::cluster, .L2::cache_hint), cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group and cp.async.bulk.prefetch.tensor.Nd.L2.global.tile",
  );
}

/**
 * Check a tensor map's own fields against the driver's contract (cuTensorMapEncodeTiled). A
 * tensor with symbolic dims (`T.Tensor(["m", "n"], ...)`) is accepted: its global dims and
 * strides are the launch's (see {@link tensorMapLaunchDims}); here the strides inside which
 * every dim is static are checked.
 * @throws TirxError TX4024 (dtype, static row strides multiple of 16 bytes, rank 1..5),
 *   TX4017 (box and element strides), TX4027 (address), TX4028 (modes), TX4029 (oob_fill
 *   "nan" on a non-float dtype) and the rest of the driver's contract on what is static (the
 *   dims and strides of a static tensor) through checkTensorMapEncoding, the check the runtimes
 *   run again at launch (tensor-map-contract.ts). Source: CUDA Driver API,
 *   cuTensorMapEncodeTiled.
 */
export function checkTensorMap(m: TensorMap, span?: Span): void {
  const where = span ?? m.span;
  const b = m.buffer;
  if (b.scope !== "global") {
    throw new TirxError(
      "TX4024",
      `tensor map "${m.name}" describes ${bufferName(b)}, which is ${b.scope}; tensor maps describe global tensor parameters`,
      where,
    );
  }
  if (TMA_DTYPES[m.dtype] === undefined) {
    throw new TirxError(
      "TX4024",
      `tensor map "${m.name}": dtype ${m.dtype} has no TMA encoding (accepted: ${Object.keys(TMA_DTYPES).join(", ")})`,
      where,
    );
  }
  const shape = b.shape;
  const rank = shape.length;
  if (rank < 1 || rank > 5) {
    throw new TirxError(
      "TX4024",
      `tensor map "${m.name}": TMA tensors have rank 1..5, ${bufferName(b)} has ${rank}`,
      where,
    );
  }
  const eb = dtypeBytes(m.dtype);
  // Strides inside which every dim is static; a stride with a symbolic dim inside is the launch's.
  let stride = 1;
  for (let k = rank - 1; k > 0; k--) {
    const d = shape[k]!;
    if (typeof d !== "number") break;
    stride *= d;
    if ((stride * eb) % 16 !== 0) {
      throw new TirxError(
        "TX4024",
        `tensor map "${m.name}": axis ${k - 1} of ${bufferName(b)} has a stride of ${stride * eb} bytes; TMA needs strides that are multiples of 16 bytes (pad the inner axis)`,
        where,
      );
    }
  }
  if (m.box.length !== rank || m.elementStrides.length !== rank) {
    throw new TirxError(
      "TX4017",
      `tensor map "${m.name}": box [${m.box.join(", ")}] and element strides [${m.elementStrides.join(", ")}] need one entry per axis of ${bufferName(b)} (rank ${rank})`,
      where,
    );
  }
  // The rest of cuTensorMapEncodeTiled's contract, on what is static (symbolic dims wait for
  // the launch, where the runtimes run the same check with the address and the launch shape).
  checkTensorMapEncoding(m.name, tensorMapEncoding(m), where);
}

/** Shared alignment a TMA tile needs: 128 bytes, or the swizzle atom (8 rows of the span). */
export function tmaSharedAlign(m: TensorMap): number {
  return Math.max(128, 8 * SWIZZLE_BYTES[m.swizzle]);
}

/** The global dims and byte strides of a tensor map for one launch, innermost first. */
export interface TensorMapDims {
  /** Dims in elements, innermost first (cuTensorMapEncodeTiled's `globalDim`). */
  readonly dims: readonly number[];
  /** Byte strides of dims 1..rank-1, innermost first (`globalStrides`). */
  readonly strides: readonly number[];
}

/**
 * The global dims and byte strides of `map` for one launch, innermost first as
 * cuTensorMapEncodeTiled takes them, or the reason the driver would refuse them: `shape` is the
 * launch argument's shape (for a tensor with symbolic dims, the values its scalar parameters are
 * bound to; checkArgs has matched them, TX5008). Each dim is in 1..2^32 and each stride a
 * multiple of 16 bytes below 2^40: a symbolic tensor's strides are checked here, at launch (the
 * verifier checks static strides, TX4024). Shared by the CUDA runtime (the map it encodes; its
 * TX4024 at the launching call) and the simulator (its bounds and out-of-bounds fill; its
 * TX4024 at the copy). Source: CUDA Driver API, cuTensorMapEncodeTiled (globalDim ≤ 2^32,
 * globalStrides multiples of 16 and < 2^40).
 */
export function tensorMapLaunchDims(
  map: TensorMap,
  shape: readonly number[],
): TensorMapDims | string {
  const rank = shape.length;
  const eb = dtypeBytes(map.dtype);
  const dims = [...shape].reverse();
  const strides: number[] = [];
  let s = eb;
  const what = `tensor map "${map.name}" of ${bufferName(map.buffer)} ${showShape(map.buffer.shape)} at [${shape.join(", ")}]`;
  for (let k = 0; k < rank; k++) {
    const d = dims[k]!;
    if (!Number.isInteger(d) || d < 1 || d > 2 ** 32) {
      return `${what}: dim ${rank - 1 - k} is ${d}; TMA dims are in 1..2^32`;
    }
    s *= d;
    if (k === rank - 1) break;
    if (s % 16 !== 0 || s >= 2 ** 40) {
      return `${what}: axis ${rank - 2 - k} has a stride of ${s} bytes; TMA needs strides that are multiples of 16 bytes below 2^40 (pad the inner axis)`;
    }
    strides.push(s);
  }
  return { dims, strides };
}

/** Provable alignment in bytes of a side's origin (the buffer's alignment caps it). */
function originAlignment(side: AtomSide): number {
  return provableAlignment(knownDivisor(side.baseBytes), side.buffer.align);
}

const isShared = (v: View): boolean =>
  v.buffer.scope === "shared" || v.buffer.scope === "shared.dyn";

function checkWholeTensor(v: View, m: TensorMap, s: TileApply): void {
  const b = v.buffer;
  const w = b.id === m.buffer.id ? tensorView(b) : undefined;
  const whole =
    w !== undefined &&
    constInt(v.offset) === 0 &&
    v.dtype === b.dtype &&
    v.shape.length === w.shape.length &&
    v.shape.every((n, k) => n === w.shape[k]) &&
    v.strides.every((x, k) => v.shape[k] === 1 || x === w.strides[k]);
  if (!whole) {
    throw new TirxError(
      "TX4016",
      `the global operand of a TMA copy is the whole tensor its map describes (${bufferName(m.buffer)}), got a view of ${bufferName(b)}; the box position is given by coords`,
      s.span,
    );
  }
}

function checkTile(v: View, m: TensorMap, s: TileApply, side: string): void {
  const tile = tmaTileShape(m);
  const dense = rowMajorStrides(v.shape).every((x, k) => v.shape[k] === 1 || x === v.strides[k]);
  if (
    v.dtype !== m.dtype ||
    v.shape.length !== tile.length ||
    v.shape.some((n, k) => n !== tile[k]) ||
    !dense
  ) {
    throw new TirxError(
      "TX4018",
      `the ${side} tile must be the box of tensor map "${m.name}": ${m.dtype} [${tile.join(", ")}], dense row-major; got ${v.dtype} [${v.shape.join(", ")}] with strides [${v.strides.join(", ")}]`,
      s.span,
    );
  }
}

function mbarParam(s: TileApply): Expr {
  const m = s.params["mbar"];
  let e: Expr | undefined;
  if (m !== undefined && isView(m) && numel(m.shape) === 1) {
    e = viewStartPtr(m, "mbar", s.span, "TX4011");
  } else if (m !== undefined && isExpr(m)) e = m;
  if (!e) {
    throw new TirxError(
      "TX4006",
      "a global → shared TMA copy needs mbar: the mbarrier it completes on (bars.ptr([i]) or a one-element view)",
      s.span,
    );
  }
  checkMbarrierOperand(e, s.span);
  return e;
}

const MODE_OF: Readonly<Record<TensorMap["swizzle"], number>> = {
  none: 0,
  "32B": 1,
  "64B": 2,
  "128B": 3,
};

/**
 * The map's swizzle must be the shared buffer's layout: TMA writes (or reads) the box at
 * physically swizzled addresses, and the kernel's accesses to the buffer go through its layout.
 * @throws TirxError TX4020. Source: CUDA Driver API, CUtensorMapSwizzle; CuTe Swizzle<B, 4, 3>.
 */
function checkSwizzleAgrees(tile: View, m: TensorMap, s: TileApply): void {
  const layout = tile.buffer.layout;
  const mode = layout ? swizzleModeOf(layout) : 0;
  if (mode === MODE_OF[m.swizzle]) return;
  const has = layout ? showSwizzle(layout) : "no swizzle (row-major)";
  throw new TirxError(
    "TX4020",
    `tensor map "${m.name}" has swizzle ${m.swizzle}, but shared ${bufferName(tile.buffer)} has ${has}; allocate it with { layout: ${m.swizzle === "none" ? "none" : `T.swizzle_mode("${m.swizzle}")`} } or encode the map with the buffer's mode`,
    s.span,
  );
}

const LOAD_PARAMS = ["tensor_map", "coords", "mbar", "cta_mask", "cache_policy", "pred"] as const;
const OTHER_PARAMS = ["tensor_map", "coords", "cache_policy", "pred"] as const;
const DESCRIPTOR_PARAMS = ["tensor_map", "pred"] as const;

/**
 * Check a TMA `tile.apply` and return its plan. Operands are (shared tile, global tensor) for
 * loads, (global tensor, shared tile) for stores and (global tensor, global tensor) for
 * prefetches; parameters: `tensor_map` (from `T.tensormap_encode_tiled`), `coords` (one int32
 * per axis, outermost first), `mbar` (loads), `cta_mask` (uint16, multicast), `cache_policy`
 * (uint64, `.L2::cache_hint`), `pred` (bool).
 * @throws TirxError TX4015–TX4024, TX4005 (state spaces), TX4006/TX4011 (mbarrier), TX4013 (the
 *   shared tile outside its buffer), TX4002
 *   (unknown parameter, cache hint). Sources: PTX ISA "cp.async.bulk.tensor" (shared address
 *   128-byte aligned; multicast), "Tensor-map"; CUDA Driver API cuTensorMapEncodeTiled.
 */
export function planTmaCopy(s: TileApply, ctx: PatternContext): TmaPlan {
  const opcode = parseTmaOpcode(s.opcode, s.span);
  const g2s = opcode.direction === "g2s";
  const descriptor = opcode.direction === "descriptor";
  checkParamNames(
    s,
    g2s ? LOAD_PARAMS : descriptor ? DESCRIPTOR_PARAMS : OTHER_PARAMS,
    "TX4002",
    `"${s.opcode}"`,
  );
  const m = s.params["tensor_map"];
  if (!isTensorMap(m)) {
    throw new TirxError(
      "TX4016",
      `a TMA copy needs tensor_map: a map from T.tensormap_encode_tiled(tensor, { box, ... }), got ${m === undefined ? "none" : typeof m}`,
      s.span,
    );
  }
  checkTensorMap(m, s.span);
  if (!descriptor && m.box.length !== opcode.rank) {
    throw new TirxError(
      "TX4016",
      `the opcode is ${opcode.rank}d, but tensor map "${m.name}" has rank ${m.box.length}`,
      s.span,
    );
  }
  const { dst, src } = s;
  const [tile, global] = g2s
    ? [dst, src]
    : opcode.direction === "s2g"
      ? [src, dst]
      : [undefined, src];
  if (
    (tile && !isShared(tile)) ||
    global.buffer.scope !== "global" ||
    ((opcode.direction === "prefetch" || descriptor) && dst.buffer.id !== src.buffer.id)
  ) {
    const want =
      opcode.direction === "g2s"
        ? "(shared tile, global tensor)"
        : opcode.direction === "s2g"
          ? "(global tensor, shared tile)"
          : "(global tensor, the same global tensor)";
    throw new TirxError(
      "TX4005",
      `"${s.opcode}" takes dst, src = ${want}; got ${dst.buffer.scope} ${bufferName(dst.buffer)}, ${src.buffer.scope} ${bufferName(src.buffer)}`,
      s.span,
    );
  }
  checkWholeTensor(global, m, s);
  let boxBytes = 0;
  if (tile) {
    checkTile(tile, m, s, g2s ? "destination" : "source");
    checkViewBounds(tile, ctx.env, "TX4013", "the shared tile", s.span);
    boxBytes = numel(tile.shape) * dtypeBytes(m.dtype);
    checkSwizzleAgrees(tile, m, s);
    const need = tmaSharedAlign(m);
    // Only the origin matters: the tile is one dense box.
    const got = originAlignment(sideOf(tile, 0, s.span));
    if (got % need !== 0) {
      throw new TirxError(
        "TX4019",
        `the shared tile of ${bufferName(tile.buffer)} is only provably ${got}-byte aligned; TMA needs ${need}${m.swizzle === "none" ? "" : ` with ${m.swizzle} swizzle (the swizzle atom)`} (allocate with { align: ${need} })`,
        s.span,
      );
    }
  }
  const c = descriptor ? [] : s.params["coords"];
  const coordsOk =
    c !== undefined &&
    isExprList(c) &&
    c.length === opcode.rank &&
    c.every((e) => e.dtype === "int32");
  if (!coordsOk) {
    throw new TirxError(
      "TX4023",
      `coords must list ${opcode.rank} int32 coordinates (outermost axis first), got ${c === undefined ? "none" : isExprList(c) ? `${c.length}: ${c.map((e) => e.dtype).join(", ")}` : typeof c}`,
      s.span,
    );
  }
  // The innermost coordinate of a copy, in bytes, is a multiple of 16: on the H200 a load at
  // 4 bytes stopped the kernel with an illegal instruction (compute-sanitizer, 2026-12-03). A
  // constant one is refused here; the simulator reports the others at run time (TX6031).
  const inner = tile && c.length > 0 ? constInt(c[c.length - 1]!) : undefined;
  const eb = dtypeBytes(m.dtype);
  if (inner !== undefined && (inner * eb) % 16 !== 0) {
    throw new TirxError(
      "TX4023",
      `the innermost coordinate ${inner} is ${inner * eb} bytes of ${m.dtype} into the row; a TMA copy's box starts at a multiple of 16 bytes there (${16 / Math.min(16, eb)} elements), or the copy engine raises an illegal instruction`,
      s.span,
    );
  }
  const mbar = g2s ? mbarParam(s) : undefined;
  const ctaMask = exprParam(s, "cta_mask", ["uint16"], "TX4021");
  if (opcode.multicast !== (ctaMask !== undefined)) {
    throw new TirxError(
      "TX4021",
      opcode.multicast
        ? ".multicast::cluster needs cta_mask: a uint16 mask of the destination CTA ranks"
        : "cta_mask needs .multicast::cluster in the opcode",
      s.span,
    );
  }
  if (opcode.multicast && !ctx.launch.cluster) {
    throw new TirxError(
      "TX4021",
      "a multicast copy writes to the CTAs of a cluster: launch with T.cuda.LaunchConfig({ ..., cluster: [n, 1, 1] })",
      s.span,
    );
  }
  const cachePolicy = cachePolicyParam(s, opcode.cacheHint);
  const pred = exprParam(s, "pred", ["bool"], "TX4002");
  const ptxVersion: [number, number] = g2s && opcode.dstSpace === "shared::cta" ? [8, 6] : [8, 0];
  return {
    kind: "cp.async.bulk.tensor",
    opcode,
    map: m,
    coords: c,
    dst: sideOf(dst, 0, s.span),
    src: sideOf(src, 0, s.span),
    ...(mbar ? { mbar } : {}),
    ...(ctaMask ? { ctaMask } : {}),
    ...(cachePolicy ? { cachePolicy } : {}),
    ...(pred ? { pred } : {}),
    boxBytes,
    ptxVersion,
  };
}
