// The PTX memory model beyond barriers (PTX ISA, "Memory Consistency Model"; membar/fence; ld;
// st; atom; red): fence.sc / fence.acq_rel at each scope, ld.relaxed/acquire, st.relaxed/release
// and atom/red with .sem and .scope. Their contracts (targets, sems, state spaces), their PTX
// (inline snapshots, assembled by ptxas), and the simulator's release/acquire patterns across
// CTAs: the last-block-done reduction runs clean with release/acquire and with fences, and
// without them the report names the missing ordering.
import { describe, expect, it } from "vitest";
import { verify, walkStmt, type PrimFunc, type Stmt } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { sim } from "tirx-ts";
import {
  inputs,
  last_block_done,
  last_block_done_fences,
  makeLastBlockDone,
  runExample,
  runLastBlockDone,
} from "../examples/last_block_done.js";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { without } from "./util/sync-mutants.js";

/** The lines of `fn`'s PTX for `arch` that hold one of `words`, trimmed. */
function ptxLines(fn: PrimFunc, arch: string, words: readonly string[]): string[] {
  const text = compileToPtx(fn, { arch }).text;
  assembleLater(text, arch, fn.name);
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => words.some((w) => l.startsWith(w)));
}

type Mode = "release" | "relaxed" | "relaxed+fence" | "release.cta" | "fence+relaxed";

/**
 * Message passing between two CTAs: CTA 0 writes Data[0..64) then sets Flag; CTA 1 (which the
 * simulator runs after CTA 0) reads Flag and, when set, copies Data to Out.
 */
function messagePassing(mode: Mode): PrimFunc {
  return T.function(
    `mp_${mode.replace(/\W/g, "_")}`,
    {
      Data: T.Tensor([64], "int32"),
      Flag: T.Tensor([1], "int32"),
      Out: T.Tensor([64], "int32"),
    },
    ({ Data, Flag, Out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      T.if_(cta.eq(0), () => {
        Data.set([tid], tid.mul(3));
        T.cuda.cta_sync();
        T.if_(tid.eq(0), () => {
          if (mode === "fence+relaxed") {
            T.ptx.fence.acq_rel("gpu");
            T.ptx.st(Flag.ptr([0]), 1, { sem: "relaxed", scope: "gpu" });
          } else {
            const scope = mode === "release.cta" ? "cta" : "gpu";
            T.ptx.st(Flag.ptr([0]), 1, { sem: "release", scope });
          }
        });
      });
      T.if_(cta.eq(1), () => {
        const sem = mode === "relaxed" || mode === "relaxed+fence" ? "relaxed" : "acquire";
        const f = T.ptx.ld(Flag.ptr([0]), { sem, scope: "gpu" });
        if (mode === "relaxed+fence") T.ptx.fence.acq_rel("gpu");
        T.if_(f.eq(1), () => Out.set([tid], Data.get([tid])));
      });
    },
  );
}

function runMp(mode: Mode): { reports: string[]; out: number[] } {
  const data = simZeros([64], "int32");
  const flag = simZeros([1], "int32");
  const out = simZeros([64], "int32");
  const r = runSim(verify(messagePassing(mode)), [data, flag, out], { hazards: "collect" });
  return { reports: r.reports.map(String), out: Array.from(out.toArray() as Int32Array) };
}

/**
 * The reports (hazards collected) of one launch of `fn`, a last_block_done kernel for the
 * example's CTA count, on its inputs, 8 partials, the counter and the output.
 */
function lastBlockDoneReports(fn: PrimFunc): string[] {
  const x = inputs();
  const t = [
    simTensor(x, { shape: [x.length], dtype: "int32" }),
    simZeros([8], "int32"),
    simZeros([1], "uint32"),
    simZeros([1], "int32"),
  ];
  return runSim(verify(fn), t, { hazards: "collect" }).reports.map(String);
}

describe("the last-block-done reduction on the simulator", () => {
  const x = inputs();
  let want = 0;
  for (const v of x) want = (want + v) | 0;

  it("with atom.acq_rel.gpu on the counter: clean, the exact sum, two launches", () => {
    const r = runExample(sim(), last_block_done);
    expect(r.ok, r.summary).toBe(true);
    expect(new Int32Array(r.outputs[0]!.buffer)[0]).toBe(want);
  });

  it("with __threadfence, a relaxed atomicAdd and fence.acq_rel.gpu: clean, the exact sum", () => {
    const r = runExample(sim(), last_block_done_fences);
    expect(r.ok, r.summary).toBe(true);
  });

  it("70 CTAs (the last CTA's threads add two partials each), fences form: clean, exact", () => {
    const { sums, want } = runLastBlockDone(sim(), makeLastBlockDone("fences", 70), 70, 1);
    expect(sums).toEqual([want]);
  });

  it("without ordering: TX6003 at the last CTA's read, naming the missing release/acquire", () => {
    const first = String(lastBlockDoneReports(makeLastBlockDone("none"))[0]);
    expect(first).toMatch(/TX6003/);
    expect(first).toMatch(/reads global "Partial" bytes \d+\.\.\d+/);
    expect(first).toMatch(
      /no release\/acquire or fence orders CTA \(\d, 0, 0\)'s write before this read/,
    );
    expect(first).toContain("Release and Acquire Patterns");
  });
});

describe("each fence of the fence form is needed", () => {
  // Removing either fence of last_block_done_fences (the release side's fence.sc.gpu before the
  // counter's atomic, the acquire side's fence.acq_rel.gpu after it) leaves the partials
  // unordered; the counter's own atomics stay ordered by observation.
  for (const op of ["fence.sc.gpu", "fence.acq_rel.gpu"]) {
    it(`without ${op}: TX6003 at the last CTA's read of a partial`, () => {
      let target: Stmt | undefined;
      walkStmt(last_block_done_fences.body, (s) => {
        if (s.kind === "Call" && s.op === op) target = s;
      });
      const reports = lastBlockDoneReports(without(last_block_done_fences, target!));
      expect(reports[0]).toMatch(
        /TX6003.*reads global "Partial".*no release\/acquire or fence orders/,
      );
    });
  }
});

describe("release and acquire patterns between two CTAs", () => {
  it("st.release.gpu observed by ld.acquire.gpu orders the data: clean, the data copied", () => {
    const r = runMp("release");
    expect(r.reports).toEqual([]);
    expect(r.out).toEqual(Array.from({ length: 64 }, (_, i) => 3 * i));
  });

  it("fence.acq_rel then st.relaxed is a release pattern", () => {
    expect(runMp("fence+relaxed").reports).toEqual([]);
  });

  it("ld.relaxed then fence.acq_rel is an acquire pattern", () => {
    expect(runMp("relaxed+fence").reports).toEqual([]);
  });

  it("ld.relaxed alone acquires nothing: the data read races", () => {
    const r = runMp("relaxed");
    expect(r.reports[0]).toMatch(/TX6003.*reads global "Data"/);
  });

  it("a release at cta scope is not morally strong with another CTA's acquire", () => {
    // Not morally strong, the flag's store and load race themselves (PTX ISA, "Morally strong
    // operations"), and the release orders nothing for the data read.
    const { reports } = runMp("release.cta");
    expect(reports[0]).toMatch(
      /TX6003.*reads global "Flag".*the scope of the st\.release\.cta does not include thread \(0, 0, 0\) of CTA \(1, 0, 0\)/,
    );
    expect(reports.some((r) => /TX6003.*reads global "Data"/.test(r))).toBe(true);
  });
});

/** Warp 0 writes Data then sets a shared flag; warp 1 reads the flag and, when set, Data. */
function sameCta(sem: "acquire" | "relaxed"): PrimFunc {
  return T.function(
    `same_cta_${sem}`,
    { Data: T.Tensor([32], "int32"), Out: T.Tensor([32], "int32") },
    ({ Data, Out }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const flag = T.alloc_shared([1], "int32", { name: "flag" });
      T.if_(tid.eq(0), () => flag.set([0], 0));
      T.cuda.cta_sync();
      T.if_(tid.lt(32), () => {
        Data.set([tid], tid.add(1));
        T.cuda.__syncwarp();
        T.if_(tid.eq(0), () => T.ptx.st(flag.ptr([0]), 1, { sem: "release", scope: "cta" }));
      });
      T.if_(tid.ge(32), () => {
        const f = T.ptx.ld(flag.ptr([0]), { sem, scope: "cta" });
        T.if_(f.eq(1), () => Out.set([tid.sub(32)], Data.get([tid.sub(32)])));
      });
    },
  );
}

describe("release and acquire within a CTA, through a shared flag", () => {
  it("st.release.cta observed by ld.acquire.cta orders warp 0's stores before warp 1's loads", () => {
    const out = simZeros([32], "int32");
    const r = runSim(verify(sameCta("acquire")), [simZeros([32], "int32"), out], {
      hazards: "collect",
    });
    expect(r.reports.map(String)).toEqual([]);
    expect(Array.from(out.toArray() as Int32Array)).toEqual(
      Array.from({ length: 32 }, (_, i) => i + 1),
    );
  });

  it("ld.relaxed.cta alone: warp 1's load of Data races (TX6003)", () => {
    const r = runSim(
      verify(sameCta("relaxed")),
      [simZeros([32], "int32"), simZeros([32], "int32")],
      { hazards: "collect" },
    );
    expect(r.reports.map((e) => e.code)).toContain("TX6003");
  });
});

describe("contracts", () => {
  it("cluster scope needs sm_90 (TX4007), the other scopes sm_70", () => {
    const fn = T.function("cl", { A: T.Tensor([4], "uint32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      T.cuda.atomic_add(A.ptr([0]), 1, { sem: "acq_rel", scope: "cluster" });
    });
    const e = errorOf(() => compileToPtx(fn, { arch: "sm_80" }));
    expect(e.code).toBe("TX4007");
    expect(e.message).toContain("atom with .cluster scope needs sm_90");
    const f2 = T.function("fc", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      T.ptx.fence.sc("cluster");
    });
    expect(errorOf(() => compileToPtx(f2, { arch: "sm_80" })).code).toBe("TX4007");
  });

  it("each op takes only its PTX sems (TX2010)", () => {
    const e1 = errorOf(() =>
      T.function("a", { A: T.Tensor([4], "uint32") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.ptx.ld(A.ptr([0]), { sem: "release", scope: "gpu" });
      }),
    );
    expect(e1.code).toBe("TX2010");
    expect(e1.message).toContain('T.ptx.ld takes sem "relaxed", "acquire", got "release"');
    const e2 = errorOf(() =>
      T.function("b", { A: T.Tensor([4], "uint32") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.cuda.red_add(A.ptr([0]), 1, { sem: "acquire" });
      }),
    );
    expect(e2.code).toBe("TX2010");
    const e3 = errorOf(() =>
      T.function("c", { A: T.Tensor([4], "uint32") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.ptx.st(A.ptr([0]), 1, { sem: "acq_rel" });
      }),
    );
    expect(e3.code).toBe("TX2010");
  });

  it("a local buffer is no state space of ld/st/atom (TX2009); bad options are TX1002", () => {
    const e = errorOf(() =>
      T.function("d", {}, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const l = T.alloc_local([2], "uint32");
        T.ptx.ld(l.ptr([0]), { sem: "acquire" });
      }),
    );
    expect(e.code).toBe("TX2009");
    const o = errorOf(() =>
      T.function("e", { A: T.Tensor([4], "uint32") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.ptx.ld(A.ptr([0]), { sem: "acquire", scope: "device" as never });
      }),
    );
    expect(o.code).toBe("TX1002");
    expect(o.message).toContain(
      'T.ptx.ld: scope must be one of "cta", "cluster", "gpu", "sys", got "device"',
    );
  });
});

describe("PTX", () => {
  it("the last-block-done kernels' ordering instructions", () => {
    const words = ["fence.", "atom.", "red.", "ld.acquire", "st.release"];
    expect(ptxLines(last_block_done, "sm_80", words)).toMatchInlineSnapshot(`
      [
        "atom.acq_rel.gpu.global.add.u32 %r36, [%rd6], %r37;",
      ]
    `);
    expect(ptxLines(last_block_done_fences, "sm_80", words)).toMatchInlineSnapshot(`
      [
        "fence.sc.gpu;",
        "atom.global.add.u32 %r36, [%rd6], %r37;",
        "fence.acq_rel.gpu;",
      ]
    `);
  });

  it("ld/st with sem and scope, on global and shared, every fence, red with release", () => {
    const fn = T.function(
      "all_orders",
      { A: T.Tensor([4], "uint64"), B: T.Tensor([4], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32, cluster: [2, 1, 1] }) });
        const s = T.alloc_shared([4], "int32", { name: "s" });
        T.ptx.st(s.ptr([0]), 5, { sem: "release", scope: "cta" });
        const v = T.ptx.ld(s.ptr([0]), { sem: "acquire", scope: "cluster" });
        T.ptx.st(A.ptr([1]), v.cast("uint64"), { sem: "relaxed", scope: "sys" });
        const w = T.ptx.ld(B.ptr([0]), { sem: "relaxed", scope: "gpu" });
        T.ptx.st(B.ptr([1]), w, { sem: "release", scope: "gpu" });
        for (const sem of ["sc", "acq_rel"] as const) {
          for (const scope of ["cta", "cluster", "gpu", "sys"] as const) T.ptx.fence[sem](scope);
        }
        T.cuda.threadfence();
        T.cuda.threadfence_block();
        T.cuda.threadfence_system();
        T.cuda.red_add(A.ptr([2]), 1n, { sem: "release", scope: "gpu" });
        T.cuda.atomic_cas(A.ptr([3]), 0n, 1n, { sem: "acquire", scope: "cta" });
        T.cuda.atomic_exch(s.ptr([1]), 2, { sem: "acq_rel", scope: "cluster" });
      },
    );
    expect(
      ptxLines(fn, "sm_90", ["fence.", "atom.", "red.", "ld.", "st."]).filter(
        (l) => !l.startsWith("ld.param"),
      ),
    ).toMatchInlineSnapshot(`
      [
        "st.release.cta.shared.s32 [%r1], %r2;",
        "ld.acquire.cluster.shared.s32 %r3, [%r1];",
        "st.relaxed.sys.global.u64 [%rd2+8], %rd5;",
        "ld.relaxed.gpu.global.f32 %f1, [%rd4];",
        "st.release.gpu.global.f32 [%rd4+4], %f1;",
        "fence.sc.cta;",
        "fence.sc.cluster;",
        "fence.sc.gpu;",
        "fence.sc.sys;",
        "fence.acq_rel.cta;",
        "fence.acq_rel.cluster;",
        "fence.acq_rel.gpu;",
        "fence.acq_rel.sys;",
        "fence.sc.gpu;",
        "fence.sc.cta;",
        "fence.sc.sys;",
        "red.release.gpu.global.add.u64 [%rd2+16], %rd6;",
        "atom.acquire.cta.global.cas.b64 %rd7, [%rd2+24], %rd8, %rd9;",
        "atom.acq_rel.cluster.shared.exch.b32 %r4, [%r1+4], %r5;",
      ]
    `);
  });
});
