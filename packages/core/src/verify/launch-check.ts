import { bufferName } from "../buffer-name.js";
import { isTirxError, TirxError } from "../diagnostics.js";
import { isStaticShape, numel } from "../ir/buffer.js";
import type { Buffer, Expr } from "../ir/expr.js";
import type { LayoutAxis } from "../ir/tile-layout.js";
import {
  checkLayoutShape,
  layoutAxes,
  layoutAxisRange,
  layoutInjective,
  showTileLayout,
} from "../layout/tile-layout.js";
import type { LaunchConfig } from "../ir/stmt.js";
import type { Span } from "../span.js";
import { walkExpr } from "../visit.js";

const showExtent = (g: number | Expr): string => (typeof g === "number" ? String(g) : "runtime");

/**
 * The launch's extents: grid and block positive integers, at most 1024 threads per CTA (block z
 * at most 64), grid x below 2^31 and y, z at most 65535 (CUDA C++ Programming Guide, "Features
 * and Technical Specifications"); `minCtasPerSm` CTAs of the block fit the SM's 2048 threads
 * (ibid., compute capability 9.0). A runtime grid extent is checked by {@link checkGridExpr}.
 * @throws TirxError TX2007 (wf/launch) at `span`.
 */
export function checkLaunch(l: LaunchConfig, span?: Span): void {
  const all = [...l.grid.filter((g): g is number => typeof g === "number"), ...l.block];
  if (all.some((n) => !Number.isInteger(n) || n <= 0)) {
    throw new TirxError(
      "TX2007",
      `grid (${l.grid.map(showExtent).join(", ")}) and block (${l.block.join(", ")}) must be positive integers`,
      span,
    );
  }
  const threads = l.block[0] * l.block[1] * l.block[2];
  if (threads > 1024 || l.block[2] > 64) {
    throw new TirxError(
      "TX2007",
      `a CTA has at most 1024 threads (block z at most 64); got block (${l.block.join(", ")})`,
      span,
    );
  }
  const min = l.minCtasPerSm;
  if (min !== undefined && (!Number.isInteger(min) || min < 1 || min * threads > 2048)) {
    throw new TirxError(
      "TX2007",
      `min_ctas_per_sm ${min} with ${threads} threads per CTA: an SM holds at most 2048 threads (sm_90), so it is an integer in 1..${Math.max(1, Math.floor(2048 / threads))}`,
      span,
    );
  }
  const [gx, gy, gz] = l.grid.map((g) => (typeof g === "number" ? g : 0));
  if (gx! >= 2 ** 31 || gy! > 65535 || gz! > 65535) {
    throw new TirxError(
      "TX2007",
      `grid (${l.grid.map(showExtent).join(", ")}) exceeds CUDA limits (x < 2^31, y and z ≤ 65535)`,
      span,
    );
  }
}

/**
 * A runtime grid extent is an int32 expression of scalar parameters only (`scalars`: their
 * `Var.id`s; the host evaluates it at launch): no thread indices, loads or intrinsics.
 * @throws TirxError TX2007 (wf/launch) at `span`.
 */
export function checkGridExpr(e: Expr, scalars: ReadonlySet<number>, span?: Span): void {
  if (e.dtype !== "int32") {
    throw new TirxError("TX2007", `a runtime grid extent must be int32, got ${e.dtype}`, span);
  }
  walkExpr(e, (x) => {
    if (x.kind === "Var" && !scalars.has(x.id)) {
      throw new TirxError(
        "TX2007",
        `a runtime grid extent may use only the kernel's scalar parameters; "${x.name}" is not one`,
        span,
      );
    }
    if (
      x.kind === "Special" ||
      x.kind === "BufferLoad" ||
      x.kind === "BufferPtr" ||
      x.kind === "CallExpr"
    ) {
      throw new TirxError(
        "TX2007",
        "a runtime grid extent is computed on the host from scalar parameters; it cannot read thread indices, buffers or intrinsics",
        span,
      );
    }
  });
}

/**
 * How many values each layout axis has in a CTA of `launch`: lanes of a warp (32, fewer in a
 * smaller block), warps, threads of a warpgroup (128, fewer in a smaller block), warpgroups and
 * threads of the CTA, CTAs of its cluster (1 without a cluster), devices (1: `pid` is reserved
 * for multi-GPU launches). `m` is not a thread axis (undefined).
 */
export function layoutAxisExtent(axis: LayoutAxis, launch: LaunchConfig): number | undefined {
  const threads = launch.block[0] * launch.block[1] * launch.block[2];
  switch (axis) {
    case "m":
      return undefined;
    case "laneid":
      return Math.min(32, threads);
    case "warpid":
      return Math.ceil(threads / 32);
    case "tid_in_wg":
      return Math.min(128, threads);
    case "wgid":
      return Math.ceil(threads / 128);
    case "tid":
      return threads;
    case "cta_in_cluster":
      return launch.cluster ? launch.cluster[0] * launch.cluster[1] * launch.cluster[2] : 1;
    case "pid":
      return 1;
  }
}

/**
 * A buffer's TileLayout (`Buffer.tileLayout`) against the buffer and the launch: only a local
 * buffer has one; its size is the buffer's (TIRx docs, "Tensor Layout": a shape is admitted when
 * its total size equals the shard's, whatever its dims); its memory coordinate
 * `m` (the slot in the thread's array) lies in 0..numel(shape) - 1; and on every thread axis its
 * coordinates, replicas and offset included, lie in 0..extent - 1 of that axis in the launch
 * ({@link layoutAxisExtent}). Source: TIRx docs, "Tensor Layout" (a layout binds elements to
 * the hardware axes of the launch). And it is injective ({@link layoutInjective}): no physical
 * coordinate (thread and slot) holds two logical elements, which would overwrite each other. A
 * buffer without a layout passes.
 * @throws TirxError TX2021 (layout/local-tile) at `span`.
 */
export function checkTileLayoutLaunch(b: Buffer, launch: LaunchConfig, span?: Span): void {
  const l = b.tileLayout;
  if (!l) return;
  const name = bufferName(b);
  if (b.scope !== "local") {
    throw new TirxError(
      "TX2021",
      `${name}: a TileLayout is recorded on local tiles (T.alloc_local); ${b.scope} buffers take a swizzle layout`,
      span,
    );
  }
  if (!isStaticShape(b.shape)) return;
  const shape = b.shape;
  try {
    checkLayoutShape(l, shape, span);
  } catch (e) {
    if (isTirxError(e)) throw new TirxError("TX2021", `${name}: ${e.text}`, span);
    throw e;
  }
  const n = numel(shape);
  const m = layoutAxisRange(l, "m");
  if (m.min < 0 || m.max >= n) {
    throw new TirxError(
      "TX2021",
      `${name}: ${showTileLayout(l)} puts elements at slots ${m.min}..${m.max} of a thread's array, outside the tile's ${n} elements`,
      span,
    );
  }
  const clash = layoutInjective(l);
  if (clash) {
    const at = (i: number): string => {
      const c: number[] = [];
      for (let d = shape.length - 1; d >= 0; d--) {
        c.unshift(i % shape[d]!);
        i = Math.floor(i / shape[d]!);
      }
      return `[${c.join(", ")}]`;
    };
    const where = layoutAxes(l)
      .filter((a) => a !== "m")
      .map((a) => `${a} ${clash.at[a] ?? 0}`);
    throw new TirxError(
      "TX2021",
      `${name}: ${showTileLayout(l)} puts elements ${at(clash.a)} and ${at(clash.b)} in the same slot (m ${clash.at.m ?? 0}${where.length > 0 ? ` of ${where.join(", ")}` : ""}); a layout must send distinct elements to distinct thread slots`,
      span,
    );
  }
  const threads = launch.block[0] * launch.block[1] * launch.block[2];
  for (const axis of layoutAxes(l)) {
    const extent = layoutAxisExtent(axis, launch);
    if (extent === undefined) continue;
    const r = layoutAxisRange(l, axis);
    if (r.min >= 0 && r.max < extent) continue;
    const what =
      axis === "pid"
        ? "the device axis pid is reserved for multi-GPU launches; a launch has one device (pid 0)"
        : axis === "cta_in_cluster"
          ? `the launch has ${extent} CTA${extent === 1 ? "" : "s"} per cluster`
          : `a CTA of block (${launch.block.join(", ")}) has ${threads} threads, so ${axis} takes 0..${extent - 1}`;
    throw new TirxError(
      "TX2021",
      `${name}: ${showTileLayout(l)} binds ${axis} ${r.min}..${r.max}, but ${what}`,
      span,
    );
  }
}
