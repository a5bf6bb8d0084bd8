// T.tile.copy_async's TMA (cp.async.bulk.tensor) and bulk (cp.async.bulk) paths on the simulator
// against the host copy, bit for bit (every element distinct), with the hazard checks collecting
// reports (none expected); a 128B-swizzled tile read back through its shared view; PTX excerpts
// of a split box and a multicast; every module assembled by ptxas (sm_90a); a wrong expect_tx
// reported at the tile call; each dispatch failure is TX2022 naming the requirement.
import { describe, expect, it } from "vitest";
import { T, explainTile, type PrimFunc } from "tirx-ts";
import { verify } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { simCase } from "./tma/sim-run.js";
import { colBlocksLoad, multicastLoad, TILE_TMA_CASES } from "./util/tile-tma-cases.js";
import { errorOf } from "./util/error-of.js";

function ptxOf(fn: PrimFunc): string {
  const text = compileToPtx(fn, { arch: "sm_90a" }).text;
  assembleLater(text, "sm_90a", fn.name);
  return text;
}

const tmaLines = (ptx: string): string =>
  ptx
    .split("\n")
    .filter((l) => l.includes("cp.async.bulk"))
    .map((l) => l.trim())
    .join("\n");

type View = ReturnType<typeof T.alloc_shared>;

/**
 * A one-CTA kernel over tensors A and B of shape `a` (float16 unless told): `body` runs with A,
 * B, tid and a shared mbarrier `bar` (initialised by the body where it runs).
 */
function kernel(
  name: string,
  a: number[],
  body: (v: { A: View; B: View; bar: View; tid: ReturnType<typeof T.cuda.thread_idx> }) => void,
  dtype: "float16" | "float32" = "float16",
): PrimFunc {
  return T.function(name, { A: T.Tensor(a, dtype), B: T.Tensor(a, dtype) }, ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    body({ A, B, bar, tid });
  });
}

describe("T.tile.copy_async: TMA and bulk on the simulator", () => {
  for (const make of TILE_TMA_CASES) {
    const c = make();
    it(`${c.name}: equals the host copy, no reports`, () => {
      const r = simCase(c);
      expect(r.reports).toEqual([]);
      expect(r.out).toEqual(c.expected());
      ptxOf(c.fn);
    });
  }

  it("an opaque runtime offset (one let variable) is split into coordinates exactly", () => {
    const fn = T.function(
      "tile_tma_opaque_offset",
      { A: T.Tensor([64, 64], "float16"), B: T.Tensor([64, 64], "float16") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const bx = T.cuda.block_idx("x");
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        const s = T.alloc_shared([32, 64], "float16", { name: "s", align: 128 });
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
        const off = T.let_("off", bx.mul(32 * 64));
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 32 * 64 * 2);
          const src = A.as_strided({ offset: off, shape: [32, 64], strides: [64, 1] });
          T.tile.copy_async(s, src, { mbar: bar.sub(0), dispatch: "tma" });
        });
        T.ptx.mbarrier.try_wait(bar.sub(0), 0);
        for (const r of T.range(32)) B.set([bx.mul(32).add(r), tid], s.get([r, tid]));
      },
    );
    const a = Array.from({ length: 64 * 64 }, (_, i) => (i * 7) % 2048);
    const r = simCase({
      name: "opaque",
      fn,
      inputs: [{ data: a, shape: [64, 64], dtype: "float16" }],
      out: { shape: [64, 64], dtype: "float16" },
      expected: () => a,
    });
    expect(r.reports).toEqual([]);
    expect(r.out).toEqual(a);
    ptxOf(fn);
  });

  it("a split box is one TMA per column block, one map; explain gives the bytes", () => {
    const fn = colBlocksLoad().fn;
    expect(tmaLines(ptxOf(fn))).toMatchInlineSnapshot(`
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3], [%rd6, {%r5, %r6}], [%r4];
      cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%r3+8192], [%rd6, {%r7, %r8}], [%r4];"
    `);
    expect(explainTile(fn)[0]).toMatch(/×2 .*box \[64, 64\].*16384 B/);
  });

  it("multicast lowers to .multicast::cluster with cta_mask", () => {
    const fn = multicastLoad().fn;
    expect(tmaLines(ptxOf(fn))).toMatchInlineSnapshot(
      `"cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%r9], [%rd6, {%r5, %r7}], [%r4], %rs1;"`,
    );
  });

  it("two calls of one tensor, box and swizzle share one tensor map", () => {
    const fn = kernel("tile_tma_dedup", [64, 64], ({ A, bar, tid }) => {
      const s = T.alloc_shared([2, 32, 64], "float16", {
        name: "s",
        layout: T.swizzle_mode("128B"),
        align: 1024,
      });
      T.if_(tid.eq(0), () => {
        T.tile.copy_async(s.sub(0), A.sub("0:32", ":"), { mbar: bar.sub(0) });
        T.tile.copy_async(s.sub(1), A.sub("32:64", ":"), { mbar: bar.sub(0) });
      });
    });
    const ptx = ptxOf(fn);
    expect(ptx.match(/\.param \.align 128 \.b8/g)?.length).toBe(1);
  });

  it("a wrong expect_tx is still reported through the tile call (the verifier's TX4008)", () => {
    const fn = kernel("tile_tma_short_tx", [32, 64], ({ A, B, bar, tid }) => {
      const s = T.alloc_shared([32, 64], "float16", {
        name: "s",
        layout: T.swizzle_mode("128B"),
      });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 32 * 64); // half the tile's bytes
        T.tile.copy_async(s, A, { mbar: bar.sub(0) });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      B.set([0, tid], s.get([0, tid]));
    });
    const e = errorOf(() => verify(fn));
    expect(e.code).toBe("TX4008");
    expect(e.message).toMatch(
      /expect_tx announces 2048 bytes, but the bulk copies on this mbarrier complete 4096 bytes/,
    );
  });
});

describe("T.tile.copy_async: dispatch order", () => {
  const pick = (opts: "none" | "mbar" | "tma", swizzled: boolean): string => {
    const fn = kernel(`order_${opts}_${swizzled}`, [32, 64], ({ A, bar, tid }) => {
      const s = T.alloc_shared(
        [32, 64],
        "float16",
        swizzled ? { layout: T.swizzle_mode("128B") } : { align: 128 },
      );
      T.if_(tid.eq(0), () => {
        if (opts === "none") T.tile.copy_async(s, A);
        else if (opts === "mbar") T.tile.copy_async(s, A, { mbar: bar.sub(0) });
        else T.tile.copy_async(s, A, { mbar: bar.sub(0), dispatch: "tma" });
      });
    });
    return explainTile(fn)[0]!;
  };
  it("thread scope without mbar: cp.async chunks (ldgsts)", () => {
    expect(pick("none", false)).toMatch(/→ cp\.async\.cg 16 B ×256 per thread/);
  });
  it("with mbar, one contiguous unswizzled run: cp.async.bulk, no tensor map", () => {
    expect(pick("mbar", false)).toMatch(/→ bulk cp\.async\.bulk ×1 \(4096 B/);
  });
  it('with mbar, swizzled: TMA; { dispatch: "tma" } forces TMA on a contiguous run', () => {
    expect(pick("mbar", true)).toMatch(
      /→ TMA cp\.async\.bulk\.tensor\.2d ×1 \(box \[32, 64\] of A_tmap, 128B swizzle/,
    );
    expect(pick("tma", false)).toMatch(
      /→ TMA cp\.async\.bulk\.tensor\.2d ×1 \(box \[32, 64\] of A_tmap, unswizzled/,
    );
  });
});

describe("T.tile.copy_async: TMA/bulk dispatch failures are TX2022", () => {
  const swz = { layout: T.swizzle_mode("128B"), align: 1024 } as const;
  const cases: [string, () => PrimFunc, RegExp][] = [
    [
      "not one thread",
      () =>
        kernel("e_scope", [32, 64], ({ A, bar }) => {
          const s = T.alloc_shared([32, 64], "float16", swz);
          T.tile.warp.copy_async(s, A, { mbar: bar.sub(0) });
        }),
      /TMA is issued by one thread: call T\.tile\.copy_async inside T\.if_\(tid == 0\) at thread scope/,
    ],
    [
      "rank > 5",
      () =>
        T.function("e_rank", { A: T.Tensor([2, 2, 2, 2, 2, 64], "float16") }, ({ A }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
          const bar = T.alloc_shared([1], "uint64");
          const s = T.alloc_shared([2, 2, 2, 2, 2, 64], "float16", swz);
          T.tile.copy_async(s, A, { mbar: bar.sub(0) });
        }),
      /TMA tensors have rank 1\.\.5, but A has rank 6/,
    ],
    [
      "global inner stride not 1",
      () =>
        kernel("e_inner", [64, 64], ({ A, bar }) => {
          const s = T.alloc_shared([64, 64], "float16", swz);
          T.tile.copy_async(s, A.rearrange("r c -> c r"), { mbar: bar.sub(0) });
        }),
      /innermost dim of .* \(shared stride 1\) has a global stride of 64 in A/,
    ],
    [
      "row stride not a multiple of 16 bytes",
      () =>
        kernel("e_stride16", [64, 12], ({ A, bar }) => {
          const s = T.alloc_shared([64, 8], "float16", { align: 128 });
          T.tile.copy_async(s, A.sub(":", "0:8"), { mbar: bar.sub(0) });
        }),
      /axis 0 of A \[64, 12\] has a stride of 24 bytes; a tensor map needs strides that are multiples of 16 bytes/,
    ],
    [
      "a box starting 4 bytes into the innermost axis (an illegal instruction on the GPU)",
      () =>
        kernel("e_innercoord", [64, 72], ({ A, bar }) => {
          const s = T.alloc_shared([64, 8], "float16", { align: 128 });
          T.tile.copy_async(s, A.sub(":", "2:10"), { mbar: bar.sub(0) });
        }),
      /a TMA box of A starts at element 2 of its innermost axis \(4 bytes\); the copy engine needs a multiple of 16 bytes there \(8 float16 elements\); nearest that works: a view of A starting at innermost element 0 instead of 2/,
    ],
    [
      "dst not aligned to the swizzle atom",
      () =>
        kernel("e_align", [128, 64], ({ A, bar }) => {
          const s = T.alloc_shared([128, 64], "float16", swz);
          T.tile.copy_async(s.sub("4:68", ":"), A.sub("0:64", ":"), { mbar: bar.sub(0) });
        }),
      /must start 1024-byte aligned \(the 128B swizzle atom: 8 rows of 128 bytes\), but its boxes are only provably 512-byte aligned/,
    ],
    [
      "dtype mismatch",
      () =>
        kernel("e_dtype", [32, 64], ({ A, bar }) => {
          const s = T.alloc_shared([32, 64], "float32", swz);
          T.tile.copy_async(s, A, { mbar: bar.sub(0) });
        }),
      /views of one shape: .* float32, A \[32, 64\] float16/,
    ],
    [
      "shapes differ",
      () =>
        kernel("e_shape", [32, 64], ({ A, bar }) => {
          const s = T.alloc_shared([16, 64], "float16", swz);
          T.tile.copy_async(s, A, { mbar: bar.sub(0) });
        }),
      /views of one shape: .* \[16, 64\] float16, A \[32, 64\] float16/,
    ],
    [
      "a load without mbar",
      () =>
        kernel("e_mbar", [32, 64], ({ A }) => {
          const s = T.alloc_shared([32, 64], "float16", swz);
          T.tile.copy_async(s, A, { dispatch: "tma" });
        }),
      /a global → shared TMA completes on an mbarrier: pass \{ mbar \}/,
    ],
    [
      "a row-major dst wider than the swizzle span",
      () =>
        kernel("e_span", [128, 128], ({ A, bar }) => {
          const s = T.alloc_shared([128, 128], "float16", swz);
          T.tile.copy_async(s, A, { mbar: bar.sub(0) });
        }),
      /boxes of \[1, 64\], so the copy would take 256 TMA issues .*column blocks of 64 \(128B swizzle span\)/,
    ],
    [
      "bulk forced on a swizzled tile",
      () =>
        kernel("e_bulk", [32, 64], ({ A, bar }) => {
          const s = T.alloc_shared([32, 64], "float16", swz);
          T.tile.copy_async(s, A, { mbar: bar.sub(0), dispatch: "bulk" });
        }),
      /cp\.async\.bulk copies one contiguous run .* into unswizzled shared memory/,
    ],
    [
      "multicast without a cluster",
      () =>
        kernel("e_cluster", [32, 64], ({ A, bar }) => {
          const s = T.alloc_shared([32, 64], "float16", swz);
          T.tile.copy_async(s, A, { mbar: bar.sub(0), cta_mask: T.uint16(3) });
        }),
      /cta_mask multicasts to the CTAs of a cluster, but the launch has no cluster/,
    ],
    [
      "multicast on a store",
      () =>
        kernel("e_store_mc", [32, 64], ({ B }) => {
          const s = T.alloc_shared([32, 64], "float16", swz);
          T.tile.copy_async(B, s, { cta_mask: T.uint16(3) });
        }),
      /a TMA store has no multicast/,
    ],
    [
      "cp.async forced on a store",
      () =>
        kernel("e_store_ldgsts", [32, 64], ({ B }) => {
          const s = T.alloc_shared([32, 64], "float16", swz);
          T.tile.copy_async(B, s, { dispatch: "ldgsts" });
        }),
      /cp\.async \(ldgsts\) copies global → shared only/,
    ],
    [
      "an unknown dispatch",
      () =>
        kernel("e_dispatch", [32, 64], ({ A, bar }) => {
          const s = T.alloc_shared([32, 64], "float16", swz);
          T.tile.copy_async(s, A, { mbar: bar.sub(0), dispatch: "tmaa" as never });
        }),
      /dispatch must be "ldgsts", "tma" or "bulk", got "tmaa"/,
    ],
  ];
  for (const [what, build, msg] of cases) {
    it(what, () => {
      const e = errorOf(build);
      expect(e.code).toBe("TX2022");
      expect(e.message).toMatch(msg);
      expect(e.message).toMatch(/nearest that works: /);
    });
  }
});
