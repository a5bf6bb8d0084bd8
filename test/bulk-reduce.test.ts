// The bulk reduction cp.reduce.async.bulk.global.shared::cta.bulk_group.redOp.type: a form of
// the shared → global bulk copy whose completion combines each element with the destination.
// Several CTAs reduce into one global buffer (exact sums against a host reference), integer
// operators, the opcode's contract, the hazards (plain accesses of the reduced bytes, the
// source overwritten before wait_group.read), the emitted PTX and ptxas.
import { describe, expect, it } from "vitest";
import {
  f16Bits,
  f16Value,
  isTirxError,
  verify,
  TirxError,
  type DType,
  type PrimFunc,
} from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";
import { CTAS, N, bulkReduceKernel as kernel } from "./kernels/bulk-reduce.js";

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
  return {
    out: Array.from(o.toArray() as ArrayLike<number>),
    codes: r.reports.map(codeOf),
    messages: r.reports.map((e) => (e instanceof Error ? e.message : String(e))),
  };
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

  // Each operator on its types, against the host's element-wise fold in CTA order (the
  // simulator's order; these values make every order give the same result anyway).
  const f16 = (x: number) => {
    const b = f16Bits(x);
    return f16Value(b);
  };
  const OPS: {
    op: string;
    dtype: DType;
    value: (i: number) => number;
    f: (o: number, s: number) => number;
  }[] = [
    { op: "add.f64", dtype: "float64", value: (i) => (i % 11) * 0.125 - 0.5, f: (o, s) => o + s },
    { op: "add.noftz.bf16", dtype: "bfloat16", value: (i) => (i % 31) - 15, f: (o, s) => o + s },
    {
      op: "add.noftz.f16",
      dtype: "float16",
      value: (i) => ((i % 9) - 4) * 0.25,
      f: (o, s) => f16(o + s),
    },
    { op: "min.f16", dtype: "float16", value: (i) => ((i * 5) % 17) - 8.5, f: Math.min },
    { op: "max.bf16", dtype: "bfloat16", value: (i) => ((i * 5) % 17) - 8, f: Math.max },
    { op: "min.u32", dtype: "uint32", value: (i) => (i * 2654435761) % 2 ** 32, f: Math.min },
    { op: "inc.u32", dtype: "uint32", value: (i) => i % 4, f: (o, s) => (o >= s ? 0 : o + 1) },
    {
      op: "dec.u32",
      dtype: "uint32",
      value: (i) => i % 5,
      f: (o, s) => (o === 0 || o > s ? s : o - 1),
    },
    {
      op: "xor.b32",
      dtype: "int32",
      value: (i) => ((i * 40503) % 65536) - 30000,
      f: (o, s) => o ^ s,
    },
    {
      op: "or.b32",
      dtype: "uint32",
      value: (i) => (1 << (i % 32)) >>> 0,
      f: (o, s) => (o | s) >>> 0,
    },
  ];
  for (const c of OPS) {
    it(`${c.op} on ${c.dtype}: the host's element-wise fold`, () => {
      const input = Array.from({ length: CTAS * N }, (_, i) => c.value(i + N));
      const init = Array.from({ length: N }, (_, i) => c.value(i));
      const r = run(kernel({ op: c.op, dtype: c.dtype }), c.dtype, input, init);
      expect(r.codes).toEqual([]);
      const want = init.map((v, i) => {
        let s = v;
        for (let k = 0; k < CTAS; k++) s = c.f(s, input[k * N + i]!);
        return s;
      });
      expect(r.out).toEqual(want);
    });
  }

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
    expect(r.codes).toContain("TX6003");
  });

  it("an atomic add to the reduced bytes from another CTA races with the bulk reduction: strong both, but through two proxies", () => {
    // PTX ISA, Memory Consistency Model, "Morally strong operations": both must be performed
    // through the same proxy; the bulk reduction's is the async proxy, the atom's the generic one.
    // (The CTAs' bulk reductions among themselves are morally strong: the tests above.)
    const r = run(kernel({ atomicAdd: true }), "float32", input, init);
    expect(r.codes.length).toBeGreaterThan(0);
    expect(new Set(r.codes)).toEqual(new Set(["TX6014"]));
    expect(r.messages[0]).toMatch(
      /not morally strong: the cp\.reduce\.async\.bulk\.add \(relaxed\.gpu\) is performed through the async proxy and the atom\S* through the generic proxy/,
    );
    // The values are still each operation's (the simulator applies both).
    let s = init[0]!;
    for (let c = 0; c < CTAS; c++) s += input[c * N]!;
    expect(r.out[0]).toBe(s + 1);
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
      `"cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%r], [%r], 256;"`,
    );
    assembleLater(ptx.text, "sm_90", "bulk_reduce_add_f32");
    const bf = kernel({ op: "add.noftz.bf16", dtype: "bfloat16", n: 128, chunkBytes: 256 });
    assembleLater(compileToPtx(bf, { arch: "sm_90" }).text, "sm_90", "bulk_reduce_bf16");
  });
});
