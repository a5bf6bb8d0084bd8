// Running a differential case on a device, and judging its outputs against the reference.
import { compile, tensor } from "tirx-ts";
import { dtypeBytes, type DeviceLike } from "@tirx-ts/core";
import type { DiffCase } from "./cases.js";
import { decode, type Value } from "./values.js";
import { sameValue, ulpDistance } from "./reference.js";

/** The output bytes of `c` on `dev`, the output first poisoned so unwritten elements show. */
export function runCase(c: DiffCase, dev: DeviceLike): Uint8Array {
  const run = compile(c.fn, { target: "cuda", arch: "sm_90" });
  const xs = c.bytes.map((b, j) =>
    tensor(dtypeBytes(c.operands[j]!) === 1 ? Array.from(b) : b, {
      shape: [c.n],
      dtype: c.operands[j]!,
      device: dev,
    }),
  );
  // Poison: 0xa5 in every byte (1 for bool, which holds only 0 or 1).
  const eb = dtypeBytes(c.result);
  const poison = new Uint8Array(c.n * eb).fill(0xa5);
  const y = tensor(eb === 1 ? Array.from(poison, () => (c.result === "bool" ? 1 : 0xa5)) : poison, {
    shape: [c.n],
    dtype: c.result,
    device: dev,
  });
  run(...xs, y);
  const out = y.toBytes();
  for (const t of [...xs, y]) t.dispose();
  return out;
}

/** One disagreement with the reference. */
export interface Mismatch {
  readonly i: number;
  readonly args: readonly Value[];
  readonly got: Value;
  readonly want: Value | undefined;
  readonly ulp?: number;
}

/**
 * Elements of `out` that disagree with the reference: exact ops bit for bit (NaN equal to NaN,
 * -0 distinct from +0), approximate ops within their bound. Unspecified results are skipped.
 */
export function judge(c: DiffCase, out: Uint8Array): { checked: number; bad: Mismatch[] } {
  const got = decode(out, c.result);
  const bad: Mismatch[] = [];
  let checked = 0;
  for (let i = 0; i < c.n; i++) {
    const want = c.reference(i);
    if (want === "unspecified") continue;
    const args = c.inputs.map((col) => col[i]!);
    if (want === undefined) continue;
    checked++;
    if (c.approx) {
      const w = Number(want);
      const g = Number(got[i]);
      const ulp = ulpDistance(g, w, c.result);
      const abs = Math.abs(g - w);
      const ok =
        ulp <= c.approx.ulp ||
        (c.approx.abs !== undefined && abs <= c.approx.abs + (c.approx.rel ?? 0) * Math.abs(w));
      if (!ok) bad.push({ i, args, got: got[i]!, want, ulp });
    } else if (!sameValue(got[i]!, want)) {
      bad.push({ i, args, got: got[i]!, want });
    }
  }
  return { checked, bad };
}

/** A few mismatches, readable. */
export function showMismatches(c: DiffCase, bad: readonly Mismatch[], k = 5): string {
  return bad
    .slice(0, k)
    .map(
      (m) =>
        `${c.id}(${m.args.map(String).join(", ")}) = ${String(m.got)}, want ${String(m.want)}${m.ulp !== undefined ? ` (${m.ulp.toFixed(1)} ulp)` : ""}`,
    )
    .join("\n");
}

/** A value for messages: -0 spelled out. */
function show(v: Value | undefined): string {
  return Object.is(v, -0) ? "-0" : String(v);
}
