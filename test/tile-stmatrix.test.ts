// T.tile.warp.copy register → shared by stmatrix (sm_90) and back by ldmatrix: round trips of
// A, B and 16-bit C fragment tiles whose elements are all distinct, on the simulated device with
// its hazard checks on, compared with the input; the PTX uses stmatrix (plain and .trans) and is
// assembled by ptxas for sm_90. Without an sm_90 target the vectorized st.shared path serves.
// Dispatch errors (TX2022) name the failed requirement and the nearest layout that works.
// T.tile.wg.copy of a 16-bit tile in the wgmma accumulator layout takes stmatrix too (each warp
// its 16 rows): bit-equal to the vectorized path through a plain and a 128B-swizzled tile.
import { describe, expect, it } from "vitest";
import { T, explainTile, sim, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import {
  distinct,
  distinctHalves,
  roundTrip,
  runRoundTrip,
  runWgRoundTrip,
  wgRoundTrip,
  WG_CASES,
} from "./util/stmatrix-kernels.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();

function ptxOf(fn: PrimFunc, arch = "sm_90"): string {
  const text = compileToPtx(fn, { arch }).text;
  assembleLater(text, arch, fn.name);
  return text;
}

function run(fn: PrimFunc, r: number, c: number): void {
  const x = distinct(r * c);
  expect(runRoundTrip(fn, r, c, x, dev)).toEqual(Array.from(x));
}

describe("T.tile.warp.copy: mma fragments → shared by stmatrix (sm_90)", () => {
  it("A (16 × 16): stmatrix.x4 then ldmatrix.x4, bit for bit, plain and swizzled", () => {
    for (const [sw, tag] of [
      [undefined, "plain"],
      [T.SwizzleLayout(3, 2, 3), "swz"],
    ] as const) {
      const fn = roundTrip("A", 16, 16, `stm_a_${tag}`, { swizzle: sw, arch: "sm_90" });
      const ptx = ptxOf(fn);
      expect(ptx).toMatch(/stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
      expect(ptx).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
      run(fn, 16, 16);
    }
  });

  it("B (32 × 16, row-major K × N): stmatrix.x4.trans; one n8 column is .x2.trans", () => {
    const fn = roundTrip("B", 32, 16, "stm_b", {
      swizzle: T.SwizzleLayout(3, 1, 3),
      arch: "sm_90",
    });
    const ptx = ptxOf(fn);
    expect(ptx).toMatch(/stmatrix\.sync\.aligned\.m8n8\.x4\.trans\.shared\.b16/);
    run(fn, 32, 16);
    const narrow = roundTrip("B", 16, 8, "stm_b_x2", { arch: "sm_90" });
    const line = ptxOf(narrow)
      .split("\n")
      .find((l) => /^\s*stmatrix\.sync/.test(l))!
      .trim()
      .replace(/%\w+/g, "%r");
    expect(line).toMatchInlineSnapshot(
      `"stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%r], {%r, %r};"`,
    );
    run(narrow, 16, 8);
    expect(explainTile(fn)[1]).toMatch(
      /T\.tile\.warp\.copy → stmatrix x4\.trans ×2: f is 2 × 2 m16n8k16 B fragments.*\(sm_90\)/,
    );
  });

  it("C of float16 (32 × 16): stmatrix.x4 of the accumulator layout, bit for bit", () => {
    const fn = roundTrip("C", 32, 16, "stm_c", { arch: "sm_90" });
    const ptx = ptxOf(fn);
    expect(ptx).toMatch(/stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    expect(ptx).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    run(fn, 32, 16);
    const small = roundTrip("C", 16, 8, "stm_c_x2", { arch: "sm_90" });
    expect(ptxOf(small)).toMatch(/stmatrix\.sync\.aligned\.m8n8\.x2\.shared\.b16/);
    run(small, 16, 8);
  });

  it("a warp tile stored at cta scope: one warp stores (no race), the others wait", () => {
    const fn = T.function(
      "stm_cta",
      { X: T.Tensor([16, 16], "float16"), Y: T.Tensor([16, 16], "float16") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }), arch: "sm_90" });
        const s = T.alloc_shared([16, 16], "float16");
        const layout = T.layout.mma_sync_tile_layout("A", "m16n8k16", "float16", 16, 16);
        const f = T.alloc_local([16, 16], "float16", { layout });
        T.tile.cta.copy(f, X);
        T.tile.cta.copy(s, f);
        T.cuda.cta_sync();
        T.tile.cta.copy(f, s);
        T.tile.cta.copy(Y, f);
      },
    );
    expect(explainTile(fn)[1]).toMatch(/stmatrix x4 ×1: .*; one warp of the scope stores/);
    run(fn, 16, 16);
  });

  it("without an sm_90 target: vectorized st.shared, and explain says why", () => {
    const fn = roundTrip("A", 16, 16, "stm_none");
    const ptx = ptxOf(fn, "sm_80");
    expect(ptx).not.toMatch(/stmatrix\.sync/);
    expect(ptx).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    expect(explainTile(fn)[1]).toMatch(
      /st\.shared vectors of 4 B .*\(stmatrix needs sm_90: T\.device_entry\(\{ launch, arch: "sm_90" \}\) selects it\)/,
    );
    run(fn, 16, 16);
    const old = roundTrip("A", 16, 16, "stm_80", { arch: "sm_80" });
    expect(explainTile(old)[1]).toMatch(/\(stmatrix needs sm_90; the target is sm_80\)/);
    expect(ptxOf(old, "sm_80")).not.toMatch(/stmatrix\.sync/);
  });

  it("a swizzle that splits a 16-byte stmatrix row is TX2022 naming why and a swizzle that works", () => {
    const e = errorOf(() =>
      roundTrip("A", 16, 16, "stm_bad", { swizzle: T.SwizzleLayout(2, 2, 3), arch: "sm_90" }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /T\.tile\.warp\.copy: stmatrix from f .*keeps only 8 bytes together, so it splits every row/,
    );
    expect(e.message).toMatch(/nearest that works: a swizzle that keeps 16-byte atoms/);
  });

  it("a shared tile whose rows are not 16-byte aligned is TX2022", () => {
    const e = errorOf(() =>
      T.function("stm_bad_pitch", { X: T.Tensor([16, 16], "float16") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }), arch: "sm_90" });
        const s = T.alloc_shared([16, 36], "float16");
        const f = T.alloc_local([16, 16], "float16", {
          layout: T.layout.mma_sync_tile_layout("C", "m16n8k16", "float32", 16, 16),
        });
        T.tile.warp.copy(f, X);
        T.tile.warp.copy(s.sub(":", "0:16"), f);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(/byte 72: a stmatrix row must start 16-byte aligned/);
  });

  it("{ dispatch } forces a path: stmatrix without an arch (compiled for sm_90), vector on sm_90", () => {
    const forced = roundTrip("C", 16, 16, "stm_forced", { dispatch: "stmatrix" });
    expect(explainTile(forced)[1]).toMatch(/→ stmatrix x4 ×1: /);
    expect(ptxOf(forced)).toMatch(/stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    run(forced, 16, 16);
    const vec = roundTrip("A", 16, 16, "stm_vec", { arch: "sm_90", dispatch: "vector" });
    expect(explainTile(vec)[1]).toMatch(/st\.shared vectors of 4 B .*\(\{ dispatch: "vector" \}\)/);
    expect(ptxOf(vec)).not.toMatch(/stmatrix\.sync/);
  });

  it("stmatrix forced below sm_90, on a tile that is no fragment grid, or an unknown dispatch: TX2022", () => {
    const old = errorOf(() =>
      roundTrip("A", 16, 16, "stm_forced_80", { arch: "sm_80", dispatch: "stmatrix" }),
    );
    expect(old.code).toBe("TX2022");
    expect(old.message).toMatch(
      /T\.tile\.warp\.copy: \{ dispatch: "stmatrix" \}: stmatrix needs sm_90, but T\.device_entry's arch is sm_80; nearest that works: the vectorized st\.shared path/,
    );
    const plain = errorOf(() =>
      T.function("stm_forced_plain", { X: T.Tensor([32, 8], "float16") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }), arch: "sm_90" });
        const s = T.alloc_shared([32, 8], "float16");
        const f = T.alloc_local([32, 8], "float16", {
          layout: T.TileLayout(T.S([32, 8], ["1@laneid", 1])),
        });
        T.tile.warp.copy(f, X);
        T.tile.warp.copy(s, f, { dispatch: "stmatrix" });
      }),
    );
    expect(plain.code).toBe("TX2022");
    expect(plain.message).toMatch(/is not a warp tile of m16n8k16 A, B or 16-bit C fragments/);
    const unknown = errorOf(() => roundTrip("A", 16, 16, "stm_unknown", { dispatch: "tma" }));
    expect(unknown.message).toMatch(
      /dispatch must be "ldmatrix", "stmatrix" or "vector", got "tma"/,
    );
  });

  it("an arch that names no target is TX5006", () => {
    const e = errorOf(() =>
      T.function("stm_bad_arch", { X: T.Tensor([16], "float16") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }), arch: "sm_70" });
      }),
    );
    expect(e.code).toBe("TX5006");
    expect(e.message).toMatch(/arch must name a target \(sm_80, .*sm_90a\), got "sm_70"/);
  });
});

describe("T.tile.wg.copy: a 16-bit wgmma D tile → shared by stmatrix (sm_90)", () => {
  it.each(WG_CASES)(
    "%i × %i (128B swizzle: %s, transposed: %s): equal to the vector path, bit for bit",
    (r, c, swz, tr) => {
      const tag = `${r}x${c}${swz ? "_swz" : ""}${tr ? "_t" : ""}`;
      const opts = { swizzle128: swz, transposed: tr, arch: "sm_90" };
      const fn = wgRoundTrip(r, c, `stm_wg_${tag}`, opts);
      const vec = wgRoundTrip(r, c, `stm_wg_vec_${tag}`, { ...opts, dispatch: "vector" });
      const ptx = ptxOf(fn);
      // Each warp stores its 16 rows × c columns: c / 8 · 2 matrices, four a stmatrix.x4, in
      // each 64-row block; the load back through the wgmma D tile is ldmatrix.x4 likewise.
      const x4 = ((r / 64) * (c / 8) * 2) / 4;
      const t = tr ? ".trans" : "";
      const inst = (op: string): RegExp =>
        new RegExp(
          `${op}\\.sync\\.aligned\\.m8n8\\.x4${t.replace(".", "\\.")}\\.shared\\.b16`,
          "g",
        );
      expect(ptx.match(inst("stmatrix"))).toHaveLength(x4);
      expect(ptx.match(inst("ldmatrix"))).toHaveLength(x4);
      expect(ptx).not.toMatch(/\bst\.shared\./);
      const vptx = ptxOf(vec);
      expect(vptx).not.toMatch(/stmatrix\.sync/);
      // The vector path: a store per pair of columns ((r / 64) · c / 4 a thread), or two where
      // codegen does not prove the pair 4-byte aligned (a transposed view: one per element).
      const stores = vptx.match(/\bst\.shared\.b(16|32)\b/g) ?? [];
      expect(stores.length).toBeGreaterThanOrEqual(((r / 64) * c) / 4);
      expect(explainTile(fn)[1]).toMatch(
        new RegExp(
          `T\\.tile\\.wg\\.copy → stmatrix x4${t.replace(".", "\\.")} ×${x4} per warp: f is ${r} × ${c} wgmma D fragments .*\\(sm_90\\)`,
        ),
      );
      const x = distinctHalves(r * c);
      expect(new Set(x).size).toBe(r * c);
      const got = runWgRoundTrip(fn, r, c, x, dev);
      const want = runWgRoundTrip(vec, r, c, x, dev);
      expect(got.rows).toEqual(want.rows);
      expect(got.rows).toEqual(Array.from(x));
      expect(got.ldmatrix).toEqual(Array.from(x));
      expect(want.ldmatrix).toEqual(Array.from(x));
    },
  );

  it("without an sm_90 target the vector path serves, and explain says why", () => {
    const fn = wgRoundTrip(64, 64, "stm_wg_none");
    expect(ptxOf(fn, "sm_80")).not.toMatch(/stmatrix\.sync/);
    expect(explainTile(fn)[1]).toMatch(/st\.shared vectors of 4 B .*\(stmatrix needs sm_90: /);
  });

  it("a view whose rows are not 16-byte aligned is TX2022; a tile in another layout is not stmatrix", () => {
    const e = errorOf(() =>
      T.function("stm_wg_pitch", { X: T.Tensor([64, 64], "float16") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }), arch: "sm_90" });
        const s = T.alloc_shared([64, 68], "float16");
        const f = T.alloc_local([64, 64], "float16", {
          layout: T.layout.wgmma_tile_layout("D", 64, 64, "float32"),
        });
        T.tile.wg.copy(f, X);
        T.tile.wg.copy(s.sub(":", "0:64"), f);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /T\.tile\.wg\.copy: stmatrix from f .*\(wgmma D fragments\): .*byte 136: a stmatrix row must start 16-byte aligned/,
    );
    const forced = errorOf(() =>
      T.function("stm_wg_forced", { X: T.Tensor([64, 64], "float16") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }), arch: "sm_90" });
        const s = T.alloc_shared([64, 64], "float16");
        const f = T.alloc_local([64, 64], "float16", {
          layout: T.layout.wg_local_layout(64, 64),
        });
        T.tile.wg.copy(f, X);
        T.tile.wg.copy(s, f, { dispatch: "stmatrix" });
      }),
    );
    expect(forced.code).toBe("TX2022");
    expect(forced.message).toMatch(/nor a warpgroup tile of 16-bit wgmma D fragments/);
  });
});
