import { bufferName } from "../buffer-name.js";
import { dtypeBytes, isLaneValue, isVector, laneCount, laneDType, type DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import type { RangeScope } from "../analysis/range-scope.js";
import { exprRange } from "../analysis/bounds.js";
import { factsWithin, provablyBelowNumel, showPoly } from "../analysis/symbolic.js";
import { isStaticShape, numel, showShape, staticShape, type Buffer } from "../ir/buffer.js";
import type { AccessIndex, Expr } from "../ir/expr.js";
import type { Param, PrimFunc } from "../ir/func.js";
import type { Alloc, LaunchConfig, Store } from "../ir/stmt.js";
import {
  MAX_LOCAL_BYTES,
  MAX_SHARED_PER_CTA,
  MAX_TENSOR_BYTES,
  STATIC_SHARED_LIMIT,
} from "../limits.js";
import type { Span } from "../span.js";
import { checkAxes } from "./axis-check.js";
import { checkBufferInScope, namesDefined } from "./scope-check.js";
import { showIndex } from "./show-index.js";
import { withArticle } from "../show.js";

/**
 * One access to `buffer` as `dtype` elements at element `offset`: the buffer is in scope, and
 * the access provably lies inside it for every value the scope allows (`exprRange`; for a guard
 * on a whole index, or a tensor with symbolic dims, `provablyBelowNumel` with the scope's
 * facts), and so does each of the author's indices that the offset does not bound (`index`,
 * the access's `AccessIndex`) within its axis (`checkAxes`). An access where no value satisfies
 * the scope (under a guard that never holds) never runs and is not checked, nor is one whose
 * offset uses an undefined variable (`checkNames` reports that). An unbounded end of a
 * static-shaped access's offset is left to code generation's `checkBounds`.
 * A vector access (a pair or vector dtype, `view_as("float32x4")`) moves its whole size in one
 * `ld`/`st.v2`/`.v4`, which must be aligned to that size (PTX ISA, "Vectors" and ld: "the address
 * must be naturally aligned to a multiple of the access size"): its offset counts whole vectors,
 * so the buffer's own alignment must be a multiple of the vector's bytes.
 * @throws TirxError TX2001 (wf/scope) for a buffer out of scope; TX2006 (wf/bounds) for an
 *   index that may leave its axis (`checkAxes`, checked first: where the offset leaves the
 *   buffer too, that index is the cause), or an access that may lie outside, with a note on the
 *   guard that would prove it; TX1014 (layout/reinterpret) for a vector access into a buffer
 *   aligned to fewer bytes than it moves.
 */
export function checkAccess(
  buffer: Buffer,
  offset: Expr,
  dtype: DType,
  scope: RangeScope,
  span?: Span,
  index?: AccessIndex,
): void {
  checkBufferInScope(buffer, scope, span);
  if (isLaneValue(dtype) && buffer.align % dtypeBytes(dtype) !== 0) {
    throw new TirxError(
      "TX1014",
      `${withArticle(dtype)} access moves ${dtypeBytes(dtype)} bytes at once, but ${bufferName(buffer)} is aligned to only ${buffer.align} bytes`,
      span,
      [
        {
          message: `allocate it with { align: ${dtypeBytes(dtype)} } or more (PTX ISA, "Vectors": a vector access is aligned to its size)`,
        },
      ],
    );
  }
  // Code under a guard no value satisfies never runs: nothing there can go out of bounds.
  if (scope.unreachable || !namesDefined(offset, scope)) return;
  // An index past its axis is the cause to name where the offset leaves the buffer too.
  if (index) checkAxes(buffer, index, scope, span);
  const r = exprRange(offset, scope);
  const scale = dtypeBytes(buffer.dtype) / dtypeBytes(dtype);
  if (!isStaticShape(buffer.shape)) {
    if (r.min >= 0 && provablyBelowNumel(buffer, offset, scale, scope)) return;
    const names = buffer.shape.filter((d) => typeof d !== "number").map((d) => d.name);
    throw new TirxError(
      "TX2006",
      r.min < 0
        ? `access to ${bufferName(buffer)} (shape ${showShape(buffer.shape)}) may be at a negative element (from ${r.min})`
        : `access to ${bufferName(buffer)} (shape ${showShape(buffer.shape)}) is not provably inside the tensor for every ${names.join(", ")}`,
      span,
      [
        {
          message:
            guardNote(offset, scope, names.join(" · ") || "n") ??
            `guard the access with the dim it must stay below, e.g. T.if_(i.lt(${names[0] ?? "n"}), () => ...), or bound each index by its axis with a loop such as T.range(${names[0] ?? "n"})`,
        },
      ],
    );
  }
  const limit =
    (numel(staticShape(buffer, "a buffer access", span)) * dtypeBytes(buffer.dtype)) /
    dtypeBytes(dtype);
  const low = Number.isFinite(r.min) && r.min < 0;
  const high = Number.isFinite(r.max) && r.max >= limit;
  // A guard on a whole index expression (`T.if_(i.lt(1024), ...)` with i = ctaid * 256 + tid)
  // bounds it as a fact, which the variable ranges above cannot express.
  if (low || (high && !provablyBelowNumel(buffer, offset, scale, scope))) {
    throw new TirxError(
      "TX2006",
      isVector(dtype)
        ? `access to ${bufferName(buffer)} as ${dtype} at vectors ${r.min}..${r.max}, but it holds ${limit} whole vectors of ${dtype} (shape [${buffer.shape.join(", ")}] of ${buffer.dtype})`
        : `access to ${bufferName(buffer)} at elements ${r.min}..${r.max}, but it holds ${limit} elements (shape [${buffer.shape.join(", ")}])`,
      span,
      high && !low
        ? [
            {
              message: `${
                guardNote(offset, scope, `${limit}`) ??
                `guard the access, e.g. T.if_(i.lt(${limit}), () => ...)`
              }; for a length known only at launch declare the dim from a scalar parameter, { n: T.int32, ${buffer.name}: T.Tensor(["n"], ...) }, and guard with T.if_(i.lt(n), ...)`,
            },
          ]
        : [],
    );
  }
}

/**
 * The note of a bounds error where a guard already bounds a sub-expression of the offset
 * (`T.if_(i.lt(120), ...)` around `O[i / 24, i % 24]`): it names the guard and what is missing
 * (a bound too loose for `limit`, or an index built from the guarded expression in a way the
 * range analysis does not follow), instead of asking for a guard the code has. Undefined where
 * no guard bounds any part of the offset.
 */
function guardNote(offset: Expr, scope: RangeScope, limit: string): string | undefined {
  const f = factsWithin(offset, scope)[0];
  if (!f) return undefined;
  const guarded = `a guard (or loop bound) already bounds ${showIndex(f.expr)} ≤ ${showPoly(f.max, scope.names)} here`;
  const c = [...f.max.keys()].every((k) => k === "") ? (f.max.get("") ?? 0) : undefined;
  const lim = Number(limit);
  if (c !== undefined && Number.isFinite(lim) && c >= lim) {
    return `${guarded}, which lets the access reach past element ${lim - 1}: tighten that guard to ${showIndex(f.expr)} < ${lim} (or less, for an index that adds to it)`;
  }
  if (!Number.isFinite(lim)) {
    return `${guarded}, which does not prove the offset ${showIndex(offset)} below ${limit}: guard the whole index by the dim it indexes, e.g. T.if_(i.lt(n), () => ...) with n that dim`;
  }
  return `${guarded}, but the offset ${showIndex(offset)} is not provably below ${limit} from it: the range analysis follows +, -, * by non-negative factors, floordiv by a constant and floordiv(x, c) * c + floormod(x, c); guard the whole offset expression, or build the index from the guarded one with those`;
}

/**
 * A store: the value has the elements' dtype (no implicit conversion), and the access is
 * checked by {@link checkAccess}.
 * @throws TirxError TX2005 (wf/dtype) for a value of another dtype; as `checkAccess`.
 */
export function checkStore(s: Store, scope: RangeScope): void {
  if (s.value.dtype !== s.dtype) {
    throw new TirxError(
      "TX2005",
      `storing ${withArticle(s.value.dtype)} value into ${s.dtype} elements of ${bufferName(s.buffer)}; cast it explicitly`,
      s.span,
    );
  }
  checkAccess(s.buffer, s.offset, s.dtype, scope, s.span, s.index);
}

/**
 * A tensor parameter of static shape holds at most MAX_TENSOR_BYTES (2^48, the GPU's address
 * space). One of symbolic shape is checked when the tensor is made (TX5007) and against its dims
 * at launch. A scalar parameter has no vector dtype (a vector is several registers; tirx-ts
 * passes scalars as one `.param` of their type).
 * @throws TirxError TX2011 at the tensor's span (or `fn`'s); TX1027 for a vector scalar.
 */
export function checkTensorBytes(p: Param, fn: PrimFunc): void {
  if (p.kind === "scalar" && isVector(p.var.dtype)) {
    throw new TirxError(
      "TX1027",
      `scalar parameter "${p.name}": ${p.var.dtype} is a register value of ${dtypeBytes(p.var.dtype) / 4} registers; no kernel parameter has it as its dtype`,
      p.var.span ?? fn.span,
      [
        {
          message: `pass its lanes in ${withArticle(laneDType(p.var.dtype))} tensor and load them with view_as("${p.var.dtype}"), or as ${laneCount(p.var.dtype)} scalars joined by T.ptx.vec.make`,
        },
      ],
    );
  }
  if (p.kind !== "buffer" || !isStaticShape(p.buffer.shape)) return;
  const bytes = numel(staticShape(p.buffer, "a tensor parameter")) * dtypeBytes(p.buffer.dtype);
  if (bytes > MAX_TENSOR_BYTES) {
    throw new TirxError(
      "TX2011",
      `tensor "${p.name}" has ${bytes} bytes; a tensor holds at most ${MAX_TENSOR_BYTES} bytes (2^48, the GPU's address space)`,
      p.buffer.span ?? fn.span,
    );
  }
}

/**
 * The memory a kernel's allocations take, summed in program order with each buffer aligned:
 * static shared memory (at most STATIC_SHARED_LIMIT, 48 KiB, without dynamic shared memory),
 * dynamic shared memory (within the launch's `dynamic_shared_bytes`), local arrays (at most
 * MAX_LOCAL_BYTES per thread), and both shared kinds together (at most MAX_SHARED_PER_CTA).
 * Source: CUDA C++ Programming Guide, "Features and Technical Specifications". Each limit is
 * reported once, at the allocation that first passes it.
 */
export class AllocBudget {
  /** Static shared memory, bytes. */
  sharedBytes = 0;
  private dynamicBytes = 0;
  private localBytes = 0;
  private readonly over = new Set<string>();

  constructor(private readonly launch: LaunchConfig) {}

  /**
   * Count allocation `s`.
   * @throws TirxError TX2009 (wf/scope) for a global allocation (global tensors are
   *   parameters); TX2008 for shared memory past its limit; TX2020 for local arrays past theirs.
   */
  alloc(s: Alloc): void {
    const b = s.buffer;
    if (b.scope === "global") {
      throw new TirxError(
        "TX2009",
        `${bufferName(b)}: kernels allocate shared or local buffers; global tensors are parameters`,
        s.span,
      );
    }
    if (b.scope === "shared.dyn") {
      this.dynamicBytes =
        Math.ceil(this.dynamicBytes / b.align) * b.align +
        numel(staticShape(b, "a shared allocation", s.span)) * dtypeBytes(b.dtype);
      if (this.dynamicBytes > this.launch.dynamicSharedBytes && this.first("dynamic")) {
        throw new TirxError(
          "TX2008",
          `dynamic shared buffers need ${this.dynamicBytes} bytes, but the launch gives dynamic_shared_bytes ${this.launch.dynamicSharedBytes}`,
          s.span,
        );
      }
    }
    if (b.scope === "local") {
      const align = Math.max(b.align, 1);
      this.localBytes =
        Math.ceil(this.localBytes / align) * align +
        numel(staticShape(b, "a local allocation", s.span)) * dtypeBytes(b.dtype);
      if (this.localBytes > MAX_LOCAL_BYTES && this.first("local")) {
        throw new TirxError(
          "TX2020",
          `local arrays reach ${this.localBytes} bytes per thread; a thread has at most ${MAX_LOCAL_BYTES} (512 KiB, CUDA's local memory per thread)`,
          s.span,
          [{ message: "keep large data in shared memory or in a global tensor" }],
        );
      }
    }
    if (b.scope === "shared") {
      this.sharedBytes =
        Math.ceil(this.sharedBytes / b.align) * b.align +
        numel(staticShape(b, "a shared allocation", s.span)) * dtypeBytes(b.dtype);
      if (this.sharedBytes > STATIC_SHARED_LIMIT && this.first("static")) {
        throw new TirxError(
          "TX2008",
          `static shared memory reaches ${this.sharedBytes} bytes; a CTA may have ${STATIC_SHARED_LIMIT} without dynamic shared memory`,
          s.span,
        );
      }
    }
  }

  /**
   * Once every allocation is counted: static and dynamic shared memory together (dynamic as
   * the launch gives it, at least what the buffers need) within a CTA's.
   * @throws TirxError TX2008 at `span` (the device entry).
   */
  checkTotal(span?: Span): void {
    const dynShared = Math.max(this.dynamicBytes, this.launch.dynamicSharedBytes);
    if (this.sharedBytes + dynShared > MAX_SHARED_PER_CTA) {
      throw new TirxError(
        "TX2008",
        `the CTA's shared memory reaches ${this.sharedBytes + dynShared} bytes (${this.sharedBytes} static, ${dynShared} dynamic); a CTA has at most ${MAX_SHARED_PER_CTA} (227 KiB, sm_90's)`,
        span,
      );
    }
  }

  /** True the first time limit `what` is passed. */
  private first(what: string): boolean {
    if (this.over.has(what)) return false;
    this.over.add(what);
    return true;
  }
}
