import { dtypeBytes, type DType } from "../dtype.js";
import { binary } from "../ir/arith.js";
import { mkBuffer, rowMajorStrides, type View } from "../ir/buffer.js";
import { intImm, mkVar, type Buffer, type Expr, type Var } from "../ir/expr.js";
import { seq, type Stmt } from "../ir/stmt.js";
import { invariant } from "../invariant.js";
import type { Span } from "../span.js";
import { mapStmt } from "../transform/map.js";

/**
 * The scope of a collective that exchanges values through shared memory: `cta` (every thread of
 * the CTA, ordered by `bar.sync 0`) or `wg` (the threads of each warpgroup, ordered by the
 * warpgroup's named barrier).
 */
export type ScratchScope = "cta" | "wg";

/**
 * A call past the parts earlier calls may still be reading takes the bytes after them instead
 * of a barrier first, when that keeps the region within the larger of its size so far and this
 * many bytes. A barrier costs every thread a wait; a few hundred bytes of partials cost nothing
 * (examples/softmax.ts keeps its max and sum partials in two arrays for the same reason).
 */
export const SCRATCH_SPREAD_BYTES = 1024;

/** What one tile primitive call asks of its scope's scratch. */
export interface ScratchRequest {
  readonly scope: ScratchScope;
  /** Bytes of the call's part (at wg scope, of each warpgroup's part); at least 1. */
  readonly bytes: number;
  /** At wg scope: the CTA's warpgroups; the region holds one slice for each. */
  readonly groups?: number;
  /** True when the call sits in a loop or branch (see {@link SharedScratch}). */
  readonly nested: boolean;
  readonly span?: Span;
}

/** Where a call's part lies in its scope's region, and whether it must wait for a barrier first. */
export interface ScratchClaim {
  /** The region: a uint8 shared buffer, 16-byte aligned, read and written in the call's dtype. */
  readonly buffer: Buffer;
  /** Byte offset of the part: in the region (cta), in each warpgroup's slice (wg). A multiple of 16. */
  readonly offset: number;
  /**
   * True when an earlier call may still be reading these bytes: the call's barrier (the CTA's
   * or its warpgroup's) must come before its first store.
   */
  readonly wait: boolean;
  /**
   * At wg scope, the bytes of one warpgroup's slice in 16-byte units (int32): a variable until
   * the kernel's last call is traced, then its value ({@link SharedScratch.finish}).
   */
  readonly slice: Var;
}

/**
 * The element index, counted in `dtype`, of the first element of `claim`'s part: its offset in
 * the region, plus `group` (the warpgroup, int32) times the slice at wg scope.
 */
export function scratchIndex(claim: ScratchClaim, dtype: DType, group?: Expr): Expr {
  const w = dtypeBytes(dtype);
  invariant(16 % w === 0, () => `shared scratch of ${dtype}: 16 bytes hold no whole number`);
  const at = intImm(claim.offset / w);
  if (group === undefined) return at;
  const slice = binary("mul", claim.slice, intImm(16 / w));
  return binary("add", binary("mul", group, slice), at);
}

/** `claim`'s part (cta scope) as a row-major view of `shape` in `dtype`. */
export function scratchView(
  claim: ScratchClaim,
  shape: readonly number[],
  dtype: DType,
  span?: Span,
): View {
  return {
    kind: "View",
    buffer: claim.buffer,
    dtype,
    offset: scratchIndex(claim, dtype),
    shape: [...shape],
    strides: rowMajorStrides(shape),
    axes: shape.map(() => ""),
    ...(span ? { span } : {}),
  };
}

/** A byte range [lo, hi) of a region. */
interface Range {
  readonly lo: number;
  readonly hi: number;
}

interface Region {
  buffer: Buffer;
  /** Bytes of the region (of each warpgroup's slice at wg scope) that calls take so far. */
  size: number;
  groups: number;
  readonly slice: Var;
  /** The parts whose reads no barrier has ordered yet before a later store. */
  dirty: Range[];
}

const roundUp = (n: number, k: number): number => Math.ceil(n / k) * k;

/**
 * The shared scratch of one kernel's tile primitives: one region for the calls at cta scope and
 * one for those at wg scope, each the size of its largest call (or up to
 * {@link SCRATCH_SPREAD_BYTES} where small calls sit side by side), instead of an allocation per
 * call; one workspace reused between collectives, as CUB's block collectives reuse their
 * TempStorage after a `__syncthreads()` (CUB's documented rule). The calls are traced in program
 * order; each `claim` places its call and says whether its barrier must come first.
 *
 * Why reuse is race-free: every such call stores its part, meets its barrier, then reads it, and
 * every thread of its scope makes the call (the tile layer's rule; `bar.sync 0` needs them
 * all). Its barrier orders every earlier read of the region by those threads (PTX ISA,
 * bar.sync: memory accesses before it complete before any thread passes it), so after a call
 * only its own part may still be read. A later call that stores into bytes still being read
 * waits at its barrier first; one that finds room past them (the region no larger) does not.
 * A call nested in a loop or branch always waits (the state there depends on the iteration or
 * the path; the loop's next iteration reads the same part), and it leaves its part to be read
 * after the loop or branch in addition to the parts before it. A barrier of every thread in
 * the CTA traced between calls at the top level ({@link fence}) orders every read before it.
 *
 * Why two regions: a wg call may run in one warpgroup's code path while another warpgroup runs
 * something else (a warp-specialized kernel), and its barrier is its warpgroup's, which orders
 * no other warpgroup's reads. So each warpgroup has its own slice of the wg region, touched by
 * that warpgroup's calls only, and the cta region, read by every thread, is never written by a
 * wg call: ordering a cta call's reads before a wg call's stores would need `bar.sync 0` in a
 * warpgroup's own code path.
 */
export class SharedScratch {
  private readonly regions = new Map<ScratchScope, Region>();

  /**
   * Place a call of `req.bytes` bytes in its scope's region (the lowest offset, 0 or past the
   * parts still being read) and record that its part is the one left to be read.
   */
  claim(req: ScratchRequest): ScratchClaim {
    invariant(
      Number.isInteger(req.bytes) && req.bytes > 0,
      () => `shared scratch of ${req.bytes} bytes`,
    );
    const r = this.region(req.scope, req.span);
    r.groups = Math.max(r.groups, req.groups ?? 1);
    const need = roundUp(req.bytes, 16);
    const overlaps = (lo: number): boolean => r.dirty.some((d) => lo < d.hi && d.lo < lo + need);
    let offset = 0;
    let wait = req.nested || overlaps(0);
    if (wait && !req.nested) {
      const past = roundUp(Math.max(...r.dirty.map((d) => d.hi)), 16);
      if (past + need <= Math.max(r.size, SCRATCH_SPREAD_BYTES)) {
        offset = past;
        wait = false;
      }
    }
    const part = { lo: offset, hi: offset + need };
    if (req.nested) r.dirty.push(part);
    else {
      // The call's barrier orders every earlier read: at cta scope those of every thread, so
      // of the wg region too; at wg scope those of each warpgroup, in its own slice.
      r.dirty = [part];
      const wg = this.regions.get("wg");
      if (req.scope === "cta" && wg) wg.dirty = [];
    }
    if (part.hi > r.size) {
      r.size = part.hi;
      r.buffer = { ...r.buffer, shape: [r.size * r.groups] };
    }
    return { buffer: r.buffer, offset, wait, slice: r.slice };
  }

  /** Every thread of the CTA met a barrier since the last call: no part is still being read. */
  fence(): void {
    for (const r of this.regions.values()) r.dirty = [];
  }

  /**
   * `body` (the device entry's) with the regions' allocations first, sized by their largest
   * parts (wg: a slice per warpgroup), every access to a region at that buffer, and the slice
   * variable replaced by its value. `body` itself when no call took scratch.
   */
  finish(body: Stmt): Stmt {
    if (this.regions.size === 0) return body;
    const sized = new Map<number, Buffer>();
    const slices = new Map<number, Expr>();
    const allocs: Stmt[] = [];
    for (const r of this.regions.values()) {
      const b: Buffer = { ...r.buffer, shape: [r.size * r.groups] };
      sized.set(b.id, b);
      slices.set(r.slice.id, intImm(r.size / 16));
      allocs.push({ kind: "Alloc", buffer: b, ...(b.span ? { span: b.span } : {}) });
    }
    const at = (b: Buffer): Buffer => sized.get(b.id) ?? b;
    const mapped = mapStmt(body, {
      expr: (e: Expr): Expr => {
        if (e.kind === "Var") return slices.get(e.id) ?? e;
        if ((e.kind === "BufferLoad" || e.kind === "BufferPtr") && sized.has(e.buffer.id)) {
          return { ...e, buffer: at(e.buffer) };
        }
        return e;
      },
      stmt: (s: Stmt): Stmt =>
        (s.kind === "Store" || s.kind === "Alloc") && sized.has(s.buffer.id)
          ? { ...s, buffer: at(s.buffer) }
          : s,
    });
    return seq([...allocs, mapped]);
  }

  private region(scope: ScratchScope, span?: Span): Region {
    let r = this.regions.get(scope);
    if (!r) {
      const name = scope === "cta" ? "tile_scratch" : "tile_scratch_wg";
      r = {
        buffer: mkBuffer(name, [16], "uint8", "shared", span ? { span } : {}),
        size: 0,
        groups: 1,
        slice: mkVar(`${name}_slice`, "int32", span),
        dirty: [],
      };
      this.regions.set(scope, r);
    }
    return r;
  }
}
