import { bufferName } from "../buffer-name.js";
import { showSwizzle, swizzleAtomBytes, swizzleKeepsContiguous } from "../layout/swizzle.js";
import { dtypeBytes, type DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { showValue } from "../show.js";
import { numel, type View } from "../ir/buffer.js";
import type { Expr } from "../ir/expr.js";
import type { TileApply } from "../ir/stmt.js";
import { didYouMean } from "../suggest.js";
import { isExpr, isView } from "../visit.js";
import {
  atomAlignment,
  cachePolicyParam,
  checkParamNames,
  checkRepeatCount,
  checkViewBounds,
  exprParam,
  sideOf,
  type PatternContext,
} from "./common.js";
import { checkMbarrierOperand } from "./mbarrier.js";
import { viewStartPtr } from "../layout/view.js";
import type {
  AtomSide,
  BulkCopyPlan,
  BulkOpcode,
  BulkRedOp,
  BulkRedType,
  BulkReduce,
} from "../ir/tile-plan.js";

const G2S_PARAMS = ["chunk_bytes", "mbar", "cache_policy", "pred", "scope"] as const;
const S2G_PARAMS = ["chunk_bytes", "cache_policy", "pred", "scope"] as const;
const COMPLETION = "mbarrier::complete_tx::bytes";

/**
 * The element types each `.redOp` of `cp.reduce.async.bulk.global.shared::cta.bulk_group`
 * allows (PTX ISA, "cp.reduce.async.bulk", its table of .redOp and .type; ptxas of CUDA 13.0
 * refuses every other pair). `.add` on `.f16`/`.bf16` is spelled `.add.noftz`.
 */
export const BULK_REDUCE_TYPES: { readonly [K in BulkRedOp]: readonly BulkRedType[] } = {
  add: ["u32", "s32", "u64", "f32", "f64", "f16", "bf16"],
  min: ["u32", "s32", "u64", "s64", "f16", "bf16"],
  max: ["u32", "s32", "u64", "s64", "f16", "bf16"],
  inc: ["u32"],
  dec: ["u32"],
  and: ["b32", "b64"],
  or: ["b32", "b64"],
  xor: ["b32", "b64"],
};

/**
 * The dtypes whose elements a bulk reduction of `.type` reads and writes: the one dtype of that
 * type, either signedness for the bit types `.b32`/`.b64` (PTX ISA, "Fundamental types").
 */
export const BULK_REDUCE_DTYPES: { readonly [K in BulkRedType]: readonly DType[] } = {
  b32: ["uint32", "int32"],
  b64: ["uint64", "int64"],
  u32: ["uint32"],
  s32: ["int32"],
  u64: ["uint64"],
  s64: ["int64"],
  f16: ["float16"],
  bf16: ["bfloat16"],
  f32: ["float32"],
  f64: ["float64"],
};

const S2G_FORM = "cp.async.bulk.global.shared::cta.bulk_group";

/**
 * Parse `cp.async.bulk.{shared::cta|shared::cluster}.global.mbarrier::complete_tx::bytes{.L2::cache_hint}`,
 * `cp.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}` or the bulk reduction
 * `cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp{.noftz}.type`
 * (a shared → global copy whose destination elements become `dst redOp src`; the pairs of
 * BULK_REDUCE_TYPES).
 * @throws TirxError TX4001 (form, or a .redOp/.type pair the ISA does not have, naming the
 *   allowed types), TX4009 (.ignore_oob needs PTX 9.2). Sources: PTX ISA "cp.async.bulk",
 *   "cp.reduce.async.bulk".
 */
export function parseBulkOpcode(opcode: string, span?: TileApply["span"]): BulkOpcode {
  const parts = opcode.split(".");
  const fail = (why: string): never => {
    throw new TirxError("TX4001", `opcode "${opcode}": ${why}`, span);
  };
  const reducing = parts[1] === "reduce";
  if (reducing) parts.splice(1, 1);
  if (parts.slice(0, 3).join(".") !== "cp.async.bulk")
    fail(`expected it to start with "cp.async.bulk" or "cp.reduce.async.bulk"`);
  const [dst, src, completion, ...rest] = parts.slice(3);
  let quals = rest;
  let reduce: BulkReduce | undefined;
  if (reducing) {
    if (dst !== "global" || src !== "shared::cta" || completion !== "bulk_group") {
      fail(
        "the supported bulk reduction is cp.reduce.async.bulk.global.shared::cta.bulk_group{.L2::cache_hint}.redOp.type (shared::cta → global, bulk async-group)",
      );
    }
    const hint = rest[0] === "L2::cache_hint" ? 1 : 0;
    const tail = rest.slice(hint);
    quals = rest.slice(0, hint);
    reduce = parseReduce(tail, fail);
  }
  let cacheHint = false;
  for (const q of quals) {
    if (q === "ignore_oob") {
      throw new TirxError(
        "TX4009",
        `opcode "${opcode}": .ignore_oob needs PTX ISA 9.2, but this toolchain (CUDA 13.0 ptxas) accepts PTX up to 9.0`,
        span,
      );
    }
    if (q !== "L2::cache_hint" || cacheHint) {
      const g = didYouMean(q, ["L2::cache_hint"]);
      fail(`unknown or repeated qualifier ".${q}"${g && g !== q ? `; did you mean ".${g}"?` : ""}`);
    }
    cacheHint = true;
  }
  if ((dst === "shared::cta" || dst === "shared::cluster") && src === "global") {
    if (completion !== COMPLETION) {
      fail(`global → shared bulk copies complete with .${COMPLETION}, got ".${completion ?? ""}"`);
    }
    return { direction: "g2s", dstSpace: dst, cacheHint };
  }
  if (dst === "global" && src === "shared::cta") {
    if (completion !== "bulk_group")
      fail(`shared → global bulk copies complete with .bulk_group, got ".${completion ?? ""}"`);
    return { direction: "s2g", dstSpace: "global", cacheHint, ...(reduce ? { reduce } : {}) };
  }
  return fail(
    `supported forms are cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes (or .shared::cluster), ${S2G_FORM} and cp.reduce.async.bulk.global.shared::cta.bulk_group.redOp.type, each with optional .L2::cache_hint`,
  );
}

/** The `.redOp{.noftz}.type` tokens of a bulk reduction (PTX ISA, "cp.reduce.async.bulk"). */
function parseReduce(tail: readonly string[], fail: (why: string) => never): BulkReduce {
  const ops = Object.keys(BULK_REDUCE_TYPES) as BulkRedOp[];
  const [op, ...more] = tail;
  if (op === undefined || !(ops as readonly string[]).includes(op)) {
    const g = op === undefined ? undefined : didYouMean(op, ops);
    return fail(
      `expected a reduction operator .${ops.join("/.")} after .bulk_group${op === undefined ? "" : `, got ".${op}"`}${g && g !== op ? `; did you mean ".${g}"?` : ""}`,
    );
  }
  const redOp = op as BulkRedOp;
  const noftz = more[0] === "noftz";
  const rest = noftz ? more.slice(1) : more;
  const allowed = BULK_REDUCE_TYPES[redOp];
  const list = allowed.map((t) => `.${t}`).join(", ");
  if (rest.length !== 1) {
    return fail(
      `expected one element type after .${redOp}${noftz ? ".noftz" : ""} (one of ${list})`,
    );
  }
  const type = rest[0]!;
  if (!(allowed as readonly string[]).includes(type)) {
    const g = didYouMean(type, allowed);
    return fail(
      `.${redOp} has no element type ".${type}"; allowed: ${list}${g && g !== type ? `; did you mean ".${g}"?` : ""}`,
    );
  }
  const half = type === "f16" || type === "bf16";
  if (redOp === "add" && half && !noftz) {
    fail(`.add on .${type} is spelled .add.noftz.${type}`);
  }
  if (noftz && !(redOp === "add" && half)) {
    fail(`.noftz goes only with .add on .f16 or .bf16`);
  }
  return { op: redOp, type: type as BulkRedType, noftz };
}

function checkSide(view: View, side: string, chunk: number, s: TileApply): void {
  const eb = dtypeBytes(view.dtype);
  const last = view.shape.length - 1;
  if (
    last < 0 ||
    view.shape[last]! * eb !== chunk ||
    (view.shape[last]! > 1 && view.strides[last] !== 1)
  ) {
    throw new TirxError(
      "TX4004",
      `the final axis of ${side} must be ${chunk} contiguous bytes (chunk_bytes); got ${last < 0 ? "a scalar view" : `${view.shape[last]} × ${eb} bytes with stride ${view.strides[last]}`}`,
      s.span,
    );
  }
}

/**
 * TX4026 unless both views of a bulk reduction hold elements of its `.type`
 * (BULK_REDUCE_DTYPES): the reduction combines the elements of that type (PTX ISA,
 * "cp.reduce.async.bulk").
 */
function checkReduceDtypes(r: BulkReduce, s: TileApply): void {
  const ok = BULK_REDUCE_DTYPES[r.type];
  for (const [side, v] of [
    ["dst", s.dst],
    ["src", s.src],
  ] as const) {
    if (!ok.includes(v.dtype)) {
      throw new TirxError(
        "TX4026",
        `"${s.opcode}" reduces .${r.type} elements, but ${side} ${bufferName(v.buffer)} is ${v.dtype}; it needs ${ok.join(" or ")} on both sides`,
        s.span,
      );
    }
  }
}

/**
 * Check a cp.async.bulk or cp.reduce.async.bulk `tile.apply` and return its plan.
 * @throws TirxError TX4001–TX4014, TX4026 (a reduction's views not of its `.type`). Sources:
 *   PTX ISA "cp.async.bulk" and "cp.reduce.async.bulk" (size a multiple of 16, 16-byte aligned
 *   addresses), "mbarrier" (object in shared memory, 8-byte aligned).
 */
export function planBulkCopy(s: TileApply, ctx: PatternContext): BulkCopyPlan {
  const opcode = parseBulkOpcode(s.opcode, s.span);
  checkParamNames(
    s,
    opcode.direction === "g2s" ? G2S_PARAMS : S2G_PARAMS,
    "TX4002",
    `${s.opcode
      .split(".")
      .slice(0, opcode.reduce ? 6 : 5)
      .join(".")}`,
  );
  const scope = s.params["scope"] ?? "thread";
  if (scope !== "thread") {
    throw new TirxError(
      "TX4014",
      `a bulk copy is issued by each thread that executes it; scope must be "thread", got ${showValue(scope)}. Guard it with T.if_ to elect one thread`,
      s.span,
    );
  }
  const chunk = s.params["chunk_bytes"];
  if (typeof chunk !== "number" || !Number.isInteger(chunk) || chunk <= 0 || chunk % 16 !== 0) {
    throw new TirxError(
      "TX4003",
      `chunk_bytes must be a positive constant multiple of 16, got ${typeof chunk === "number" ? chunk : "a runtime value or nothing"}`,
      s.span,
    );
  }
  const { dst, src } = s;
  const shared = (v: View) => v.buffer.scope === "shared" || v.buffer.scope === "shared.dyn";
  const global = (v: View) => v.buffer.scope === "global";
  if (opcode.direction === "g2s" ? !(shared(dst) && global(src)) : !(global(dst) && shared(src))) {
    throw new TirxError(
      "TX4005",
      `"${s.opcode}" copies ${opcode.direction === "g2s" ? "global → shared" : "shared → global"}, but dst ${bufferName(dst.buffer)} is ${dst.buffer.scope} and src ${bufferName(src.buffer)} is ${src.buffer.scope} (operand order is dst, src)`,
      s.span,
    );
  }
  if (opcode.reduce) checkReduceDtypes(opcode.reduce, s);
  checkSide(dst, "dst", chunk, s);
  checkSide(src, "src", chunk, s);
  const dh = dst.shape.slice(0, -1);
  const sh = src.shape.slice(0, -1);
  if (dh.length !== sh.length || dh.some((n, i) => n !== sh[i])) {
    throw new TirxError(
      "TX4010",
      `repeat shapes disagree: dst (${dh.join(", ")}) vs src (${sh.join(", ")})`,
      s.span,
    );
  }
  const dSide = sideOf(dst, 0, s.span);
  const sSide = sideOf(src, 0, s.span);
  for (const [side, a] of [
    ["dst", dSide],
    ["src", sSide],
  ] as const) {
    const align = atomAlignment(a);
    const swz = a.buffer.layout;
    if (!swizzleKeepsContiguous(swz, align, chunk)) {
      throw new TirxError(
        "TX3025",
        `a ${chunk}-byte cp.async.bulk chunk of ${side} ${bufferName(a.buffer)} would be split by its ${showSwizzle(swz!)} (runs of ${swizzleAtomBytes(swz!)} bytes); bulk copies move bytes linearly`,
        s.span,
      );
    }
    if (align % 16 !== 0) {
      throw new TirxError(
        "TX4004",
        `${side} ${bufferName(a.buffer)} is only provably ${align}-byte aligned; bulk copies need 16-byte aligned addresses`,
        s.span,
      );
    }
  }
  checkViewBounds(src, ctx.env, "TX4013", "the source", s.span);
  checkViewBounds(dst, ctx.env, "TX4013", "the destination", s.span);
  let mbar: Expr | undefined;
  if (opcode.direction === "g2s") {
    const m = s.params["mbar"];
    if (m === undefined)
      throw new TirxError(
        "TX4006",
        "a global → shared bulk copy needs mbar: the mbarrier it completes on",
        s.span,
      );
    if (isView(m)) {
      if (numel(m.shape) !== 1)
        throw new TirxError(
          "TX4011",
          "mbar must be one mbarrier object (a single uint64 element)",
          s.span,
        );
      mbar = viewStartPtr(m, "mbar", s.span, "TX4011");
    } else if (typeof m === "object" && isExpr(m)) {
      mbar = m;
    } else {
      throw new TirxError(
        "TX4006",
        "mbar must be an mbarrier object in shared memory (bars.ptr([i]) or a one-element view)",
        s.span,
      );
    }
    checkMbarrierOperand(mbar, s.span);
  }
  const cachePolicy = cachePolicyParam(s, opcode.cacheHint);
  const pred = exprParam(s, "pred", ["bool"], "TX4002");
  const repeatShape = dst.shape.slice(0, -1);
  checkRepeatCount(repeatShape, "this bulk copy", s.span);
  const ptxVersion: [number, number] =
    opcode.dstSpace === "shared::cta" && opcode.direction === "g2s" ? [8, 6] : [8, 0];
  return {
    kind: "cp.async.bulk",
    opcode,
    chunkBytes: chunk,
    repeatShape,
    dst: dSide,
    src: sSide,
    ...(mbar ? { mbar } : {}),
    ...(cachePolicy ? { cachePolicy } : {}),
    ...(pred ? { pred } : {}),
    totalBytes: chunk * numel(repeatShape),
    ptxVersion,
  };
}
