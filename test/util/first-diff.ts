// Compare the fast ways (jitAfter 0, the default) with the reference (rangeChecks off, closures
// only) under each schedule and hazard mode without throwing: the first mismatch, shortened.
import { isTirxError, verify, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import type { SimOptions } from "@tirx-ts/runtime-sim";
import { outcome, shown, type Outcome } from "./same-outcome.js";

export const REF: SimOptions = { rangeChecks: false, jitAfter: Infinity };
export const FAST_WAYS: readonly SimOptions[] = [{ jitAfter: 0 }, {}];

function short(o: Outcome): string {
  const r = o.thrown !== undefined ? [`thrown ${o.thrown}`] : o.reports;
  return JSON.stringify({
    reports: r.map((x) => x.split("\n")[0]!.slice(0, 220)),
    bytes: o.bytes.map((b) => b.slice(0, 8)),
  });
}

export interface Diff {
  readonly at: string;
  readonly fast: string;
  readonly ref: string;
}

/** The first way/seed/mode whose outcome differs from the reference, or undefined. */
export function firstDiff(
  fn: PrimFunc,
  args: () => KernelArg[],
  seeds: readonly number[] = [0, 2],
  modes: readonly ("collect" | "throw")[] = ["collect", "throw"],
  ways: readonly SimOptions[] = FAST_WAYS,
): Diff | undefined {
  try {
    verify(fn);
  } catch (e) {
    if (isTirxError(e)) return undefined;
    throw e;
  }
  for (const simSeed of seeds) {
    for (const hazards of modes) {
      const ref = outcome(verify(fn), args, { hazards, simSeed, ...REF });
      for (const way of ways) {
        const got = outcome(verify(fn), args, { hazards, simSeed, ...way });
        if (JSON.stringify(got) !== JSON.stringify(ref)) {
          return {
            at: `${fn.name} ${hazards} seed ${simSeed} ${JSON.stringify(way)}`,
            fast: short(got),
            ref: short(ref),
          };
        }
      }
    }
  }
  return undefined;
}

/** The reference outcome's reports (collect, seed 0), for sanity. */
export function refReports(fn: PrimFunc, args: () => KernelArg[]): string[] {
  try {
    const o = outcome(verify(fn), args, { hazards: "collect", simSeed: 0, ...REF });
    return o.thrown ? [o.thrown] : o.reports;
  } catch (e) {
    if (isTirxError(e)) return [shown(e)];
    throw e;
  }
}

/**
 * One random kernel of a fuzzer: nothing when the verifier refuses `build(sh)` (returns false);
 * else the fast ways must match the reference (throws the shape and the first difference) and
 * returns true.
 */
export function checkSame<S>(sh: S, build: (sh: S) => PrimFunc, args: () => KernelArg[]): boolean {
  try {
    verify(build(sh));
  } catch (e) {
    if (!isTirxError(e)) throw e;
    return false;
  }
  const d = firstDiff(build(sh), args);
  if (d) throw new Error(JSON.stringify({ sh, d }));
  return true;
}
