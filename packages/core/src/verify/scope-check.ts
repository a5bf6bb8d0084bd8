import { bufferName } from "../buffer-name.js";
import { TirxError } from "../diagnostics.js";
import { RangeScope } from "../analysis/range-scope.js";
import type { Buffer } from "../ir/buffer.js";
import type { Expr } from "../ir/expr.js";
import type { Param, PrimFunc } from "../ir/func.js";
import type { DeviceEntry, LaunchConfig } from "../ir/stmt.js";
import type { Span } from "../span.js";
import { freeVars } from "../analysis/free-vars.js";

/**
 * The one `T.device_entry` of `fn`, which must be its first statement at the top level: code
 * before it would run on the host.
 * @throws TirxError TX2004 (wf/device-entry): no entry, or several, at `fn`'s span; a statement
 *   before the entry at its own span.
 */
export function deviceEntryOf(fn: PrimFunc): DeviceEntry {
  const tops = fn.body.kind === "Seq" ? fn.body.stmts : [fn.body];
  const entries = tops.filter((s): s is DeviceEntry => s.kind === "DeviceEntry");
  if (entries.length !== 1) {
    throw new TirxError(
      "TX2004",
      `kernel "${fn.name}" has ${entries.length} T.device_entry calls; it needs exactly one`,
      fn.span,
    );
  }
  return entries[0]!;
}

/**
 * @throws TirxError TX2004 at the first top-level statement of `fn` other than its device entry
 *   (it would run on the host, which tirx-ts does not support).
 */
export function checkNoHostCode(fn: PrimFunc): void {
  const tops = fn.body.kind === "Seq" ? fn.body.stmts : [fn.body];
  const stray = tops.find((s) => s.kind !== "DeviceEntry");
  if (stray) {
    throw new TirxError(
      "TX2004",
      "statements before T.device_entry would run on the host, which tirx-ts does not support; call T.device_entry first",
      stray.span,
    );
  }
}

/**
 * The scope a kernel's body is checked in: `launch`, the scalar parameters by name, and every
 * parameter brought in by {@link declareParam} (each dim's check inside `attempt`), `also(p)`
 * after each parameter. Returns the scope and the `Var.id`s of the scalar parameters.
 * @throws TirxError as {@link declareParam}, through `attempt`.
 */
export function kernelScope(
  fn: PrimFunc,
  launch: LaunchConfig,
  attempt: (check: () => void) => void,
  also?: (p: Param) => void,
): { scope: RangeScope; scalars: ReadonlySet<number> } {
  const dims = new Set<number>();
  // The scalar parameters by Var.id, with their names (for the scope's diagnostics).
  const names = new Map<number, string>();
  for (const p of fn.params) if (p.kind === "scalar") names.set(p.var.id, p.var.name);
  const scope = new RangeScope({ launch, dims, names });
  const scalars = new Set(names.keys());
  for (const p of fn.params) {
    declareParam(p, fn, scope, dims, scalars, attempt);
    also?.(p);
  }
  return { scope, scalars };
}

/**
 * Bring parameter `p` of `fn` into `scope`: a scalar as a variable, a tensor as a buffer; a
 * tensor's symbolic dim gets the range of a tensor extent (0 .. 2^31 - 1, checked at launch) and
 * joins `dims` (the dims of the symbolic analysis). Each dim is checked inside `attempt`.
 * @throws TirxError TX2001 (wf/scope, through `attempt`) for a dim that is not an int32 scalar
 *   parameter of the kernel (`scalars`: the `Var.id`s of its scalar parameters).
 */
export function declareParam(
  p: Param,
  fn: PrimFunc,
  scope: RangeScope,
  dims: Set<number>,
  scalars: ReadonlySet<number>,
  attempt: (check: () => void) => void,
): void {
  if (p.kind !== "buffer") {
    scope.defineVar(p.var.id);
    return;
  }
  scope.defineBuffer(p.buffer.id);
  for (const d of p.buffer.shape) {
    if (typeof d === "number") continue;
    attempt(() => {
      if (!scalars.has(d.id) || d.dtype !== "int32") {
        throw new TirxError(
          "TX2001",
          `dim "${d.name}" of tensor "${p.name}" must be an int32 scalar parameter of the kernel`,
          p.buffer.span ?? fn.span,
        );
      }
      dims.add(d.id);
      // A dim equals a tensor extent (checked at launch), so it is a non-negative int32.
      scope.setRange(d.id, { min: 0, max: 2 ** 31 - 1 });
    });
  }
}

/**
 * One expression node's names: a variable must be defined where it is used, and a buffer a
 * pointer is taken of must be in scope.
 * @throws TirxError TX2001 (wf/scope) at `where`.
 */
export function checkNames(e: Expr, scope: RangeScope, where: Span | undefined): void {
  if (e.kind === "Var" && !scope.hasVar(e.id)) {
    throw new TirxError(
      "TX2001",
      `variable "${e.name}" is used outside the scope that defines it`,
      where,
    );
  }
  if (e.kind === "BufferPtr") checkBufferInScope(e.buffer, scope, where);
}

/** @throws TirxError TX2001 at `span` when `buffer` is not in scope (a parameter or allocated). */
export function checkBufferInScope(buffer: Buffer, scope: RangeScope, span?: Span): void {
  if (!scope.hasBuffer(buffer.id)) {
    throw new TirxError(
      "TX2001",
      `buffer ${bufferName(buffer)} is used outside the scope that allocates it`,
      span,
    );
  }
}

/** True when every variable `e` uses is defined in `scope` (otherwise `checkNames` reports it). */
export function namesDefined(e: Expr, scope: RangeScope): boolean {
  return freeVars(e).every((id) => scope.hasVar(id));
}

/**
 * @throws TirxError TX2004 (wf/device-entry) for a device entry met inside the device entry (IR
 *   not built by the DSL, which refuses a second `T.device_entry`, TX1006): code generation
 *   emits one entry per kernel.
 */
export function checkNotNested(s: DeviceEntry): void {
  throw new TirxError("TX2004", "T.device_entry may not be nested", s.span);
}
