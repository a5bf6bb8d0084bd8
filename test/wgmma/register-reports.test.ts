// How the simulator names a wgmma's registers in its reports:
// - TX6023 names the accumulator as the author indexes the buffer (`acc[4]` of a wgmma issued
//   with accumulator offset 4), not relative to the offset;
// - TX6027 is reported once per register write after the fence, not once per later mma_async
//   (an unrolled k loop of 4 wgmmas over the same accumulators).
// Lines are found through the `// @name` markers at the ends of the lines below.
import { describe, expect, it } from "vitest";
import { markers } from "../util/markers.js";
import { fillOnes } from "./fragment.js";
import { verify, type TirxError } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim } from "@tirx-ts/runtime-sim";

const { at } = markers(import.meta.url);

const tag = (e: TirxError): string => `${e.code}@${e.span?.line ?? "?"}`;
const noteLines = (e: TirxError): number[] => e.notes.flatMap((n) => (n.span ? [n.span.line] : []));

const desc = T.ptx.wgmma.encode_matrix_descriptor;
const SWZ = { align: 1024, layout: T.swizzle_mode("128B") } as const;
type Acc = ReturnType<typeof T.alloc_local>;
type Tile = ReturnType<typeof T.alloc_shared>;

/** One warpgroup with filled sA [64, 64] and sB [8, 64] and 8 zeroed accumulators; `body`. */
function reports(body: (c: { acc: Acc; sA: Tile; sB: Tile }) => void): readonly TirxError[] {
  const fn = T.function("regs", {}, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SWZ });
    const sB = T.alloc_shared([8, 64], "float16", { name: "sB", ...SWZ });
    fillOnes(tid, sA, sB);
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    const acc = T.alloc_local([8], "float32", { name: "acc" });
    for (let i = 0; i < 8; i++) acc.set([i], T.float32(0));
    body({ acc, sA, sB });
  });
  return runSim(verify(fn), [], { hazards: "collect" }).reports;
}

describe("wgmma register reports (simulator)", () => {
  it("TX6023 names the accumulator element as the buffer's index (offset 4: acc[4])", () => {
    const rs = reports(({ acc, sA, sB }) => {
      T.ptx.wgmma.fence();
      T.ptx.wgmma.mma_async(
        "m64n8k16",
        "float16",
        acc,
        4,
        desc(sA.ptr([0, 0]), 16, 1024, 3),
        desc(sB.ptr([0, 0]), 16, 1024, 3),
      );
      T.ptx.wgmma.commit_group();
      acc.set([0], acc.get([4]).add(1)); // @earlyRead
      T.ptx.wgmma.wait_group(0);
    });
    expect(rs.map(tag)).toEqual([`TX6023@${at("earlyRead")}`]);
    expect(rs[0]!.message).toContain("reads acc[4], an accumulator of a wgmma.mma_async");
    expect(noteLines(rs[0]!).length).toBe(1);
  });

  it("TX6027 once for one write after the fence, however many mma_async follow", () => {
    const rs = reports(({ acc, sA, sB }) => {
      T.ptx.wgmma.fence();
      acc.set([3], T.float32(2)); // @lateWrite
      for (const kk of T.unroll(4)) {
        const da = desc(sA.ptr([0, kk.mul(16)]), 16, 1024, 3);
        T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, da, desc(sB.ptr([0, 0]), 16, 1024, 3)); // @loopMma
      }
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
    });
    expect(rs.map(tag)).toEqual([`TX6027@${at("loopMma")}`]);
    expect(noteLines(rs[0]!)).toEqual([at("lateWrite")]);
    expect(rs[0]!.message).toContain(
      "wrote acc[3] (accumulator) after the warp's last wgmma.fence",
    );
  });
});
