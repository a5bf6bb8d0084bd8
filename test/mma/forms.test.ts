// Every mma.sync form of core's MMA_FORMS (docs/mma-sync-forms.md): the PTX of each assembles
// for sm_90a (one merged ptxas run), each runs on the simulator against the exact A·B + C of
// test/diff/mma-form-cases.ts (integer, single-bit and f64 forms bit for bit, the other float
// forms within their documented bound), the fragment geometry core derives equals the PTX ISA
// figures written out there, and forms outside the table are refused with TX7004 (TX7003 below
// a form's sm). test/gpu/mma-differential.test.ts runs the same cases on a GPU.
import { describe, expect, it } from "vitest";
import {
  fragmentCoord,
  isTirxError,
  MMA_FORMS,
  mmaFormName,
  mmaFragment,
  verify,
  type FragmentKind,
  type MmaForm,
  type PrimFunc,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx, emitPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleMerged } from "../util/ptx-merge.js";
import {
  FORM_SEED,
  formCaseData,
  formData,
  formsKernel,
  judgeForm,
  outsideDomain,
  refFragment,
} from "../diff/mma-form-cases.js";
import { decode, encode, prng } from "../diff/values.js";

// One kernel of one warp running every form in turn (formsKernel), on one set of data per form.
const rnd = prng(1301);
const data = MMA_FORMS.map((f) => formData(f, rnd));
const all = formsKernel("mma_forms", MMA_FORMS, data);
const verified = verify(all.fn);

const nameOf = (f: MmaForm): string => mmaFormName(f);

/** A kernel of the given forms (fresh data) for the PTX snapshots. */
const kernelOf = (...names: string[]): PrimFunc => {
  const forms = names.map((n) => MMA_FORMS.find((f) => nameOf(f) === n)!);
  return formsKernel(
    "mma_some",
    forms,
    forms.map((f) => formData(f, prng(7))),
  ).fn;
};

/** The mma lines of a kernel's PTX and the packing moves just before them. */
const mmaLines = (fn: PrimFunc, arch: string): string => {
  const ls = compileToPtx(fn, { arch })
    .text.split("\n")
    .map((l) => l.trim());
  const i = ls.findIndex((l) => l.startsWith("mma."));
  return ls
    .slice(0, i + 1)
    .filter((l) => /^(mma|mov\.b32 %r\d+, \{|bfi|cvt\.u32\.u16)/.test(l))
    .slice(-5)
    .join("\n");
};

describe("mma.sync forms", () => {
  it("every form's PTX assembles for sm_90a (one kernel of all forms)", async () => {
    const text = emitPtx(verified, { arch: "sm_90a" }).text;
    expect(text.match(/^\s*mma\.sync\.aligned\./gm)?.length).toBe(MMA_FORMS.length);
    expect(await assembleMerged([{ name: "mma_forms", text }], "sm_90a")).toEqual([]);
  });

  it("derives each operand's fragment as the PTX ISA's figures give it", () => {
    // One line per form and operand: its sizes, then every lane's [row, col] in element order.
    const got: string[] = [];
    const want: string[] = [];
    for (const f of MMA_FORMS) {
      for (const op of ["A", "B", "C"] as const) {
        const g = mmaFragment(f, op);
        const w = refFragment(f, op);
        const gs = [nameOf(f), op, g.rows, g.cols, g.perLane, g.perSlot];
        const ws = [nameOf(f), op, w.rows, w.cols, w.perLane, w.perSlot];
        for (let l = 0; l < 32; l++) {
          for (let i = 0; i < g.perLane; i++) {
            gs.push(...g.coord(l, i));
            ws.push(...w.at(l, i));
          }
        }
        got.push(gs.join(" "));
        want.push(ws.join(" "));
      }
    }
    expect(got).toEqual(want);
    // The tile layer's fragment kinds (ops/mma/layout.ts) are the same figures.
    const kinds: [string, "A" | "B" | "C", FragmentKind][] = [
      ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "A", "a.m16n8k16"],
      ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "B", "b.m16n8k16"],
      ["mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", "C", "c.m16n8"],
      ["mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "A", "a.m16n8k8.tf32"],
      ["mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", "B", "b.m16n8k8.tf32"],
      ["mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", "A", "a.m16n8k32.s8"],
      ["mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32", "B", "b.m16n8k32.s8"],
    ];
    const a: unknown[] = [];
    const b: unknown[] = [];
    for (const [name, op, kind] of kinds) {
      const fr = mmaFragment(
        MMA_FORMS.find((f) => nameOf(f) === name)!,
        op,
      );
      for (let l = 0; l < 32; l++) {
        for (let i = 0; i < fr.perLane; i++) {
          a.push(fr.coord(l, i));
          b.push(fragmentCoord(kind, l, i));
        }
      }
    }
    expect(a).toEqual(b);
  });

  it("runs every form on the simulator: integer, b1 and f64 exact, the others within their bound", () => {
    const xs = all.inputs.map((x) =>
      simTensor(encode(x.values, x.dtype), { shape: [x.values.length], dtype: x.dtype }),
    );
    const ys = all.outputs.map((y) => simZeros([y.n], y.dtype));
    const r = runSim(verified, [...xs, ...ys], { hazards: "collect" });
    expect(r.reports).toEqual([]);
    const outs = ys.map((y, i) => decode(y.toBytes(), all.outputs[i]!.dtype).map(Number));
    const failures: string[] = [];
    MMA_FORMS.forEach((f, j) => {
      const { out, offset } = all.at[j]!;
      const n = 32 * refFragment(f, "C").perLane;
      const v = judgeForm(f, data[j]!, outs[out]!.slice(offset, offset + n));
      const exactForm = f.c === "s32" || f.c === "f64";
      if (v.bad.length > 0) failures.push(`${nameOf(f)}: ${v.bad.join("; ")}`);
      else if (exactForm && v.exact !== v.checked) failures.push(`${nameOf(f)}: ${v.exact}/${n}`);
      else if (v.checked !== f.m * f.n) failures.push(`${nameOf(f)}: ${v.checked} checked`);
    });
    expect(failures).toEqual([]);
  });

  it("the GPU cases' data (test/gpu/mma-differential) lies inside each form's bound domain", () => {
    // A float16 D overflows to ±Infinity past 65504 in some order of the additions (seen on the
    // H200 when e5m2's Infinity was saturated to 57344 in the data); e5m2 data keeps ±Infinity.
    const outside: string[] = [];
    let infinities = 0;
    MMA_FORMS.forEach((f, i) => {
      for (const d of formCaseData(f, FORM_SEED + i)) {
        for (let r = 0; r < f.m; r++) {
          const as = d.A.slice(r * f.k, (r + 1) * f.k);
          if (f.a === "e5m2") infinities += as.filter((a) => Math.abs(a) === Infinity).length;
          for (let n = 0; n < 8; n++) {
            const bs = Array.from({ length: f.k }, (_, k) => d.B[k * 8 + n]!);
            const why = outsideDomain(f, as, bs, d.C[r * 8 + n]!);
            if (why !== undefined) outside.push(`${nameOf(f)} D[${r}][${n}]: ${why}`);
          }
        }
      }
    });
    expect(outside).toEqual([]);
    expect(infinities).toBeGreaterThan(0);
  });

  it("packs fragments into the registers the PTX ISA names", () => {
    const on = (arch: string, ...names: string[]): string =>
      mmaLines(kernelOf(...names.map((n) => `mma.sync.aligned.${n}`)), arch);
    expect(on("sm_80", "m8n8k4.row.col.f64.f64.f64.f64")).toMatchInlineSnapshot(
      `"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd3, %fd4}, {%fd1}, {%fd2}, {%fd3, %fd4};"`,
    );
    expect(on("sm_80", "m16n8k16.row.col.f16.f16.f16.f16")).toMatchInlineSnapshot(`
      "mov.b32 %r6, {%h9, %h10};
      mov.b32 %r7, {%h11, %h12};
      mov.b32 %r8, {%h13, %h14};
      mov.b32 %r9, {%h15, %h16};
      mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%r8, %r9}, {%r2, %r3, %r4, %r5}, {%r6, %r7}, {%r8, %r9};"
    `);
    expect(on("sm_80", "m8n8k128.row.col.s32.b1.b1.s32.and.popc")).toMatchInlineSnapshot(
      `"mma.sync.aligned.m8n8k128.row.col.s32.b1.b1.s32.and.popc {%r4, %r5}, {%r2}, {%r3}, {%r4, %r5};"`,
    );
    expect(on("sm_80", "m16n8k32.row.col.satfinite.s32.s4.u4.s32")).toMatchInlineSnapshot(
      `"mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s4.u4.s32 {%r5, %r6, %r7, %r8}, {%r2, %r3}, {%r4}, {%r5, %r6, %r7, %r8};"`,
    );
    expect(on("sm_90", "m16n8k16.row.col.f32.e4m3.e5m2.f32")).toMatchInlineSnapshot(`
      "cvt.u32.u16 %r15, %rs11;
      bfi.b32 %r12, %r15, %r12, 16, 8;
      cvt.u32.u16 %r16, %rs12;
      bfi.b32 %r12, %r16, %r12, 24, 8;
      mma.sync.aligned.m16n8k16.row.col.f32.e4m3.e5m2.f32 {%f1, %f2, %f3, %f4}, {%r2, %r7}, {%r12}, {%f1, %f2, %f3, %f4};"
    `);
  });
});

/** The code and message of the TirxError `f` throws ("none" when it returns). */
function errorOf(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return `${e.code}: ${e.message}`;
    throw e;
  }
  return "none";
}

/** One warp calling T.ptx.mma with these arguments on register arrays of 8 float16/int32 elements. */
const request =
  (
    shape: string,
    a: string,
    b: string,
    c: string,
    saturate = false,
    operator?: "xor" | "and",
    layouts: [string, string] = ["row", "col"],
  ): (() => unknown) =>
  () =>
    T.function("refused", { Y: T.Tensor([32], "float32") }, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const x = T.alloc_local([16], "float16", { name: "x" });
      T.ptx.mma(
        shape as "m16n8k16",
        layouts[0] as "row",
        layouts[1] as "col",
        a,
        b,
        c,
        x,
        0,
        x,
        0,
        x,
        0,
        saturate,
        operator,
      );
    });

describe("refused forms", () => {
  it.each([
    // Not in the PTX ISA: no such shape for the type, or a mix it does not list.
    ["m16n8k16", "tf32", "tf32", "float32", false, undefined, "m16n8k8 f32 = tf32·tf32 + f32"],
    ["m16n8k8", "int8", "int8", "int32", false, undefined, "m16n8k16 s32 = s8·s8 + s32"],
    ["m16n8k16", "float16", "bfloat16", "float32", false, undefined, "m16n8k16 f32 = f16·f16"],
    ["m16n8k16", "bfloat16", "bfloat16", "float16", false, undefined, "m16n8k16 f32 = bf16·bf16"],
    ["m16n8k32", "float8_e4m3", "float8_e4m3", "float64", false, undefined, "e4m3·e4m3"],
    // .satfinite on a float form, a b1 form without its operator, an operator elsewhere.
    ["m16n8k16", "float16", "float16", "float32", true, undefined, "integer forms"],
    ["m16n8k128", "int1", "int1", "int32", false, undefined, 'operator "xor" or "and"'],
    ["m16n8k32", "int8", "int8", "int32", false, "xor", "b1 forms"],
    // The PTX ISA's m8n8k4 .f16 (sm_70's quad-pair shape) and its other layouts.
    ["m8n8k4", "float16", "float16", "float32", false, undefined, "sm_70's shape"],
  ] as const)("%s %s·%s → %s (saturate %s, operator %s): TX7004 naming %s", (...args) => {
    const [shape, a, b, c, sat, op, needle] = args;
    const msg = errorOf(request(shape, a, b, c, sat, op));
    expect(msg).toMatch(/^TX7004: .*T\.ptx\.mma has no form/);
    expect(msg).toContain(needle);
    expect(msg).toContain("nearest offered:");
  });

  it("names an unknown dtype", () => {
    expect(errorOf(request("m16n8k16", "int16", "int16", "int32"))).toMatch(
      /^TX7004: .*dtype "int16" is none of fp16, f16, float16/,
    );
  });

  it("only .row.col layouts", () => {
    expect(
      errorOf(request("m16n8k16", "fp16", "fp16", "fp32", false, undefined, ["col", "col"])),
    ).toMatch(/^TX7004: .*every offered form is \.row\.col/);
  });

  it("TX7003 below a form's sm: f64 m16n8k8 and float8 on sm_80", () => {
    const f64 = kernelOf("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64");
    const fp8 = kernelOf("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
    expect(errorOf(() => compileToPtx(f64, { arch: "sm_80" }))).toMatch(/^TX7003/);
    expect(errorOf(() => compileToPtx(fp8, { arch: "sm_80" }))).toMatch(/^TX7003/);
    expect(errorOf(() => compileToPtx(fp8, { arch: "sm_89" }))).toBe("none");
    expect(compileToPtx(fp8, { arch: "sm_89" }).text).toContain(".version 8.4");
    expect(verify(f64).requirements.some((r) => r.kind === "instruction" && r.sm === 90)).toBe(
      true,
    );
  });
});
