// T.tile.warp/wg.copy between a register tile of mma fragments and a shared view takes ldmatrix /
// stmatrix only where every 16-byte matrix row address is provably 16-byte aligned (PTX ISA,
// ldmatrix / stmatrix: each row of an 8 × 8 b16 matrix is 16 contiguous bytes at a 16-byte
// aligned shared address; the simulator checks each lane's, TX6018): the view's first element on
// the 16-byte grid, from its constant offset or a runtime offset's evident factors, and the
// buffer's alignment. A view off the grid (a column offset of 4 float16 = 8 bytes, a runtime
// offset of 20·k elements, a 128B swizzle whose 16-byte atoms would split such a row) takes the
// vectorized path, bit for bit on the simulator against the host, and explain names the row's
// byte; an aligned view (constant, or a runtime offset of 24·k elements) keeps ldmatrix /
// stmatrix. A forced { dispatch: "ldmatrix" | "stmatrix" } on a view off the grid is TX2022 at the
// author's line naming the byte and suggesting { dispatch: "vector" } or an aligned slice. The
// PTX of each kernel that runs is assembled by ptxas (sm_80 loads, sm_90 stores).
import { describe, expect, it } from "vitest";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import { distinctHalves } from "./util/stmatrix-kernels.js";

const dev = sim();
const L = T.layout.mma_sync_tile_layout;

/** The PTX of `fn` for `arch`, queued for ptxas. */
function ptxOf(fn: PrimFunc, arch: string): string {
  const text = compileToPtx(fn, { arch }).text;
  assembleLater(text, arch, fn.name);
  return text;
}

/** n distinct float16 integers 0 .. n - 1 (n ≤ 2048, exact) in a scrambled order. */
function distinct(n: number): Float32Array {
  return Float32Array.from({ length: n }, (_, i) => (i * 37) % n);
}

/** The explain line of the copy from shared memory into the fragment tile (the third copy). */
function loadLine(fn: PrimFunc): string {
  return explainTile(fn)[2]!;
}

type ViewFn = (s: ReturnType<typeof T.alloc_shared>, k: any) => any;

interface LoadCase {
  /** The shared tile's width (float16 columns); it is [16, W]. */
  W: number;
  /** The view of s the fragment tile loads (k: an int32 kernel scalar). */
  view: ViewFn;
  /** Element (r, c) of the view as a flat index of s, for k. */
  at: (r: number, c: number, k: number) => number;
  operand?: "A" | "B";
  swizzle128?: boolean;
  dispatch?: string;
}

/**
 * X [16, W] → registers → s (a [16, W] float16 shared tile, `T.swizzle_mode("128B")` when asked)
 * → the 16 × 16 A (or B) fragment tile `a` ← `view(s, k)` (the copy under test) → Y [16, 16].
 */
function loadKernel(name: string, c: LoadCase): PrimFunc {
  return T.function(
    name,
    {
      X: T.Tensor([16, c.W], "float16"),
      Y: T.Tensor([16, 16], "float16"),
      k: T.Scalar("int32"),
    },
    ({ X, Y, k }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const s = T.alloc_shared(
        [16, c.W],
        "float16",
        c.swizzle128 ? { layout: T.swizzle_mode("128B"), align: 1024 } : {},
      );
      const rows = T.alloc_local([16, c.W], "float16", {
        layout: T.TileLayout(`S[(16, 2, ${c.W / 2}) : (1@laneid, 16@laneid, 1)]`),
      });
      const a = T.alloc_local([16, 16], "float16", {
        layout: L(c.operand ?? "A", "m16n8k16", "float16", 16, 16),
      });
      T.tile.warp.copy(rows, X);
      T.tile.warp.copy(s, rows);
      T.cuda.__syncwarp();
      if (c.dispatch) T.tile.warp.copy(a, c.view(s, k), { dispatch: c.dispatch });
      else T.tile.warp.copy(a, c.view(s, k));
      T.tile.warp.copy(Y, a);
    },
  );
}

/** Run a {@link loadKernel} on the simulator and compare Y with the host's gather of X. */
function runLoad(fn: PrimFunc, c: LoadCase, k: number): void {
  const x = distinct(16 * c.W);
  const X = tensor(x, { shape: [16, c.W], dtype: "float16", device: dev });
  const Y = tensor.zeros([16, 16], "float16", dev);
  compile(fn, { target: "cuda" })(X, Y, k);
  const want = Array.from({ length: 256 }, (_, e) => x[c.at(e >> 4, e & 15, k)]!);
  expect(Array.from(Y.toArray() as Float32Array)).toEqual(want);
  X.dispose();
  Y.dispose();
}

const cols =
  (lo: number): ViewFn =>
  (s) =>
    s.sub(":", `${lo}:${lo + 16}`);
const colsAt =
  (W: number, lo: number) =>
  (r: number, c: number): number =>
    r * W + lo + c;

describe("T.tile.warp.copy shared → fragments: ldmatrix only on provably aligned rows", () => {
  it.each([
    ["A", 4],
    ["B", 4],
    ["A", 12],
  ] as const)(
    "%s fragments from s.sub(':', '%i:…') (rows at byte 8 of 16): the vector path, equal to the host",
    (operand, lo) => {
      const c: LoadCase = { W: 32, view: cols(lo), at: colsAt(32, lo), operand };
      const fn = loadKernel(`lda_mis_${operand}_${lo}`, c);
      const line = loadLine(fn);
      // A: pairs of columns (4 B vectors); B: its slots run down K, strided in s (scalar).
      expect(line).toMatch(/T\.tile\.warp\.copy → (ld\.shared vectors of 4 B|scalar ld\.shared)/);
      expect(line).toMatch(
        new RegExp(
          `\\(not ldmatrix: the view starts at element ${lo} of s \\(byte ${2 * lo}\\), so its rows start at byte 8 of 16: row 0 of register 0's 8 × 8 matrix .*an ldmatrix row address must be 16-byte aligned \\(PTX ISA, ldmatrix\\)\\)`,
        ),
      );
      expect(line).not.toMatch(/keeps each 16-byte row contiguous/);
      expect(ptxOf(fn, "sm_80")).not.toMatch(/ldmatrix\.sync/);
      runLoad(fn, c, 0);
    },
  );

  it("an aligned column offset (8 float16 = 16 bytes) keeps ldmatrix.x4, equal to the host", () => {
    for (const operand of ["A", "B"] as const) {
      const c: LoadCase = { W: 32, view: cols(8), at: colsAt(32, 8), operand };
      const fn = loadKernel(`lda_al_${operand}`, c);
      expect(loadLine(fn)).toMatch(
        /T\.tile\.warp\.copy → ldmatrix x4(\.trans)? ×1: a is 1 × [12] m16n8k16 [AB] fragments and s keeps each 16-byte row contiguous/,
      );
      expect(ptxOf(fn, "sm_80")).toMatch(
        /ldmatrix\.sync\.aligned\.m8n8\.x4(\.trans)?\.shared\.b16/,
      );
      runLoad(fn, c, 0);
    }
  });

  it("a 128B swizzle that would split rows at byte 8: the vector path, explain names the split", () => {
    const c: LoadCase = { W: 64, view: cols(4), at: colsAt(64, 4), swizzle128: true };
    const fn = loadKernel("lda_swz_mis", c);
    expect(loadLine(fn)).toMatch(
      /ld\.shared vectors of 4 B .*\(not ldmatrix: .*rows start at byte 8 of 16: .*s's Swizzle<3, 4, 3> on bytes moves each 16-byte atom on its own, so a row from byte 8 of an atom would be split across two atoms/,
    );
    expect(ptxOf(fn, "sm_80")).not.toMatch(/ldmatrix\.sync/);
    runLoad(fn, c, 0);
    const ok: LoadCase = { W: 64, view: cols(24), at: colsAt(64, 24), swizzle128: true };
    const al = loadKernel("lda_swz_al", ok);
    expect(loadLine(al)).toMatch(
      /ldmatrix x4 ×1: .*s \(Swizzle<3, 4, 3> on bytes\) keeps each 16-byte row contiguous/,
    );
    expect(ptxOf(al, "sm_80")).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    runLoad(al, ok, 0);
  });

  it("a runtime offset: ldmatrix where its factors prove alignment, else the vector path", () => {
    // s [16, 48] as [16, 2, 24]: offset 24·k (a multiple of 8 elements) is aligned for every k.
    const al: LoadCase = {
      W: 48,
      view: (s, k) => s.rearrange("r (a b) -> r a b", { b: 24 }).sub(":", k, "0:16"),
      at: (r, c, k) => r * 48 + 24 * k + c,
    };
    const fa = loadKernel("lda_rt_al", al);
    expect(loadLine(fa)).toMatch(/→ ldmatrix x4 ×1: /);
    expect(ptxOf(fa, "sm_80")).toMatch(/ldmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    runLoad(fa, al, 0);
    runLoad(fa, al, 1);
    // 24·k + 4: 4 modulo 8 for every k, rows at byte 8 of 16.
    const off: LoadCase = {
      W: 48,
      view: (s, k) => s.rearrange("r (a b) -> r a b", { b: 24 }).sub(":", k, "4:20"),
      at: (r, c, k) => r * 48 + 24 * k + 4 + c,
    };
    const fo = loadKernel("lda_rt_off", off);
    expect(loadLine(fo)).toMatch(
      /\(not ldmatrix: the view's offset is known only at run time and is 4 modulo 8 elements, so its rows start at byte 8 of 16/,
    );
    expect(ptxOf(fo, "sm_80")).not.toMatch(/ldmatrix\.sync/);
    runLoad(fo, off, 1);
    // s [16, 40] as [16, 2, 20]: offset 20·k, aligned for even k only: not provable.
    const odd: LoadCase = {
      W: 40,
      view: (s, k) => s.rearrange("r (a b) -> r a b", { b: 20 }).sub(":", k, "0:16"),
      at: (r, c, k) => r * 40 + 20 * k + c,
    };
    const fd = loadKernel("lda_rt_odd", odd);
    expect(loadLine(fd)).toMatch(
      /\(not ldmatrix: the view's offset is known only at run time and provably a multiple of 20 elements \(40 bytes\), not of 8 \(16 bytes\)/,
    );
    expect(ptxOf(fd, "sm_80")).not.toMatch(/ldmatrix\.sync/);
    runLoad(fd, odd, 0);
    runLoad(fd, odd, 1);
  });

  it("a shared tile aligned to 8 bytes only: the vector path", () => {
    const fn = T.function("lda_buf8", { X: T.Tensor([16, 16], "float16") }, ({ X }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const s = T.alloc_shared([16, 16], "float16", { align: 8 });
      const a = T.alloc_local([16, 16], "float16", {
        layout: L("A", "m16n8k16", "float16", 16, 16),
      });
      T.tile.warp.copy(a, s);
      T.tile.warp.copy(X, a);
    });
    expect(explainTile(fn)[0]).toMatch(
      /\(not ldmatrix: s is only 8-byte aligned, so no row of the view .* is provably 16-byte aligned/,
    );
  });
});

/**
 * X [16, 16] → the 16 × 16 fragment tile f (C of float16 by default) → `view(s)` of s [16, 32]
 * (the copy under test, sm_90) → a tile of rows ← the same view (vectorized) → Y [16, 16].
 */
function storeKernel(
  name: string,
  view: (s: ReturnType<typeof T.alloc_shared>) => any,
  opts: { swizzle128?: boolean; dispatch?: string; W?: number } = {},
): PrimFunc {
  const W = opts.W ?? 32;
  return T.function(
    name,
    { X: T.Tensor([16, 16], "float16"), Y: T.Tensor([16, 16], "float16") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }), arch: "sm_90" });
      const s = T.alloc_shared(
        [16, W],
        "float16",
        opts.swizzle128 ? { layout: T.swizzle_mode("128B"), align: 1024 } : {},
      );
      const f = T.alloc_local([16, 16], "float16", {
        layout: L("C", "m16n8k16", "float32", 16, 16),
      });
      const rows = T.alloc_local([16, 16], "float16", {
        layout: T.TileLayout("S[(16, 2, 8) : (1@laneid, 16@laneid, 1)]"),
      });
      T.tile.warp.copy(f, X);
      if (opts.dispatch) T.tile.warp.copy(view(s), f, { dispatch: opts.dispatch });
      else T.tile.warp.copy(view(s), f);
      T.cuda.__syncwarp();
      T.tile.warp.copy(rows, view(s));
      T.tile.warp.copy(Y, rows);
    },
  );
}

function runStore(fn: PrimFunc): void {
  const x = distinct(256);
  const X = tensor(x, { shape: [16, 16], dtype: "float16", device: dev });
  const Y = tensor.zeros([16, 16], "float16", dev);
  compile(fn, { target: "cuda" })(X, Y);
  expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x));
  X.dispose();
  Y.dispose();
}

describe("T.tile.warp/wg.copy fragments → shared (sm_90): stmatrix only on provably aligned rows", () => {
  it("s.sub(':', '4:20'): the vectorized st.shared path, explain says why, values kept", () => {
    const fn = storeKernel("stm_mis", (s) => s.sub(":", "4:20"));
    const line = explainTile(fn)[1]!;
    expect(line).toMatch(/T\.tile\.warp\.copy → st\.shared vectors of 4 B/);
    expect(line).toMatch(
      /\(not stmatrix: the view starts at element 4 of s \(byte 8\), so its rows start at byte 8 of 16: .*a stmatrix row address must be 16-byte aligned \(PTX ISA, stmatrix\)\)/,
    );
    expect(line).not.toMatch(/stmatrix needs sm_90/);
    expect(ptxOf(fn, "sm_90")).not.toMatch(/stmatrix\.sync/);
    runStore(fn);
  });

  it("s.sub(':', '8:24') keeps stmatrix.x4; a 128B swizzle at byte 8 falls back", () => {
    const fn = storeKernel("stm_al", (s) => s.sub(":", "8:24"));
    expect(explainTile(fn)[1]).toMatch(
      /→ stmatrix x4 ×1: f is .* keeps each 16-byte row contiguous \(sm_90\)/,
    );
    expect(ptxOf(fn, "sm_90")).toMatch(/stmatrix\.sync\.aligned\.m8n8\.x4\.shared\.b16/);
    runStore(fn);
    const swz = storeKernel("stm_swz_mis", (s) => s.sub(":", "4:20"), { swizzle128: true, W: 64 });
    expect(explainTile(swz)[1]).toMatch(
      /st\.shared vectors of 4 B .*\(not stmatrix: .*would be split across two atoms/,
    );
    expect(ptxOf(swz, "sm_90")).not.toMatch(/stmatrix\.sync/);
    runStore(swz);
  });

  it("a wgmma D tile (wg scope) stored to a view at byte 8: the vector path, values kept", () => {
    const fn = T.function(
      "stm_wg_mis",
      { X: T.Tensor([64, 64], "float16"), Y: T.Tensor([64, 64], "float16") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }), arch: "sm_90" });
        const s = T.alloc_shared([64, 72], "float16");
        const f = T.alloc_local([64, 64], "float16", {
          layout: T.layout.wgmma_tile_layout("D", 64, 64, "float32"),
        });
        const rows = T.alloc_local([64, 64], "float16", {
          layout: T.layout.wg_local_layout(64, 64),
        });
        T.tile.wg.copy(f, X);
        T.tile.wg.copy(s.sub(":", "4:68"), f);
        T.cuda.cta_sync();
        T.tile.wg.copy(rows, s.sub(":", "4:68"));
        T.tile.wg.copy(Y, rows);
      },
    );
    expect(explainTile(fn)[1]).toMatch(
      /T\.tile\.wg\.copy → st\.shared .*\(not stmatrix: the view starts at element 4 of s \(byte 8\), so its rows start at byte 8 of 16/,
    );
    expect(ptxOf(fn, "sm_90")).not.toMatch(/stmatrix\.sync/);
    const xs = distinctHalves(4096);
    const X = tensor(xs, { shape: [64, 64], dtype: "float16", device: dev });
    const Y = tensor.zeros([64, 64], "float16", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(xs));
    X.dispose();
    Y.dispose();
  });
});

describe("a forced ldmatrix / stmatrix on rows off the 16-byte grid is TX2022 at the author's line", () => {
  const here = (): number => Number(new Error().stack!.split("\n")[2]!.match(/:(\d+):\d+\)?$/)![1]);

  it("forced ldmatrix at a column offset of 8 bytes names the byte, the vector path and an aligned slice", () => {
    let line = 0;
    const e = errorOf(() =>
      T.function("lda_forced", { Y: T.Tensor([16, 16], "float16") }, ({ Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const s = T.alloc_shared([16, 32], "float16");
        const a = T.alloc_local([16, 16], "float16", {
          layout: L("A", "m16n8k16", "float16", 16, 16),
        });
        line = here() + 1;
        T.tile.warp.copy(a, s.sub(":", "4:20"), { dispatch: "ldmatrix" });
        T.tile.warp.copy(Y, a);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.span?.line).toBe(line);
    expect(e.message).toMatch(
      /T\.tile\.warp\.copy: \{ dispatch: "ldmatrix" \}: ldmatrix into a .*\(m16n8k16 A fragments\): the view starts at element 4 of s \(byte 8\), so its rows start at byte 8 of 16: row 0 of register 0's 8 × 8 matrix \(element 0 of the view\) is byte 8 of s; an ldmatrix row address must be 16-byte aligned \(PTX ISA, ldmatrix\)/,
    );
    expect(e.message).toMatch(
      /nearest that works: \{ dispatch: "vector" \} .*, or a slice of s that starts on a multiple of 8 elements \(16 bytes\): element 0 or 8 instead of 4/,
    );
  });

  it("forced ldmatrix under a 128B swizzle, and on a runtime offset it cannot prove aligned", () => {
    const swz = errorOf(() =>
      loadKernel("lda_forced_swz", {
        W: 64,
        view: cols(4),
        at: colsAt(64, 4),
        swizzle128: true,
        dispatch: "ldmatrix",
      }),
    );
    expect(swz.code).toBe("TX2022");
    expect(swz.message).toMatch(
      /\{ dispatch: "ldmatrix" \}: .*rows start at byte 8 of 16: .*would be split across two atoms; an ldmatrix row address must be 16-byte aligned/,
    );
    const rt = errorOf(() =>
      loadKernel("lda_forced_rt", {
        W: 40,
        view: (s, k) => s.rearrange("r (a b) -> r a b", { b: 20 }).sub(":", k, "0:16"),
        at: () => 0,
        dispatch: "ldmatrix",
      }),
    );
    expect(rt.code).toBe("TX2022");
    expect(rt.message).toMatch(
      /the view's offset is known only at run time and provably a multiple of 20 elements .*nearest that works: \{ dispatch: "vector" \}.*a view offset that is evidently a multiple of 8 elements/,
    );
    // Aligned, the forced instruction serves.
    const ok = loadKernel("lda_forced_ok", {
      W: 32,
      view: cols(16),
      at: colsAt(32, 16),
      dispatch: "ldmatrix",
    });
    expect(loadLine(ok)).toMatch(/→ ldmatrix x4 ×1: /);
  });

  it("forced stmatrix at sm_90 on a view at byte 8 names it and suggests the vector path", () => {
    const e = errorOf(() =>
      storeKernel("stm_forced_mis", (s) => s.sub(":", "4:20"), { dispatch: "stmatrix" }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /T\.tile\.warp\.copy: \{ dispatch: "stmatrix" \}: stmatrix from f .*: the view starts at element 4 of s \(byte 8\), so its rows start at byte 8 of 16.*a stmatrix row address must be 16-byte aligned \(PTX ISA, stmatrix\); nearest that works: \{ dispatch: "vector" \} \(or no dispatch option: the vectorized st\.shared path\), or a slice of s that starts on a multiple of 8 elements \(16 bytes\): element 0 or 8 instead of 4/,
    );
    const vec = storeKernel("stm_forced_vec", (s) => s.sub(":", "4:20"), { dispatch: "vector" });
    expect(explainTile(vec)[1]).toMatch(/st\.shared vectors of 4 B .*\(\{ dispatch: "vector" \}\)/);
    runStore(vec);
  });
});
