// The float division-family cases the compute-foundation issue names, with their exact values
// (float32 inputs; the bracketed results of the issue, checked against the exact reference).
import { T, type TileView } from "@tirx-ts/dsl";
import { compile, tensor } from "tirx-ts";
import type { DeviceLike, PrimFunc } from "@tirx-ts/core";

export const ISSUE_CASES = [
  { op: "floordiv", a: -288148.25, b: -0.025021079927682877, want: 11516219 },
  { op: "floormod", a: 213733.015625, b: -0.0005346030229702592, want: -6.871193181723356e-5 },
  { op: "mod", a: 213733.015625, b: -0.0005346030229702592, want: 0.00046589109115302563 },
] as const;

const kernel = (op: "floordiv" | "floormod" | "mod"): PrimFunc =>
  T.function(
    `issue_${op}`,
    { A: T.Tensor([1], "float32"), B: T.Tensor([1], "float32"), C: T.Tensor([1], "float32") },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      C.set([0], (A as TileView).get([0])[op](B.get([0])));
    },
  );

/** Each case's result on `dev`, as float32. */
export function runIssueCases(dev: DeviceLike): number[] {
  return ISSUE_CASES.map((c) => {
    const run = compile(kernel(c.op), { target: "cuda", arch: "sm_90" });
    const a = tensor([c.a], { shape: [1], dtype: "float32", device: dev });
    const b = tensor([c.b], { shape: [1], dtype: "float32", device: dev });
    const out = tensor.zeros([1], "float32", dev);
    run(a, b, out);
    const v = (out.toArray() as Float32Array)[0]!;
    for (const t of [a, b, out]) t.dispose();
    return v;
  });
}
