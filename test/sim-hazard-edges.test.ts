// The simulator's hazard rules at their edges (a one-edit change of each went unnoticed by the
// suite before): the proxy-fence and mbarrier rules, the first and last bytes of pending async
// copies, a second unordered reader. Each kernel is clean or wrong by one fence placement or one
// byte.
import { describe, expect, it } from "vitest";
import { simCodes } from "./util/sim-codes.js";
import { T } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";
import { simTensor, simZeros } from "@tirx-ts/runtime-sim";

const STORE = "cp.async.bulk.global.shared::cta.bulk_group";
const LOAD = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes";

const B64 = () => [simZeros([64], "float32")];

/**
 * S is written through the generic proxy, then thread 0 bulk-stores S to B. `how` places the
 * fence: "global" (every writer, fence.proxy.async.global: covers global memory only),
 * "all" (every writer, fence.proxy.async: clean), "before" (thread 0 fences, then writes S
 * itself: the fence precedes the write), "third" (warp 1 writes S, warp 2 fences without having
 * synchronized with warp 1, a cta_sync, thread 0 stores).
 */
function storeKernel(how: "global" | "all" | "before" | "third" | "none"): PrimFunc {
  return T.function(`pf_${how}`, { B: T.Tensor([64], "float32") }, ({ B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 96 }) });
    const tid = T.cuda.thread_idx("x");
    const S = T.alloc_shared([64], "float32");
    if (how === "global" || how === "all" || how === "none") {
      T.if_(tid.lt(64), () => S.set([tid], T.float32(1)));
      if (how !== "none") T.ptx.fence.proxy_async(how);
    } else if (how === "before") {
      T.if_(tid.eq(0), () => {
        T.ptx.fence.proxy_async();
        for (const i of T.serial(64)) S.set([i], T.float32(2));
      });
    } else {
      T.if_(tid.eq(32), () => {
        for (const i of T.serial(64)) S.set([i], T.float32(2));
      });
      T.if_(tid.eq(64), () => T.ptx.fence.proxy_async());
    }
    T.cuda.cta_sync();
    T.if_(tid.eq(0), () => {
      T.cuda.tile.apply(T.ptx[STORE], B, S, { chunk_bytes: 256 });
      T.ptx.cp.async_.bulk.commit_group();
      T.ptx.cp.async_.bulk.wait_group(0);
    });
  });
}

describe("fence.proxy.async before a bulk store from shared memory", () => {
  it("fence.proxy.async over all state spaces after the writes: clean", () => {
    expect(simCodes(storeKernel("all"), B64)).toEqual([[], [], []]);
  });
  it("no fence after 64 threads' stores of the whole tile (one access run): TX6015", () => {
    for (const c of simCodes(storeKernel("none"), B64)) expect(c).toEqual(["TX6015"]);
  });
  it("fence.proxy.async.global does not order shared writes: TX6015", () => {
    for (const c of simCodes(storeKernel("global"), B64)) expect(c).toEqual(["TX6015"]);
  });
  it("a fence before the write it should cover: TX6015", () => {
    for (const c of simCodes(storeKernel("before"), B64)) expect(c).toEqual(["TX6015"]);
  });
  it("a third thread's fence that never saw the write: TX6015", () => {
    for (const c of simCodes(storeKernel("third"), B64)) expect(c).toEqual(["TX6015"]);
  });
});

/** Thread 0 inits the mbarrier with fence.mbarrier_init before (wrong) or after it, then a bulk load. */
function initKernel(fenceFirst: boolean): PrimFunc {
  return T.function(
    `mi_${fenceFirst ? "before" : "after"}`,
    { A: T.Tensor([32], "float32"), B: T.Tensor([32], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32], "float32");
      const bar = T.alloc_shared([1], "uint64");
      T.if_(tid.eq(0), () => {
        if (fenceFirst) T.ptx.fence.mbarrier_init();
        T.ptx.mbarrier.init(bar.sub(0), 1);
        if (!fenceFirst) T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 128);
        T.cuda.tile.apply(T.ptx[LOAD], s, A, { chunk_bytes: 128, mbar: bar.sub(0) });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      B.set([tid], s.get([tid]));
    },
  );
}

describe("fence.mbarrier_init must follow the init it publishes", () => {
  const args = () => [
    simTensor(
      Float32Array.from({ length: 32 }, (_, i) => i),
      { shape: [32], dtype: "float32" },
    ),
    simZeros([32], "float32"),
  ];
  it("after the init: clean", () => {
    expect(simCodes(initKernel(false), args)).toEqual([[], [], []]);
  });
  it("before the init: TX6016", () => {
    for (const c of simCodes(initKernel(true), args)) expect(c).toEqual(["TX6016"]);
  });
});

/** expect_tx `expect` bytes and an arrive by thread 0, complete_tx `complete` by thread 32, all wait. */
function txKernel(expect: number, complete: number): PrimFunc {
  return T.function(`tx_${expect}_${complete}`, { Out: T.Tensor([64], "int32") }, ({ Out }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const tid = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    T.if_(tid.eq(0), () => T.ptx.mbarrier.init(bar.sub(0), 1));
    T.cuda.cta_sync();
    T.if_(tid.eq(0), () => {
      T.ptx.mbarrier.expect_tx(bar.sub(0), expect);
      T.ptx.mbarrier.arrive(bar.sub(0));
    });
    T.if_(tid.eq(32), () => T.ptx.mbarrier.complete_tx(bar.sub(0), complete));
    T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    Out.set([tid], 1);
  });
}

describe("a phase whose tx-count overshot never completes", () => {
  it("too many bytes: TX6022, and the waiters then deadlock (TX6006)", () => {
    for (const c of simCodes(txKernel(64, 128), () => [simZeros([64], "int32")])) {
      expect(c).toEqual(["TX6022", "TX6006"]);
    }
  });
});

/** Thread 0 alone issues two cp.async onto the first 16 bytes of shared memory (byte 0). */
function overlapAtZero(commitBetween: boolean): PrimFunc {
  const cp = T.ptx["cp.async.ca.shared.global"]!;
  return T.function(`ov0_${commitBetween}`, { A: T.Tensor([2, 8], "float16") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const s = T.alloc_shared([1, 8], "float16");
    T.if_(tid.eq(0), () => {
      T.cuda.tile.apply(cp, s.sub(0, ":"), A.sub(0, ":"), { chunk_bytes: 16 });
      if (commitBetween) T.ptx.cp.async_.commit_group();
      T.cuda.tile.apply(cp, s.sub(0, ":"), A.sub(1, ":"), { chunk_bytes: 16 });
      T.ptx.cp.async_.wait_all();
    });
  });
}

describe("overlapping cp.async at shared byte 0", () => {
  const args = () => [
    simTensor(
      Float32Array.from({ length: 16 }, (_, i) => i),
      { shape: [2, 8], dtype: "float16" },
    ),
  ];
  it("one commit group: TX6008", () => {
    for (const c of simCodes(overlapAtZero(false), args)) expect(c).toEqual(["TX6008"]);
  });
  it("two groups, no wait between: TX6001", () => {
    for (const c of simCodes(overlapAtZero(true), args)) expect(c).toEqual(["TX6001"]);
  });
});

describe("a global write under a pending cp.async read at tensor byte 0", () => {
  it("TX6002", () => {
    const cp = T.ptx["cp.async.ca.shared.global"]!;
    const k = T.function("src0", { A: T.Tensor([2, 8], "float16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([1, 8], "float16");
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(cp, s.sub(0, ":"), A.sub(0, ":"), { chunk_bytes: 16 });
        T.ptx.cp.async_.commit_group();
        A.set([0, 0], T.float16(0));
        T.ptx.cp.async_.wait_group(0);
      });
    });
    const args = () => [
      simTensor(
        Float32Array.from({ length: 16 }, (_, i) => i),
        { shape: [2, 8], dtype: "float16" },
      ),
    ];
    for (const c of simCodes(k, args)) expect(c).toEqual(["TX6002"]);
  });
});

describe("global write-after-read with two unordered readers", () => {
  /**
   * Lane 0 of warps 0 and 1 read B[0]; warps 0 and 2 meet at bar.sync 1, 64; thread 64 then
   * writes B[0]: ordered after warp 0's read, not warp 1's. On a schedule that runs warp 0's
   * read first, warp 1's read sits in the second reader slot.
   */
  const k = T.function(
    "two_global_readers",
    { B: T.Tensor([32], "int32"), C: T.Tensor([128], "int32") },
    ({ B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 96 }) });
      const tid = T.cuda.thread_idx("x");
      T.if_(tid.floormod(32).eq(0).and(tid.lt(64)), () => C.set([tid], B.get([0])));
      T.if_(tid.lt(32).or(tid.ge(64)), () => T.cuda.bar_sync(1, 64));
      T.if_(tid.eq(64), () => B.set([0], T.int32(7)));
    },
  );
  it("every schedule reports the race with warp 1's read (TX6013, or TX6003 when the read comes last)", () => {
    const args = () => [simZeros([32], "int32"), simZeros([128], "int32")];
    for (const c of simCodes(k, args, [0, 1, 2, 3, 4, 5])) {
      expect(c.length).toBe(1);
      expect(["TX6013", "TX6003"]).toContain(c[0]);
    }
  });
});

describe("a write of the last source byte of a pending bulk store", () => {
  /** Thread 0 bulk-stores 256 uint8 of S to B and writes S[last] before wait_group.read. */
  const k = (last: number) =>
    T.function(`s2g_last_${last}`, { B: T.Tensor([256], "uint8") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([256], "uint8");
      T.if_(tid.eq(0), () => {
        for (const i of T.serial(256)) S.set([i], T.uint8(1));
        T.ptx.fence.proxy_async();
        T.cuda.tile.apply(T.ptx[STORE], B, S, { chunk_bytes: 256 });
        T.ptx.cp.async_.bulk.commit_group();
        S.set([last], T.uint8(2));
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    });
  it("first and last byte alike: TX6007", () => {
    for (const last of [0, 255]) {
      for (const c of simCodes(k(last), () => [simZeros([256], "uint8")]))
        expect(c).toEqual(["TX6007"]);
    }
  });
});
