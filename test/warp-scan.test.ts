// T.cuda.warp_scan and warp_argmax/argmin (core ops/warp/scan.ts): the Hillis–Steele steps and
// the key–value butterfly as PTX (inline snapshots, assembled by ptxas for sm_90a), and the
// simulator's results against the scan and the search computed here. The dtype × width matrix
// over random inputs is in the differential test (test/diff/warp-cases.ts).
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";

const dev = sim();
const f = Math.fround;

describe("warp scans and argmax", () => {
  it("exclusive sum over groups of 4: shfl.sync.up steps 1, 2, then a shift by one lane", () => {
    const fn = T.function(
      "scan4",
      { A: T.Tensor([32], "float32"), Y: T.Tensor([32], "float32") },
      (p) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const i = T.let_("i", T.cuda.thread_idx("x"));
        p.Y.set([i], T.cuda.warp_scan(p.A.get([i]), "sum", { width: 4, exclusive: true }));
      },
    );
    const text = compileToPtx(fn, { arch: "sm_90a" }).text;
    assembleLater(text, "sm_90a", fn.name);
    const body = text
      .split("\n")
      .filter((l) => /shfl|add\.rn\.f32|selp|laneid|setp\.(ge|eq)\.u32/.test(l))
      .map((l) => l.trim())
      .join("\n");
    expect(body).toMatchInlineSnapshot(`
      "mov.u32 %r2, %laneid;
      shfl.sync.up.b32 %f3, %f1, 1, 7168, 0xffffffff;
      add.rn.f32 %f4, %f3, %f1;
      setp.ge.u32 %p1, %r3, 1;
      selp.f32 %f5, %f4, %f1, %p1;
      shfl.sync.up.b32 %f6, %f5, 2, 7168, 0xffffffff;
      add.rn.f32 %f7, %f6, %f5;
      setp.ge.u32 %p2, %r3, 2;
      selp.f32 %f8, %f7, %f5, %p2;
      shfl.sync.up.b32 %f9, %f8, 1, 7168, 0xffffffff;
      setp.eq.u32 %p3, %r3, 0;
      selp.f32 %f2, 0f00000000, %f9, %p3;"
    `);
    const a = Array.from({ length: 32 }, (_, l) => f(0.1 * (l + 1)));
    const x = tensor(Float32Array.from(a), { shape: [32], dtype: "float32", device: dev });
    const y = tensor.zeros([32], "float32", dev);
    compile(fn, { target: "cuda" })(x, y);
    // Lane k of a group: ((v0 + v1) + v2) in the steps' order: step 1 gives v[k-1] + v[k],
    // step 2 adds the pair two lanes up.
    const want = a.map((_, l) => {
      const g = l & ~3;
      const k = l & 3;
      const s1 = (j: number): number => (j > 0 ? f(a[g + j - 1]! + a[g + j]!) : a[g]!);
      const s2 = (j: number): number => (j > 1 ? f(s1(j - 2) + s1(j)) : s1(j));
      return k === 0 ? 0 : s2(k - 1);
    });
    expect(Array.from(y.toArray() as Float32Array)).toEqual(want);
  });

  it("argmax: NaN never wins, ties go to the lowest index", () => {
    const fn = T.function(
      "argmax",
      { A: T.Tensor([32], "float32"), Y: T.Tensor([32], "int32") },
      (p) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const i = T.let_("i", T.cuda.thread_idx("x"));
        p.Y.set([i], T.cuda.warp_argmax(p.A.get([i]), i.cast("int32"), 16));
      },
    );
    assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", fn.name);
    const a = Array.from({ length: 32 }, (_, l) => (l % 5 === 0 ? NaN : l < 16 ? l % 4 : 2));
    const x = tensor(Float32Array.from(a), { shape: [32], dtype: "float32", device: dev });
    const y = tensor.zeros([32], "int32", dev);
    compile(fn, { target: "cuda" })(x, y);
    // Lanes 0..15: the largest value 3 sits at lanes 3, 7, 11 (15 is NaN): lane 3 wins.
    // Lanes 16..31: every non-NaN value is 2: the lowest such lane, 16, wins.
    const want = a.map((_, l) => {
      const g = l & ~15;
      let best = -1;
      for (let k = g; k < g + 16; k++) {
        if (a[k]! !== a[k]!) continue;
        if (best < 0 || a[k]! > a[best]!) best = k;
      }
      return best;
    });
    expect(Array.from(y.toArray() as Int32Array)).toEqual(want);
  });

  it("refuses a 16-bit scan", () => {
    const e = errorOf(() =>
      T.function("bad", { A: T.Tensor([32], "float16") }, (p) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        T.cuda.warp_scan(p.A.get([0]), "sum");
      }),
    );
    expect(e.code).toBe("TX2005");
  });
});
