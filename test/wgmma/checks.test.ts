import { describe, expect, it } from "vitest";
import { isTirxError, verify, type TirxError } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim } from "@tirx-ts/runtime-sim";

type Idx = ReturnType<typeof T.cuda.thread_idx>;
type Tile = ReturnType<typeof T.alloc_shared>;
type Regs = ReturnType<typeof T.alloc_local>;
interface Ctx {
  readonly tid: Idx;
  readonly sA: Tile;
  readonly sB: Tile;
  readonly acc: Regs;
}

function simReports(name: string, body: (c: Ctx) => void): readonly TirxError[] {
  const fn = T.function(name, {}, () => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const swz = { align: 1024, layout: T.swizzle_mode("128B") } as const;
    const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...swz });
    const sB = T.alloc_shared([16, 64], "float16", { name: "sB", ...swz });
    for (const i of T.range(32)) {
      const e = tid.add(i.mul(128));
      sA.set([e.floordiv(64), e.mod(64)], T.float16(1));
    }
    for (const i of T.range(8)) {
      const e = tid.add(i.mul(128));
      sB.set([e.floordiv(64), e.mod(64)], T.float16(1));
    }
    T.ptx.fence.proxy_async();
    T.cuda.cta_sync();
    const acc = T.alloc_local([8], "float32", { name: "acc" });
    for (let i = 0; i < 8; i++) acc.set([i], T.float32(0));
    body({ tid, sA, sB, acc });
    T.ptx.wgmma.commit_group();
    T.ptx.wgmma.wait_group(0);
  });
  return runSim(verify(fn), [], { hazards: "collect" }).reports;
}

const show = (rs: readonly TirxError[]) =>
  rs.map((r) => ({ code: r.code, line: r.span?.line, msg: r.text, notes: r.notes.map((n) => [n.message, n.span?.line]) }));

describe("probe", () => {
  it("good", () => {
    const rs = simReports("good", ({ sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      for (let kk = 0; kk < 4; kk++) {
        const da = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0, kk * 16]), 16, 1024, 3);
        const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0, kk * 16]), 16, 1024, 3);
        T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db);
      }
    });
    console.log(JSON.stringify(show(rs), null, 1));
  });
  it("row1", () => {
    const rs = simReports("row1", ({ tid, sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      const row = tid.floordiv(1000).add(1);
      const da = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([row, 0]), 16, 1024, 3);
      const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0, 0]), 16, 1024, 3);
      T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db);
    });
    console.log(JSON.stringify(show(rs), null, 1));
  });
  it("row32", () => {
    const rs = simReports("row32", ({ tid, sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      const row = tid.floordiv(1000).add(32);
      const da = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([row, 0]), 16, 1024, 3);
      const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0, 0]), 16, 1024, 3);
      T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db);
    });
    console.log(JSON.stringify(show(rs), null, 1));
  });
  it("accwrite", () => {
    const rs = simReports("accw", ({ sA, sB, acc }) => {
      T.ptx.wgmma.fence();
      acc.set([3], T.float32(0));
      const da = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0, 0]), 16, 1024, 3);
      const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0, 0]), 16, 1024, 3);
      T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db);
    });
    console.log(JSON.stringify(show(rs), null, 1));
  });
  it("static", () => {
    try {
      T.function("st", {}, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const sA = T.alloc_shared([64, 64], "float16", { name: "sA", layout: T.swizzle_mode("128B") });
        const sB = T.alloc_shared([16, 64], "float16", { name: "sB", layout: T.swizzle_mode("128B") });
        const acc = T.alloc_local([8], "float32", { name: "acc" });
        T.ptx.wgmma.fence();
        const da = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0, 0]), 16, 512, 3);
        const db = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0, 0]), 16, 1024, 3);
        T.ptx.wgmma.mma_async("m64n16k16", "float16", acc, 0, da, db);
      });
    } catch (e) {
      console.log(isTirxError(e) ? JSON.stringify(show([e])) : e);
    }
  });
});
