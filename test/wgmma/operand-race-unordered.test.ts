// A wgmma's shared operand read by the async proxy races with a
// generic-proxy write by another warpgroup that nothing orders before the wgmma, even when the
// writer fenced the async proxy (the fence makes the write visible to the async proxy; it does
// not order it before another thread's wgmma). The cta_sync variant is clean.
import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim } from "@tirx-ts/runtime-sim";

const SWZ = { align: 1024, layout: T.swizzle_mode("128B") } as const;

/** Warpgroup 1 fills sB (and fences); warpgroup 0 runs m64n16k16 with A from registers on sB. */
function kernel(sync: boolean): PrimFunc {
  return T.function(`wg_b_race_${sync}`, {}, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
    const tid = T.cuda.thread_idx("x");
    const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...SWZ });
    T.if_(tid.ge(128), () => {
      const t = tid.sub(128);
      for (const i of T.range((16 * 64) / 128)) {
        const e = t.add(i.mul(128));
        sB.set([e.floordiv(64), e.mod(64)], T.float16(1));
      }
      T.ptx.fence.proxy_async();
    });
    if (sync) T.cuda.cta_sync();
    T.if_(tid.lt(128), () => {
      const acc = T.alloc_local([8], "float32", { name: "acc" });
      for (let i = 0; i < 8; i++) acc.set([i], T.float32(0));
      const a = T.alloc_local([8], "float16", { name: "a" });
      for (let i = 0; i < 8; i++) a.set([i], T.float16(1));
      T.ptx.wgmma.fence();
      const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0, 0]), 16, 1024, 3);
      T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, a, db);
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
    });
  });
}

const codes = (fn: PrimFunc): string[] => {
  const vf = verify(fn);
  return [
    ...new Set(
      [0, 1, 3].flatMap((simSeed) =>
        runSim(vf, [], { hazards: "collect", simSeed }).reports.map((e) => e.code),
      ),
    ),
  ];
};

describe("a wgmma reading a shared operand another warpgroup wrote unordered", () => {
  it("with a cta_sync between: clean", () => {
    expect(codes(kernel(true))).toEqual([]);
  });
  it("without: TX6003 at the mma_async", () => {
    expect(codes(kernel(false))).toEqual(["TX6003"]);
  });
});
