// Sparse mma (T.ptx.mma_sp, core's MMA_SP_FORMS; docs/mma-sync-forms.md): the PTX of one form
// (inline snapshot), every form and selector assembled by ptxas for sm_90a and at the form's own
// sm, every case of test/diff/mma-sp-cases.ts on the simulator against the exact sparse product
// (within the form's bound), core's fragment and metadata geometry against the PTX ISA's figures
// written out in that file (the float8 forms' metadata as measured on an H200), the verifier's refusals (TX7004 form, TX7013 selector, TX7003 target,
// TX7001 metadata operand) and the simulator's hazards (TX6029 metadata outside
// .sp::ordered_metadata's values, TX6028 a metadata register never written, none for the lanes
// the selector leaves out). test/gpu/mma-sp-differential.test.ts runs the cases on a GPU.
import { describe, expect, it } from "vitest";
import { MMA_SP_FORMS, mmaSpFragment, mmaSpMetadataAt, verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { sim } from "tirx-ts";
import { assembleMerged } from "../util/ptx-merge.js";
import { errorOf } from "../util/error-of.js";
import { runMmaCase } from "../diff/mma-cases.js";
import { mmaSpCases, refA, refB, refC, refMetaLane, spCounts } from "../diff/mma-sp-cases.js";

const cases = mmaSpCases();

type Lane = ReturnType<typeof T.cuda.thread_idx>;
type Reg = ReturnType<typeof T.alloc_local>;

/**
 * One warp's mma_sp with a and b read from X (all ones where `simulate` runs it) and c 0 (m16n8k32 fp16 → fp32 unless `form` says
 * otherwise); `meta(e, lane)` writes (or leaves) each lane's metadata register.
 */
function oneWarp(
  name: string,
  sel: number,
  meta: (e: Reg, l: Lane) => void,
  form: { shape: string; a: string; c: string } = { shape: "m16n8k32", a: "fp16", c: "fp32" },
): PrimFunc {
  const ab = form.a === "fp16" ? "float16" : "float8_e4m3";
  return T.function(name, { X: T.Tensor([16], ab), Y: T.Tensor([128], "float32") }, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const l = T.cuda.thread_idx("x");
    const n = form.shape === "m16n8k64" ? 16 : form.shape === "m16n8k32" ? 8 : 4;
    const a = T.alloc_local([n], ab, { name: "a" });
    const b = T.alloc_local([n], ab, { name: "b" });
    const c = T.alloc_local([4], "float32", { name: "c" });
    for (let i = 0; i < n; i++) a.set([i], p.X.get([i]));
    for (let i = 0; i < n; i++) b.set([i], p.X.get([i]));
    for (let i = 0; i < 4; i++) c.set([i], T.float32(0));
    const e = T.alloc_local([1], "uint32", { name: "e" });
    meta(e, l);
    T.ptx.mma_sp(form.shape, "row", "col", form.a, form.a, form.c, a, 0, b, 0, c, 0, e, 0, sel);
    for (let i = 0; i < 4; i++) p.Y.set([l.mul(4).add(i)], c.get([i]));
  });
}

/** The m16n8k64 e4m3 · e4m3 → fp32 form, for {@link oneWarp}. */
const FP8_FORM = { shape: "m16n8k64", a: "e4m3", c: "fp32" };

/**
 * The reports of a simulated run of `fn` (its one output of 128 float32), and that output; X
 * (16 ones) of dtype `x`.
 */
function simulate(
  fn: PrimFunc,
  x: "float16" | "float8_e4m3" = "float16",
): { msgs: string[]; y: Float32Array } {
  const xs = simTensor(new Float32Array(16).fill(1), { shape: [16], dtype: x });
  const y = simZeros([128], "float32");
  const r = runSim(verify(fn), [xs, y], { hazards: "collect" });
  return { msgs: r.reports.map((x) => `${x.code}: ${x.message}`), y: y.toArray() as Float32Array };
}

const mmaLines = (ptx: string): string =>
  ptx
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith(".version") || l.startsWith("mma.sp") || l.startsWith("mov.b32"))
    .join("\n");

describe("T.ptx.mma_sp: PTX", () => {
  it("packs A and B's halves into .b32 registers and passes e as one register and the selector as an immediate", () => {
    const fn = T.function(
      "sp_ptx",
      { E: T.Tensor([32], "uint32"), Y: T.Tensor([128], "float32") },
      (p) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const l = T.cuda.thread_idx("x");
        const a = T.alloc_local([8], "float16", { name: "a" });
        const b = T.alloc_local([8], "float16", { name: "b" });
        const c = T.alloc_local([4], "float32", { name: "c" });
        const e = T.alloc_local([1], "uint32", { name: "e" });
        for (let i = 0; i < 8; i++) a.set([i], l.add(i).cast("float16"));
        for (let i = 0; i < 8; i++) b.set([i], l.sub(i).cast("float16"));
        for (let i = 0; i < 4; i++) c.set([i], T.float32(0));
        e.set([0], p.E.get([l]));
        T.ptx.mma_sp("m16n8k32", "row", "col", "fp16", "fp16", "fp32", a, 0, b, 0, c, 0, e, 0, 1);
        for (let i = 0; i < 4; i++) p.Y.set([l.mul(4).add(i)], c.get([i]));
      },
    );
    expect(mmaLines(compileToPtx(fn, { arch: "sm_90a" }).text)).toMatchInlineSnapshot(`
      ".version 8.5
      mov.b32 %r2, %r17;
      mov.b32 %r18, {%h1, %h2};
      mov.b32 %r19, {%h3, %h4};
      mov.b32 %r20, {%h5, %h6};
      mov.b32 %r21, {%h7, %h8};
      mov.b32 %r22, {%h9, %h10};
      mov.b32 %r23, {%h11, %h12};
      mov.b32 %r24, {%h13, %h14};
      mov.b32 %r25, {%h15, %h16};
      mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 {%f1, %f2, %f3, %f4}, {%r18, %r19, %r20, %r21}, {%r22, %r23, %r24, %r25}, {%f1, %f2, %f3, %f4}, %r2, 1;"
    `);
  });

  it("assembles every form and selector for sm_90a and at the form's own sm", async () => {
    const mods = cases.map((c) => ({
      name: c.id,
      text: compileToPtx(c.fn, { arch: "sm_90a" }).text,
    }));
    expect(await assembleMerged(mods, "sm_90a")).toEqual([]);
    for (const sm of [80, 89]) {
      const own = cases.filter(
        (c) =>
          MMA_SP_FORMS.find((f) => c.id.includes(`${f.shape}.${f.c}.${f.a}.${f.b}.`))!.sm === sm,
      );
      expect(own.length).toBeGreaterThan(0);
      const text = own.map((c) => ({
        name: c.id,
        text: compileToPtx(c.fn, { arch: `sm_${sm}` }).text,
      }));
      expect(await assembleMerged(text, `sm_${sm}`)).toEqual([]);
    }
  });
});

describe("T.ptx.mma_sp: geometry against the PTX ISA's figures", () => {
  it("core's fragments of A (kept columns), B and C are the figures' for every form", () => {
    for (const f of MMA_SP_FORMS) {
      const n = spCounts(f);
      const [fa, fb, fc] = (["A", "B", "C"] as const).map((o) => mmaSpFragment(f, o));
      expect([fa!.perLane, fb!.perLane, fc!.perLane]).toEqual([n.a, n.b, n.c]);
      for (let l = 0; l < 32; l++) {
        for (let i = 0; i < n.a; i++) {
          const { row, chunk, slot } = refA(f, l, i);
          expect(fa!.coord(l, i)).toEqual([row, 2 * chunk + slot]);
        }
        for (let i = 0; i < n.b; i++) expect(fb!.coord(l, i)).toEqual(refB(f, l, i));
        for (let i = 0; i < n.c; i++) expect(fc!.coord(l, i)).toEqual(refC(l, i));
      }
    }
  });

  it("core's metadata placement is the figures' for every form, selector, row and chunk", () => {
    for (const f of MMA_SP_FORMS) {
      for (let sel = 0; sel < f.selectors; sel++) {
        for (let r = 0; r < 16; r++) {
          for (let q = 0; q < f.k / 4; q++) {
            const { lane, bit } = mmaSpMetadataAt(f, sel, r, q);
            expect([lane, bit]).toEqual(refMetaLane(f, sel, r, q));
          }
        }
      }
    }
  });
});

describe("T.ptx.mma_sp: simulator", () => {
  it.each(cases.map((c) => [c.id, c] as const))(
    "%s matches the exact sparse product within the bound",
    (_, c) => {
      const v = c.judge(runMmaCase(c, sim()));
      expect(v.bad).toEqual([]);
      expect(v.checked).toBe(256);
      // The float64 sum of at most 32 exact products rounded once: most elements are the exact
      // value rounded once.
      expect(v.exact).toBeGreaterThan(200);
    },
  );

  it("TX6029 for a metadata field that is not two increasing column indices", () => {
    // Selector 0: lanes 4g and 4g + 1 hold the metadata. Lane 0 holds row 0's chunks 0..3 in its
    // low half: chunk 2's field is 0b0001 (columns 1 then 0); every other field is 0b0100.
    const fn = oneWarp("sp_bad", 0, (e, l) =>
      e.set([0], T.if_then_else(l.eq(0), T.uint32(0x44444144), T.uint32(0x44444444))),
    );
    const { msgs } = simulate(fn);
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatch(
      /^TX6029: .*row 0, columns 8\.\.11 of A \(lane 0's e, bits 11\.\.8\) is 0b0001/,
    );
    for (const field of [0x0, 0x5, 0xa, 0xf, 0x6]) {
      const word = (0x44444444 & ~(0xf << 20)) | (field << 20);
      const bad = oneWarp(`sp_bad_${field}`, 1, (e) => e.set([0], T.uint32(word >>> 0)));
      expect(simulate(bad).msgs.map((m) => m.slice(0, 6))).toEqual(["TX6029"]);
    }
  });

  it("reads metadata only from the lanes the selector names (TX6028 when one of them never wrote it)", () => {
    // Selector 1: lanes 4g + 2, 4g + 3. The others leave e unwritten; 0b0100 keeps columns 0, 1
    // of each chunk, so with all-ones A and B every D element is 16.
    const ok = oneWarp("sp_sel1", 1, (e, l) =>
      T.if_(l.floormod(4).ge(2), () => e.set([0], T.uint32(0x44444444))),
    );
    const r = simulate(ok);
    expect(r.msgs).toEqual([]);
    expect([...r.y].every((v) => v === 16)).toBe(true);
    const missing = oneWarp("sp_sel1_missing", 1, (e, l) =>
      T.if_(l.floormod(4).eq(2), () => e.set([0], T.uint32(0x44444444))),
    );
    // Lane 3 reads e unwritten (TX6028); the simulator's 0 there is then no valid field either.
    const m = simulate(missing).msgs;
    expect(m.map((x) => x.slice(0, 6))).toEqual(["TX6028", "TX6029"]);
    expect(m[0]).toMatch(/thread \(3, 0, 0\) .* reads local "e"\[0\]/);
  });

  it("float8 m16n8k64: each lane's metadata is 32 columns of one row (TX6029 names it)", () => {
    // As measured on an H200: lane 4g + 1 holds row g + 8's columns 0..31, lane 4g + 3 its
    // columns 32..63, 4 bits per chunk from the low end. Lane 3's bits 11..8: row 8, columns
    // 40..43.
    const word = (0x44444444 & ~(0xf << 8)) | (0x1 << 8);
    const fn = oneWarp(
      "sp_fp8_bad",
      0,
      (e, l) => e.set([0], T.if_then_else(l.eq(3), T.uint32(word), T.uint32(0x44444444))),
      FP8_FORM,
    );
    const { msgs } = simulate(fn, "float8_e4m3");
    expect(msgs).toHaveLength(1);
    expect(msgs[0]).toMatch(
      /^TX6029: .*row 8, columns 40\.\.43 of A \(lane 3's e, bits 11\.\.8\) is 0b0001/,
    );
    // Every lane's e is read: one lane left unwritten is TX6028 (and its 0 fields TX6029).
    for (const lane of [0, 1, 2, 3, 29]) {
      const missing = oneWarp(
        `sp_fp8_missing_${lane}`,
        0,
        (e, l) => T.if_(l.ne(lane), () => e.set([0], T.uint32(0x44444444))),
        FP8_FORM,
      );
      const m = simulate(missing, "float8_e4m3").msgs.map((x) => x.slice(0, 6));
      expect(m).toEqual(["TX6028", "TX6029"]);
    }
    // All ones, every chunk keeping columns 0, 1: each D element sums 32 products of 1.
    const ok = oneWarp("sp_fp8_ok", 0, (e) => e.set([0], T.uint32(0x44444444)), FP8_FORM);
    const r = simulate(ok, "float8_e4m3");
    expect(r.msgs).toEqual([]);
    expect([...r.y].every((v) => v === 32)).toBe(true);
  });

  it("does not multiply pruned zeros: NaN in a row of B no metadata names leaves D finite", () => {
    // Covered per form by warp 1 of every case (B's row 3 is NaN, chunk 0 keeps columns 0..2).
    const c = cases.find((x) => x.id.startsWith("mma.sp.m16n8k32.f32.f16"))!;
    const out = runMmaCase(c, sim()).map(Number);
    expect(out.slice(128).every(Number.isFinite)).toBe(true);
  });
});

describe("T.ptx.mma_sp: refusals", () => {
  /** T.ptx.mma_sp of one warp with these tokens, fragments sized for m16n8k32 fp16. */
  const request =
    (shape: string, a: string, c: string, sel: unknown, eDtype: "uint32" | "float32" = "uint32") =>
    (): PrimFunc =>
      T.function("sp_refuse", { Y: T.Tensor([32], "float32") }, (p) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const fa = T.alloc_local([16], "float16", { name: "a" });
        const fc = T.alloc_local([4], "float32", { name: "c" });
        const e = T.alloc_local([1], eDtype, { name: "e" });
        T.ptx.mma_sp(shape, "row", "col", a, a, c, fa, 0, fa, 0, fc, 0, e, 0, sel as number);
        p.Y.set([0], fc.get([0]));
      });

  it("TX7004 for a sparse form outside the table, naming the nearest offered one", () => {
    const e = errorOf(request("m16n8k32", "tf32", "fp32", 0));
    expect(`${e.code}: ${e.message.replace(/ \(at [^)]*\)$/, "")}`).toMatchInlineSnapshot(
      `"TX7004: TX7004 [mma/variant] T.ptx.mma_sp has no form "m16n8k32" "row"."col" "fp32" = sparse "tf32" · "tf32"; nearest offered: m16n8k32 f32 = sparse f16 · f16 + f32 (mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32); docs/mma-sync-forms.md lists the sparse forms"`,
    );
    expect(errorOf(request("m16n8k64", "fp16", "fp32", 0)).code).toBe("TX7004");
    // float8 with a float16 D is not offered (PTX 8.7; ptxas 13.0 refuses it for sm_90a).
    expect(errorOf(request("m16n8k64", "e4m3", "fp16", 0)).code).toBe("TX7004");
    expect(errorOf(request("m16n8k32", "e4m3", "fp32", 0)).code).toBe("TX7004");
  });

  it("TX7013 for a selector the form does not allow", () => {
    const e = errorOf(request("m16n8k32", "fp16", "fp32", 2));
    expect(`${e.code}: ${e.message.replace(/ \(at [^)]*\)$/, "")}`).toMatchInlineSnapshot(
      `"TX7013: TX7013 [mma/sparsity-selector] sparsity selector of mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32 must be a static integer in 0..1, got 2"`,
    );
    expect(errorOf(request("m16n8k32", "fp16", "fp32", 1.5)).code).toBe("TX7013");
    expect(errorOf(request("m16n8k16", "fp16", "fp32", 4)).code).toBe("TX7013");
  });

  it("TX7001 for metadata that is not a uint32/int32 register array", () => {
    expect(errorOf(request("m16n8k32", "fp16", "fp32", 0, "float32")).message).toMatch(
      /e of T\.ptx\.mma_sp holds uint32 or int32 elements/,
    );
  });

  it("the fp16 forms run on sm_80; the float8 forms need sm_89 (TX7003 at sm_80)", () => {
    const f16 = oneWarp("sp_f16", 0, (e) => e.set([0], T.uint32(0x44444444)));
    expect(() => compileToPtx(f16, { arch: "sm_80" })).not.toThrow();
    const fp8 = oneWarp("sp_fp8", 0, (e) => e.set([0], T.uint32(0x44444444)), FP8_FORM);
    expect(() => compileToPtx(fp8, { arch: "sm_89" })).not.toThrow();
    expect(errorOf(() => compileToPtx(fp8, { arch: "sm_80" })).code).toBe("TX7003");
  });
});
