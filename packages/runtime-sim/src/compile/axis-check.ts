import type { AccessIndex, Buffer, Span } from "@tirx-ts/core";
import { accessRecord } from "../exec/context.js";
import { reportAxis } from "../exec/reports.js";
import type { NumFn } from "./access.js";
import { placementOf } from "./access.js";
import type { ExprCompiler } from "./compiled.js";

/**
 * The run-time check of an element access's author indices (`index`: after core's `axis-checks`
 * pass, those the verifier left to the run because they read data). Each index is evaluated a
 * second time (`ExprCompiler.reread`: its loads read memory without checks, which the access's
 * own evaluation made) and compared with its axis's extent; the first outside [0, extent)
 * reports TX6005 naming the axis (exec/reports.ts reportAxis) and the check is false, so the
 * access is skipped as an out-of-bounds one is (a load reads 0). In the arm of an if_then_else
 * that is not selected (Machine.speculative) nothing is checked: the arm's value is discarded,
 * and its flat offset is still checked. Decided once per access at compile time: an access
 * without `index` gets no closure and runs as before.
 */

/** Per thread: true when every index is inside its axis (or reported and false). */
export type AxisCheck = (t: number) => boolean;

/**
 * The check of `index`, the author indices of an access (`verb` "reads" or "writes") of
 * `buffer` at `site`, or undefined when it has none. Compiles the indices now (call it after
 * the access's offset and value are compiled, so that their sites come first).
 */
export function axisCheck(
  ec: ExprCompiler,
  buffer: Buffer,
  index: AccessIndex | undefined,
  site: number,
  verb: "reads" | "writes",
  span?: Span,
): AxisCheck | undefined {
  if (index === undefined || index.length === 0) return undefined;
  const m = ec.m;
  const w = placementOf(ec.layout, buffer, span);
  const acc = accessRecord(m, w.placed, 0, site, verb);
  const axes = index.map((a) => {
    const value = ec.reread(a.index, span);
    const n = a.extent;
    const extent: NumFn = typeof n === "number" ? () => n : ec.num(n, span);
    const shown = typeof n === "number" ? n : n.name;
    const report = (t: number, v: number): false => {
      acc.thread = t;
      reportAxis(acc, w.space, a, shown, v);
      return false;
    };
    return { value, extent, report, n };
  });
  if (axes.length === 1) {
    const { value, extent, report, n } = axes[0]!;
    // The common case, one static extent: no call for it.
    if (typeof n === "number") {
      return (t) => {
        if (m.speculative > 0) return true;
        const v = value(t);
        return (v >= 0 && v < n) || report(t, v);
      };
    }
    return (t) => {
      if (m.speculative > 0) return true;
      const v = value(t);
      return (v >= 0 && v < extent(t)) || report(t, v);
    };
  }
  return (t) => {
    if (m.speculative > 0) return true;
    for (const { value, extent, report } of axes) {
      const v = value(t);
      if (!(v >= 0 && v < extent(t))) return report(t, v);
    }
    return true;
  };
}

/**
 * `off` followed by `check`: the offset, or NaN when an index was outside its axis (reported),
 * which the element closures of compile/access.ts skip without a report of their own.
 */
export function checkedOffset(off: NumFn, check: AxisCheck): NumFn {
  return (t) => {
    const o = off(t);
    return check(t) ? o : NaN;
  };
}
