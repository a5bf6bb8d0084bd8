// PTX of the warp, CTA and atomic families: inline snapshots of the instructions, every
// signature assembled by ptxas 13.0 (one batch), and the target contracts checked against ptxas.
import { describe, expect, it } from "vitest";
import {
  allOps,
  atomicName,
  findOp,
  REDUCE_DTYPES,
  SHFL_DTYPES,
  type DType,
  type PrimFunc,
} from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleAll, type PtxJob } from "../conformance/ptxas-pool.js";
import { assemblePtx } from "../util/ptxas.js";

/** An op's PTX version and sm, as `"7.8 sm_90"`. */
const formatVersionOf = (name: string): string => {
  const op = findOp(name)!;
  return `${op.ptx.join(".")} sm_${op.sm}`;
};

/** The instruction lines of `text` that start with one of `prefixes` (operands kept). */
const lines = (text: string, ...prefixes: string[]): string =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => prefixes.some((p) => l.startsWith(p)))
    .join("\n");

/** A 32-thread kernel over `A` (of `dt`) writing `body(x, tid)` to `B`. */
function warpKernel(
  dt: DType,
  out: DType,
  body: (x: PrimExpr, tid: PrimExpr) => PrimExpr,
  block = 32,
): PrimFunc {
  return T.function(
    `k_${dt}`,
    { A: T.Tensor([block], dt), B: T.Tensor([block], out) },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
      const tid = T.cuda.thread_idx("x");
      B.set([tid], body(A.get([tid]), tid));
    },
  );
}

describe("PTX of warp ops", () => {
  it("warp_sum is an unrolled butterfly of shfl.sync.bfly with descending lane masks", () => {
    const ptx = compileToPtx(warpKernel("float32", "float32", (x) => T.cuda.warp_sum(x))).text;
    expect(lines(ptx, "shfl", "add.f32", "ld.local", "st.local")).toMatchInlineSnapshot(`
      "shfl.sync.bfly.b32 %f3, %f1, 16, 31, 0xffffffff;
      add.f32 %f4, %f1, %f3;
      shfl.sync.bfly.b32 %f5, %f4, 8, 31, 0xffffffff;
      add.f32 %f6, %f4, %f5;
      shfl.sync.bfly.b32 %f7, %f6, 4, 31, 0xffffffff;
      add.f32 %f8, %f6, %f7;
      shfl.sync.bfly.b32 %f9, %f8, 2, 31, 0xffffffff;
      add.f32 %f10, %f8, %f9;
      shfl.sync.bfly.b32 %f11, %f10, 1, 31, 0xffffffff;
      add.f32 %f2, %f10, %f11;"
    `);
  });

  it("warp_max over groups of 8 lanes takes 3 steps", () => {
    const ptx = compileToPtx(warpKernel("int32", "int32", (x) => T.cuda.warp_max(x, 8))).text;
    expect(lines(ptx, "shfl", "max")).toMatchInlineSnapshot(`
      "shfl.sync.bfly.b32 %r4, %r2, 4, 31, 0xffffffff;
      max.s32 %r5, %r2, %r4;
      shfl.sync.bfly.b32 %r6, %r5, 2, 31, 0xffffffff;
      max.s32 %r7, %r5, %r6;
      shfl.sync.bfly.b32 %r8, %r7, 1, 31, 0xffffffff;
      max.s32 %r3, %r7, %r8;"
    `);
  });

  it("shuffles pack c = ((32 - width) << 8) | clamp; 64-bit values move as two halves", () => {
    const up = compileToPtx(
      warpKernel("int64", "int64", (x) => T.cuda.__shfl_up_sync(0xffffffff, x, 1, 16)),
    ).text;
    expect(lines(up, "shfl", "mov.b64")).toMatchInlineSnapshot(`
      "mov.b64 {%r2, %r3}, %rd6;
      shfl.sync.up.b32 %r4, %r2, 1, 4096, 4294967295;
      shfl.sync.up.b32 %r5, %r3, 1, 4096, 4294967295;
      mov.b64 %rd7, {%r4, %r5};"
    `);
    const idx = compileToPtx(
      warpKernel("float16", "float16", (x, tid) => T.cuda.__shfl_sync(0xffff, x, tid.add(1), 8)),
    ).text;
    expect(lines(idx, "shfl", "mov.b32")).toMatchInlineSnapshot(`
      "mov.b32 %r3, {%h1, %h1};
      shfl.sync.idx.b32 %r4, %r3, %r2, 6175, 65535;
      mov.b32 {%h2, %h3}, %r4;"
    `);
  });

  it("votes, activemask and __syncwarp", () => {
    const ptx = compileToPtx(
      warpKernel("int32", "uint32", (x) => {
        T.cuda.__syncwarp();
        const all = T.cuda.__all_sync(0xffffffff, x.gt(0));
        const b = T.cuda.__ballot_sync(T.cuda.__activemask(), x.gt(1));
        return T.if_then_else(all, b, T.uint32(0));
      }),
    ).text;
    expect(lines(ptx, "vote", "activemask", "bar.warp")).toMatchInlineSnapshot(`
      "bar.warp.sync 4294967295;
      vote.sync.all.pred %p2, %p1, 4294967295;
      activemask.b32 %r3;
      vote.sync.ballot.b32 %r5, %p3, %r3;"
    `);
  });
});

describe("PTX of atomics and named barriers", () => {
  it("atom and red name the state space of their address", () => {
    const k = T.function(
      "hist",
      { A: T.Tensor([64], "int32"), H: T.Tensor([8], "uint32"), F: T.Tensor([1], "float32") },
      ({ A, H, F }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([8], "uint32");
        const bin = A.get([tid]).bitand(7);
        T.if_(tid.lt(8), () => s.set([tid], T.uint32(0)));
        T.cuda.bar_sync(1, 64);
        T.cuda.red_add(s.ptr([bin]), 1);
        const old = T.cuda.atomic_cas(F.ptr([0]), 0, 1.5);
        T.cuda.cta_sync();
        T.if_(tid.lt(8), () => T.cuda.red_add(H.ptr([tid]), s.get([tid])));
        T.if_(old.eq(0), () => T.cuda.red_max(H.ptr([0]), 7));
      },
    );
    expect(lines(compileToPtx(k).text, "atom", "red", "bar")).toMatchInlineSnapshot(`
      "bar.sync 1, 64;
      red.shared.add.u32 [%r6], %r7;
      atom.global.cas.b32 %f1, [%rd6], %f2, %f3;
      bar.sync 0;
      red.global.add.u32 [%rd8], %r9;
      red.global.max.u32 [%rd4], %r10;"
    `);
  });
});

describe("PTX of bar.arrive", () => {
  it("producers bar.arrive, consumers bar.sync the same id and count; ptxas assembles it", () => {
    const k = T.function("arrive_pc", { O: T.Tensor([64], "int32") }, ({ O }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([64], "int32");
      T.if_(tid.lt(64), () => {
        s.set([tid], tid);
        T.cuda.bar_arrive(1, 128);
      });
      T.if_(tid.ge(64), () => {
        T.cuda.bar_sync(1, 128);
        O.set([tid.sub(64)], s.get([tid.sub(64)]));
      });
    });
    const mod = compileToPtx(k);
    expect(lines(mod.text, "bar")).toMatchInlineSnapshot(`
      "bar.arrive 1, 128;
      bar.sync 1, 128;"
    `);
    assemblePtx(mod.text, mod.target);
    expect(formatVersionOf("bar.arrive")).toBe(formatVersionOf("bar.sync.named"));
  });
});

describe("ptxas 13.0 assembles every signature", () => {
  it("shuffles of every dtype, reductions, votes, atomics of every dtype on global and shared", async () => {
    const jobs: PtxJob[] = [];
    const add = (fn: PrimFunc, arch = "sm_80"): void => {
      const m = compileToPtx(fn, { arch });
      jobs.push({ name: fn.name, text: m.text, arch });
    };
    for (const dt of SHFL_DTYPES) {
      add(
        warpKernel(dt, dt, (x, tid) => {
          const a = T.cuda.__shfl_sync(0xffffffff, x, 3);
          const b = T.cuda.__shfl_up_sync(0xffffffff, a, 1, 16);
          const c = T.cuda.__shfl_down_sync(0xffffffff, b, tid.bitand(3), 8);
          return T.cuda.__shfl_xor_sync(0xffffffff, c, 1);
        }),
      );
    }
    for (const dt of REDUCE_DTYPES) {
      add(
        warpKernel(dt, dt, (x) => T.cuda.warp_sum(T.cuda.warp_max(T.cuda.warp_min(x, 2), 4), 32)),
      );
    }
    add(
      warpKernel("int32", "uint32", (x) => {
        T.cuda.__syncwarp(T.cuda.__activemask());
        T.cuda.bar_sync(3, 32);
        const any = T.cuda.__any_sync(0xffffffff, x.gt(0));
        return T.if_then_else(any, T.cuda.__ballot_sync(0xffffffff, x.gt(1)), T.uint32(0));
      }),
    );
    // Every atomic op and element dtype, on a global and a shared element.
    for (const op of allOps("atomic")) {
      for (const sig of op.signatures) {
        const dt = sig[0]!;
        const arch = op.sm >= 90 ? "sm_90" : "sm_80";
        const k = T.function(
          `${op.name.replace(/\./g, "_")}_${dt}`,
          { A: T.Tensor([32], dt), B: T.Tensor([32], dt) },
          ({ A, B }) => {
            T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
            const tid = T.cuda.thread_idx("x");
            const s = T.alloc_shared([32], dt);
            s.set([tid], A.get([tid]));
            T.cuda.cta_sync();
            const vals = op.operands.filter((o) => o.kind === "value").map(() => A.get([tid]));
            for (const ptr of [A.ptr([tid.bitand(7)]), s.ptr([tid.bitand(3)])]) {
              if (op.form === "value") {
                B.set([tid], callAtomic(op.name, ptr, vals));
              } else {
                callRed(op.name, ptr, vals[0]!);
              }
            }
          },
        );
        add(k, arch);
      }
    }
    expect(jobs.length).toBeGreaterThan(40);
    const failures = await assembleAll(jobs, 2);
    expect(failures.map((f) => f.message)).toEqual([]);
  });
});

const ACQ_REL = { sem: "acq_rel", scope: "gpu" } as const;
const RELEASE = { sem: "release", scope: "sys" } as const;

/** An atom op of `allOps("atomic")` through its T surface. */
function callAtomic(name: string, ptr: PrimExpr, vals: PrimExpr[]): PrimExpr {
  const c = T.cuda;
  const table: Record<string, (p: PrimExpr, v: PrimExpr[]) => PrimExpr> = {
    [atomicName(true, "add")]: (p, v) => c.atomic_add(p, v[0]!),
    [atomicName(true, "min")]: (p, v) => c.atomic_min(p, v[0]!),
    [atomicName(true, "max")]: (p, v) => c.atomic_max(p, v[0]!),
    [atomicName(true, "exch")]: (p, v) => c.atomic_exch(p, v[0]!),
    [atomicName(true, "cas")]: (p, v) => c.atomic_cas(p, v[0]!, v[1]!),
    [atomicName(true, "f16x2")]: (p, v) => c.atomic_add_f16x2(p, v[0]!),
    [atomicName(true, "bf16x2")]: (p, v) => c.atomic_add_bf16x2(p, v[0]!),
    // The forms with a sem and scope (atom.acq_rel.gpu; cas with acquire at cta scope).
    [atomicName(true, "add", true)]: (p, v) => c.atomic_add(p, v[0]!, ACQ_REL),
    [atomicName(true, "min", true)]: (p, v) => c.atomic_min(p, v[0]!, ACQ_REL),
    [atomicName(true, "max", true)]: (p, v) => c.atomic_max(p, v[0]!, ACQ_REL),
    [atomicName(true, "exch", true)]: (p, v) => c.atomic_exch(p, v[0]!, ACQ_REL),
    [atomicName(true, "cas", true)]: (p, v) =>
      c.atomic_cas(p, v[0]!, v[1]!, { sem: "acquire", scope: "cta" }),
  };
  return table[name]!(ptr, vals);
}

function callRed(name: string, ptr: PrimExpr, v: PrimExpr): void {
  const c = T.cuda;
  const table: Record<string, (p: PrimExpr, v: PrimExpr) => void> = {
    [atomicName(false, "add")]: c.red_add,
    [atomicName(false, "min")]: c.red_min,
    [atomicName(false, "max")]: c.red_max,
    [atomicName(false, "f16x2")]: c.red_add_f16x2,
    [atomicName(false, "bf16x2")]: c.red_add_bf16x2,
    [atomicName(false, "add", true)]: (p, x) => c.red_add(p, x, RELEASE),
    [atomicName(false, "min", true)]: (p, x) => c.red_min(p, x, RELEASE),
    [atomicName(false, "max", true)]: (p, x) => c.red_max(p, x, RELEASE),
  };
  table[name]!(ptr, v);
}

describe("target contracts against ptxas", () => {
  it("records the PTX version and sm of every op; modules use the lowest .version covering them", () => {
    for (const op of [...allOps("warp"), ...allOps("cta"), ...allOps("atomic")]) {
      expect(op.ptx[0] * 10 + op.ptx[1], op.name).toBeGreaterThanOrEqual(60);
    }
    const ptx = compileToPtx(warpKernel("int32", "uint32", () => T.cuda.__activemask())).text;
    expect(ptx).toContain(".version 7.0"); // activemask needs 6.2; sm_80 needs 7.0
    expect(formatVersionOf("atom.add.noftz.bf16x2")).toBe("7.8 sm_90");
  });

  it("bf16x2 atomics need sm_90 (TX4007), as ptxas says", async () => {
    const k = T.function("bf", { A: T.Tensor([32], "uint32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      T.cuda.red_add_bf16x2(A.ptr([0]), A.get([1]));
    });
    expect(() => compileToPtx(k, { arch: "sm_80" })).toThrow(/TX4007|sm_90/);
    const text = compileToPtx(k, { arch: "sm_90" }).text;
    const failures = await assembleAll([
      { name: "bf16x2@sm_90", text, arch: "sm_90" },
      { name: "bf16x2@sm_80", text: text.replace(".target sm_90", ".target sm_80"), arch: "sm_80" },
      // ptxas 13.0 has no atom.max.f32, which is why float min/max are not in the table.
      {
        name: "max.f32",
        text: text.replace(
          /red\.global\.add\.noftz\.bf16x2 ([^,]+), %r\d+/,
          "red.global.max.f32 $1, 0f3F800000",
        ),
        arch: "sm_90",
      },
    ]);
    expect(failures.map((f) => f.name).sort()).toEqual(["bf16x2@sm_80", "max.f32"]);
  });
});
