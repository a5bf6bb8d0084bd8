// The .sync.aligned rule of wgmma.fence / mma_async / commit_group / wait_group at the scale of
// the warpgroup (PTX ISA, wgmma: all threads of the warpgroup execute the same wgmma
// instruction): whole warps of a warpgroup that skip a wgmma (an `if` on the thread index) or run
// another wgmma instruction at the same point of their sequence are TX6011 at the author's line,
// naming the warpgroup and the warps that did and did not execute it, on every schedule. The
// kernels that keep the rule stay clean: two warpgroups, one of which never runs a wgmma.
// Lines are found through the `// @name` markers at the ends of the lines below.
import { describe, expect, it } from "vitest";
import { markers } from "../util/markers.js";
import { fillOnes } from "./fragment.js";
import { verify, type TirxError } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simZeros } from "@tirx-ts/runtime-sim";

const { at } = markers(import.meta.url);

/**
 * `n` as the verifier cannot evaluate it: the block index (0 in these one-CTA launches) plus `n`.
 * A condition on the thread index against it reaches the simulator, which checks what the threads
 * execute; against a constant the verifier refuses it at build (TX7012,
 * test/warpgroup-convergence.test.ts).
 */
const opaque = (n: number) => T.cuda.block_idx("x").add(n);

const tag = (e: TirxError): string => `${e.code}@${e.span?.line ?? "?"}`;
const noteLines = (e: TirxError): number[] => e.notes.flatMap((n) => (n.span ? [n.span.line] : []));

const desc = T.ptx.wgmma.encode_matrix_descriptor;
const SWZ = { align: 1024, layout: T.swizzle_mode("128B") } as const;
type Idx = ReturnType<typeof T.cuda.thread_idx>;
type Acc = ReturnType<typeof T.alloc_local>;
type Tile = ReturnType<typeof T.alloc_shared>;

/**
 * One m64n8k16 wgmma of the warpgroup into `acc`, committed and waited; `marker` "half" puts the
 * fence on the @halfFence line, "lonely" the wait_group on the @lonelyWait line.
 */
function wgmma(acc: Acc, sA: Tile, sB: Tile, marker: "plain" | "half" | "lonely"): void {
  if (marker === "half")
    T.ptx.wgmma.fence(); // @halfFence
  else T.ptx.wgmma.fence();
  T.ptx.wgmma.mma_async(
    "m64n8k16",
    "float16",
    acc,
    0,
    desc(sA.ptr([0, 0]), 16, 1024, 3),
    desc(sB.ptr([0, 0]), 16, 1024, 3),
  );
  T.ptx.wgmma.commit_group();
  if (marker === "lonely")
    T.ptx.wgmma.wait_group(0); // @lonelyWait
  else T.ptx.wgmma.wait_group(0);
}

/**
 * A CTA of `block` threads that fills A (64 × 64) and B (8 × 64) with ones, then runs `body`;
 * D[tid] = the thread's first accumulator (16 when its warp's wgmma ran).
 */
function run(
  block: number,
  body: (c: { tid: Idx; acc: Acc; sA: Tile; sB: Tile }) => void,
  seed = 0,
) {
  const fn = T.function("aligned", { D: T.Tensor([block], "float32") }, ({ D }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
    const tid = T.cuda.thread_idx("x");
    const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
    const sB = T.alloc_shared([8, 64], "float16", { name: "sB", ...SWZ });
    T.if_(tid.lt(128), () => {
      fillOnes(tid, sA, sB);
    });
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    const acc = T.alloc_local([4], "float32", { name: "acc" });
    for (const e of T.unroll(4)) acc.set([e], T.float32(0));
    body({ tid, acc, sA, sB });
    D.set([tid], acc.get([0]));
  });
  const d = simZeros([block], "float32");
  const { reports } = runSim(verify(fn), [d], { hazards: "collect", simSeed: seed });
  return { reports, d: d.toArray() as Float32Array };
}

describe("wgmma .sync.aligned over the warpgroup (simulator)", () => {
  it("reports whole warps that skip the warpgroup's wgmma (TX6011, naming the warps)", () => {
    for (const seed of [0, 1, 7]) {
      const { reports } = run(
        128,
        ({ tid, acc, sA, sB }) => T.if_(tid.lt(opaque(64)), () => wgmma(acc, sA, sB, "half")),
        seed,
      );
      expect(reports.map(tag)).toEqual([`TX6011@${at("halfFence")}`]);
      expect(reports[0]!.message).toContain(
        "executed by warps 0, 1 of warpgroup 0 (warps 0..3) but not by warps 2, 3",
      );
    }
  });

  it("reports warps that run another wgmma at the same point of the sequence", () => {
    const { reports } = run(128, ({ tid, acc, sA, sB }) => {
      T.if_(
        tid.lt(opaque(64)),
        () => T.ptx.wgmma.fence(), // @fenceA
        () => T.ptx.wgmma.fence(), // @fenceB
      );
      T.ptx.wgmma.mma_async(
        "m64n8k16",
        "float16",
        acc,
        0,
        desc(sA.ptr([0, 0]), 16, 1024, 3),
        desc(sB.ptr([0, 0]), 16, 1024, 3),
      );
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
    });
    expect(reports.map(tag)).toEqual([`TX6011@${at("fenceB")}`]);
    expect(noteLines(reports[0]!)).toContain(at("fenceA"));
    expect(reports[0]!.message).toContain("warps 0, 1 executed T.ptx.wgmma.fence instead");
  });

  it("leaves alone a warpgroup that never runs a wgmma while another runs them all", () => {
    for (const seed of [0, 3, 9]) {
      const { reports, d } = run(
        256,
        ({ tid, acc, sA, sB }) => T.if_(tid.ge(128), () => wgmma(acc, sA, sB, "plain")),
        seed,
      );
      expect(reports.map(tag)).toEqual([]);
      expect(d[128]).toBe(16);
      expect(d[255]).toBe(16);
    }
  });
});

describe("wgmma.wait_group waits for the warpgroup's group (PTX ISA, wgmma.commit_group)", () => {
  /**
   * 128 threads with warps as coroutines (an mbarrier phase every thread waits for, which the
   * first arrival of each thread completes); then `body`.
   */
  const threaded = (body: (c: { tid: Idx; acc: Acc; sA: Tile; sB: Tile }) => void, seed: number) =>
    run(
      128,
      (c) => {
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        T.if_(c.tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 128));
        T.cuda.cta_sync();
        T.ptx.mbarrier.arrive(bar.sub(0));
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        body(c);
      },
      seed,
    );

  it("a warp whose sibling never commits the group it retires waits forever: one TX6011 naming the warp", () => {
    for (const seed of [0, 1, 7]) {
      const { reports } = threaded(
        ({ tid, acc, sA, sB }) => T.if_(tid.lt(opaque(96)), () => wgmma(acc, sA, sB, "lonely")),
        seed,
      );
      expect(reports.map(tag)).toEqual([`TX6011@${at("lonelyWait")}`]);
      expect(reports[0]!.message).toMatch(
        /wgmma\.wait_group 0 in warp [012] of CTA \(0, 0, 0\) waits forever: it retires its wgmma-group 1, which belongs to the whole warpgroup, but warp 3 of the warpgroup never commits it/,
      );
    }
  });

  it("warp by warp (no coroutines), a warp's wait ends its stretch: a write of B after it is clean", () => {
    // Warp 0 overwrites B after its wait_group: on the GPU every warp's part of the group is
    // complete by then. Varied schedules run stretches warp by warp; the wait ends one, so no
    // warp's wgmma is issued after warp 0's write (it would read the new B: 15, not 16).
    for (const seed of [0, 1, 2, 3, 7, 12]) {
      const { reports, d } = run(
        128,
        ({ tid, acc, sA, sB }) => {
          wgmma(acc, sA, sB, "plain");
          T.if_(tid.lt(32), () => sB.set([0, tid], T.float16(0)));
        },
        seed,
      );
      expect(reports.map(tag)).toEqual([]);
      expect([0, 32, 64, 96].map((t) => d[t])).toEqual([16, 16, 16, 16]);
    }
  });

  it("the whole warpgroup's wgmmas, each warp's wait: clean on every schedule, D right", () => {
    for (const seed of [0, 1, 2, 3, 7, 12]) {
      const { reports, d } = threaded(({ acc, sA, sB }) => wgmma(acc, sA, sB, "plain"), seed);
      expect(reports.map(tag)).toEqual([]);
      expect([d[0], d[127]]).toEqual([16, 16]);
    }
  });
});

describe("setmaxnreg is .sync.aligned over the warpgroup too (PTX ISA, setmaxnreg)", () => {
  /** Run `body` in a 256-thread CTA on the simulator; the reports' code@line. */
  const reports = (body: (tid: Idx) => void, seed = 0): string[] => {
    const fn = T.function("maxnreg", { B: T.Tensor([256], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
      const tid = T.cuda.thread_idx("x");
      body(tid);
      B.set([tid], T.float32(1));
    });
    const B = simZeros([256], "float32");
    const r = runSim(verify(fn), [B], { hazards: "collect", simSeed: seed });
    return r.reports.map(tag);
  };

  it("one thread, or half a warpgroup, is TX6011 at the setmaxnreg line", () => {
    for (const seed of [0, 3]) {
      expect(
        reports((tid) => T.if_(tid.eq(opaque(0)), () => T.ptx.setmaxnreg(false, 40)), seed), // @oneThread
      ).toEqual([`TX6011@${at("oneThread")}`]);
      expect(
        reports((tid) => T.if_(tid.lt(opaque(64)), () => T.ptx.setmaxnreg(false, 40)), seed), // @halfGroup
      ).toEqual([`TX6011@${at("halfGroup")}`]);
    }
  });

  it("whole warpgroups, each with its own count, are clean", () => {
    for (const seed of [0, 3, 9]) {
      expect(
        reports(
          (tid) =>
            T.if_(
              tid.lt(128),
              () => T.ptx.setmaxnreg(false, 40),
              () => T.ptx.setmaxnreg(true, 232),
            ),
          seed,
        ),
      ).toEqual([]);
    }
  });
});
