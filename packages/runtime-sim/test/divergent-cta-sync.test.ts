import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { lineOf } from "./helpers.js";

/**
 * cta_sync is `bar.sync 0`, an .aligned barrier: every thread of the CTA executes the same
 * barrier instruction (PTX ISA, bar/barrier). Threads that reach two different cta_sync
 * statements are TX6009 whether the warps run in lockstep (a kernel without wait loops) or as
 * coroutines (a kernel with an mbarrier wait loop, compile/blocking.ts): both modes agree.
 */
const here = import.meta.url;
const SEEDS = [0, 1, 3];

/**
 * A 64-thread (two-warp) kernel writing O[tid] after `body`; with `wait`, an mbarrier wait loop
 * after it makes the warps run as coroutines.
 */
const kernel = (name: string, wait: boolean, body: (tid: PrimExpr, O: PrimOut) => void) =>
  T.function(name, { O: T.Tensor([64], "int32") }, ({ O }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const tid = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
    });
    T.cuda.cta_sync();
    body(tid, O as unknown as PrimOut);
    if (wait) {
      T.if_(tid.eq(0), () => T.ptx.mbarrier.arrive(bar.sub(0)));
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    }
  });

type PrimOut = ReturnType<typeof T.alloc_shared>;

function run(fn: ReturnType<typeof kernel>, seed: number) {
  const O = simZeros([64], "int32");
  const { reports } = runSim(verify(fn), [O], { hazards: "collect", simSeed: seed });
  return { reports, out: Array.from((O as SimTensor).toArray() as Int32Array) };
}

describe("cta_sync reached from two statements", () => {
  const arms = (wait: boolean) =>
    kernel(`arms_${wait}`, wait, (tid, O) => {
      T.if_(
        tid.lt(32),
        () => T.cuda.cta_sync(), // @arm-then
        () => T.cuda.cta_sync(), // @arm-else
      );
      O.set([tid], tid);
    });
  const later = (wait: boolean) =>
    kernel(`later_${wait}`, wait, (tid, O) => {
      T.if_(tid.lt(32), () => T.cuda.cta_sync()); // @first
      T.if_(tid.ge(32), () => T.cuda.cta_sync()); // @second
      O.set([tid], tid);
    });

  for (const [what, fn, a, b] of [
    ["the two arms of one T.if_", arms, "@arm-then", "@arm-else"],
    ["two T.if_ statements", later, "@first", "@second"],
  ] as const) {
    it(`warp 0 and warp 1 at cta_sync in ${what}: TX6009 in lockstep and as coroutines`, () => {
      const lines = [lineOf(here, a), lineOf(here, b)];
      for (const wait of [false, true]) {
        for (const seed of SEEDS) {
          const { reports } = run(fn(wait), seed);
          const found = reports.filter((x) => x.code === "TX6009");
          // One report per statement, as in lockstep; as coroutines each names the other.
          expect(found.map((r) => r.span?.line).sort(), `wait ${wait}, seed ${seed}`).toEqual(
            [...lines].sort(),
          );
          for (const r of found) {
            expect(r.message).toMatch(/reached by 32 of the 64 threads/);
            if (wait)
              expect(lines.filter((l) => l !== r.span?.line)).toEqual([r.notes[0]?.span?.line]);
          }
        }
      }
    });
  }

  it("producer and consumer in separate T.if_ with cta_sync at top level report nothing", () => {
    for (const wait of [false, true]) {
      const fn = kernel(`pc_${wait}`, wait, (tid, O) => {
        const S = T.alloc_shared([64], "int32", { name: "S" });
        T.if_(tid.lt(32), () => S.set([tid.add(32)], tid.mul(2)));
        T.if_(tid.ge(32), () => S.set([tid.sub(32)], tid.mul(2)));
        T.cuda.cta_sync();
        O.set([tid], S.get([tid.add(32).floormod(64)]));
      });
      for (const seed of SEEDS) {
        const { reports, out } = run(fn, seed);
        expect(reports.map((r) => r.render())).toEqual([]);
        expect(out).toEqual(Array.from({ length: 64 }, (_, t) => t * 2));
      }
    }
  });
});
