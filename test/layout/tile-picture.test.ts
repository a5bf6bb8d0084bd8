// `tirx layout --tile / --builtin / FILE --layout`: one SVG per TileLayout. The mma.sync
// m16n8k16 C fragment and a TMA 128B-swizzled float16 tile are snapshot files; every cell's text,
// parsed back, equals what `layoutCoordinates` says (with `m` swizzled for a ComposeLayout); the
// bank view of the swizzled tile is checked against the 128B swizzle's rule (16-byte chunk c of
// row r lands at chunk c ^ (r mod 8)); bad specs are TX8008 diagnostics, exit 2. All in-process
// (main), except one run of the real command.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
  applySwizzle,
  composeLayout,
  layoutAxes,
  layoutCoordinates,
  mmaSyncOperandLayout,
  parseTileLayout,
  swizzleMode,
  wgmmaOperandLayout,
  type ComposeLayout,
  type LayoutAxis,
  type TileLayout,
} from "@tirx-ts/core";
import { runCli } from "../util/cli-files.js";
import { tileLayoutPicture } from "../../packages/tirx-ts/src/tile-picture.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** `tirx ...args` in-process at the repository root. */
const tirx = (...args: string[]) => runCli(args, root);

/** The cells of a picture: `data-at` coordinate → the lines of its owner text. */
function cells(svg: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of svg.matchAll(/<g data-at="([\d,]+)">(.*?)<\/g>/g)) {
    const text = /<text class="o">(.*?)<\/text>/.exec(m[2]!)?.[1] ?? "";
    out.set(
      m[1]!,
      [...text.matchAll(/<tspan [^>]*>([^<]*)<\/tspan>/g)].map((t) => t[1]!),
    );
  }
  return out;
}

/** The cell text's short axis names, read back. */
const AXIS: Readonly<Record<string, LayoutAxis>> = {
  L: "laneid",
  W: "warpid",
  T: "tid_in_wg",
  G: "wgid",
  tid: "tid",
  C: "cta_in_cluster",
  P: "pid",
  r: "m",
  m: "m",
};

/** "W1 L5 r2" → { warpid: 1, laneid: 5, m: 2 }. */
function parseOwner(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text.split(" ")) {
    const m = /^([A-Za-z]+)(-?\d+)$/.exec(part);
    expect(m, `cell part ${JSON.stringify(part)}`).not.toBeNull();
    const axis = AXIS[m![1]!];
    expect(axis, `axis ${m![1]}`).toBeDefined();
    out[axis!] = Number(m![2]);
  }
  return out;
}

/** Every element's cell equals layoutCoordinates (m swizzled for a ComposeLayout), in order. */
function expectCellsMatch(layout: TileLayout | ComposeLayout, shape: number[], svg: string): void {
  const tile = layout.kind === "ComposeLayout" ? layout.tile : layout;
  const axes = [...layoutAxes(tile), "m"];
  const got = cells(svg);
  const total = shape.reduce((a, b) => a * b, 1);
  expect(got.size).toBe(total);
  for (let i = 0; i < total; i++) {
    const at: number[] = [];
    let x = i;
    for (let d = shape.length - 1; d >= 0; d--) {
      at.unshift(x % shape[d]!);
      x = Math.floor(x / shape[d]!);
    }
    const want = layoutCoordinates(tile, at, shape).map((c) => {
      const o: Record<string, number> = {};
      for (const a of axes) o[a] = c[a as LayoutAxis] ?? 0;
      if (layout.kind === "ComposeLayout") o["m"] = applySwizzle(layout.swizzle, o["m"]!);
      return o;
    });
    const lines = got.get(at.join(","));
    expect(lines, `cell ${at.join(",")}`).toBeDefined();
    expect(lines!.map(parseOwner), `cell [${at.join(", ")}]`).toEqual(want);
  }
}

describe("tirx layout draws a TileLayout", () => {
  test("the mma.sync m16n8k16 C fragment (float32): snapshot, and lane 5 holds c0..c3 at [1, 2..3] and [9, 2..3]", async () => {
    const r = await tirx("layout", "--builtin", "mma_sync:C:m16n8k16:float32");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    await expect(r.out).toMatchFileSnapshot("__snapshots__/mma_sync-C-m16n8k16-float32.svg");
    const c = cells(r.out);
    expect([c.get("1,2"), c.get("1,3"), c.get("9,2"), c.get("9,3")]).toEqual([
      ["L5 r0"],
      ["L5 r1"],
      ["L5 r2"],
      ["L5 r3"],
    ]);
    expectCellsMatch(mmaSyncOperandLayout("C", "m16n8k16", "float32"), [16, 8], r.out);
  });

  test("a TMA 128B-swizzled float16 tile (8 × 64, one swizzle period): snapshot, offsets and banks", async () => {
    const r = await tirx("layout", "--tile", "S[8, 64]", "--dtype", "float16", "--swizzle", "128B");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    await expect(r.out).toMatchFileSnapshot("__snapshots__/tma-128B-float16-8x64.svg");
    const layout = composeLayout(swizzleMode("128B"), parseTileLayout("S[8, 64]"), "float16");
    expectCellsMatch(layout, [8, 64], r.out);
    // Row r's logical 16-byte chunk c (8 halves) sits at chunk c ^ r of its 128-byte line.
    const c = cells(r.out);
    for (let row = 0; row < 8; row++) {
      for (let col = 0; col < 64; col++) {
        const chunk = Math.floor(col / 8) ^ row;
        expect(c.get(`${row},${col}`)).toEqual([`m${row * 64 + chunk * 8 + (col % 8)}`]);
      }
    }
    // The bank view: the word at bank b of line r holds logical [r, 8·((b/4) ^ r) + 2·(b % 4)].
    const words = [
      ...r.out.matchAll(/<title>bank (\d+), bytes (\d+)\.\.\d+: \[(\d+), (\d+)\]/g),
    ].map((m) => m.slice(1).map(Number));
    expect(words).toHaveLength(256);
    for (const [bank, byte, row, col] of words) {
      const line = Math.floor(byte! / 128);
      expect([row, col]).toEqual([line, 8 * (Math.floor(bank! / 4) ^ line) + 2 * (bank! % 4)]);
    }
  });

  test("every cell equals layoutCoordinates: each built-in fragment, replicas, a swizzled tile", () => {
    const cases: [TileLayout | ComposeLayout, number[]][] = [
      [mmaSyncOperandLayout("A", "m16n8k16", "float16"), [16, 16]],
      [mmaSyncOperandLayout("B", "m16n8k16", "bfloat16"), [16, 8]],
      [mmaSyncOperandLayout("A", "m16n8k8", "float32"), [16, 8]],
      [mmaSyncOperandLayout("B", "m16n8k8", "float32"), [8, 8]],
      [mmaSyncOperandLayout("A", "m16n8k32", "int8"), [16, 32]],
      [mmaSyncOperandLayout("B", "m16n8k32", "int8"), [32, 8]],
      [mmaSyncOperandLayout("C", "m16n8k32", "int32"), [16, 8]],
      [wgmmaOperandLayout("D", 16, "float32"), [64, 16]],
      [wgmmaOperandLayout("A", 16, "float16"), [64, 16]],
      [
        parseTileLayout(
          "S[(8, 4, 2) : (4@laneid, 1@laneid, 1)] + R[(2, 2) : (1@warpid, 2@warpid)]",
        ),
        [8, 8],
      ],
      [parseTileLayout("S[(4, 32) : (1@warpid, 1@laneid)] + O[3]"), [4, 2, 16]],
      [composeLayout(swizzleMode("64B"), parseTileLayout("S[16, 32]"), "float16"), [16, 32]],
    ];
    for (const [layout, shape] of cases) {
      const p = tileLayoutPicture(layout, { shape });
      expectCellsMatch(layout, shape, p.svg);
    }
  });

  test("a replicated element lists every owner; a wgmma D cell names its thread and slot", async () => {
    const r = await tirx(
      "layout",
      "--tile",
      "S[(8, 4, 2) : (4@laneid, 1@laneid, 1)] + R[2 : 1@warpid]",
      "--shape",
      "8,8",
    );
    expect(r.code).toBe(0);
    expect(cells(r.out).get("2,3")).toEqual(["W0 L9 r1", "W1 L9 r1"]);
    const d = await tirx("layout", "--builtin", "wgmma:D:8");
    expect(d.code).toBe(0);
    // d_i of thread 32w + 4g + t at [16w + g + 8·((i >> 1) & 1), 2t + (i & 1)].
    expect(cells(d.out).get("25,5")).toEqual([`T${32 + 4 * 1 + 2} r3`]);
  });

  test("--out: a folder gets NAME.svg and a summary line; FILE --layout draws an export", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-tile-picture-"));
    try {
      const r = await tirx("layout", "--builtin", "mma_sync:A:m16n8k8", "--out", `${dir}/`);
      expect(r.err).toBe("");
      expect(r.out).toBe(
        `${dir}/mma_sync-A-m16n8k8-float32.svg: S[(2, 8, 2, 4) : (1, 4@laneid, 2, 1@laneid)] over [16, 8] float32: 128 elements, 32 threads\n`,
      );
      const e = await tirx(
        "layout",
        "test/fixtures/tile_layouts.ts",
        "--layout",
        "replicated",
        "--shape",
        "8,8",
        "--out",
        join(dir, "rep.svg"),
      );
      expect(e.err).toBe("");
      expect(e.code).toBe(0);
      expect(cells(readFileSync(join(dir, "rep.svg"), "utf8")).get("0,0")).toEqual([
        "W0 L0 r0",
        "W1 L0 r0",
      ]);
      const s = await tirx(
        "layout",
        "test/fixtures/tile_layouts.ts",
        "--layout",
        "swizzled",
        "--dtype",
        "float16",
        "--out",
        dir,
      );
      expect(s.code).toBe(0);
      const svg = readFileSync(join(dir, "swizzled.svg"), "utf8");
      expect(cells(svg).get("1,0")).toEqual(["m72"]);
      expect(readdirSync(dir).sort()).toEqual([
        "mma_sync-A-m16n8k8-float32.svg",
        "rep.svg",
        "swizzled.svg",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("bad specs are TX8008 (or TX8001 for options that do not go together), exit 2, no stack", async () => {
    const cases: [string[], string, RegExp][] = [
      [
        ["--tile", "S[(8, 4) : (4@lane, 1)]"],
        "TX8008",
        /unknown axis `lane`; did you mean `laneid`\?/,
      ],
      [["--tile", "S[(8, 4) : "], "TX8008", /TileLayout notation: expected an integer/],
      [["--builtin", "mma_sync:D:m16n8k16"], "TX8008", /operand is A, B or C/],
      [["--builtin", "mma_sync:A:m16n8k4"], "TX8008", /shape is one of m16n8k16/],
      [["--builtin", "mma_sync:A:m16n8k16:int8"], "TX8008", /holds float16 or bfloat16, not int8/],
      [["--builtin", "wgmma:D:12"], "TX8008", /multiple of 8 in 8\.\.256/],
      [["--builtin", "tmem:1"], "TX8008", /unknown built-in layout "tmem"/],
      [["--tile", "S[4, 8]", "--shape", "3,3"], "TX8008", /does not group by the shape \[3, 3\]/],
      [["--tile", "S[4, 8]", "--shape", "4,a"], "TX8008", /positive integers/],
      [["--tile", "S[4, 8]", "--dtype", "half"], "TX8008", /"?half"? is not a dtype/],
      [["--tile", "S[4, 8]", "--swizzle", "96B"], "TX8008", /32B, 64B or 128B/],
      [["--tile", "S[32 : 1@laneid]", "--swizzle", "128B"], "TX8008", /register layout/],
      // Too large to draw: refused before any work (these crashed with a RangeError, exit 70).
      [["--tile", "S[100000, 100000]"], "TX8008", /10000000000 elements; .*at most 16384/],
      [["--tile", "S[(1073741824, 4) : (1@laneid, 1)]"], "TX8008", /at most 16384/],
      [["--tile", "S[2048, 2048]"], "TX8008", /4194304 elements; a picture draws at most 16384/],
      [["--tile", "S[129, 128]"], "TX8008", /16512 elements; .*16384 \(128 × 128\)/],
      // Thread axes past their hardware range, as the verifier's TX2021 in a kernel.
      [["--tile", "S[(64, 8) : (1@laneid, 1)]"], "TX8008", /binds laneid 0\.\.63, .*0\.\.31/],
      [["--tile", "S[(256, 2) : (1@tid_in_wg, 1)]"], "TX8008", /tid_in_wg 0\.\.255/],
      [["--tile", "S[(2, 32) : (32@warpid, 1@laneid)]"], "TX8008", /warpid 0\.\.32/],
      [["--tile", "S[32 : 1@laneid] + O[-1@laneid]"], "TX8008", /laneid -1\.\.30/],
      [["--tile", "S[4, 8]", "--builtin", "wgmma:D:8"], "TX8001", /one of --tile, --builtin/],
      [["--tile", "S[4, 8]", "--kernel", "k"], "TX8001", /--kernel is for a kernel's pictures/],
      [["examples/gemm_mma.ts", "--tile", "S[4, 8]"], "TX8001", /no file goes with it/],
      [["examples/gemm_mma.ts", "--layout", "nope"], "TX8008", /exports no TileLayout/],
      [
        ["examples/gemm_mma.ts", "--kernel", "gemm_mma", "--shape", "4,4"],
        "TX8001",
        /--shape is for drawing a TileLayout/,
      ],
    ];
    for (const [args, code, why] of cases) {
      const r = await tirx("layout", ...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.err, args.join(" ")).toMatch(new RegExp(`^tirx: error ${code} `));
      expect(r.err, args.join(" ")).toMatch(why);
      expect(r.err).not.toMatch(/\n\s+at /);
      expect(r.out).toBe("");
    }
  });

  test("the largest drawable tile and the full thread ranges are drawn", async () => {
    const big = await tirx("layout", "--tile", "S[128, 128]");
    expect(big.code).toBe(0);
    expect(big.out).toMatch(/^<svg/);
    const lanes = await tirx("layout", "--tile", "S[(32, 32, 2) : (1@warpid, 1@laneid, 1)]");
    expect(lanes.code).toBe(0);
    expect(lanes.out).toContain("W31 L31 r1");
  });

  test("the real command writes the C fragment's SVG (one subprocess run)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-tile-picture-"));
    try {
      const bin = join(root, "packages/tirx-ts/bin/tirx.js");
      const r = spawnSync(
        process.execPath,
        [bin, "layout", "--builtin", "mma_sync:C:m16n8k16:float32", "--out", `${dir}/`],
        { cwd: root, encoding: "utf8" },
      );
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      const svg = readFileSync(join(dir, "mma_sync-C-m16n8k16-float32.svg"), "utf8");
      expect(cells(svg).size).toBe(128);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
