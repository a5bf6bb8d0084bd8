// The math family and T.fma: every op × signature of the table compiles, and assembles with ptxas
// (one kernel per operand dtype holding every op that takes it); the float16 path computes in
// float32 and rounds back once.
import { describe, expect, it } from "vitest";
import { allOps, checkOpCall, type DType, type Expr, type Stmt } from "@tirx-ts/core";
import { build } from "./util/assemble.js";
import { kernel, launch, load, store, tensor, tidx } from "./util/build.js";

const ops = [...allOps("math"), ...allOps("arith").filter((o) => o.name === "fma")];

/** One kernel per first-operand dtype: out_k[tid] = op_k(in[tid], ...) for every op taking it. */
function kernelFor(dt: DType) {
  const A = tensor("a", [32], dt);
  const bufs = [A];
  const body: Stmt[] = [];
  for (const op of ops) {
    for (const sig of op.signatures) {
      if (sig[0] !== dt) continue;
      const args: Expr[] = sig.map(() => load(A, [tidx]));
      const rt = checkOpCall(op, args)!;
      const out = tensor(`out_${op.name}`, [32], rt);
      bufs.push(out);
      body.push(store(out, [tidx], { kind: "CallExpr", op: op.name, args, dtype: rt }));
    }
  }
  return kernel(`math_${dt}`, bufs, launch(32), body);
}

describe("math ops assemble", () => {
  const dts = [...new Set(ops.flatMap((o) => o.signatures.map((s) => s[0]!)))];
  it.each(dts)("%s", (dt) => {
    const text = build(kernelFor(dt)).text;
    expect(text).toContain(dt === "int16" || dt === "int32" ? "abs.s" : "cvt.rni");
  });
  it("computes float16 ops in float32 and rounds back once", () => {
    const A = tensor("a", [32], "float16");
    const B = tensor("b", [32], "float16");
    const P = tensor("p", [32], "bool");
    const x = load(A, [tidx]);
    const text = build(
      kernel("half_math", [A, B, P], launch(32), [
        store(B, [tidx], { kind: "CallExpr", op: "sqrt", args: [x], dtype: "float16" }),
        store(P, [tidx], { kind: "CallExpr", op: "isnan", args: [x], dtype: "bool" }),
      ]),
    ).text;
    const body = text.slice(text.indexOf("{"));
    expect(body.replace(/%(\w+?)\d+/g, "%$1")).toMatchInlineSnapshot(`
      "{
      	.reg .pred %p<2>;
      	.reg .b16 %rs<2>;
      	.reg .b16 %h<4>;
      	.reg .b32 %r<2>;
      	.reg .b64 %rd<10>;
      	.reg .f32 %f<4>;

      	ld.param.u64 %rd, [half_math_param_0];
      	cvta.to.global.u64 %rd, %rd;
      	ld.param.u64 %rd, [half_math_param_1];
      	cvta.to.global.u64 %rd, %rd;
      	ld.param.u64 %rd, [half_math_param_2];
      	cvta.to.global.u64 %rd, %rd;
      	mov.u32 %r, %tid.x;
      	mad.wide.s32 %rd, %r, 2, %rd;
      	ld.global.b16 %h, [%rd];
      	cvt.f32.f16 %f, %h;
      	sqrt.rn.f32 %f, %f;
      	cvt.rn.f16.f32 %h, %f;
      	mad.wide.s32 %rd, %r, 2, %rd;
      	st.global.b16 [%rd], %h;
      	ld.global.b16 %h, [%rd];
      	cvt.f32.f16 %f, %h;
      	testp.notanumber.f32 %p, %f;
      	mad.wide.s32 %rd, %r, 1, %rd;
      	selp.u16 %rs, 1, 0, %p;
      	st.global.u8 [%rd], %rs;
      	ret;
      }
      "
    `);
  });
});
