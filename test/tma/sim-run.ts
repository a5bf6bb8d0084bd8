// Run a TMA case (cases.ts) on the simulator, for the simulator and GPU tests.
import { verify } from "@tirx-ts/core";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import type { TmaCase } from "./cases.js";

/** Run a case on the simulator; the output as numbers and raw bytes, and the reports. */
export function simCase(c: TmaCase): {
  out: number[];
  bytes: Uint8Array;
  reports: readonly unknown[];
} {
  const ins = c.inputs.map((i) => simTensor(i.data, { shape: i.shape, dtype: i.dtype }));
  const o = simZeros(c.out.shape, c.out.dtype);
  const r = runSim(verify(c.fn), [...ins, o], { hazards: "collect" });
  return {
    out: Array.from(o.toArray() as ArrayLike<number>),
    bytes: o.toBytes(),
    reports: r.reports,
  };
}
