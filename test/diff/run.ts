// Running a differential case on a device, and judging its outputs against the reference.
import { compile, tensor } from "tirx-ts";
import { dtypeBytes, isFloat8, type ApproxBound, type DType, type DeviceLike } from "@tirx-ts/core";
import type { DiffCase } from "./cases.js";
import { decode, type Value } from "./values.js";
import { roundTo, sameValue, ulpDistance, ulpOf } from "./reference.js";

/** The output bytes of `c` on `dev`, the output first poisoned so unwritten elements show. */
export function runCase(c: DiffCase, dev: DeviceLike): Uint8Array {
  const run = compile(c.fn, { target: "cuda", arch: "sm_90" });
  // One-byte integers and bool take values; every other dtype (float8 too) takes raw bytes.
  const raw = (dt: DType): boolean => dtypeBytes(dt) > 1 || isFloat8(dt);
  // An operand tensor holds its bytes (a vector case's operands hold more elements than Y).
  const xs = c.bytes.map((b, j) =>
    tensor(raw(c.operands[j]!) ? b : Array.from(b), {
      shape: [b.length / dtypeBytes(c.operands[j]!)],
      dtype: c.operands[j]!,
      device: dev,
    }),
  );
  // Poison: 0xa5 in every byte (1 for bool, which holds only 0 or 1).
  const eb = dtypeBytes(c.result);
  const poison = c.initial ?? new Uint8Array(c.n * eb).fill(0xa5);
  const oneByte = c.initial
    ? Array.from(poison)
    : Array.from(poison, () => (c.result === "bool" ? 1 : 0xa5));
  const y = tensor(raw(c.result) ? poison : oneByte, {
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
 * -0 distinct from +0; a packed pair lane by lane, `DiffCase.same`), approximate ops within their
 * bound. Unspecified results are skipped.
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
      if (!withinBound(c.approx, c.result, Number(args[0]), g, w)) {
        bad.push({ i, args, got: got[i]!, want, ulp: ulpDistance(g, w, c.result) });
      }
    } else if (!(c.same ?? sameValue)(got[i]!, want)) {
      bad.push({ i, args, got: got[i]!, want });
    }
  }
  return { checked, bad };
}

/**
 * `g` against the exact value `w` of an approximate op at operand `x`. Outside the bound's
 * `inDomain`: only no NaN where `w` is not NaN. Inside: NaN exactly where `w` is NaN, infinities where the exact value
 * rounds to one, else |g - w| ≤ max(ulp·ulp(w) (+ floor(ulpPerUnit·|x|) ulp), abs + rel·|w|), in
 * float32 ulps for `viaFloat32` bounds plus half an ulp of a 16-bit result's format.
 */
export function withinBound(b: ApproxBound, rt: DType, x: number, g: number, w: number): boolean {
  // Outside the domain: no NaN where the exact function is defined (an infinity may stand for
  // a flushed subnormal operand, e.g. rsqrt.approx.ftz of -2^-149 is -inf, not NaN).
  if (b.inDomain && !b.inDomain(x)) return g === g || w !== w;
  if (w !== w || g !== g) return w !== w && g !== g;
  const wr = roundTo(w, rt);
  if (!Number.isFinite(g) || !Number.isFinite(wr)) return g === wr || g === w;
  const wide: DType = b.viaFloat32 && (rt === "float16" || rt === "bfloat16") ? "float32" : rt;
  const ulps = b.ulp + (b.ulpPerUnit ? Math.floor(b.ulpPerUnit * Math.abs(x)) : 0);
  let allowed = Math.max(ulps * ulpOf(w, wide), (b.abs ?? 0) + (b.rel ?? 0) * Math.abs(w));
  if (wide !== rt) allowed += 0.5 * Math.max(ulpOf(w, rt), ulpOf(g, rt));
  return Math.abs(g - w) <= allowed;
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
