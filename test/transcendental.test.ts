// The transcendental math ops: T surface (accurate vs { approx: true }), the fast exp's PTX, the
// float16 path, refusals, the exact float32 fma the accurate sequences rely on, and that the
// differential judge rejects values outside a bound.
import { describe, expect, it } from "vitest";
import { dyadicFma, findOp, fma32, isTirxError, type DType } from "@tirx-ts/core";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { withinBound } from "./diff/run.js";
import { prng } from "./diff/values.js";

function unaryKernel(dt: DType, body: (x: PrimExpr) => PrimExpr, arch = "sm_90"): string {
  const fn = T.function("k", { X: T.Tensor([32], dt), Y: T.Tensor([32], dt) }, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const i = T.cuda.thread_idx("x");
    (p["Y"] as TileView).set([i], body((p["X"] as TileView).get([i])));
  });
  return compileToPtx(fn, { arch }).text;
}
const bodyOf = (text: string): string =>
  text
    .slice(text.indexOf("{"))
    .split("\n")
    .filter((l) => /ex2|lg2|mul\.rn|cvt\.(rn\.f16|f32\.f16)/.test(l))
    .map((l) => l.trim().replace(/%(\w+?)\d+/g, "%$1"))
    .join("\n");

describe("transcendental ops", () => {
  it("T.exp(x, { approx: true }) is ex2.approx.ftz.f32 of x·log2e (CUDA __expf)", () => {
    expect(bodyOf(unaryKernel("float32", (x) => T.exp(x, { approx: true }))))
      .toMatchInlineSnapshot(`
      "mul.rn.f32 %f, %f, 0f3FB8AA3B;
      ex2.approx.ftz.f32 %f, %f;"
    `);
  });
  it("float16 computes in float32 and rounds once", () => {
    expect(bodyOf(unaryKernel("float16", (x) => T.exp(x, { approx: true }))))
      .toMatchInlineSnapshot(`
      "cvt.f32.f16 %f, %h;
      mul.rn.f32 %f, %f, 0f3FB8AA3B;
      ex2.approx.ftz.f32 %f, %f;
      cvt.rn.f16.f32 %h, %f;"
    `);
  });
  it("the accurate T.exp uses no approximate instruction", () => {
    const text = unaryKernel("float32", (x) => T.exp(x));
    expect(text).not.toContain(".approx");
    expect(text).toContain("fma.rn.f32");
  });
  it("refuses float64 (TX2005), accurate sin (TX2010), tanh.approx below sm_75", () => {
    const code = (f: () => unknown): string | undefined => {
      try {
        f();
      } catch (e) {
        return isTirxError(e) ? e.code : String(e);
      }
      return undefined;
    };
    expect(code(() => unaryKernel("float64", (x) => T.exp(x)))).toBe("TX2005");
    expect(code(() => unaryKernel("float32", (x) => T.sin(x)))).toBe("TX2010");
    expect(code(() => unaryKernel("float32", (x) => T.tanh(x, { approx: true }), "sm_70"))).toMatch(
      /^TX/,
    );
    expect(code(() => unaryKernel("float64", (x) => T.rsqrt(x)))).toBeUndefined();
  });
  it("fma32 equals the exact bigint fma on random and tie-prone float32 operands", () => {
    const rnd = prng(7);
    const f = new Float32Array(3);
    const u = new Uint32Array(f.buffer);
    for (let k = 0; k < 20000; k++) {
      for (let j = 0; j < 3; j++) u[j] = (rnd() * 2 ** 32) >>> 0;
      // Half the cases: c near -a·b, so the sum cancels and ties are likely.
      if (k % 2) f[2] = -Math.fround(f[0]! * f[1]!) * (1 + (k % 3) * 2 ** -24);
      const [a, b, c] = [f[0]!, f[1]!, f[2]!];
      const want = dyadicFma(a, b, c, "float32");
      const got = fma32(a, b, c);
      if (!Object.is(got, want) && !(got !== got && want !== want)) {
        throw new Error(`fma32(${a}, ${b}, ${c}) = ${got}, want ${want}`);
      }
    }
    // A tie: 1 + 2^-24 is halfway; the exact sum's sign of the tail decides.
    expect(fma32(1 + 2 ** -23, 2 ** -24, 1)).toBe(1 + 2 ** -23);
  });
  it("the judge rejects a value just outside an op's bound and accepts one inside", () => {
    const b = findOp("exp.approx")!.approx!;
    const w = Math.exp(1);
    const ulp = 2 ** -22; // float32 ulp at e
    const slack = (2.5 + Math.floor(1.173)) * ulp;
    expect(withinBound(b, "float32", 1, w + slack * 0.99, w)).toBe(true);
    expect(withinBound(b, "float32", 1, w + slack * 1.01, w)).toBe(false);
    expect(withinBound(b, "float32", 1, NaN, w)).toBe(false);
    // Outside the domain (x < -87.33): a flushed zero passes, a NaN does not.
    expect(withinBound(b, "float32", -100, 0, Math.exp(-100))).toBe(true);
    expect(withinBound(b, "float32", -100, NaN, Math.exp(-100))).toBe(false);
  });
});
