// The verifier's whole-kernel checks report every independent error of a kernel, not the first
// (issue 21): expect_tx against the bulk copies (TX4008), wgmma.fence before a mma_async
// (TX7011), a loop's form (TX2012, TX2016) and the cluster dims (TX4025). Each error is checked
// by code and line, in `TirxError.all`, sorted by position.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { PrimExpr, T } from "@tirx-ts/dsl";
import { intImm, isTirxError, verify, type PrimFunc, type TirxError } from "@tirx-ts/core";

const SOURCE = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
/** The line of this file that ends with `marker`. */
const lineOf = (marker: string): number =>
  SOURCE.findIndex((l) => l.trimEnd().endsWith(marker)) + 1;

/** The TirxError verifying `fn` throws. */
function failure(fn: PrimFunc): TirxError {
  try {
    verify(fn);
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("expected verify to throw");
}

const codesAndLines = (e: TirxError): [string, number | undefined][] =>
  e.all.map((x) => [x.code, x.span?.line]);

const G2S = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes";
const desc = T.ptx.wgmma.encode_matrix_descriptor;
const SWZ = { align: 1024, layout: T.swizzle_mode("128B") } as const;

describe("every error of a whole-kernel check", () => {
  test("two bad expect_tx sites and two unfenced mma_asyncs: all four, sorted (TX4008, TX7011)", () => {
    const fn = T.function(
      "many",
      { A: T.Tensor([64, 64], "float32"), B: T.Tensor([64, 64], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const t1 = T.alloc_shared([64, 64], "float32", { name: "t1" });
        const t2 = T.alloc_shared([64, 64], "float32", { name: "t2" });
        const bar = T.alloc_shared([2], "uint64", { name: "bar" });
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
        const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
        const acc = T.alloc_local([8], "float32", { name: "acc" });
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.mbarrier.init(bar.sub(1), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 8192); // @expect1
          const [d, s] = [t1.rearrange("r c -> (r c)"), A.rearrange("r c -> (r c)")];
          T.cuda.tile.apply(T.ptx[G2S], d, s, { chunk_bytes: 16384, mbar: bar.sub(0) }); // @copy1
        });
        const da = desc(sA.ptr([0, 0]), 16, 1024, 3);
        const db = desc(sB.ptr([0, 0]), 16, 1024, 3);
        T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db); // @mma1
        T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db, { scale_d: 1 }); // @mma2
        T.ptx.wgmma.fence();
        T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db, { scale_d: 1 });
        T.ptx.wgmma.commit_group();
        T.ptx.wgmma.wait_group(0);
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(1), 32768); // @expect2
          const [d, s] = [t2.rearrange("r c -> (r c)"), B.rearrange("r c -> (r c)")];
          T.cuda.tile.apply(T.ptx[G2S], d, s, { chunk_bytes: 16384, mbar: bar.sub(1) }); // @copy2
        });
      },
    );
    const e = failure(fn);
    expect(codesAndLines(e)).toEqual([
      ["TX4008", lineOf("// @expect1")],
      ["TX7011", lineOf("// @mma1")],
      ["TX7011", lineOf("// @mma2")],
      ["TX4008", lineOf("// @expect2")],
    ]);
    // Each expect_tx names its own copy, and says which way it is wrong.
    expect(e.all[0]!.notes.map((n) => n.span?.line)).toEqual([lineOf("// @copy1")]);
    expect(e.all[0]!.text).toMatch(
      /announces 8192 bytes.*complete 16384 bytes.*complete before all bytes land/,
    );
    expect(e.all[3]!.notes.map((n) => n.span?.line)).toEqual([lineOf("// @copy2")]);
    expect(e.all[3]!.text).toMatch(/announces 32768 bytes.*complete 16384 bytes.*never complete/);
  });

  test("a loop too long to unroll with a collective in its bound: both (TX2012, TX2016); two loops: each", () => {
    const fn = T.function("loops", { A: T.Tensor([32], "int32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      // The T surface binds collectives to a variable first; IR built otherwise is refused.
      const shfl = (): PrimExpr =>
        new PrimExpr({
          kind: "CallExpr",
          op: "shfl.sync.idx",
          args: [intImm(0xffffffff, "uint32"), A.get([0]).expr, intImm(0), intImm(32)],
          dtype: "int32",
        });
      for (const i of T.unroll(shfl())) A.set([i], 0); // @loop1
      for (const i of T.unroll(5000)) A.set([i.floormod(32)], 1); // @loop2
      for (const i of T.range(shfl())) A.set([i], 2); // @loop3
    });
    const e = failure(fn);
    expect(codesAndLines(e)).toEqual([
      ["TX2012", lineOf("// @loop1")],
      ["TX2016", lineOf("// @loop1")],
      ["TX2012", lineOf("// @loop2")],
      ["TX2016", lineOf("// @loop3")],
    ]);
  });

  test("a cluster of too many CTAs that tiles neither grid axis: three errors (TX4025)", () => {
    const fn = T.function("clusters", { A: T.Tensor([32], "int32") }, ({ A }) => {
      const launch = T.cuda.LaunchConfig({ grid: [6, 6, 1], block: 32, cluster: [4, 4, 1] });
      T.device_entry({ launch }); // @cluster
      A.set([T.cuda.thread_idx("x")], 0);
    });
    const e = failure(fn);
    const line = lineOf("// @cluster");
    expect(e.all.map((x) => [x.code, x.span?.line, x.text])).toEqual([
      ["TX4025", line, "a cluster of (4, 4, 1) holds 16 CTAs; at most 8 are portable"],
      ["TX4025", line, "grid x = 6 is not a multiple of the cluster's 4"],
      ["TX4025", line, "grid y = 6 is not a multiple of the cluster's 4"],
    ]);
  });
});
