// The verifier's contract checks at their exact edges (a one-edit relaxation of each went
// unnoticed by the suite before): each rule's last legal value passes and the first illegal one is refused.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

/** The diagnostic code that building and verifying `build()` throws, or "ok". */
function codeOf(build: () => PrimFunc): string {
  try {
    verify(build());
  } catch (e) {
    if (isTirxError(e)) return e.code;
    throw e;
  }
  return "ok";
}

describe("TX4011: an mbarrier object is 8-byte aligned", () => {
  const k = (align: number) => () =>
    T.function(`mb_align_${align}`, {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const bars = T.alloc_shared([1], "uint64", { name: "bars", align });
      T.ptx.mbarrier.init(bars.sub(0), 1);
    });
  it("align 8 passes; align 4 (and 2) is refused", () => {
    expect(codeOf(k(8))).toBe("ok");
    expect(codeOf(k(4))).toBe("TX4011");
    expect(codeOf(k(2))).toBe("TX4011");
  });
});

describe("TX3017: a cp.async source view one element past the tensor", () => {
  /** `threads` threads each copy row tid of A ([32, 1] float32) in one 4-byte atom. */
  const k = (threads: number) => () =>
    T.function(`cp_edge_${threads}`, { A: T.Tensor([32, 1], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: threads }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64, 1], "float32");
      T.cuda.tile.apply(T.ptx["cp.async.ca.shared.global"]!, s.sub(tid, ":"), A.sub(tid, ":"), {
        chunk_bytes: 4,
      });
      T.ptx.cp.async_.wait_all();
    });
  it("32 threads read rows 0..31: ok; 33 threads reach row 32, one past the end: TX3017", () => {
    expect(codeOf(k(32))).toBe("ok");
    expect(codeOf(k(33))).toBe("TX3017");
  });
});

describe("TX4004: a bulk copy's source 8 bytes past a 16-byte boundary", () => {
  const k = (start: number) => () =>
    T.function(`bulk_off_${start}`, { A: T.Tensor([72], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tile = T.alloc_shared([64], "float32", { name: "tile" });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      T.ptx.mbarrier.init(bar.sub(0), 1);
      T.ptx.fence.mbarrier_init();
      T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 256);
      T.cuda.tile.apply(
        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!,
        tile,
        A.sub(T.slice(start, start + 64)),
        { chunk_bytes: 256, mbar: bar.sub(0) },
      );
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
    });
  it("offset 16 bytes: ok; 8 bytes: TX4004; 4 bytes: TX4004", () => {
    expect(codeOf(k(4))).toBe("ok");
    expect(codeOf(k(2))).toBe("TX4004");
    expect(codeOf(k(1))).toBe("TX4004");
  });
});

describe("TX4023: a constant innermost TMA coordinate of 8 bytes", () => {
  const LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";
  const k = (inner: number) => () =>
    T.function(`tma_inner_${inner}`, { A: T.Tensor([64, 64], "float16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tile = T.alloc_shared([32, 32], "float16", { name: "tile", align: 1024 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [32, 32], swizzle: "none" });
      T.cuda.tile.apply(T.ptx[LOAD], tile, A, {
        tensor_map: map,
        coords: [0, inner],
        mbar: bar.sub(0),
      });
    });
  it("8 elements (16 bytes): ok; 4 elements (8 bytes) and 2 (4 bytes): TX4023", () => {
    expect(codeOf(k(8))).toBe("ok");
    expect(codeOf(k(4))).toBe("TX4023");
    expect(codeOf(k(2))).toBe("TX4023");
  });
});
