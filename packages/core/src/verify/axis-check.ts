import { bufferName } from "../buffer-name.js";
import { TirxError } from "../diagnostics.js";
import type { RangeScope } from "../analysis/range-scope.js";
import { exprRange } from "../analysis/bounds.js";
import { provablyBelowExtent } from "../analysis/symbolic.js";
import { isStaticShape, type Buffer } from "../ir/buffer.js";
import type { AccessIndex, AxisIndex, Expr } from "../ir/expr.js";
import type { Span } from "../span.js";
import { exprChildren } from "../visit.js";
import { namesDefined } from "./scope-check.js";
import { showIndex } from "./show-index.js";

/**
 * Each of an access's author indices (`index`, its `AccessIndex`: the `get` / `set` indices
 * and the runtime `sub` indices its flat offset does not bound) lies within [0, extent) of its
 * axis for every value the scope allows, by the prover of the flat offset: the numeric range
 * (`exprRange`: loop ranges, `T.if_` guards, the launch), then, for the upper end, the symbolic
 * bounds (`provablyBelowExtent`: guards and loop bounds on whole expressions, symbolic dims).
 * Where the flat offset stays inside the buffer, an index past its axis reads or writes another
 * element silently (`B[i, 32]` of a [128, 32] tensor is `B[i + 1, 0]`). As for the offset, an
 * index of a static tensor whose range is unbounded on a side because it reads data (a gather's
 * loaded index, a call such as `my_pe()`, a scalar parameter: `fromData`) is not refused on that
 * side but checked at run time (the `axis-checks` pass keeps it on the access for the
 * simulator and `checkBounds`); one the analysis could not bound from bounded inputs is, and
 * every index of a tensor with symbolic dims, and every index into a symbolic axis, must be
 * proven. A constant index is checked where it is written (TX1005); one naming an undefined
 * variable is `checkNames`'s.
 * The source of the rule: indexing is row-major over the axes of the tensor or view the author
 * indexed (TVM's `BufferLoad` indices, each in its axis), not over the flat buffer.
 * @throws TirxError TX2006 (wf/bounds) at `span` (the access), naming the axis, its extent and
 *   the index's range, with a note on the guard or loop bound that would prove it.
 */
export function checkAxes(
  buffer: Buffer,
  index: AccessIndex,
  scope: RangeScope,
  span?: Span,
): void {
  for (const a of index) if (!axisProven(a, scope)) checkAxis(buffer, a, scope, span);
}

/**
 * Whether range analysis proves index `a` within [0, extent) of its axis in `scope`, as
 * {@link checkAxes} proves it: its numeric range (`exprRange`), else, for the upper end, its
 * symbolic bounds (`provablyBelowExtent`). What it does not prove of an index the verifier let
 * through (one unbounded because it reads data) is checked at run time (`keepRuntimeAxes`).
 */
export function axisProven(a: AxisIndex, scope: RangeScope): boolean {
  if (a.index.kind === "IntImm") return true;
  const r = exprRange(a.index, scope);
  if (r.min < 0) return false;
  if (typeof a.extent === "number" && r.max < a.extent) return true;
  return provablyBelowExtent(a.index, a.extent, scope);
}

/** What a runtime report of an index past its axis names of it (an `AxisIndex` less its index). */
export type AxisLabel = Pick<AxisIndex, "axis" | "name" | "view" | "sub">;

/**
 * The runtime report (TX6005) of a thread whose index `value` on axis `a` (extent `extent`: its
 * value, or a symbolic dim's name) lies outside [0, extent), for the simulator and for
 * codegen-ptx's `checkBounds` record alike, so that both read the same:
 * `thread (3, 0, 0) of CTA (0, 0, 0) reads axis 1 of global "B" (extent 32) at index 32, outside [0, 32)`.
 * `who` is the thread and CTA as the flat report names them, `verb` "reads" / "writes",
 * `buffer` the buffer as `bufferName` names it, after its state space (`global "B"`).
 */
export function axisOutOfRange(
  who: string,
  verb: string,
  buffer: string,
  a: AxisLabel,
  extent: number | string,
  value: number | bigint,
): string {
  return `${who} ${verb} ${axisName(buffer, a)} (extent ${extent}${a.sub ? ", fixed by sub" : ""}) at index ${value}, outside [0, ${extent})`;
}

/**
 * The note of {@link axisOutOfRange}'s report: why an index past its axis is an error though the
 * flat offset may stay inside the buffer, and what became of the access.
 */
export function axisOutOfRangeNote(buffer: string): string {
  return `${pastAxis(buffer)}; the access was skipped (a load reads 0)`;
}

/** Why an index past its axis is an error: the flat offset may stay inside `buffer`. */
const pastAxis = (buffer: string): string =>
  `an index past its axis can leave the flat offset inside ${buffer}, which then reads or writes another element silently`;

/** The slow path of {@link checkAxes} for one index that {@link axisProven} does not prove. */
function checkAxis(buffer: Buffer, a: AxisIndex, scope: RangeScope, span?: Span): void {
  if (!namesDefined(a.index, scope)) return;
  const r = exprRange(a.index, scope);
  const extent = typeof a.extent === "number" ? String(a.extent) : a.extent.name;
  // An unbounded end that data causes is a runtime fact, as for the offset (a static tensor's);
  // one the analysis could not follow is reported, as is any end of a symbolic axis or tensor.
  const strict =
    typeof a.extent !== "number" || !isStaticShape(buffer.shape) || !fromData(a.index, scope);
  const low = r.min < 0 && (strict || Number.isFinite(r.min));
  const high =
    !(typeof a.extent === "number" && r.max < a.extent) &&
    (strict || Number.isFinite(r.max)) &&
    !provablyBelowExtent(a.index, a.extent, scope);
  if (!low && !high) return;
  const i = showIndex(a.index);
  const range = `${showEnd(r.min)}..${showEnd(r.max)}`;
  const what = low
    ? Number.isFinite(r.min)
      ? `reaches ${r.min}`
      : "is not bounded below by 0"
    : typeof a.extent === "number" && Number.isFinite(r.max)
      ? `reaches ${r.max}`
      : `is not provably below ${extent}`;
  const fix = low
    ? `guard it, e.g. T.if_(i.ge(0), () => ...) for an index i`
    : typeof a.extent === "number"
      ? `guard it, e.g. T.if_(i.lt(${extent}), () => ...) for an index i, or bound the loop that drives it`
      : `guard it by the dim, e.g. T.if_(i.lt(${extent}), () => ...) for an index i, or bound its loop by it, T.range(${extent})`;
  throw new TirxError(
    "TX2006",
    `${axisName(bufferName(buffer), a)} (extent ${extent}${a.sub ? ", fixed by sub" : ""}): index ${i} ${what} (its range is ${range})`,
    span,
    [
      {
        message: `${pastAxis(bufferName(buffer))}: ${fix}; for a deliberate flat offset, index ${buffer.name}.flat()`,
      },
    ],
  );
}

/**
 * Whether `e` reads data the range analysis cannot know: a load, a value call (`my_pe()`), or a
 * variable or special register whose own range is unbounded (a scalar parameter, a let of a
 * load, a loop to a runtime count, `%ctaid` of a runtime grid). Below a load nothing counts.
 */
function fromData(e: Expr, scope: RangeScope): boolean {
  const work: Expr[] = [e];
  while (work.length > 0) {
    const x = work.pop()!;
    if (x.kind === "BufferLoad" || x.kind === "CallExpr") return true;
    if (x.kind === "Var" || x.kind === "Special") {
      const r = exprRange(x, scope);
      if (!Number.isFinite(r.min) || !Number.isFinite(r.max)) return true;
    } else work.push(...exprChildren(x));
  }
  return false;
}

/** `axis 1 of "B"`, `axis 0 (w) of a view of "S"` (`buffer`: the buffer as a message names it). */
function axisName(buffer: string, a: AxisLabel): string {
  const name = a.name ? ` (${a.name})` : "";
  return `axis ${a.axis}${name} of ${a.view ? "a view of " : ""}${buffer}`;
}

/** An end of a range as a message shows it: `∞` / `-∞` where unbounded. */
function showEnd(x: number): string {
  return x === Infinity ? "∞" : x === -Infinity ? "-∞" : String(x);
}
