import { numel, verify, type DType, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { runSim, simTensor, type TraceEvent } from "@tirx-ts/runtime-sim";

/** A Chrome / Perfetto trace file: `{ traceEvents, displayTimeUnit, otherData }`. */
export interface TraceFile {
  readonly traceEvents: readonly TraceEvent[];
  readonly displayTimeUnit: "ns";
  readonly otherData: Readonly<Record<string, string>>;
}

/**
 * Trace a simulated launch of `fn` (Chrome "Trace Event Format", opened by ui.perfetto.dev and
 * chrome://tracing): per CTA (`pid`) and warp (`tid`), cp.async groups from issue to the
 * wait_group that completes them, waits, barrier phases and mbarrier phases, on a logical clock
 * (statements executed; `ts` in "ns" only so that viewers show integers).
 * Arguments: every scalar is `scalars[name]` or 1; a symbolic tensor dim takes the scalar of
 * its name; tensors hold the pattern `i % 251` (element index i, row-major) in their dtype.
 * Hazards are collected and listed in `otherData.hazards`, the run goes on.
 * @throws TirxError from verify, and TX5001-TX5009 when the arguments do not fit the kernel.
 */
export function traceKernel(
  fn: PrimFunc,
  scalars: Readonly<Record<string, number>> = {},
): TraceFile {
  const vf = verify(fn);
  const value = (name: string): number => scalars[name] ?? 1;
  const args: KernelArg[] = fn.params.map((p) => {
    if (p.kind === "scalar") return value(p.name);
    const shape = p.buffer.shape.map((d) => (typeof d === "number" ? d : value(d.name)));
    const n = numel(shape);
    const data = Float64Array.from({ length: n }, (_, i) => i % 251);
    return simTensor(data, { shape, dtype: p.buffer.dtype as DType });
  });
  const { reports, trace } = runSim(vf, args, { hazards: "collect", trace: true });
  return {
    traceEvents: trace ?? [],
    displayTimeUnit: "ns",
    otherData: {
      kernel: fn.name,
      clock: "statements executed by the CTA (logical)",
      arguments: fn.params
        .map((p) =>
          p.kind === "scalar" ? `${p.name}=${value(p.name)}` : `${p.name}: pattern i % 251`,
        )
        .join(", "),
      hazards: reports.map((r) => `${r.code} ${r.message}`).join("\n"),
    },
  };
}
