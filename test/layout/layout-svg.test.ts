// `tirx layout`'s pictures and the simulator's bank-conflict counts per access site: one warp
// reads eight 16-byte rows 128 bytes apart with ldmatrix.x1. Row-major, all eight rows start in
// bank 0 (8 wavefronts for the one phase); under the 128B swizzle row r's chunk moves to chunk
// r, so the phase needs one wavefront.
import { describe, expect, it } from "vitest";
import { T, layoutPictures } from "tirx-ts";
import type { PrimFunc } from "@tirx-ts/core";

function rows(layout: "default" | ReturnType<typeof T.swizzle_mode>): PrimFunc {
  return T.function("rows", { Y: T.Tensor([64], "float16") }, ({ Y }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const lane = T.cuda.thread_idx("x");
    const S = T.alloc_shared([8, 64], "float16", { layout, name: "S" });
    for (const j of T.range(16)) {
      const e = T.let_("e", lane.mul(16).add(j));
      S.set([e.floordiv(64), e.floormod(64)], T.float16(1));
    }
    T.cuda.cta_sync();
    const f = T.alloc_local([2], "float16", { name: "f" });
    T.ptx.ldmatrix(false, 1, ".b16", f, 0, S.ptr([lane.floormod(8), 0]));
    Y.set([lane.mul(2)], f.get([0]));
    Y.set([lane.mul(2).add(1)], f.get([1]));
  });
}

describe("layout pictures and bank conflicts", () => {
  it("counts 8 wavefronts for row-major rows 128 bytes apart, 1 under the 128B swizzle", () => {
    const [plain] = layoutPictures(rows("default"));
    const [swizzled] = layoutPictures(rows(T.swizzle_mode("128B")));
    expect([plain!.op, plain!.phases, plain!.wavefronts]).toEqual([
      "ldmatrix.sync.aligned.m8n8.x1.shared.b16",
      1,
      8,
    ]);
    expect([swizzled!.phases, swizzled!.wavefronts]).toEqual([1, 1]);
    // The conflicting moves are outlined; the swizzled picture has none.
    expect(plain!.svg.match(/class="c"/g)?.length).toBe(32);
    expect(swizzled!.svg).not.toContain('class="c"');
  });

  it("draws which lane's row lands in which banks (SVG text)", () => {
    const [p] = layoutPictures(rows(T.swizzle_mode("128B")));
    expect(p!.svg).toMatchInlineSnapshot(`
      "<svg xmlns="http://www.w3.org/2000/svg" width="804" height="294" font-family="monospace">
      <style>.t{font-size:12px}.s{font-size:9px;fill:#555}.l{font-size:9px;fill:#fff}.e{fill:#f4f4f4;stroke:#ccc}.c{stroke:#e00;stroke-width:2}</style>
      <text x="4" y="16" class="t">rows: ldmatrix.sync.aligned.m8n8.x1.shared.b16 at line 20 — 1 warp instructions, 1 shared wavefronts for 1 phases (0 from bank conflicts)</text>
      <text x="4" y="38" class="t">src shared "S" (shared-window bytes, 32 banks × 4 B per line)</text>
      <text x="94" y="54" class="s">0</text>
      <text x="182" y="54" class="s">4</text>
      <text x="270" y="54" class="s">8</text>
      <text x="358" y="54" class="s">12</text>
      <text x="446" y="54" class="s">16</text>
      <text x="534" y="54" class="s">20</text>
      <text x="622" y="54" class="s">24</text>
      <text x="710" y="54" class="s">28</text>
      <text x="4" y="73" class="s">+0</text>
      <rect x="92" y="58" width="704" height="22" class="e"/>
      <text x="4" y="95" class="s">+128</text>
      <rect x="92" y="80" width="704" height="22" class="e"/>
      <text x="4" y="117" class="s">+256</text>
      <rect x="92" y="102" width="704" height="22" class="e"/>
      <text x="4" y="139" class="s">+384</text>
      <rect x="92" y="124" width="704" height="22" class="e"/>
      <text x="4" y="161" class="s">+512</text>
      <rect x="92" y="146" width="704" height="22" class="e"/>
      <text x="4" y="183" class="s">+640</text>
      <rect x="92" y="168" width="704" height="22" class="e"/>
      <text x="4" y="205" class="s">+768</text>
      <rect x="92" y="190" width="704" height="22" class="e"/>
      <text x="4" y="227" class="s">+896</text>
      <rect x="92" y="212" width="704" height="22" class="e"/>
      <rect x="92" y="58" width="22" height="22" fill="hsl(0,65%,38%)"><title>warp 0 lane 0: S bytes 0..15</title></rect>
      <text x="95" y="73" class="l">0</text>
      <rect x="114" y="58" width="22" height="22" fill="hsl(0,65%,38%)"><title>warp 0 lane 0: S bytes 0..15</title></rect>
      <text x="117" y="73" class="l">0</text>
      <rect x="136" y="58" width="22" height="22" fill="hsl(0,65%,38%)"><title>warp 0 lane 0: S bytes 0..15</title></rect>
      <text x="139" y="73" class="l">0</text>
      <rect x="158" y="58" width="22" height="22" fill="hsl(0,65%,38%)"><title>warp 0 lane 0: S bytes 0..15</title></rect>
      <text x="161" y="73" class="l">0</text>
      <rect x="180" y="80" width="22" height="22" fill="hsl(0,65%,39%)"><title>warp 0 lane 1: S bytes 144..159</title></rect>
      <text x="183" y="95" class="l">1</text>
      <rect x="202" y="80" width="22" height="22" fill="hsl(0,65%,39%)"><title>warp 0 lane 1: S bytes 144..159</title></rect>
      <text x="205" y="95" class="l">1</text>
      <rect x="224" y="80" width="22" height="22" fill="hsl(0,65%,39%)"><title>warp 0 lane 1: S bytes 144..159</title></rect>
      <text x="227" y="95" class="l">1</text>
      <rect x="246" y="80" width="22" height="22" fill="hsl(0,65%,39%)"><title>warp 0 lane 1: S bytes 144..159</title></rect>
      <text x="249" y="95" class="l">1</text>
      <rect x="268" y="102" width="22" height="22" fill="hsl(0,65%,41%)"><title>warp 0 lane 2: S bytes 288..303</title></rect>
      <text x="271" y="117" class="l">2</text>
      <rect x="290" y="102" width="22" height="22" fill="hsl(0,65%,41%)"><title>warp 0 lane 2: S bytes 288..303</title></rect>
      <text x="293" y="117" class="l">2</text>
      <rect x="312" y="102" width="22" height="22" fill="hsl(0,65%,41%)"><title>warp 0 lane 2: S bytes 288..303</title></rect>
      <text x="315" y="117" class="l">2</text>
      <rect x="334" y="102" width="22" height="22" fill="hsl(0,65%,41%)"><title>warp 0 lane 2: S bytes 288..303</title></rect>
      <text x="337" y="117" class="l">2</text>
      <rect x="356" y="124" width="22" height="22" fill="hsl(0,65%,42%)"><title>warp 0 lane 3: S bytes 432..447</title></rect>
      <text x="359" y="139" class="l">3</text>
      <rect x="378" y="124" width="22" height="22" fill="hsl(0,65%,42%)"><title>warp 0 lane 3: S bytes 432..447</title></rect>
      <text x="381" y="139" class="l">3</text>
      <rect x="400" y="124" width="22" height="22" fill="hsl(0,65%,42%)"><title>warp 0 lane 3: S bytes 432..447</title></rect>
      <text x="403" y="139" class="l">3</text>
      <rect x="422" y="124" width="22" height="22" fill="hsl(0,65%,42%)"><title>warp 0 lane 3: S bytes 432..447</title></rect>
      <text x="425" y="139" class="l">3</text>
      <rect x="444" y="146" width="22" height="22" fill="hsl(0,65%,43%)"><title>warp 0 lane 4: S bytes 576..591</title></rect>
      <text x="447" y="161" class="l">4</text>
      <rect x="466" y="146" width="22" height="22" fill="hsl(0,65%,43%)"><title>warp 0 lane 4: S bytes 576..591</title></rect>
      <text x="469" y="161" class="l">4</text>
      <rect x="488" y="146" width="22" height="22" fill="hsl(0,65%,43%)"><title>warp 0 lane 4: S bytes 576..591</title></rect>
      <text x="491" y="161" class="l">4</text>
      <rect x="510" y="146" width="22" height="22" fill="hsl(0,65%,43%)"><title>warp 0 lane 4: S bytes 576..591</title></rect>
      <text x="513" y="161" class="l">4</text>
      <rect x="532" y="168" width="22" height="22" fill="hsl(0,65%,44%)"><title>warp 0 lane 5: S bytes 720..735</title></rect>
      <text x="535" y="183" class="l">5</text>
      <rect x="554" y="168" width="22" height="22" fill="hsl(0,65%,44%)"><title>warp 0 lane 5: S bytes 720..735</title></rect>
      <text x="557" y="183" class="l">5</text>
      <rect x="576" y="168" width="22" height="22" fill="hsl(0,65%,44%)"><title>warp 0 lane 5: S bytes 720..735</title></rect>
      <text x="579" y="183" class="l">5</text>
      <rect x="598" y="168" width="22" height="22" fill="hsl(0,65%,44%)"><title>warp 0 lane 5: S bytes 720..735</title></rect>
      <text x="601" y="183" class="l">5</text>
      <rect x="620" y="190" width="22" height="22" fill="hsl(0,65%,46%)"><title>warp 0 lane 6: S bytes 864..879</title></rect>
      <text x="623" y="205" class="l">6</text>
      <rect x="642" y="190" width="22" height="22" fill="hsl(0,65%,46%)"><title>warp 0 lane 6: S bytes 864..879</title></rect>
      <text x="645" y="205" class="l">6</text>
      <rect x="664" y="190" width="22" height="22" fill="hsl(0,65%,46%)"><title>warp 0 lane 6: S bytes 864..879</title></rect>
      <text x="667" y="205" class="l">6</text>
      <rect x="686" y="190" width="22" height="22" fill="hsl(0,65%,46%)"><title>warp 0 lane 6: S bytes 864..879</title></rect>
      <text x="689" y="205" class="l">6</text>
      <rect x="708" y="212" width="22" height="22" fill="hsl(0,65%,47%)"><title>warp 0 lane 7: S bytes 1008..1023</title></rect>
      <text x="711" y="227" class="l">7</text>
      <rect x="730" y="212" width="22" height="22" fill="hsl(0,65%,47%)"><title>warp 0 lane 7: S bytes 1008..1023</title></rect>
      <text x="733" y="227" class="l">7</text>
      <rect x="752" y="212" width="22" height="22" fill="hsl(0,65%,47%)"><title>warp 0 lane 7: S bytes 1008..1023</title></rect>
      <text x="755" y="227" class="l">7</text>
      <rect x="774" y="212" width="22" height="22" fill="hsl(0,65%,47%)"><title>warp 0 lane 7: S bytes 1008..1023</title></rect>
      <text x="777" y="227" class="l">7</text>
      <text x="4" y="256" class="t">registers: row r of matrix j is lane 8j + r's address; every lane receives its part of it</text>
      <rect x="92" y="264" width="22" height="22" fill="hsl(0,65%,38%)"/>
      <text x="95" y="279" class="l">0</text>
      <rect x="114" y="264" width="22" height="22" fill="hsl(0,65%,39%)"/>
      <text x="117" y="279" class="l">1</text>
      <rect x="136" y="264" width="22" height="22" fill="hsl(0,65%,41%)"/>
      <text x="139" y="279" class="l">2</text>
      <rect x="158" y="264" width="22" height="22" fill="hsl(0,65%,42%)"/>
      <text x="161" y="279" class="l">3</text>
      <rect x="180" y="264" width="22" height="22" fill="hsl(0,65%,43%)"/>
      <text x="183" y="279" class="l">4</text>
      <rect x="202" y="264" width="22" height="22" fill="hsl(0,65%,44%)"/>
      <text x="205" y="279" class="l">5</text>
      <rect x="224" y="264" width="22" height="22" fill="hsl(0,65%,46%)"/>
      <text x="227" y="279" class="l">6</text>
      <rect x="246" y="264" width="22" height="22" fill="hsl(0,65%,47%)"/>
      <text x="249" y="279" class="l">7</text>
      <text x="4" y="279" class="s">w0 f r0</text>
      </svg>"
    `);
  });
});
