// checkBounds: guards on indices the verifier cannot bound (data-dependent gathers and
// scatters), the module's out-of-range record, and the report built from it, which must read
// exactly like the simulator's TX6005 for the same access. PTX is snapshot-tested and every
// module assembled by ptxas in one batch; the GPU run is in test/gpu/check-bounds.test.ts.
import { afterAll, describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";
import { TirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx, OOB_RECORD_BYTES, type PtxModule } from "@tirx-ts/codegen-ptx";
import { boundsReport } from "@tirx-ts/runtime-cuda";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleAll, type PtxJob } from "./conformance/ptxas-pool.js";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** The line of this file that holds `marker`. */
const lineOfThisFile = (marker: string): number =>
  readFileSync(fileURLToPath(import.meta.url), "utf8")
    .split("\n")
    .findIndex((l) => l.includes(marker)) + 1;

const jobs: PtxJob[] = [];
const ptx = (fn: PrimFunc, checkBounds = true, arch = "sm_80"): PtxModule => {
  const m = compileToPtx(fn, { checkBounds, arch });
  jobs.push({ name: `${fn.name} ${checkBounds} ${arch}`, text: m.text, arch });
  return m;
};
const body = (m: PtxModule): string =>
  m.text
    .split("\n")
    .filter((l) => /^(\t[a-z@]|\$L)/.test(l) && !l.startsWith("\t.reg") && !l.includes("ld.param"))
    .join("\n");

/** B[t] = A[idx[t]]: the index is data, so the load of A is guarded; B[t] and idx[t] are not. */
const gather = T.function(
  "gather",
  {
    A: T.Tensor([1024], "float32"),
    idx: T.Tensor([64], "int32"),
    B: T.Tensor([64], "float32"),
  },
  ({ A, idx, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const t = T.cuda.thread_idx("x");
    B.set([t], A.get([idx.get([t])]));
  },
);

/** B[idx[t]] = A[t] as float16, through shared memory indexed by data too. */
const scatter = T.function(
  "scatter",
  {
    A: T.Tensor([64], "float16"),
    idx: T.Tensor([64], "int32"),
    B: T.Tensor([512], "float16"),
    flags: T.Tensor([64], "bool"),
  },
  ({ A, idx, B, flags }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const t = T.cuda.thread_idx("x");
    const S = T.alloc_shared([64], "float16", { name: "S" });
    const j = T.let_("j", idx.get([t]));
    S.set([j], A.get([t]));
    T.cuda.cta_sync();
    T.if_(flags.get([j]), () => B.set([j], S.get([t])));
  },
);

/** A histogram whose bins are data: the atomics' addresses are guarded. */
const histogram = T.function(
  "histogram",
  { A: T.Tensor([64], "int32"), H: T.Tensor([16], "uint32"), Old: T.Tensor([64], "uint32") },
  ({ A, H, Old }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const t = T.cuda.thread_idx("x");
    const bin = T.let_("bin", A.get([t]));
    T.cuda.red_add(H.ptr([bin]), 1);
    Old.set([t], T.cuda.atomic_add(H.ptr([bin.add(1)]), 2));
  },
);

/** A gather from a tensor over 2^31 - 1 bytes: the guard's byte offset is the 64-bit one. */
const wideGather = T.function(
  "wide_gather",
  {
    A: T.Tensor([2 ** 29 + 8], "float32"),
    idx: T.Tensor([64], "int32"),
    B: T.Tensor([64], "float32"),
  },
  ({ A, idx, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const t = T.cuda.thread_idx("x");
    B.set([t], A.get([idx.get([t]).mul(2).add(3)]));
  },
);

describe("guards", () => {
  test("a gather's data-dependent load is guarded; proven accesses are not", () => {
    expect(body(ptx(gather))).toMatchInlineSnapshot(`
      "	cvta.to.global.u64 %rd2, %rd1;
      	cvta.to.global.u64 %rd4, %rd3;
      	cvta.to.global.u64 %rd6, %rd5;
      	mov.u32 %r1, %tid.x;
      	mov.u32 %r4, %tid.y;
      	mov.u32 %r5, %tid.z;
      	mov.u32 %r6, %ctaid.x;
      	mov.u32 %r7, %ctaid.y;
      	mov.u32 %r8, %ctaid.z;
      	mad.wide.s32 %rd7, %r1, 4, %rd4;
      	ld.global.s32 %r2, [%rd7];
      	mad.wide.s32 %rd8, %r2, 4, 0;
      	add.s64 %rd9, %rd2, %rd8;
      	setp.lt.u64 %p1, %rd8, 4093;
      	@%p1 bra $L__in_bounds1;
      	atom.global.cas.b32 %r3, [tirx_oob], 0, 1;
      	setp.eq.u32 %p2, %r3, 0;
      	@%p2 st.global.u32 [tirx_oob+4], 0;
      	@%p2 st.global.u32 [tirx_oob+8], %r1;
      	@%p2 st.global.u32 [tirx_oob+12], %r4;
      	@%p2 st.global.u32 [tirx_oob+16], %r5;
      	@%p2 st.global.u32 [tirx_oob+20], %r6;
      	@%p2 st.global.u32 [tirx_oob+24], %r7;
      	@%p2 st.global.u32 [tirx_oob+28], %r8;
      	@%p2 st.global.u64 [tirx_oob+32], %rd8;
      $L__in_bounds1:
      	mov.b32 %f1, 0;
      	@%p1 ld.global.f32 %f1, [%rd9];
      	mad.wide.s32 %rd10, %r1, 4, %rd6;
      	st.global.f32 [%rd10], %f1;
      	ret;"
    `);
  });

  test("an index bounded by the guard around it is not guarded: the then arm, and the else arm of the negated guard", () => {
    const narrowed = T.function(
      "narrowed",
      { k: T.int32, A: T.Tensor([64], "float32"), B: T.Tensor([64], "float32") },
      ({ k, A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const t = T.cuda.thread_idx("x");
        const i = T.let_("i", t.add(k));
        T.if_(i.ge(0).and(i.lt(64)), () => B.set([i], A.get([i])));
        T.if_(
          i.lt(0).or(i.ge(64)),
          () => B.set([t], T.float32(0)),
          () => B.set([i], A.get([i])),
        );
        B.set([t], A.get([i])); // UNGUARDED INDEX
      },
    );
    const m = ptx(narrowed);
    // Only the load outside both guards: 0 <= i < 64 holds in the then arm of the first and the
    // else arm of the second (the negation of i < 0 || i >= 64).
    expect(m.boundsSites.map((s) => [s.buffer, s.span?.line])).toEqual([
      ["A", lineOfThisFile("// UNGUARDED INDEX")],
    ]);
  });

  test("without checkBounds nothing is guarded and no record is declared", () => {
    const m = ptx(gather, false);
    expect(m.boundsSites).toEqual([]);
    expect(m.text).not.toContain("tirx_oob");
    expect(m.text).not.toContain("setp.lt.u64");
  });

  test("scatters, shared memory and bool loads are guarded too; the record is declared once", () => {
    const m = ptx(scatter);
    ptx(scatter, true, "sm_90");
    expect(
      m.boundsSites.map(
        (s) => `${s.verb} ${s.space} ${s.buffer} ${s.accessBytes}/${s.bufferBytes}`,
      ),
    ).toMatchInlineSnapshot(`
      [
        "writes shared S 2/128",
        "reads global flags 1/64",
        "writes global B 2/1024",
      ]
    `);
    expect(m.text.match(/\.global .align 8 .u32 tirx_oob\[10\];/g)).toHaveLength(1);
    expect(m.boundsSites.every((s) => s.span?.line !== undefined)).toBe(true);
  });

  test("atomics on data-dependent addresses are branched around when out of range", () => {
    const m = ptx(histogram);
    ptx(histogram, true, "sm_90");
    expect(
      body(m)
        .split("\n")
        .filter((l) => /bra|skip|red|atom|mov.b32/.test(l)),
    ).toMatchInlineSnapshot(`
      [
        "	@%p1 bra $L__in_bounds1;",
        "	atom.global.cas.b32 %r3, [tirx_oob], 0, 1;",
        "	@!%p1 bra $L__skip2;",
        "	mov.b32 %r9, 1;",
        "	red.global.add.u32 [%rd9], %r9;",
        "$L__skip2:",
        "	@%p3 bra $L__in_bounds3;",
        "	atom.global.cas.b32 %r10, [tirx_oob], 0, 1;",
        "	mov.b32 %r11, 0;",
        "	@!%p3 bra $L__skip4;",
        "	mov.b32 %r12, 2;",
        "	atom.global.add.u32 %r11, [%rd11], %r12;",
        "$L__skip4:",
      ]
    `);
    expect(m.boundsSites.map((s) => `${s.verb} ${s.buffer}`)).toEqual([
      "atomically updates H",
      "atomically updates H",
    ]);
  });

  test("a guard on a tensor over 2^31 - 1 bytes checks the 64-bit byte offset", () => {
    const m = ptx(wideGather);
    expect(
      body(m)
        .split("\n")
        .filter((l) => /s64|u64|wide/.test(l)),
    ).toMatchInlineSnapshot(`
      [
        "	cvta.to.global.u64 %rd2, %rd1;",
        "	cvta.to.global.u64 %rd4, %rd3;",
        "	cvta.to.global.u64 %rd6, %rd5;",
        "	mad.wide.s32 %rd7, %r1, 4, %rd4;",
        "	cvt.s64.s32 %rd8, %r2;",
        "	mad.lo.s64 %rd9, %rd8, 8, 12;",
        "	add.s64 %rd10, %rd2, %rd9;",
        "	setp.lt.u64 %p1, %rd9, 2147483677;",
        "	@%p2 st.global.u64 [tirx_oob+32], %rd9;",
        "	mad.wide.s32 %rd11, %r1, 4, %rd6;",
      ]
    `);
    expect(m.boundsSites[0]?.bufferBytes).toBe((2 ** 29 + 8) * 4);
  });

  test("checkBounds must be a boolean", () => {
    expect(() => compileToPtx(gather, { checkBounds: "yes" as never })).toThrow(
      /checkBounds must be a boolean/,
    );
  });
});

describe("reports", () => {
  /** The simulator's report of gather with idx[thread] = index. */
  const simReport = (thread: number, index: number): TirxError => {
    const idx = Array.from({ length: 64 }, (_, i) => (i === thread ? index : i));
    const a = simTensor(new Float32Array(1024), { shape: [1024], dtype: "float32" });
    const b = simZeros([64], "float32");
    const ix = simTensor(idx, { shape: [64], dtype: "int32" });
    try {
      runSim(verify(gather), [a, ix, b]);
    } catch (e) {
      if (e instanceof TirxError) return e;
      throw e;
    }
    throw new Error("the simulator reported nothing");
  };
  /** A record as the guard writes it: flag, site, tid, ctaid, byte offset. */
  const record = (site: number, tid: number, rel: bigint): Uint8Array => {
    const bytes = new Uint8Array(OOB_RECORD_BYTES);
    const v = new DataView(bytes.buffer);
    v.setUint32(0, 1, true);
    v.setUint32(4, site, true);
    v.setUint32(8, tid, true);
    v.setBigInt64(32, rel, true);
    return bytes;
  };

  test.each([
    [37, 5000],
    [3, -2],
  ])("thread %i reading A[%i]: the GPU report reads as the simulator's", (thread, index) => {
    const m = compileToPtx(gather, { checkBounds: true });
    const gpu = boundsReport(m, record(0, thread, BigInt(index) * 4n))!;
    const sim = simReport(thread, index);
    expect(gpu.code).toBe("TX6005");
    expect(gpu.code).toBe(sim.code);
    expect(gpu.message).toBe(sim.message);
    expect(gpu.span?.line).toBe(sim.span?.line);
    expect(gpu.notes[0]).toEqual(sim.notes[0]); // "A" is declared here
  });

  test("an atomic out of range reads as the simulator's report", () => {
    const m = compileToPtx(histogram, { checkBounds: true });
    const a = simTensor(
      Array.from({ length: 64 }, (_, i) => (i === 9 ? 40 : i % 8)),
      { shape: [64], dtype: "int32" },
    );
    let sim: TirxError | undefined;
    try {
      runSim(verify(histogram), [a, simZeros([16], "uint32"), simZeros([64], "uint32")]);
    } catch (e) {
      if (e instanceof TirxError) sim = e;
      else throw e;
    }
    const gpu = boundsReport(m, record(0, 9, 40n * 4n))!;
    expect(sim).toBeDefined();
    expect(gpu.message).toBe(sim!.message);
    expect(gpu.span?.line).toBe(sim!.span?.line);
  });

  test("a clear flag is no report", () => {
    const m = compileToPtx(gather, { checkBounds: true });
    expect(boundsReport(m, new Uint8Array(OOB_RECORD_BYTES))).toBeUndefined();
  });
});

afterAll(async () => {
  const failures = await assembleAll(jobs);
  expect(failures.map((f) => f.message)).toEqual([]);
}, 60_000);
