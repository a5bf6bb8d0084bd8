// The launch fast path's argument check agrees with core's checkArgs: whenever it accepts, the
// full check accepts with the same device; everything else falls back (null) to the full check.
import { expect, test } from "vitest";
import { checkArgs, type KernelArg } from "@tirx-ts/core";
import { T, sim, tensor } from "tirx-ts";
import { fastArgCheck } from "../packages/runtime/src/fast-args.js";

const f = T.function(
  "fast_args",
  { A: T.Tensor([4, 8], "float32"), B: T.Tensor([8], "int32"), s: T.int32 },
  ({ A, B, s }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 8 }) });
    const tid = T.cuda.thread_idx("x");
    B.set([tid], A.get([0, tid]).cast("int32").add(s));
  },
);
const g = T.function("sym_args", { A: T.Tensor(["n"], "float32"), n: T.int32 }, ({ A, n }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
  T.if_(n.gt(0), () => A.set([0], T.float32(1)));
});

test("accepts exactly what checkArgs accepts, with the same device; falls back otherwise", () => {
  const dev = sim();
  const a = tensor.zeros([4, 8], "float32", dev);
  const b = tensor.zeros([8], "int32", dev);
  const b2 = tensor.zeros([8], "int32", sim()); // sim() is one device: accepted
  const check = fastArgCheck(f);
  const cases: KernelArg[][] = [
    [a, b, 3],
    [a, b, 3n],
    [a, b, true],
    [a, b],
    [a, b, 1, 2],
    [b, a, 3],
    [a, tensor.zeros([8], "float32", dev), 3],
    [a, tensor.zeros([9], "int32", dev), 3],
    [tensor.zeros([8, 4], "float32", dev), b, 3],
    [a, b, "3" as unknown as number],
    [a, b2, 3],
    [a, 3 as unknown as KernelArg, 3],
  ];
  let accepted = 0;
  for (const args of cases) {
    const quick = check(args);
    let full: unknown;
    let threw = false;
    try {
      full = checkArgs(f, args);
    } catch {
      threw = true;
    }
    if (quick !== null) {
      accepted++;
      expect(threw).toBe(false);
      expect(quick).toBe(full);
    } else if (!threw) {
      // A fallback is allowed only where the full check has something to say or to compute.
      expect(args !== cases[0]).toBe(true);
    }
  }
  // [a, b, 3], [a, b, 3n], [a, b2, 3]; a boolean for the int32 scalar is refused by both.
  expect(accepted).toBe(3);
  // Symbolic shapes always take the full check.
  expect(fastArgCheck(g)([tensor.zeros([5], "float32", dev), 5])).toBeNull();
});
