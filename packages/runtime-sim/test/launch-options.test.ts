// Launch options are one frozen object per launch (exec/launch-options.ts): a kernel's Machine is
// cached per VerifiedFunc and reused by every launch, and nothing of one launch's options (hazard
// mode, schedule seed, range checks, jitAfter, trace) may reach the next. Property: a sequence of
// launches of one VerifiedFunc, each with its own random options, gives launch by launch what a
// launch of a freshly verified kernel (a new Machine) gives with the same options: the output
// bytes, the reports (codes, messages, notes) or the thrown error, and the trace events.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { TirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { launchOptions, NO_LAUNCH } from "../src/exec/launch-options.js";

/** 64 threads over 2 warps: a shared round trip with a cta_sync, and (racy) one read without. */
function kernel(racy: boolean): PrimFunc {
  return T.function(
    `opts_${racy}`,
    { A: T.Tensor([64], "int32"), O: T.Tensor([64], "int32") },
    ({ A, O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "int32");
      s.set([tid], A.get([tid]).mul(3));
      T.cuda.cta_sync();
      O.set([tid], s.get([tid.add(1).floormod(64)]).add(tid));
      if (racy) {
        // Another thread's element written after the barrier, read with nothing ordering the two.
        s.set([tid], tid);
        O.set([tid], s.get([tid.add(33).floormod(64)]));
      }
    },
  );
}

/** Everything a launch shows: output bytes, reports or the thrown error, trace events. */
function outcome(fn: PrimFunc, vf: ReturnType<typeof verify>, opts: SimOptions): unknown {
  const a = simTensor(
    Int32Array.from({ length: 64 }, (_, i) => i * 7 - 100),
    { shape: [64], dtype: "int32" },
  );
  const o = simZeros([64], "int32");
  const show = (e: TirxError) => ({
    code: e.code,
    message: e.message,
    notes: e.notes.map((n) => n.message),
  });
  try {
    const r = runSim(vf, [a, o], opts);
    return {
      bytes: Array.from(o.toBytes()),
      reports: r.reports.map(show),
      trace: r.trace ? JSON.stringify(r.trace) : undefined,
      fn: fn.name,
    };
  } catch (e) {
    if (!(e instanceof TirxError)) throw e;
    return { thrown: show(e), fn: fn.name };
  }
}

const optionsArb: fc.Arbitrary<SimOptions> = fc.record({
  hazards: fc.constantFrom("throw", "collect", "off") as fc.Arbitrary<SimOptions["hazards"]>,
  simSeed: fc.constantFrom(0, 1, 2, 7),
  rangeChecks: fc.boolean(),
  jitAfter: fc.constantFrom(0, 64, Infinity),
  trace: fc.boolean(),
});

describe("launch options", () => {
  it("are frozen, grid included, and so is NO_LAUNCH (what a Machine holds between launches)", () => {
    const o = launchOptions({ ...NO_LAUNCH, seed: 3, grid: [2, 1, 1] });
    expect(Object.isFrozen(o)).toBe(true);
    expect(Object.isFrozen(o.grid)).toBe(true);
    expect(() => ((o as { seed: number }).seed = 4)).toThrow(TypeError);
    expect(o.seed).toBe(3);
    expect(Object.isFrozen(NO_LAUNCH)).toBe(true);
  });

  it("of one launch never reach the next launch of the same kernel", () => {
    const fns = [kernel(false), kernel(true)];
    const cached = fns.map((f) => verify(f));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 1 }), optionsArb), {
          minLength: 2,
          maxLength: 5,
        }),
        (launches) => {
          for (const [k, opts] of launches) {
            const fn = fns[k]!;
            expect(outcome(fn, cached[k]!, opts)).toEqual(outcome(fn, verify(fn), opts));
          }
        },
      ),
      { seed: 42, numRuns: 25 },
    );
  });

  it("the racy kernel reports under tracking and not with hazards off (the property sees both)", () => {
    const fn = kernel(true);
    const r = outcome(fn, verify(fn), { hazards: "collect" }) as { reports: { code: string }[] };
    expect(r.reports.map((x) => x.code)).toContain("TX6003");
    const off = outcome(fn, verify(fn), { hazards: "off" }) as { reports: unknown[] };
    expect(off.reports).toEqual([]);
  });
});
