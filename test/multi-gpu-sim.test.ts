// Kernels that span GPUs on the simulator: runSim's `pes` runs one simulated GPU per PE, the
// PEs' CTAs of one index together (warps of every PE interleaved), T.nvshmem on symmetric
// tensors (leading dim = PE). The examples (examples/multi_gpu/) match the host's exact results
// on 2 and 4 PEs with no report; leaving out a signal wait is a race naming both lines; a signal
// no PE sends is a deadlock naming the signal, the PE and the warp; a remote access past the
// shard and a peer out of range are reported.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { verify, type TirxError } from "@tirx-ts/core";
import { T, type TileView } from "@tirx-ts/dsl";
import { runSim, simZeros } from "@tirx-ts/runtime-sim";
import { checkAllreduce } from "../examples/multi_gpu/allreduce.js";
import { checkAllgatherGemm } from "../examples/multi_gpu/allgather_gemm.js";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { SYMMETRIC_GRANULARITY, symmetricShard } from "@tirx-ts/runtime-cuda";
import { makeAllreduce } from "../examples/multi_gpu/allreduce.js";
import { makeAllgatherGemm } from "../examples/multi_gpu/allgather_gemm.js";
import { errorOf } from "./util/error-of.js";
import { exchangeMismatches, makeBarrierExchange } from "./util/barrier-exchange.js";
import { assembleLater } from "./util/ptxas-deferred.js";

/** The 1-based line of the first line of `file` (under examples/multi_gpu/) containing `text`. */
function lineOf(file: string, text: string): number {
  const src = readFileSync(
    fileURLToPath(new URL(`../examples/multi_gpu/${file}`, import.meta.url)),
    "utf8",
  ).split("\n");
  const i = src.findIndex((l) => l.includes(text));
  expect(i, text).toBeGreaterThanOrEqual(0);
  return i + 1;
}

/** The 1-based line of this file that holds `marker`. */
const lineOfThisFile = (marker: string): number =>
  readFileSync(fileURLToPath(import.meta.url), "utf8")
    .split("\n")
    .findIndex((l) => l.includes(marker)) + 1;

/** Codes of the reports. */
const codes = (rs: readonly TirxError[]): string[] => rs.map((r) => r.code);

describe("all-reduce on simulated GPUs", () => {
  it.each([
    ["one_shot", 2, "bfloat16", 0],
    ["one_shot", 4, "float32", 7],
    ["two_shot", 2, "float32", 3],
    ["two_shot", 4, "bfloat16", 0],
  ] as const)("%s on %i PEs, %s, seed %i: the host's sum, no report", (kind, pes, dtype, seed) => {
    const r = checkAllreduce(kind, { pes, n: pes * 64, dtype }, seed);
    expect(r.reports.map(String)).toEqual([]);
    expect(r.ok, r.summary).toBe(true);
  });

  it("without the signal wait, the read of a peer's put is a race naming both lines and PEs", () => {
    const r = checkAllreduce("one_shot", { pes: 2, n: 128, dtype: "float32", wait: false });
    const race = r.reports.find((e) => e.code === "TX6003");
    expect(race, codes(r.reports).join()).toBeDefined();
    expect(race!.span?.line).toBe(lineOf("allreduce.ts", "Stage.get([me, q, i])"));
    expect(race!.notes[0]!.span?.line).toBe(
      lineOf("allreduce.ts", "T.nvshmem.put_signal(Stage, [me, 0], X, [me, 0]"),
    );
    expect(race!.message).toMatch(
      /on PE 1 reads global "Stage".*on PE 0 wrote with nothing ordering the two across PEs/,
    );
  });
});

describe("all-gather overlapped with a GEMM on simulated GPUs", () => {
  it.each([2, 4])("%i PEs: the host's product, no report", (pes) => {
    const r = checkAllgatherGemm({ pes, mp: 4, k: 8, n: 8 }, pes === 4 ? 5 : 0);
    expect(r.reports.map(String)).toEqual([]);
    expect(r.ok, r.summary).toBe(true);
  });

  it("without the waits, the GEMM's read of a peer's block is a race naming both lines", () => {
    const r = checkAllgatherGemm({ pes: 2, mp: 4, k: 8, n: 8, wait: false });
    const race = r.reports.find((e) => e.code === "TX6003");
    expect(race, codes(r.reports).join()).toBeDefined();
    expect(race!.span?.line).toBe(lineOf("allgather_gemm.ts", "A.get([me, row.mul(K)"));
    expect(race!.notes[0]!.span?.line).toBe(lineOf("allgather_gemm.ts", "T.nvshmem.put_signal("));
  });
});

/** A kernel of one warp per PE: Out [P, 2] gets my_pe and n_pes; `body` runs after. */
function peKernel(pes: number, body: (h: { Sig: TileView; Buf: TileView }) => void = () => {}) {
  return T.function(
    "pe_kernel",
    {
      Out: T.Tensor([pes, 2], "int32"),
      Buf: T.Tensor([pes, 32], "float32"),
      Sig: T.Tensor([pes, 2], "uint64"),
    },
    ({ Out, Buf, Sig }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const me = T.nvshmem.my_pe();
      T.if_(T.cuda.thread_idx("x").eq(0), () => {
        Out.set([me, 0], me);
        Out.set([me, 1], T.nvshmem.n_pes());
      });
      body({ Sig, Buf });
    },
  );
}

/** Run a peKernel on `pes` PEs, hazards collected. */
function runPe(fn: ReturnType<typeof peKernel>, pes: number) {
  const out = simZeros([pes, 2], "int32");
  const r = runSim(
    verify(fn),
    [out, simZeros([pes, 32], "float32"), simZeros([pes, 2], "uint64")],
    {
      pes,
      hazards: "collect",
    },
  );
  return { out: Array.from(out.toArray() as ArrayLike<number>), reports: r.reports };
}

describe("T.nvshmem on the simulator", () => {
  it("my_pe and n_pes: each PE's index and the PE count", () => {
    for (const pes of [1, 3]) {
      const { out, reports } = runPe(peKernel(pes), pes);
      expect(reports).toEqual([]);
      expect(out).toEqual(Array.from({ length: pes }, (_, p) => [p, pes]).flat());
    }
  });

  it("a signal that no PE sends: TX6006 naming the signal word, the PE and the warp", () => {
    const fn = T.function(
      "never_signalled",
      { Sig: T.Tensor([2, 2], "uint64"), Buf: T.Tensor([2, 32], "float32") },
      ({ Sig, Buf }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const me = T.nvshmem.my_pe();
        // PE 0 signals word 0 of PE 1; PE 1 waits for word 1, which nobody sets.
        T.if_(me.eq(0), () =>
          T.nvshmem.put_signal(Buf, [0], Buf, [me, 0], 32, Sig, [0], 1, "set", 1, {
            scope: "warp",
          }),
        );
        T.if_(me.eq(1), () => T.nvshmem.signal_wait_until(Sig, [1], "eq", 1));
      },
    );
    const r = runSim(verify(fn), [simZeros([2, 2], "uint64"), simZeros([2, 32], "float32")], {
      pes: 2,
      hazards: "collect",
    });
    expect(codes(r.reports)).toEqual(["TX6006"]);
    expect(r.reports[0]!.message).toMatch(
      /PE 1 warp 0 \(thread \(0, 0, 0\) of CTA \(0, 0, 0\) on PE 1\) waits forever in signal_wait_until for Sig\[1, 1\] == 1: it holds 0/,
    );
    expect(
      r.reports[0]!.notes.some((n) => n.message === "the signal tensor is declared here"),
    ).toBe(true);
  });

  it("a put past the peer's shard is refused (TX2006) or out of bounds (TX6005); a dynamic peer out of range too", () => {
    // Past the row of the shard at a start the verifier bounds: the row's axis names it.
    const past = peKernel(2, ({ Buf }) => {
      const me = T.nvshmem.my_pe();
      T.nvshmem.put(Buf, [16], Buf, [me, 0], 32, T.sub(1, me), { scope: "warp" }); // PUT-PAST
    });
    const e = errorOf(() => verify(past));
    expect(e.code).toBe("TX2006");
    expect(e.message).toContain('axis 1 of "Buf" (extent 32): index 16 + k reaches 47');
    expect(e.span?.line).toBe(lineOfThisFile("// PUT-PAST"));
    // At a start only the launch knows (n_pes · 8 = 16), the simulator names it.
    const late = peKernel(2, ({ Buf }) => {
      const me = T.nvshmem.my_pe();
      const at = T.nvshmem.n_pes().mul(8);
      T.nvshmem.put(Buf, [at], Buf, [me, 0], 32, T.sub(1, me), { scope: "warp" });
    });
    expect(codes(runPe(late, 2).reports)).toContain("TX6005");
    const peer = peKernel(2, ({ Buf }) => {
      const me = T.nvshmem.my_pe();
      T.nvshmem.put(Buf, [0], Buf, [me, 0], 1, me.add(2));
    });
    const r = runPe(peer, 2).reports;
    expect(codes(r)).toContain("TX6005");
    expect(String(r[0])).toMatch(/Buf/);
  });

  it("static contracts: a peer out of range, a signal not uint64, a tensor not symmetric", () => {
    expect(
      errorOf(() => peKernel(2, ({ Buf }) => T.nvshmem.put(Buf, [0], Buf, [0, 0], 4, 2))).code,
    ).toBe("TX1005");
    expect(
      errorOf(() => peKernel(2, ({ Buf }) => T.nvshmem.signal_wait_until(Buf, [0], "ge", 1))).code,
    ).toBe("TX2005");
    const local = errorOf(() =>
      T.function("not_symmetric", { X: T.Tensor([32], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.nvshmem.put(X, [0], X, [0], 4, 0);
      }),
    );
    expect(local.code).toBe("TX2009");
  });

  it("a warp-scope put called by half a warp is reported at its __syncwarp (TX6011)", () => {
    const half = peKernel(2, ({ Buf }) => {
      const me = T.nvshmem.my_pe();
      T.if_(T.cuda.thread_idx("x").lt(16), () =>
        T.nvshmem.put(Buf, [0], Buf, [me, 0], 32, me, { scope: "warp" }),
      );
    });
    expect(codes(runPe(half, 2).reports)).toContain("TX6011");
  });

  it("barrier_all orders a put before the peer's read; a cta-scope put by part of the CTA is TX6009", () => {
    const exchange = (barrier: boolean) =>
      peKernel(2, ({ Buf }) => {
        const me = T.nvshmem.my_pe();
        // Own [0, 16) to the peer's [16, 32); after the barrier, read what the peer put here.
        T.nvshmem.put(Buf, [16], Buf, [me, 0], 16, T.sub(1, me), { scope: "warp" });
        if (barrier) T.nvshmem.barrier_all();
        const lane = T.floormod(T.cuda.thread_idx("x"), 16);
        T.if_(Buf.get([me, lane.add(16)]).gt(1), () => Buf.set([me, 0], 1));
      });
    expect(runPe(exchange(true), 2).reports.map(String)).toEqual([]);
    expect(codes(runPe(exchange(false), 2).reports)).toContain("TX6003");
    const part = T.function("part_cta", { Buf: T.Tensor([2, 64], "float32") }, ({ Buf }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const me = T.nvshmem.my_pe();
      T.if_(T.cuda.thread_idx("x").lt(32), () =>
        T.nvshmem.put(Buf, [0], Buf, [me, 0], 64, me, { scope: "cta" }),
      );
    });
    const r = runSim(verify(part), [simZeros([2, 64], "float32")], { pes: 2, hazards: "collect" });
    expect(codes(r.reports)).toContain("TX6009");
  });

  it("barrier_all over 3 CTAs in 2 rounds: each PE reads what the previous PE stored, no report; without it a race", () => {
    const s = { pes: 2, ctas: 3, threads: 32, rounds: 2, shard: 192 };
    for (const seed of [0, 5]) {
      const out = simZeros([2, 192], "float32");
      const r = runSim(verify(makeBarrierExchange(s)), [simZeros([2, 192], "float32"), out], {
        pes: 2,
        hazards: "collect",
        simSeed: seed,
      });
      expect(r.reports.map(String)).toEqual([]);
      const got = Array.from(out.toArray() as ArrayLike<number>);
      for (const p of [0, 1]) expect(exchangeMismatches(s, p, got.slice(p * 192))).toBe(0);
    }
    const racy = makeBarrierExchange({ ...s, barrier: false });
    const r = runSim(verify(racy), [simZeros([2, 192], "float32"), simZeros([2, 192], "float32")], {
      pes: 2,
      hazards: "collect",
    });
    expect(codes(r.reports)).toContain("TX6003");
  });

  it("more than 8 PEs, or PEs × threads over 1024, are refused", () => {
    expect(errorOf(() => runPe(peKernel(9), 9)).code).toBe("TX1002");
    const big = T.function("big", { X: T.Tensor([2, 1], "int32") }, ({ X }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1024 }) });
      T.if_(T.cuda.thread_idx("x").eq(0), () => X.set([T.nvshmem.my_pe(), 0], 1));
    });
    expect(errorOf(() => runSim(verify(big), [simZeros([2, 1], "int32")], { pes: 2 })).code).toBe(
      "TX2010",
    );
  });
});

describe("symmetric shards", () => {
  it("symmetricShard grows the leading dim to whole granules and keeps the rest", () => {
    expect(symmetricShard([2], "uint64")).toEqual([262144]);
    expect(symmetricShard([4, 128], "bfloat16")).toEqual([8192, 128]);
    // A 4000-byte row shares 32 with 2 MiB: 65536 rows (262 MB); flattened, only the tail pads.
    expect(symmetricShard([3, 1000], "float32")).toEqual([65536, 1000]);
    expect(symmetricShard([3000], "float32")).toEqual([524288]);
    expect(symmetricShard([5, 3], "float32", 1)).toEqual([5, 3]);
    expect(symmetricShard([300000], "bfloat16")).toEqual([1048576]);
    expect(() => symmetricShard([], "float32")).toThrow(/symmetricShard takes a shard/);
  });
});

describe("the direct path's PTX (sm_90a)", () => {
  it("PE registers from the module state, signals as red/atom.release.sys, waits as ld.acquire.sys polls; assembled by ptxas", () => {
    const fn = makeAllreduce("one_shot", { pes: 2, n: 128, dtype: "bfloat16" });
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    assembleLater(text, "sm_90a", fn.name);
    const gemm = makeAllgatherGemm({ pes: 2, mp: 4, k: 8, n: 8 });
    assembleLater(compileToPtx(gemm, { arch: "sm_90a" }).text, "sm_90a", gemm.name);
    const lines = text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /nvshmem|\.sys|setp\.hs/.test(l));
    expect(lines).toMatchInlineSnapshot(`
      [
        ".visible .global .align 8 .u32 tirx_nvshmem_state[2];",
        "ld.global.u32 %r1, [tirx_nvshmem_state+0];",
        "red.release.sys.global.add.u64 [%rd8], %rd11;",
        "red.release.sys.global.add.u64 [%rd8+16], %rd14;",
        "ld.global.u32 %r13, [tirx_nvshmem_state+0];",
        "ld.acquire.sys.global.u64 %rd16, [%rd15];",
        "setp.hs.u64 %p5, %rd16, %rd17;",
      ]
    `);
  });

  it("barrier_all: thread 0 arrives on every PE's counter (.release.sys) and spins on its own (.acquire.sys); assembled by ptxas", () => {
    const fn = peKernel(2, () => T.nvshmem.barrier_all());
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    assembleLater(text, "sm_90a", "barrier_all");
    const lines = text
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => /nvshmem_barrier|\.sys|barrier\.sync|div\.u64|trap|%ctaid/.test(l));
    expect(lines).toMatchInlineSnapshot(`
      [
        ".visible .global .align 8 .u64 tirx_nvshmem_barrier[3];",
        "barrier.sync 0;",
        "mov.u32 %r9, %ctaid.z;",
        "mov.u32 %r8, %ctaid.y;",
        "mov.u32 %r8, %ctaid.x;",
        "ld.global.u64 %rd10, [tirx_nvshmem_barrier+0];",
        "ld.global.u64 %rd11, [tirx_nvshmem_barrier+8];",
        "ld.global.u64 %rd12, [tirx_nvshmem_barrier+16];",
        "@%p2 trap;",
        "atom.release.sys.global.add.u64 %rd16, [%rd14], 1;",
        "@!%p3 red.release.sys.global.add.u64 [%rd15], 1;",
        "div.u64 %rd18, %rd16, %rd17;",
        "ld.acquire.sys.global.u64 %rd19, [%rd14];",
        "barrier.sync 0;",
      ]
    `);
  });

  it("the examples with shards padded to the 2 MiB granularity (as on H100/H200) assemble", () => {
    const g = SYMMETRIC_GRANULARITY;
    for (const kind of ["one_shot", "two_shot"] as const) {
      const fn = makeAllreduce(kind, { pes: 2, n: 4096, dtype: "bfloat16", granularity: g });
      expect(fn.params.map((p) => (p.kind === "buffer" ? p.buffer.shape : []))).toEqual([
        [2, 1048576],
        [2, 1048576],
        [2, 256, 4096],
        [2, 262144],
      ]);
      assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", fn.name);
    }
    const gemm = makeAllgatherGemm({ pes: 2, mp: 64, k: 64, n: 64, granularity: g });
    expect(gemm.params.map((p) => (p.kind === "buffer" ? p.buffer.shape : []))).toEqual([
      [2, 524288],
      [64, 64],
      [2, 8192, 64],
      [2, 262144],
    ]);
    assembleLater(compileToPtx(gemm, { arch: "sm_90a" }).text, "sm_90a", gemm.name);
  });
});
