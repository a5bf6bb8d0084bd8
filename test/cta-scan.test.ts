// T.cuda.cta_scan (dsl warp.ts): a CTA of 4 warps scans float32 (sum, inclusive and exclusive)
// and int32 (max, exclusive) on the simulator, against the documented order of operations
// computed here (per-warp Hillis–Steele scans, the warp totals' exclusive scan, offset ⊕ own),
// with the race checker on; T.cuda.cta_argmax / cta_argmin against a linear search (NaN never
// wins, ties to the lowest index); every kernel's PTX assembles (ptxas, sm_90a).
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor } from "tirx-ts";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";

const dev = sim();
const f = Math.fround;
const N = 128;

/** Hillis–Steele over groups of `w` lanes, in the steps' order, with `op`. */
function hs(a: number[], w: number, op: (x: number, y: number) => number): number[] {
  let cur = [...a];
  for (let d = 1; d < w; d *= 2) {
    const prev = cur;
    cur = prev.map((v, i) => ((i & (w - 1)) >= d ? op(prev[i - d]!, v) : v));
  }
  return cur;
}

/** The CTA scan in the documented order. */
function ctaScan(a: number[], op: (x: number, y: number) => number, id: number, excl: boolean) {
  const inc = hs(a, 32, op);
  const own = excl ? inc.map((_, i) => ((i & 31) === 0 ? id : inc[i - 1]!)) : inc;
  const totals = [0, 1, 2, 3].map((w) => inc[w * 32 + 31]!);
  const t = hs(totals, 4, op);
  const offs = t.map((_, w) => (w === 0 ? id : t[w - 1]!));
  return own.map((v, i) => (i < 32 ? v : op(offs[i >> 5]!, v)));
}

function kernel(dt: "float32" | "int32", kind: "sum" | "max", exclusive: boolean) {
  return T.function(
    `cta_scan_${dt}_${kind}_${exclusive ? "ex" : "in"}`,
    { A: T.Tensor([N], dt), Y: T.Tensor([N], dt) },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
      const s = T.alloc_shared([4], dt);
      const i = T.let_("i", T.cuda.thread_idx("x"));
      p.Y.set([i], T.cuda.cta_scan(p.A.get([i]), kind, 4, s, { exclusive }));
    },
  );
}

function run(fn: ReturnType<typeof kernel>, a: number[], dt: "float32" | "int32"): number[] {
  assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", fn.name);
  const x = tensor(a, { shape: [N], dtype: dt, device: dev });
  const y = tensor.zeros([N], dt, dev);
  compile(fn, { target: "cuda" })(x, y);
  return Array.from(y.toArray() as ArrayLike<number>);
}

describe("T.cuda.cta_scan", () => {
  const a = Array.from({ length: N }, (_, i) => f(Math.sin(i * 1.7) * 3 + 0.1 * (i % 5)));
  const add = (x: number, y: number): number => f(x + y);

  it("float32 sum, inclusive and exclusive, in the documented order", () => {
    expect(run(kernel("float32", "sum", false), a, "float32")).toEqual(ctaScan(a, add, 0, false));
    expect(run(kernel("float32", "sum", true), a, "float32")).toEqual(ctaScan(a, add, 0, true));
  });

  it("int32 max, exclusive (thread 0 gets the int32 minimum)", () => {
    const b = a.map((v) => Math.trunc(v * 1000));
    const want = ctaScan(b, Math.max, -(2 ** 31), true);
    expect(run(kernel("int32", "max", true), b, "int32")).toEqual(want);
  });

  it("cta_argmax / cta_argmin: NaN never wins, ties to the lowest index", () => {
    // Values from a small set, so ties cross warps; NaNs in warp 1.
    const v = Array.from({ length: N }, (_, i) =>
      i >> 5 === 1 && i % 3 === 0 ? NaN : (i * 7) % 5,
    );
    for (const kind of ["max", "min"] as const) {
      const fn = T.function(
        `cta_arg${kind}`,
        { A: T.Tensor([N], "float32"), Y: T.Tensor([N], "int32") },
        (p) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
          const sv = T.alloc_shared([4], "float32");
          const si = T.alloc_shared([4], "int32");
          const i = T.let_("i", T.cuda.thread_idx("x"));
          const idx = i.cast("int32");
          p.Y.set(
            [i],
            kind === "max"
              ? T.cuda.cta_argmax(p.A.get([i]), idx, 4, sv, si)
              : T.cuda.cta_argmin(p.A.get([i]), idx, 4, sv, si),
          );
        },
      );
      assembleLater(compileToPtx(fn, { arch: "sm_90a" }).text, "sm_90a", fn.name);
      const x = tensor(Float32Array.from(v), { shape: [N], dtype: "float32", device: dev });
      const y = tensor.zeros([N], "int32", dev);
      compile(fn, { target: "cuda" })(x, y);
      let best = -1;
      v.forEach((a, k) => {
        if (a !== a) return;
        if (best < 0 || (kind === "max" ? a > v[best]! : a < v[best]!)) best = k;
      });
      expect(Array.from(y.toArray() as Int32Array)).toEqual(v.map(() => best));
    }
  });
});
