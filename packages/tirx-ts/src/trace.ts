import { verify, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { runSim, type TraceEvent } from "@tirx-ts/runtime-sim";
import { patternArgs } from "./pattern-args.js";

/** A Chrome / Perfetto trace file: `{ traceEvents, displayTimeUnit, otherData }`. */
export interface TraceFile {
  readonly traceEvents: readonly TraceEvent[];
  readonly displayTimeUnit: "ns";
  readonly otherData: Readonly<Record<string, string>>;
}

/** A traced run: the trace file and the hazard reports of the run, as diagnostics. */
export interface TraceRun {
  readonly trace: TraceFile;
  /** The simulator's hazard reports (TX6xxx), in the order the run met them. */
  readonly reports: readonly TirxError[];
}

/**
 * Trace a simulated launch of `fn` (Chrome "Trace Event Format", opened by ui.perfetto.dev and
 * chrome://tracing): per CTA (`pid`) and warp (`tid`), cp.async groups from issue to the
 * wait_group that completes them, waits, barrier phases and mbarrier phases, on a logical clock
 * (statements executed; `ts` in "ns" only so that viewers show integers).
 * Arguments: every scalar is `scalars[name]` or 1; a symbolic tensor dim takes the scalar of
 * its name; tensors hold the pattern `i % 251` (element index i, row-major) in their dtype.
 * Hazards are collected, the run goes on: they are returned as `reports` and listed in the
 * trace's `otherData.hazards`, one line each (`TX6001 [hazard/async-pending] ... (at file:line:col)`).
 * @throws TirxError from verify, TX5003 and TX5007 from patternArgs (a symbolic dim that is no
 *   non-negative integer, a tensor too large to simulate), and TX5001-TX5009 when the arguments
 *   do not fit the kernel.
 */
export function traceRun(fn: PrimFunc, scalars: Readonly<Record<string, number>> = {}): TraceRun {
  const vf = verify(fn);
  const args = patternArgs(fn, scalars);
  const { reports, trace } = runSim(vf, args, { hazards: "collect", trace: true });
  return {
    reports,
    trace: {
      traceEvents: trace ?? [],
      displayTimeUnit: "ns",
      otherData: {
        kernel: fn.name,
        clock: "statements executed by the CTA (logical)",
        arguments: fn.params
          .map((p) =>
            p.kind === "scalar"
              ? `${p.name}=${scalars[p.name] ?? 1}`
              : `${p.name}: pattern i % 251`,
          )
          .join(", "),
        // A TirxError's message already starts with its code and rule.
        hazards: reports.map((r) => r.message).join("\n"),
      },
    },
  };
}

/**
 * The trace of a simulated launch of `fn` ({@link traceRun}'s `trace`; its hazards only in
 * `otherData.hazards`).
 * @throws TirxError from verify, and TX5001-TX5009 when the arguments do not fit the kernel.
 */
export function traceKernel(
  fn: PrimFunc,
  scalars: Readonly<Record<string, number>> = {},
): TraceFile {
  return traceRun(fn, scalars).trace;
}
