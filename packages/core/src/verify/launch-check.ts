import { TirxError } from "../diagnostics.js";
import type { Expr } from "../ir/expr.js";
import type { LaunchConfig } from "../ir/stmt.js";
import type { Span } from "../span.js";
import { walkExpr } from "../visit.js";

const showExtent = (g: number | Expr): string => (typeof g === "number" ? String(g) : "runtime");

/**
 * The launch's extents: grid and block positive integers, at most 1024 threads per CTA (block z
 * at most 64), grid x below 2^31 and y, z at most 65535 (CUDA C++ Programming Guide, "Features
 * and Technical Specifications"). A runtime grid extent is checked by {@link checkGridExpr}.
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
