import { bufferName } from "../buffer-name.js";
import { showSwizzle, swizzleAtomBytes, swizzleKeepsContiguous } from "../layout/swizzle.js";
import { dtypeBytes } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { showValue } from "../show.js";
import type { View } from "../ir/buffer.js";
import { constInt, type Expr } from "../ir/expr.js";
import type { TileApply } from "../ir/stmt.js";
import { didYouMean } from "../suggest.js";
import {
  atomAlignment,
  checkParamNames,
  checkRepeatCount,
  checkViewBounds,
  ctaThreads,
  exprParam,
  sideOf,
  type PatternContext,
} from "./common.js";
import type { AtomSide, CpAsyncOpcode, CpAsyncPlan } from "../ir/tile-plan.js";
import { withArticle } from "../show.js";

/** Parameters of the cp.async tile pattern (seed: "Call parameters"). */
export const CP_ASYNC_PARAMS = [
  "chunk_bytes",
  "scope",
  "src_size",
  "ignore_src",
  "cache_policy",
  "pred",
] as const;

const L2_QUALIFIERS = ["L2::cache_hint", "L2::64B", "L2::128B", "L2::256B"];

/**
 * Parse a cp.async opcode string.
 * @throws TirxError TX3001 (unknown qualifier, with a suggestion), TX3002 (state spaces),
 *   TX3003 (two prefetch sizes). Rules: PTX ISA "cp.async"; seed "Operand contract".
 */
export function parseCpAsyncOpcode(opcode: string, span?: TileApply["span"]): CpAsyncOpcode {
  const parts = opcode.split(".");
  const fail = (code: "TX3001" | "TX3002" | "TX3003", why: string): never => {
    throw new TirxError(code, `opcode "${opcode}": ${why}`, span);
  };
  if (parts[0] !== "cp" || parts[1] !== "async")
    fail("TX3001", `expected it to start with "cp.async"`);
  const cache = parts[2];
  if (cache !== "ca" && cache !== "cg") {
    const g = cache !== undefined ? didYouMean(cache, ["ca", "cg"]) : undefined;
    fail(
      "TX3001",
      `cache operator must be .ca or .cg, got ".${cache ?? ""}"${g ? `; did you mean ".${g}"?` : ""}`,
    );
  }
  const dst = parts[3];
  const src = parts[4];
  if (dst === "global" && (src === "shared" || src === "shared::cta")) {
    fail("TX3002", "cp.async copies global to shared; shared to global is not a cp.async form");
  }
  if (dst !== "shared" && dst !== "shared::cta") {
    const g = dst !== undefined ? didYouMean(dst, ["shared", "shared::cta"]) : undefined;
    fail(
      "TX3002",
      `destination state space must be .shared or .shared::cta, got ".${dst ?? ""}"${dst === "shared::cluster" ? " (::cluster is not allowed)" : g && g !== dst ? `; did you mean ".${g}"?` : ""}`,
    );
  }
  if (src !== "global") {
    const g = src !== undefined ? didYouMean(src, ["global"]) : undefined;
    fail(
      "TX3002",
      `source state space must be .global, got ".${src ?? ""}"${g && g !== src ? `; did you mean ".global"?` : ""}`,
    );
  }
  const qualifiers = parts.slice(5);
  let cacheHint = false;
  let prefetch: 64 | 128 | 256 | undefined;
  for (const q of qualifiers) {
    if (q === "L2::cache_hint") {
      if (cacheHint) fail("TX3001", "`.L2::cache_hint` appears twice");
      cacheHint = true;
    } else if (q === "L2::64B" || q === "L2::128B" || q === "L2::256B") {
      if (prefetch !== undefined)
        fail("TX3003", `two prefetch sizes (.L2::${prefetch}B and .${q})`);
      prefetch = Number(q.slice(4, -1)) as 64 | 128 | 256;
    } else {
      const g = didYouMean(q, L2_QUALIFIERS);
      fail(
        "TX3001",
        `unknown qualifier ".${q}"${g ? `; did you mean ".${g}"?` : ""} (allowed: ${L2_QUALIFIERS.map((x) => "." + x).join(", ")})`,
      );
    }
  }
  return {
    cache: cache as "ca" | "cg",
    dstSpace: dst as "shared" | "shared::cta",
    cacheHint,
    ...(prefetch !== undefined ? { prefetch } : {}),
    qualifiers,
  };
}

/**
 * Refuse an opcode qualifier passed as a parameter (`{ "L2::128B": true }`, `{ cg: true }`),
 * showing the opcode it belongs in. Seed: "Opcode qualifiers are written in T.ptx[opcode]".
 */
function checkQualifierParams(s: TileApply): void {
  for (const key of Object.keys(s.params)) {
    if ((CP_ASYNC_PARAMS as readonly string[]).includes(key)) continue;
    const bare = key.replace(/^\./, "");
    const q =
      bare === "ca" || bare === "cg"
        ? bare
        : L2_QUALIFIERS.find(
            (x) =>
              x.toLowerCase() === bare.toLowerCase() ||
              x.slice(4).toLowerCase() === bare.toLowerCase(),
          );
    if (q === undefined) continue;
    const fixed =
      q === "ca" || q === "cg"
        ? s.opcode.replace(/^cp\.async\.c[ag]\b/, `cp.async.${q}`)
        : `${s.opcode}.${q}`;
    throw new TirxError(
      "TX3004",
      `"${key}" is an opcode qualifier, not a parameter of cp.async; write it in the opcode: T.ptx["${fixed}"]`,
      s.span,
    );
  }
}

function checkAtom(view: View, side: string, chunk: number, s: TileApply): void {
  const eb = dtypeBytes(view.dtype);
  const last = view.shape.length - 1;
  if (chunk % eb !== 0) {
    throw new TirxError(
      "TX3015",
      `a ${chunk}-byte atom does not hold whole ${view.dtype} elements (${eb} bytes each) on the ${side} side`,
      s.span,
    );
  }
  const bytes = view.shape[last]! * eb;
  if (bytes !== chunk) {
    throw new TirxError(
      "TX3012",
      `the final axis of ${side} has ${view.shape[last]} ${view.dtype} elements = ${bytes} bytes, but chunk_bytes is ${chunk} (${chunk / eb} elements)`,
      s.span,
    );
  }
  if (view.shape[last]! > 1 && view.strides[last] !== 1) {
    throw new TirxError(
      "TX3013",
      `the final axis of ${side} has stride ${view.strides[last]} elements; an atom must be contiguous`,
      s.span,
    );
  }
}

/**
 * Check a cp.async `tile.apply` against the seed's contract and return its plan.
 * @throws TirxError TX3001–TX3024; see the catalog. Rules: seed "Legality conditions",
 *   "Operand contract", "Call parameters"; PTX ISA "cp.async".
 */
export function planCpAsync(s: TileApply, ctx: PatternContext): CpAsyncPlan {
  const opcode = parseCpAsyncOpcode(s.opcode, s.span);
  checkQualifierParams(s);
  checkParamNames(s, CP_ASYNC_PARAMS, "TX3004", "cp.async");
  const chunkParam = s.params["chunk_bytes"];
  if (chunkParam === undefined) {
    throw new TirxError(
      "TX3005",
      "chunk_bytes is required (4, 8 or 16); it is never inferred from the layout",
      s.span,
    );
  }
  if (typeof chunkParam !== "number" || ![4, 8, 16].includes(chunkParam)) {
    const shown =
      typeof chunkParam === "number" || typeof chunkParam === "boolean"
        ? String(chunkParam)
        : typeof chunkParam === "string"
          ? showValue(chunkParam)
          : !Array.isArray(chunkParam) && (chunkParam as { kind: string }).kind === "IntImm"
            ? `${withArticle((chunkParam as { dtype: string }).dtype)} constant`
            : "a runtime value";
    throw new TirxError(
      "TX3006",
      `chunk_bytes must be the constant 4, 8 or 16, got ${shown}`,
      s.span,
    );
  }
  const chunk = chunkParam as 4 | 8 | 16;
  if (opcode.cache === "cg" && chunk !== 16) {
    throw new TirxError(
      "TX3007",
      `.cg copies exactly 16 bytes, but chunk_bytes is ${chunk}; use .ca for 4 or 8 bytes`,
      s.span,
    );
  }
  const scopeParam = s.params["scope"] ?? "thread";
  if (scopeParam !== "thread" && scopeParam !== "cta") {
    throw new TirxError(
      "TX3008",
      `scope must be "thread" or "cta", got ${typeof scopeParam === "object" ? "an expression" : showValue(scopeParam)}`,
      s.span,
    );
  }
  const scope = scopeParam;
  const { dst, src } = s;
  const dstShared = dst.buffer.scope === "shared" || dst.buffer.scope === "shared.dyn";
  const srcGlobal = src.buffer.scope === "global";
  if (!dstShared || !srcGlobal) {
    const swapped =
      dst.buffer.scope === "global" &&
      (src.buffer.scope === "shared" || src.buffer.scope === "shared.dyn");
    throw new TirxError(
      "TX3011",
      swapped
        ? `destination ${bufferName(dst.buffer)} is global and source ${bufferName(src.buffer)} is shared: operands are (dst_shared, src_global), and shared-to-global is not a cp.async`
        : `destination ${bufferName(dst.buffer)} is ${dst.buffer.scope} and source ${bufferName(src.buffer)} is ${src.buffer.scope}; cp.async needs a shared destination and a global source`,
      s.span,
    );
  }
  const groupAxes = scope === "cta" ? 2 : 0;
  for (const [side, v] of [
    ["dst", dst],
    ["src", src],
  ] as const) {
    if (scope === "cta") {
      const threads = ctaThreads(ctx.launch);
      const warps = threads / 32;
      if (threads % 32 !== 0) {
        throw new TirxError(
          "TX3010",
          `CTA scope needs whole warps, but the CTA has ${threads} threads`,
          s.span,
        );
      }
      if (v.shape.length < 3 || v.shape[1] !== 32) {
        throw new TirxError(
          "TX3009",
          `at CTA scope ${side} must have shape (warp, lane, *repeat, element) with leading group axes (${warps}, 32) for ${threads} threads; got shape (${v.shape.join(", ")}), which has no lane axis of 32`,
          s.span,
          [
            {
              message: `split the thread axis, e.g. rearrange("(w t) (r v) -> w t r v", { w: ${warps}, t: 32, ... })`,
            },
          ],
        );
      }
      if (v.shape[0] !== warps) {
        throw new TirxError(
          "TX3010",
          `the warp axis of ${side} has extent ${v.shape[0]}, but the launch has ${warps} warps (${threads} threads)`,
          s.span,
        );
      }
    } else if (v.shape.length < 1) {
      throw new TirxError(
        "TX3012",
        `${side} is a scalar view; it needs a final element axis`,
        s.span,
      );
    }
    checkAtom(v, side, chunk, s);
  }
  const dstHead = dst.shape.slice(0, -1);
  const srcHead = src.shape.slice(0, -1);
  if (dstHead.length !== srcHead.length || dstHead.some((n, i) => n !== srcHead[i])) {
    throw new TirxError(
      "TX3016",
      `group/repeat shapes disagree: dst (${dstHead.join(", ")}) vs src (${srcHead.join(", ")})`,
      s.span,
    );
  }
  const repeatShape = dst.shape.slice(groupAxes, -1);
  checkRepeatCount(repeatShape, "this cp.async", s.span);
  const dSide = sideOf(dst, groupAxes, s.span);
  const sSide = sideOf(src, groupAxes, s.span);
  for (const [side, a] of [
    ["dst", dSide],
    ["src", sSide],
  ] as const) {
    const align = atomAlignment(a);
    if (align % chunk !== 0) {
      throw new TirxError(
        "TX3014",
        `${side} atoms of ${bufferName(a.buffer)} are only provably ${align}-byte aligned; a ${chunk}-byte cp.async needs ${chunk}-byte alignment`,
        s.span,
      );
    }
  }
  const swz = dst.buffer.layout;
  if (!swizzleKeepsContiguous(swz, atomAlignment(dSide), chunk)) {
    throw new TirxError(
      "TX3025",
      `a ${chunk}-byte cp.async chunk into ${bufferName(dst.buffer)} would be split by its ${showSwizzle(swz!)}: the swizzle keeps runs of ${swizzleAtomBytes(swz!)} bytes together`,
      s.span,
    );
  }
  checkViewBounds(src, ctx.env, "TX3017", "the source", s.span);
  checkViewBounds(dst, ctx.env, "TX3024", "the destination", s.span);
  const srcSize = exprParam(s, "src_size", ["uint32", "int32"], "TX3021");
  const ignoreSrc = exprParam(s, "ignore_src", ["bool"], "TX3021");
  const cachePolicy = exprParam(s, "cache_policy", ["uint64"], "TX3021");
  const pred = exprParam(s, "pred", ["bool"], "TX3021");
  if (srcSize && ignoreSrc) {
    throw new TirxError(
      "TX3018",
      "src_size and ignore_src are alternative zero-fill forms; give at most one",
      s.span,
    );
  }
  if (srcSize) {
    const c = constInt(srcSize);
    if (c !== undefined && (c < 0 || c > chunk)) {
      throw new TirxError("TX3019", `src_size ${c} is outside 0..${chunk} (chunk_bytes)`, s.span);
    }
  }
  const policyConst = cachePolicy?.kind === "IntImm" ? BigInt(cachePolicy.value) : undefined;
  if (policyConst !== undefined && (policyConst < 0n || policyConst >= 1n << 64n)) {
    throw new TirxError(
      "TX3021",
      `cache_policy ${policyConst} does not fit in a uint64 (0..2^64-1)`,
      s.span,
    );
  }
  if (opcode.cacheHint && !cachePolicy) {
    throw new TirxError(
      "TX3020",
      "the opcode has .L2::cache_hint but no cache_policy operand was given",
      s.span,
    );
  }
  if (!opcode.cacheHint && cachePolicy) {
    throw new TirxError("TX3020", "cache_policy needs .L2::cache_hint in the opcode", s.span);
  }
  const l2 = opcode.cacheHint || opcode.prefetch !== undefined;
  const ptxVersion: [number, number] = ignoreSrc ? [7, 5] : l2 ? [7, 4] : [7, 0];
  return {
    kind: "cp.async",
    opcode,
    chunkBytes: chunk,
    scope,
    repeatShape,
    dst: dSide,
    src: sSide,
    ...(srcSize ? { srcSize } : {}),
    ...(ignoreSrc ? { ignoreSrc } : {}),
    ...(cachePolicy ? { cachePolicy } : {}),
    ...(pred ? { pred } : {}),
    ptxVersion,
  };
}
