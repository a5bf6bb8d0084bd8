// One kernel run several ways (SimOptions that must not change what a launch does): the reports
// (code, message, line:col, notes with their lines, in order) or the thrown report, and a hash of
// every tensor's bytes after the launch.
import { createHash } from "node:crypto";
import { expect } from "vitest";
import {
  isTirxError,
  verify,
  type KernelArg,
  type PrimFunc,
  type TirxError,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { runSim, type SimOptions } from "@tirx-ts/runtime-sim";

/** A report as the test compares it: code, message, line, and every note with its line. */
export function shown(e: TirxError): string {
  const at = (s: { line: number; col: number } | undefined): string =>
    s ? `${s.line}:${s.col}` : "-";
  return [
    `${e.code} @${at(e.span)} ${e.message}`,
    ...e.notes.map((n) => `  note @${at(n.span)} ${n.message}`),
  ].join("\n");
}

/** What one launch did: its reports (collect mode) or the one it threw, and its tensors' bytes. */
export interface Outcome {
  readonly reports: string[];
  readonly thrown?: string;
  /** A SHA-256 per tensor argument, after the launch (none when it threw). */
  readonly bytes: string[];
}

/**
 * A launch of `vf` on fresh `args()` under `opts`.
 * @throws Error other than a TirxError (a crash of the simulator).
 */
export function outcome(vf: VerifiedFunc, args: () => KernelArg[], opts: SimOptions): Outcome {
  const a = args();
  const bytes = (): string[] =>
    a.flatMap((x) =>
      typeof x === "object" && x !== null && "toBytes" in x
        ? [
            createHash("sha256")
              .update((x as { toBytes(): Uint8Array }).toBytes())
              .digest("hex"),
          ]
        : [],
    );
  try {
    const r = runSim(vf, a, opts);
    return { reports: r.reports.map(shown), bytes: bytes() };
  } catch (e) {
    if (!isTirxError(e)) throw e;
    return { reports: [], thrown: shown(e), bytes: [] };
  }
}

/**
 * Range checks on the closures, range checks on generated functions from the first lane (vector
 * loops, compile/vector.ts), and element checks on the closures.
 */
export const DEFAULT_WAYS: readonly SimOptions[] = [
  { rangeChecks: true },
  { rangeChecks: true, jitAfter: 0 },
  { rangeChecks: false, jitAfter: Infinity },
];

/**
 * Every way gives one outcome under each mode and schedule (each compared with the last way, the
 * reference); returns the reference's first reports (or the verifier's refusal, or the report it
 * threw).
 * Each launch gets its own VerifiedFunc (its own compiled machine), so the comparison does not
 * depend on what an earlier launch left behind.
 */
export function same(
  fn: PrimFunc,
  args: () => KernelArg[],
  seeds = [0, 2],
  modes: readonly ("collect" | "throw")[] = ["collect", "throw"],
  ways: readonly SimOptions[] = DEFAULT_WAYS,
): string[] {
  try {
    verify(fn);
  } catch (e) {
    if (isTirxError(e)) return [shown(e)];
    throw e;
  }
  let first: string[] | undefined;
  for (const simSeed of seeds) {
    for (const hazards of modes) {
      const last = ways[ways.length - 1]!;
      const elements = outcome(verify(fn), args, { hazards, simSeed, ...last });
      for (const way of ways.slice(0, -1)) {
        const ranges = outcome(verify(fn), args, { hazards, simSeed, ...way });
        const at = `${fn.name}, ${hazards}, schedule ${simSeed}, ${JSON.stringify(way)}`;
        expect(ranges, at).toEqual(elements);
      }
      first ??= elements.thrown !== undefined ? [elements.thrown] : elements.reports;
    }
  }
  return first!;
}
