import { TirxError } from "../diagnostics.js";
import { showValue } from "../show.js";
import type { View } from "../ir/buffer.js";
import type { Span } from "../span.js";

/** One side of an einops pattern: each entry is an axis, a group is a list of names. */
type Side = string[][];

function parseSide(text: string, pattern: string, span?: Span): Side {
  const out: Side = [];
  const re = /\s*(\(|\)|[A-Za-z_][A-Za-z0-9_]*|\S)/g;
  let group: string[] | undefined;
  let m: RegExpExecArray | null;
  const bad = (why: string): never => {
    throw new TirxError("TX1010", `einops pattern "${pattern}": ${why}`, span);
  };
  while ((m = re.exec(text)) !== null) {
    const tok = m[1]!;
    if (tok === "(") {
      if (group) bad("nested parentheses are not allowed");
      group = [];
    } else if (tok === ")") {
      if (!group) bad("unbalanced ')'");
      if (group!.length === 0) bad("empty group '()'");
      out.push(group!);
      group = undefined;
    } else if (/^[A-Za-z_]/.test(tok)) {
      if (group) group.push(tok);
      else out.push([tok]);
    } else {
      bad(`unexpected '${tok}' (axis names are identifiers, groups use parentheses)`);
    }
  }
  if (group) bad("unbalanced '('");
  return out;
}

/**
 * einops `rearrange` on a view without moving data: split input axes into named factors,
 * permute them, and merge adjacent groups where strides allow.
 *
 * `pattern` is `"lhs -> rhs"`, e.g. `"(w t) (r v) -> w t r v"`; `sizes` gives named factor sizes
 * (at most one unknown factor per input group is inferred).
 * @throws TirxError TX1010 (syntax), TX1011 (sizes), TX1012 (a merge that would need a copy: an
 *   output group whose axes of more than one element, size-1 axes skipped, do not each step
 *   exactly over the whole of the next; einops' row-major merge as one strided axis).
 */
export function rearrange(
  view: View,
  pattern: string,
  sizes: Readonly<Record<string, number>> = {},
  span?: Span,
): View {
  const parts = pattern.split("->");
  if (parts.length !== 2) {
    throw new TirxError("TX1010", `einops pattern "${pattern}" needs exactly one "->"`, span);
  }
  const lhs = parseSide(parts[0]!, pattern, span);
  const rhs = parseSide(parts[1]!, pattern, span);
  if (lhs.length !== view.shape.length) {
    throw new TirxError(
      "TX1010",
      `einops pattern "${pattern}" names ${lhs.length} input axes but the view has rank ${view.shape.length} (shape [${view.shape.join(", ")}])`,
      span,
    );
  }
  // Own properties only: an axis named "constructor" must not find Object.prototype's.
  const own = (k: string): number | undefined =>
    Object.prototype.hasOwnProperty.call(sizes, k) ? sizes[k] : undefined;
  for (const k of Object.keys(sizes)) {
    const v: unknown = sizes[k];
    if (typeof v !== "number" || !Number.isSafeInteger(v) || v <= 0) {
      throw new TirxError(
        "TX1011",
        `size of axis "${k}" must be a positive integer, got ${showValue(v)}`,
        span,
      );
    }
    if (!lhs.some((g) => g.includes(k))) {
      throw new TirxError(
        "TX1010",
        `size given for "${k}", which the input side does not name`,
        span,
      );
    }
  }
  // Split every input axis into its named factors.
  const axis = new Map<string, { size: number; stride: number }>();
  lhs.forEach((group, i) => {
    const len = view.shape[i]!;
    const stride = view.strides[i]!;
    const known = group.map((n) => own(n));
    const unknown = known.filter((k) => k === undefined).length;
    if (unknown > 1) {
      throw new TirxError(
        "TX1011",
        `input axis ${i} "(${group.join(" ")})" has ${unknown} factors of unknown size; give all but one in sizes`,
        span,
      );
    }
    const prodKnown = known.reduce<number>((a, b) => a * (b ?? 1), 1);
    const factors = known.map((k) => k ?? len / prodKnown);
    const prod = factors.reduce((a, b) => a * b, 1);
    if (factors.some((f) => !Number.isInteger(f) || f <= 0) || prod !== len) {
      // With one factor left to infer: "128 is not divisible by w = 3" (its size would be
      // 42.67); else the sizes given, whose product is not the length.
      const given = group
        .filter((_, j) => known[j] !== undefined)
        .map((n) => `${n} = ${own(n)}`)
        .join(" · ");
      throw new TirxError(
        "TX1011",
        unknown === 1
          ? `input axis ${i} "(${group.join(" ")})" has length ${len}, which is not divisible by ${given || "1"}${prodKnown !== 1 && group.length > 2 ? ` (= ${prodKnown})` : ""}`
          : `input axis ${i} "(${group.join(" ")})" has length ${len}, but the sizes ${given} multiply to ${prodKnown}`,
        span,
      );
    }
    let s = stride;
    for (let j = group.length - 1; j >= 0; j--) {
      const name = group[j]!;
      if (axis.has(name)) {
        throw new TirxError("TX1010", `axis "${name}" appears twice on the input side`, span);
      }
      axis.set(name, { size: factors[j]!, stride: s });
      s *= factors[j]!;
    }
  });
  const used = new Set<string>();
  const shape: number[] = [];
  const strides: number[] = [];
  const names: string[] = [];
  for (const group of rhs) {
    for (const n of group) {
      if (!axis.has(n)) {
        throw new TirxError("TX1010", `output axis "${n}" is not named on the input side`, span);
      }
      if (used.has(n)) {
        throw new TirxError("TX1010", `axis "${n}" appears twice on the output side`, span);
      }
      used.add(n);
    }
    // Merge the group: each axis of more than one element must step exactly over the whole of
    // the next such axis. Axes of size 1 add no index and no constraint: they are skipped, so
    // the axes on either side of one are checked against each other (merged index
    // m = i·n_b + j is the offset m·s_b only when s_a = n_b·s_b).
    let size = 1;
    const steps = group.filter((n) => axis.get(n)!.size > 1);
    for (let j = 0; j + 1 < steps.length; j++) {
      const a = axis.get(steps[j]!)!;
      const b = axis.get(steps[j + 1]!)!;
      if (a.stride !== b.stride * b.size) {
        throw new TirxError(
          "TX1012",
          `cannot merge "(${group.join(" ")})" without a copy: "${steps[j]}" has stride ${a.stride}, but "${steps[j + 1]}" spans ${b.stride * b.size} elements`,
          span,
        );
      }
    }
    for (const n of group) size *= axis.get(n)!.size;
    const last = steps[steps.length - 1] ?? group[group.length - 1]!;
    shape.push(size);
    strides.push(axis.get(last)!.stride);
    names.push(group.length === 1 ? group[0]! : `(${group.join(" ")})`);
  }
  const missing = [...axis.keys()].filter((n) => !used.has(n));
  if (missing.length > 0) {
    throw new TirxError(
      "TX1010",
      `input axes ${missing.map((n) => `"${n}"`).join(", ")} are missing on the output side (rearrange neither drops nor reduces axes)`,
      span,
    );
  }
  return { ...view, shape, strides, axes: names, ...(span ? { span } : {}) };
}
