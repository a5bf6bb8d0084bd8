// Issue 5: the cp.async.bulk and mbarrier contracts. Every rule has an accepted input and a
// refused one, refused with its own TirxError code at the author's line (marked BULK-* below).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
  T,
  TirxError,
  compileToPtx,
  verify,
  type PrimExpr,
  type PrimFunc,
  type TileView,
} from "tirx-ts";
import { assemblePtx } from "../util/ptxas.js";

const FILE = fileURLToPath(import.meta.url);
const SOURCE = readFileSync(FILE, "utf8").split("\n");
const lineOf = (marker: string): number =>
  SOURCE.findIndex((l) => l.trimEnd().endsWith(marker)) + 1;

const G2S = "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes";
const S2G = "cp.async.bulk.global.shared::cta.bulk_group";

interface H {
  A: TileView;
  B: TileView;
  tile: TileView;
  bar: TileView;
  tid: PrimExpr;
  n: PrimExpr;
}

interface Variant {
  opcode?: string;
  params?: (h: H) => Record<string, unknown>;
  views?: (h: H) => [TileView, TileView];
  expect?: (h: H) => void;
  barDtype?: "uint64" | "uint32";
}

/** A one-tile kernel: A (64×64 float32) → shared → B, thread 0 issues; variants break one rule. */
function kernel(v: Variant = {}): PrimFunc {
  return T.function(
    "bulk",
    { A: T.Tensor([64, 64], "float32"), B: T.Tensor([64, 64], "float32"), n: T.uint32 },
    ({ A, B, n }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const tile = T.alloc_shared([64, 64], "float32", { name: "tile" });
      const bar = T.alloc_shared([1], v.barDtype ?? "uint64", { name: "bar" });
      const h: H = { A, B, tile, bar, tid, n };
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1); // BULK-INIT
        T.ptx.fence.mbarrier_init();
        if (v.expect) v.expect(h);
        else T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 16384); // BULK-EXPECT
        const [dst, src] = v.views
          ? v.views(h)
          : [tile.rearrange("r c -> (r c)"), A.rearrange("r c -> (r c)")];
        const params = v.params ? v.params(h) : { chunk_bytes: 16384, mbar: bar.sub(0) };
        T.cuda.tile.apply(T.ptx[v.opcode ?? G2S], dst, src, params); // BULK-APPLY
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      T.if_(tid.eq(0), () => {
        T.cuda.tile.apply(T.ptx[S2G], B, tile, { chunk_bytes: 256 });
        T.ptx.cp.async_.bulk.commit_group();
        T.ptx.cp.async_.bulk.wait_group(0);
      });
    },
  );
}

function refused(v: Variant): TirxError {
  try {
    verify(kernel(v));
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("expected a TirxError, but the kernel verified");
}

const APPLY = lineOf("// BULK-APPLY");

describe("cp.async.bulk tile pattern", () => {
  test("the one-tile kernel verifies, emits PTX 8.6 for sm_90 and assembles", () => {
    const m = compileToPtx(kernel(), { arch: "sm_90" });
    expect(m.version).toBe("8.6");
    expect(m.text).toContain(`${G2S} [`);
    assemblePtx(m.text, "sm_90");
  });

  test("the .shared::cluster spelling needs only PTX 8.0", () => {
    const m = compileToPtx(kernel({ opcode: G2S.replace("shared::cta", "shared::cluster") }), {
      arch: "sm_90",
    });
    expect(m.version).toBe("8.0");
    assemblePtx(m.text, "sm_90");
  });

  test("compiling for sm_80 is refused with the target error (TX4007)", () => {
    expect(() => compileToPtx(kernel(), { arch: "sm_80" })).toThrow(
      expect.objectContaining({ code: "TX4007" }),
    );
  });

  test.each([
    [
      "an unknown completion mechanism (TX4001)",
      { opcode: "cp.async.bulk.shared::cta.global.bulk_group" },
      "TX4001",
    ],
    ["a misspelled qualifier (TX4001)", { opcode: `${G2S}.L2::cache_hnt` }, "TX4001"],
    [".ignore_oob, which needs PTX 9.2 (TX4009)", { opcode: `${G2S}.ignore_oob` }, "TX4009"],
    [
      "an unknown parameter (TX4002)",
      { params: (h: H) => ({ chunk_bytes: 16384, mbar: h.bar.sub(0), src_size: 16 }) },
      "TX4002",
    ],
    [
      "cache_policy without .L2::cache_hint (TX4002)",
      {
        params: (h: H) => ({
          chunk_bytes: 16384,
          mbar: h.bar.sub(0),
          cache_policy: T.uint64(0x14f0000000000000n),
        }),
      },
      "TX4002",
    ],
    [
      "chunk_bytes not a multiple of 16 (TX4003)",
      { params: (h: H) => ({ chunk_bytes: 1000, mbar: h.bar.sub(0) }) },
      "TX4003",
    ],
    [
      "a runtime chunk_bytes (TX4003)",
      { params: (h: H) => ({ chunk_bytes: h.n, mbar: h.bar.sub(0) }) },
      "TX4003",
    ],
    [
      "a final axis that is not chunk_bytes contiguous bytes (TX4004)",
      {
        views: (h: H) =>
          [h.tile.rearrange("r c -> c r"), h.A.rearrange("r c -> c r")] as [TileView, TileView],
      },
      "TX4004",
    ],
    [
      "a source 4 bytes past a 16-byte boundary (TX4004)",
      {
        views: (h: H) => [h.tile.sub(0, "0:4"), h.A.sub(0, "1:5")] as [TileView, TileView],
        params: (h: H) => ({ chunk_bytes: 16, mbar: h.bar.sub(0) }),
        expect: (h: H) => T.ptx.mbarrier.arrive.expect_tx(h.bar.sub(0), 16),
      },
      "TX4004",
    ],
    [
      "operands swapped (TX4005)",
      {
        views: (h: H) =>
          [h.A.rearrange("r c -> (r c)"), h.tile.rearrange("r c -> (r c)")] as [TileView, TileView],
      },
      "TX4005",
    ],
    [
      "a global → shared copy without mbar (TX4006)",
      { params: () => ({ chunk_bytes: 16384 }) },
      "TX4006",
    ],
    [
      "repeat shapes that disagree (TX4010)",
      {
        views: (h: H) =>
          [
            h.tile.rearrange("(a r) c -> a r c", { a: 2 }),
            h.A.rearrange("(a r) c -> r a c", { a: 2 }),
          ] as [TileView, TileView],
        params: (h: H) => ({ chunk_bytes: 256, mbar: h.bar.sub(0) }),
      },
      "TX4010",
    ],
    [
      "an mbar that is not a uint64 in shared memory (TX4011)",
      { params: (h: H) => ({ chunk_bytes: 16384, mbar: h.A.sub(0, 0) }) },
      "TX4011",
    ],
    [
      "scope cta (TX4014)",
      { params: (h: H) => ({ chunk_bytes: 16384, mbar: h.bar.sub(0), scope: "cta" }) },
      "TX4014",
    ],
  ] as [string, Variant, string][])("refuses %s at the tile.apply line", (_name, v, code) => {
    const e = refused(v);
    expect(e.code).toBe(code);
    expect(e.span?.file).toBe(FILE);
    expect(e.span?.line).toBe(APPLY);
  });

  test("refuses a view reaching past its tensor (TX4013): row tid + 64 under tid == 0", () => {
    const e = refused({
      views: (h) => [h.tile.sub(0, ":"), h.A.sub(h.tid.add(64), ":")],
      params: (h) => ({ chunk_bytes: 256, mbar: h.bar.sub(0) }),
      expect: (h) => T.ptx.mbarrier.arrive.expect_tx(h.bar.sub(0), 256),
    });
    expect(e.code).toBe("TX4013");
    expect(e.span?.line).toBe(APPLY);
  });
});

describe("mbarrier operands and expect_tx", () => {
  test("expect_tx that disagrees with the bytes the copies complete is refused (TX4008) at the expect_tx line", () => {
    const e = refused({ expect: (h) => T.ptx.mbarrier.arrive.expect_tx(h.bar.sub(0), 8192) }); // BULK-EXPECT-BAD
    expect(e.code).toBe("TX4008");
    expect(e.span?.line).toBe(lineOf("// BULK-EXPECT-BAD"));
    expect(e.notes[0]?.span?.line).toBe(APPLY);
  });

  test("a runtime expect_tx is left to the simulator", () => {
    expect(() =>
      verify(kernel({ expect: (h) => T.ptx.mbarrier.arrive.expect_tx(h.bar.sub(0), h.n) })),
    ).not.toThrow();
  });

  test("mbarrier objects must be shared uint64 (TX4011 at the init line)", () => {
    const e = refused({ barDtype: "uint32", params: () => ({ chunk_bytes: 16384 }) });
    expect(e.code).toBe("TX4011");
    expect(e.span?.line).toBe(lineOf("// BULK-INIT"));
  });

  test("an arrival count outside [1, 2^20 - 1] is refused (TX4012)", () => {
    // The op table checks a static count when the call is built, at the author's line.
    for (const count of [0, 2 ** 20]) {
      const build = () =>
        T.function("k", {}, () => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
          const bar = T.alloc_shared([1], "uint64", { name: "bar" });
          T.ptx.mbarrier.init(bar.sub(0), count); // BULK-COUNT
        });
      expect(build).toThrow(
        expect.objectContaining({
          code: "TX4012",
          span: expect.objectContaining({ line: lineOf("// BULK-COUNT") }),
        }),
      );
    }
  });
});
