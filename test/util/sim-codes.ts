// The simulator's report codes of a kernel on several schedules, for the hazard tests.
import { verify, type PrimFunc } from "@tirx-ts/core";
import { runSim } from "@tirx-ts/runtime-sim";

/**
 * The distinct report codes of `fn` on the simulator (hazards collected, not thrown), one list
 * per schedule seed of `seeds`, on fresh arguments from `args` each time.
 * @example expect(simCodes(fn, () => [simZeros([64], "float32")])).toEqual([[], [], []]);
 */
export function simCodes(fn: PrimFunc, args: () => unknown[], seeds = [0, 1, 3]): string[][] {
  const vf = verify(fn);
  return seeds.map((simSeed) => {
    const r = runSim(vf, args() as never, { hazards: "collect", simSeed });
    return [...new Set(r.reports.map((e) => e.code))];
  });
}
