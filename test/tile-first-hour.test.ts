// The tile layer's messages for a first-time user: a layout over the wrong thread axes for its
// scope says which axis, what the scope takes, and the layout rewritten over those axes (which
// then runs on the simulator, checked against the host's math); a nearest layout that a built-in
// builds is shown as that call; an unknown axis name gets a did-you-mean; the CLI prints
// --explain with --emit ir and says which --shape / --swizzle value is out of range.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor, type PrimFunc } from "tirx-ts";
import {
  builtinLayoutCall,
  isTirxError,
  layoutForScope,
  mmaSyncOperandLayout,
  mmaSyncTileLayout,
  parseTileLayout,
  wgLocalLayout,
  wgmmaOperandLayout,
  wgmmaTileLayout,
  type DType,
  type TirxError,
} from "@tirx-ts/core";
import { runCli } from "./util/cli-files.js";

const root = fileURLToPath(new URL("..", import.meta.url));

function errorOf(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

/** A kernel of `block` threads: X → register tile (layout `text`) → ×2 → Y, at `scope`. */
function doubler(text: string, scope: "wg" | "warp" | "cta", shape: number[], block: number) {
  return T.function(
    `double_${scope}`,
    { X: T.Tensor(shape, "float32"), Y: T.Tensor(shape, "float32") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
      const a = T.alloc_local(shape, "float32", { layout: T.TileLayout(text) });
      T.tile[scope].copy(a, X);
      T.tile[scope].mul(a, a, 2);
      T.tile[scope].copy(Y, a);
    },
  );
}

/** Run a doubler on the simulator; Y must be 2·X exactly (a float32 doubling is exact). */
function runDoubler(fn: PrimFunc, n: number, shape: number[]): void {
  const dev = sim();
  const x = Float32Array.from({ length: n }, (_, i) => (i % 17) - 8 + i / 64);
  const X = tensor(x, { shape, dtype: "float32", device: dev });
  const Y = tensor.zeros(shape, "float32", dev);
  compile(fn, { target: "cuda" })(X, Y);
  const y = Y.toArray() as Float32Array;
  expect([...y]).toEqual([...x].map((v) => v * 2));
}

describe("a layout over thread axes its scope does not take (TX2022)", () => {
  it("wg over warpid: names the axis, what wg takes, the rewrite, and the rewrite runs", () => {
    const e = errorOf(() => doubler("S[(4, 32) : (1@warpid, 1@laneid)]", "wg", [4, 32], 128));
    expect(e.code).toBe("TX2022");
    expect(e.message).toMatch(
      /T\.tile\.wg\.copy: a S\[\(4, 32\) : \(1@warpid, 1@laneid\)\] spreads over warpid \(the iter 4 : 1@warpid\), beyond the threads of one wg: a wg-scope primitive's layouts bind only laneid and tid_in_wg; inside a warpgroup 1@warpid is 32@tid_in_wg/,
    );
    const nearest =
      /nearest that works: (.*) \(the same threads in each warpgroup\) with T\.tile\.wg\.copy, or this layout with T\.tile\.cta\.copy/.exec(
        e.message,
      );
    expect(nearest?.[1]).toBe("S[(4, 32) : (32@tid_in_wg, 1@tid_in_wg)]");
    runDoubler(doubler(nearest![1]!, "wg", [4, 32], 128), 128, [4, 32]);
  });

  it("a layout naming warps but no lane gets the lanes as a tid_in_wg replica", () => {
    const l = layoutForScope(parseTileLayout("S[(4, 8) : (1@warpid, 1)]"), "wg");
    expect(l && parseTileLayout("S[(4, 8) : (32@tid_in_wg, 1)] + R[32 : 1@tid_in_wg]")).toEqual(l);
    const e = errorOf(() => doubler("S[(4, 8) : (1@warpid, 1)]", "wg", [4, 8], 128));
    const text = /nearest that works: (.*) \(the same threads/.exec(e.message)![1]!;
    runDoubler(doubler(text, "wg", [4, 8], 128), 32, [4, 8]);
  });

  it("warp over tid below 32 is laneid; no rewrite past the scope's threads", () => {
    const e = errorOf(() => doubler("S[(32, 2) : (1@tid, 1)]", "warp", [32, 2], 32));
    expect(e.message).toMatch(
      /warp-scope primitive's layouts bind only laneid; inside the first warp, k@tid is k@laneid/,
    );
    expect(e.message).toMatch(
      /nearest that works: S\[\(32, 2\) : \(1@laneid, 1\)\] \(the same threads in each warp\)/,
    );
    // 8 warps are past a warpgroup: only the wider scope serves it.
    expect(
      layoutForScope(parseTileLayout("S[(8, 32) : (1@warpid, 1@laneid)]"), "wg"),
    ).toBeUndefined();
    const wide = errorOf(() => doubler("S[(8, 32) : (1@warpid, 1@laneid)]", "wg", [8, 32], 256));
    expect(wide.message).toMatch(/; nearest that works: T\.tile\.cta\.copy \(at /);
  });

  it("the old warp-scope wording stays (spreads over warpid, the cta scope)", () => {
    const e = errorOf(() => doubler("S[(2, 32) : (1@warpid, 1@laneid)]", "warp", [2, 32], 64));
    expect(e.message).toMatch(
      /spreads over warpid \(the iter 2 : 1@warpid\), beyond the threads of one warp/,
    );
    expect(e.message).toMatch(/nearest that works: T\.tile\.cta\.copy \(at /);
  });
});

describe("a nearest layout a built-in builds is shown as its call", () => {
  it("recognises every built-in, element by element", () => {
    const cases: [ReturnType<typeof parseTileLayout>, number[], DType, string][] = [
      [
        mmaSyncTileLayout("C", "m16n8k16", "float32", 32, 16),
        [32, 16],
        "float32",
        'T.layout.mma_sync_tile_layout("C", "m16n8k16", "float32", 32, 16)',
      ],
      [
        mmaSyncOperandLayout("A", "m16n8k16", "bfloat16"),
        [16, 16],
        "bfloat16",
        'T.layout.mma_sync_tile_layout("A", "m16n8k16", "bfloat16", 16, 16)',
      ],
      [
        mmaSyncTileLayout("B", "m16n8k32", "int8", 32, 16),
        [32, 16],
        "int8",
        'T.layout.mma_sync_tile_layout("B", "m16n8k32", "int8", 32, 16)',
      ],
      [
        wgmmaOperandLayout("D", 32, "float32"),
        [64, 32],
        "float32",
        'T.layout.wgmma_tile_layout("D", 64, 32, "float32")',
      ],
      [
        wgmmaTileLayout("A", 128, 32, "bfloat16"),
        [128, 32],
        "bfloat16",
        'T.layout.wgmma_tile_layout("A", 128, 32, "bfloat16")',
      ],
      [wgLocalLayout(8), [128, 8], "float16", "T.layout.wg_local_layout(8)"],
      [wgLocalLayout(8, 64), [64, 8], "float32", "T.layout.wg_local_layout(8, 64)"],
    ];
    for (const [l, shape, dtype, call] of cases)
      expect(builtinLayoutCall(l, shape, dtype)).toBe(call);
    // The same text, written by hand, is recognised too; a layout no built-in builds is not.
    expect(
      builtinLayoutCall(parseTileLayout("S[(128, 8) : (1@tid_in_wg, 1)]"), [128, 8], "float32"),
    ).toBe("T.layout.wg_local_layout(8)");
    expect(
      builtinLayoutCall(parseTileLayout("S[(8, 16) : (1@laneid, 1)]"), [8, 16], "float32"),
    ).toBeUndefined();
  });

  it("an elementwise operand in another layout is told dst's layout as the built-in call", () => {
    const e = errorOf(() =>
      T.function("k", {}, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const c = T.alloc_local([16, 8], "float32", {
          layout: T.layout.mma_sync_tile_layout("C", "m16n8k16", "float32", 16, 8),
        });
        const d = T.alloc_local([16, 8], "float32", {
          layout: T.TileLayout("S[(4, 8, 4) : (1, 4@laneid, 1@laneid)]"),
        });
        T.tile.warp.add(c, c, d);
      }),
    );
    expect(e.message).toMatch(
      /nearest that works: b allocated as \[16, 8\] with T\.layout\.mma_sync_tile_layout\("C", "m16n8k16", "float32", 16, 8\) \(dst's\)/,
    );
  });
});

describe("an unknown axis name in a TileLayout (TX1026)", () => {
  it("says did you mean, and lists the axes, from the notation and from T.S / T.R / T.O", () => {
    // A typo in a stride is a type error in TypeScript (Stride names the axes); plain JS and
    // strings built at run time reach the check (hence `as never`).
    const axes = /the axes are m, laneid, warpid, tid_in_wg, wgid, tid, cta_in_cluster, pid/;
    const cases: [() => unknown, RegExp | undefined][] = [
      [() => T.TileLayout("S[(32) : (1@lane)]"), /unknown axis `lane`; did you mean `laneid`\?/],
      [
        () => T.TileLayout(T.S([32], ["1@warp_id" as never])),
        /unknown axis `warp_id`; did you mean `warpid`\?/,
      ],
      [
        () => T.TileLayout(T.S([4]), T.R([32], ["1@tid_in_warpgroup" as never])),
        /did you mean `tid_in_wg`\?/,
      ],
      [
        () => T.TileLayout(T.S([4]), T.O("1@laneidx" as never)),
        /unknown axis `laneidx`; did you mean `laneid`\?/,
      ],
      [() => T.TileLayout("S[(32) : (1@threadIdx)]"), /did you mean `tid`\?/],
      [() => T.TileLayout("S[(32) : (1@banana)]"), undefined],
    ];
    for (const [f, guess] of cases) {
      const e = errorOf(f);
      expect(e.code).toBe("TX1026");
      expect(e.message).toMatch(axes);
      if (guess) expect(e.message).toMatch(guess);
      else expect(e.message).toMatch(/unknown axis `banana` \(the axes are/);
    }
  });
});

describe("the CLI", () => {
  it("tirx build --explain --emit ir prints the explanation above the module, as with PTX", async () => {
    const file = "examples/tile/softmax.ts";
    const ir = await runCli(["build", file, "--explain", "--emit", "ir"], root);
    const ptx = await runCli(["build", file, "--explain"], root);
    expect(ir.err + ptx.err).toBe("");
    expect([ir.code, ptx.code]).toEqual([0, 0]);
    const head = (text: string): string[] => {
      const lines = text.split("\n");
      return lines.slice(
        0,
        lines.findIndex((l) => !l.startsWith("// ")),
      );
    };
    expect(head(ir.out).length).toBeGreaterThan(5);
    expect(head(ir.out)).toEqual(head(ptx.out));
    expect(head(ir.out)[2]).toMatch(/^\/\/ softmax\.ts:\d+ T\.tile\.cta\.max → .*shfl\.sync\.bfly/);
    expect(ir.out).toMatch(/T\.prim_func/);
  });

  it("tirx layout: a --shape or --swizzle value out of range is TX8008 naming it", async () => {
    const cases: [string[], RegExp][] = [
      [["--shape", "0,8"], /--shape 0,8: dim 0 is 0, and a dim is at least 1/],
      [["--shape", "-4,8"], /--shape -4,8: dim 0 is -4, and a dim is at least 1/],
      [["--shape", "4,-8"], /--shape 4,-8: dim 1 is -8/],
      [["--shape", "4,"], /--shape 4,: dim 1 is empty/],
      [
        ["--swizzle", "-1,4,8"],
        /--swizzle -1,4,8: per_element is -1, and P,B,S are bit counts in 0\.\.16/,
      ],
      [["--swizzle", "3,17,17"], /swizzle_len is 17/],
      [["--swizzle", "0"], /--swizzle 0: 0 bytes is no swizzle \(leave --swizzle out/],
      [["--swizzle", "-128B"], /-128 bytes is no swizzle/],
      [["--swizzle", "128"], /128 bytes is not a TMA swizzle span \(32, 64 or 128\); write 128B/],
    ];
    for (const [args, why] of cases) {
      const r = await runCli(["layout", "--tile", "S[8, 8]", ...args], root);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toMatch(/^tirx: error TX8008 /);
      expect(r.err, args.join(" ")).toMatch(why);
      expect(r.out).toBe("");
    }
  });
});

describe("README's tile-layer rules", () => {
  it("a reduction over lanes: dst [4, 1] in S[4 : 1] + R[32 : 1@laneid], as README shows", () => {
    const fn = T.function(
      "readme_sum",
      { X: T.Tensor([4, 32], "float32"), Y: T.Tensor([4, 1], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([4, 32], "float32", {
          layout: T.TileLayout("S[(4, 32) : (1, 1@laneid)]"),
        });
        const s = T.alloc_local([4, 1], "float32", {
          layout: T.TileLayout("S[4 : 1] + R[32 : 1@laneid]"),
        });
        T.tile.warp.copy(a, X);
        T.tile.warp.sum(s, a, 1);
        T.tile.warp.copy(Y, s);
      },
    );
    const dev = sim();
    // Small integers: every order of summation is exact.
    const x = Float32Array.from({ length: 128 }, (_, i) => (i * 7) % 13);
    const X = tensor(x, { shape: [4, 32], dtype: "float32", device: dev });
    const Y = tensor.zeros([4, 1], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    const want = [0, 1, 2, 3].map((r) => x.slice(r * 32, r * 32 + 32).reduce((p, v) => p + v, 0));
    expect([...(Y.toArray() as Float32Array)]).toEqual(want);
  });
});
