// The bulk reduction cp.reduce.async.bulk.global.shared::cta.bulk_group.redOp.type: a form of
// the shared → global bulk copy whose completion combines each element with the destination.
// Several CTAs reduce into one global buffer (exact sums against a host reference), integer
// operators, the opcode's contract, the hazards (plain accesses of the reduced bytes, the
// source overwritten before wait_group.read), the emitted PTX and ptxas.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, TirxError, type DType, type PrimFunc } from "@tirx-ts/core";
import { T, type TileView } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";

const RED = "cp.reduce.async.bulk.global.shared::cta.bulk_group";
const N = 128;
const CTAS = 4;

interface Opts {
  /** The `.redOp.type` tail of the opcode. */
  op?: string;
  dtype?: DType;
  /** Elements per CTA's tile (its bytes a multiple of 16 unless testing that). */
  n?: number;
  chunkBytes?: number;
  /** Write the shared tile again right after the issue (before wait_group.read). */
  overwrite?: "before-read" | "after-read";
  /** Read the source tile before the wait (fine). */
  readSource?: boolean;
  /** CTA 1's thread 0 reads Out[0] with no ordering. */
  plainRead?: boolean;
  /** Leave out the fence.proxy.async between the generic writes and the issue. */
  noFence?: boolean;
}

/**
 * CTAS CTAs of 32 threads: each fills its shared tile with `In[cta, i]`, fences the generic
 * writes for the async proxy, meets, and thread 0 reduces the tile into Out[0 .. n).
 */
function kernel(o: Opts = {}): PrimFunc {
  const dt = o.dtype ?? "float32";
  const n = o.n ?? N;
  const op = o.op ?? "add.f32";
  return T.function(
    `bulk_reduce_${op.replace(/\./g, "_")}`,
    { In: T.Tensor([CTAS, n], dt), Out: T.Tensor([n], dt), Probe: T.Tensor([CTAS], dt) },
    ({ In, Out, Probe }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: CTAS, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const tile = T.alloc_shared([n], dt, { name: "tile", align: 16 });
      for (const k of T.serial(Math.ceil(n / 32))) {
        const i = k.mul(32).add(tid);
        T.if_(i.lt(n), () => tile.set([i], In.get([cta, i])));
      }
      if (!o.noFence) T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      const dst: TileView = Out;
      T.if_(tid.eq(0), () => {
        T.ptx[`${RED}.${op}`]!(dst, tile, { chunk_bytes: o.chunkBytes ?? n * 4 });
        T.ptx.cp.async_.bulk.commit_group();
        if (o.readSource) Probe.set([cta], tile.get([1]));
        if (o.overwrite === "before-read") tile.set([0], In.get([cta, 0]));
        T.ptx.cp.async_.bulk.wait_group_read(0);
        if (o.overwrite === "after-read") tile.set([0], In.get([cta, 0]));
        T.ptx.cp.async_.bulk.wait_group(0);
      });
      if (o.plainRead) T.if_(cta.eq(1).and(tid.eq(0)), () => Probe.set([0], Out.get([0])));
    },
  );
}

/** Run on the simulator with `In`, `Out` (initial), collecting reports. */
function run(fn: PrimFunc, dt: DType, input: number[], out: number[]) {
  const o = simTensor(out, { shape: [out.length], dtype: dt });
  const r = runSim(
    verify(fn),
    [
      simTensor(input, { shape: [CTAS, out.length], dtype: dt }),
      o,
      simTensor(new Array<number>(CTAS).fill(0), { shape: [CTAS], dtype: dt }),
    ],
    { hazards: "collect" },
  );
  return { out: Array.from(o.toArray() as ArrayLike<number>), codes: r.reports.map(codeOf) };
}

const codeOf = (e: unknown): string => (isTirxError(e) ? e.code : String(e));

function refused(fn: () => PrimFunc): TirxError {
  try {
    verify(fn());
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new TirxError("TX9999" as never, "expected a refusal");
}

describe("cp.reduce.async.bulk (shared::cta → global, bulk_group)", () => {
  // Small integers (and halves) as float32: every partial sum is exact, so any order gives them.
  const input = Array.from({ length: CTAS * N }, (_, i) => ((i * 37) % 23) - 11 + (i % 3) * 0.5);
  const init = Array.from({ length: N }, (_, i) => (i % 7) - 3);

  it("add.f32: four CTAs reduce into one buffer, the exact sums", () => {
    const r = run(kernel(), "float32", input, init);
    expect(r.codes).toEqual([]);
    const want = init.map((v, i) => {
      let s = v;
      for (let c = 0; c < CTAS; c++) s += input[c * N + i]!;
      return Math.fround(s);
    });
    expect(r.out).toEqual(want);
  });

  it("add.f32 rounds each element's sum once (to nearest even)", () => {
    // 1 + 2^-24 + 2^-24 ...: the reference adds in the simulator's order (CTA order), rounding
    // each step to float32 like the instruction.
    const tiny = Array.from({ length: CTAS * N }, (_, i) => (i % 2 ? 2 ** -24 : 3 * 2 ** -25));
    const one = new Array<number>(N).fill(1);
    const r = run(kernel(), "float32", tiny, one);
    const want = one.map((v, i) => {
      let s = v;
      for (let c = 0; c < CTAS; c++) s = Math.fround(s + tiny[c * N + i]!);
      return s;
    });
    expect(r.codes).toEqual([]);
    expect(r.out).toEqual(want);
  });

  it("max.s32 and add.u32 (wrapping) on integers", () => {
    const ints = Array.from({ length: CTAS * N }, (_, i) => ((i * 7919) % 2001) - 1000);
    const base = Array.from({ length: N }, (_, i) => (i % 5) * 100 - 200);
    const mx = run(kernel({ op: "max.s32", dtype: "int32" }), "int32", ints, base);
    expect(mx.codes).toEqual([]);
    expect(mx.out).toEqual(
      base.map((v, i) => Math.max(v, ...Array.from({ length: CTAS }, (_, c) => ints[c * N + i]!))),
    );
    const big = Array.from({ length: CTAS * N }, (_, i) => (0xf0000000 + i * 977) >>> 0);
    const u0 = Array.from({ length: N }, (_, i) => i * 3);
    const ad = run(kernel({ op: "add.u32", dtype: "uint32" }), "uint32", big, u0);
    expect(ad.codes).toEqual([]);
    expect(ad.out).toEqual(
      u0.map((v, i) => {
        let s = v;
        for (let c = 0; c < CTAS; c++) s = (s + big[c * N + i]!) >>> 0;
        return s;
      }),
    );
  });

  it("refuses a view dtype other than the opcode's type (TX4026)", () => {
    const e = refused(() => kernel({ op: "add.s32", dtype: "float32" }));
    expect(e.code).toBe("TX4026");
    expect(e.message).toMatch(
      /reduces \.s32 elements, but dst "Out" is float32; it needs int32 on both sides/,
    );
  });

  it("refuses a size that is not a multiple of 16 (TX4003)", () => {
    expect(refused(() => kernel({ n: 6, chunkBytes: 24 })).code).toBe("TX4003");
  });

  it("refuses a .redOp/.type pair the ISA lacks, naming the allowed types (TX4001)", () => {
    const e = refused(() => kernel({ op: "min.f32" }));
    expect(e.code).toBe("TX4001");
    expect(e.message).toMatch(
      /\.min has no element type "\.f32"; allowed: \.u32, \.s32, \.u64, \.s64, \.f16, \.bf16/,
    );
    expect(refused(() => kernel({ op: "add.f16", dtype: "float16" })).message).toMatch(
      /spelled \.add\.noftz\.f16/,
    );
    expect(refused(() => kernel({ op: "mul.f32" })).message).toMatch(/reduction operator/);
  });

  it("a plain read of the reduced bytes in another CTA without ordering is a race", () => {
    const r = run(kernel({ plainRead: true }), "float32", input, init);
    expect(r.codes.some((c) => c === "TX6003" || c === "TX6013")).toBe(true);
  });

  it("reading the source before the wait is fine; overwriting it before wait_group.read is not", () => {
    expect(run(kernel({ readSource: true }), "float32", input, init).codes).toEqual([]);
    expect(run(kernel({ overwrite: "after-read" }), "float32", input, init).codes).toEqual([]);
    expect(run(kernel({ overwrite: "before-read" }), "float32", input, init).codes).toContain(
      "TX6007",
    );
  });

  it("needs fence.proxy.async after the generic writes of the source (TX6015)", () => {
    expect(run(kernel({ noFence: true }), "float32", input, init).codes).toContain("TX6015");
  });

  it("emits the reduce spelling, and ptxas assembles it", () => {
    const ptx = compileToPtx(kernel(), { arch: "sm_90" });
    const line = ptx.text.split("\n").find((l) => l.includes("cp.reduce"));
    expect(line?.trim().replace(/%\w+/g, "%r")).toMatchInlineSnapshot(
      `"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%r], [%r], 512;"`,
    );
    assembleLater(ptx.text, "sm_90", "bulk_reduce_add_f32");
    const bf = kernel({ op: "add.noftz.bf16", dtype: "bfloat16", n: 128, chunkBytes: 256 });
    assembleLater(compileToPtx(bf, { arch: "sm_90" }).text, "sm_90", "bulk_reduce_bf16");
  });
});
