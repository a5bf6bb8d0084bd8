// TX6028: a read of a register element (a local array's element) that its thread has not written
// since its CTA started (runtime-sim exec/local-written.ts). Covered: element loads (closures and
// generated functions: every kernel also runs the fast ways, test/util/first-diff.ts), a
// fragment filled in part by ldmatrix.x1, destinations of stores predicated off for some lanes,
// mma.sync operands filled in part, and wgmma accumulators (read only when the instruction
// accumulates). Report lines are marked `// @<name>`.
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { verify, type KernelArg, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { runSim, simTensor, simZeros, type SimTensor } from "@tirx-ts/runtime-sim";
import { firstDiff, REF } from "./util/first-diff.js";
import { markers } from "./util/markers.js";
import { fillOnes } from "./wgmma/fragment.js";

const { at } = markers(import.meta.url);

/**
 * The reports of `k` on `args()` (collected, on the closures) and the arguments after the run;
 * with `fast`, the fast ways (generated functions from the first lane, the default tiering) under
 * lockstep and a varied schedule must give the same outcome (fragment ops and wgmma have one way).
 */
function run(
  k: PrimFunc,
  args: () => KernelArg[],
  fast = true,
): { reports: readonly TirxError[]; lines: (number | undefined)[]; args: KernelArg[] } {
  if (fast) expect(firstDiff(k, args, [0, 2], ["collect"])).toBeUndefined();
  const a = args();
  const reports = runSim(verify(k), a, { hazards: "collect", ...REF }).reports;
  expect(reports.every((r) => r.code === "TX6028")).toBe(true);
  return { reports, lines: reports.map((r) => r.span?.line), args: a };
}

const values = (t: KernelArg): number[] => Array.from((t as SimTensor).toArray(), Number);

describe("TX6028: registers read before their thread wrote them", () => {
  it("a local element stored by some lanes only (a predicated-off store) and read by all", () => {
    const k = (every: boolean): PrimFunc =>
      T.function("pred", { out: T.Tensor([32], "float32") }, ({ out }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const r = T.alloc_local([2], "float32", { name: "r" }); // @rDecl
        if (every) r.set([1], T.float32(2));
        else T.if_(tid.lt(16), () => r.set([1], T.float32(2)));
        out.set([tid], r.get([1]).add(T.float32(1))); // @rRead
      });
    const args = (): KernelArg[] => [simZeros([32], "float32")];
    const some = run(k(false), args);
    expect(some.lines).toEqual([at("rRead")]);
    const e = some.reports[0]!;
    expect(e.message).toMatch(
      /thread \(16, 0, 0\) of CTA \(0, 0, 0\) reads local "r"\[1\], which no instruction of the thread has written since its CTA started/,
    );
    expect(e.notes[0]!.span?.line).toBe(at("rDecl"));
    // The simulator's value is its zero; the lanes that stored read what they stored.
    expect(values(some.args[0]!)).toEqual(Array.from({ length: 32 }, (_, i) => (i < 16 ? 3 : 1)));
    expect(run(k(true), args).reports).toEqual([]);
  });

  it("a fragment of 8 halves after ldmatrix.x1 (2 written) read whole; .x4 writes all 8", () => {
    const k = (num: 1 | 4): PrimFunc =>
      T.function(
        "ldm_part",
        { X: T.Tensor([256], "float16"), Y: T.Tensor([256], "float16") },
        ({ X, Y }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
          const l = T.cuda.thread_idx("x");
          const S = T.alloc_shared([32, 8], "float16", { name: "S" });
          for (const c of T.unroll(8)) S.set([l, c], X.get([l.mul(8).add(c)]));
          T.cuda.cta_sync();
          const f = T.alloc_local([8], "float16", { name: "f" });
          T.ptx.ldmatrix(false, num, ".b16", f, 0, S.ptr([l, 0]));
          for (const i of T.unroll(8)) Y.set([l.mul(8).add(i)], f.get([i])); // @fragRead
        },
      );
    const args = (): KernelArg[] => [
      simTensor(
        Array.from({ length: 256 }, (_, i) => i % 512),
        { shape: [256], dtype: "float16" },
      ),
      simZeros([256], "float16"),
    ];
    const x1 = run(k(1), args);
    // Elements 2..7 of every lane's fragment: one report per element's load.
    expect(x1.lines).toEqual(Array.from({ length: 6 }, () => at("fragRead")));
    expect(x1.reports.map((r) => /"f"\[(\d)\]/.exec(r.message)?.[1])).toEqual([
      "2",
      "3",
      "4",
      "5",
      "6",
      "7",
    ]);
    expect(run(k(4), args).reports).toEqual([]);
  });

  it("mma.sync: an A fragment filled in part, or C never zeroed", () => {
    const k = (aFilled: number, zeroC: boolean): PrimFunc =>
      T.function("mma_part", { D: T.Tensor([128], "float32") }, ({ D }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const l = T.cuda.thread_idx("x");
        const a = T.alloc_local([8], "float16", { name: "a" });
        const b = T.alloc_local([4], "float16", { name: "b" });
        const c = T.alloc_local([4], "float32", { name: "c" });
        for (let i = 0; i < aFilled; i++) a.set([i], T.float16(1));
        for (let i = 0; i < 4; i++) b.set([i], T.float16(1));
        if (zeroC) for (let i = 0; i < 4; i++) c.set([i], T.float32(0));
        T.ptx.mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", a, 0, b, 0, c, 0); // @mma
        for (let i = 0; i < 4; i++) D.set([l.mul(4).add(i)], c.get([i]));
      });
    const args = (): KernelArg[] => [simZeros([128], "float32")];
    const partA = run(k(7, true), args, false);
    expect(partA.lines).toEqual([at("mma")]);
    expect(partA.reports[0]!.message).toMatch(/thread \(0, 0, 0\) .* reads local "a"\[7\]/);
    const noC = run(k(8, false), args, false);
    expect(noC.lines).toEqual([at("mma")]);
    expect(noC.reports[0]!.message).toMatch(/reads local "c"\[0\]/);
    const clean = run(k(8, true), args, false);
    expect(clean.reports).toEqual([]);
    // Every D element is the sum over k of 1·1.
    expect(values(clean.args[0]!)).toEqual(Array.from({ length: 128 }, () => 16));
  });

  it("wgmma: an accumulator never written is fine when the instruction overwrites it", () => {
    const desc = T.ptx.wgmma.encode_matrix_descriptor;
    const SWZ = { align: 1024, layout: T.swizzle_mode("128B") } as const;
    const k = (accumulate: boolean): PrimFunc =>
      T.function("wg_acc", { out: T.Tensor([128], "float32") }, ({ out }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
        const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
        fillOnes(tid, sA, sB);
        T.ptx.fence.proxy_async();
        T.cuda.cta_sync();
        const acc = T.alloc_local([8], "float32", { name: "acc" });
        T.ptx.wgmma.fence();
        const da = desc(sA.ptr([0, 0]), 16, 1024, 3);
        const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
        T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db, { scale_d: accumulate }); // @wgMma
        T.ptx.wgmma.commit_group();
        T.ptx.wgmma.wait_group(0);
        out.set([tid], acc.get([0]));
      });
    const args = (): KernelArg[] => [simZeros([128], "float32")];
    const overwrite = run(k(false), args, false);
    expect(overwrite.reports).toEqual([]);
    expect(values(overwrite.args[0]!)).toEqual(Array.from({ length: 128 }, () => 16));
    const acc = run(k(true), args, false);
    expect(acc.lines).toEqual([at("wgMma")]);
    expect(acc.reports[0]!.message).toMatch(/thread \(0, 0, 0\) .* reads local "acc"\[0\]/);
  });
});
