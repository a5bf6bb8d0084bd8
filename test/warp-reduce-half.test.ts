// T.cuda.warp_sum/max/min on float16 and bfloat16 (core ops/warp/reduce.ts): the butterfly's
// instructions (inline snapshot; assembled by ptxas for sm_80, where add.bf16 does not exist and
// the bfloat16 sum is fma.rn.bf16 a, 1.0, b) and the simulator's result against the butterfly
// computed here, each step rounded to the 16-bit format. The full matrix of dtypes and widths is
// in the differential test (test/diff/warp-cases.ts).
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor } from "tirx-ts";
import { roundBf16 } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";

const dev = sim();

function kernel(dt: "float16" | "bfloat16", kind: "sum" | "max") {
  return T.function(`wr_${dt}_${kind}`, { A: T.Tensor([32], dt), Y: T.Tensor([32], dt) }, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    const i = T.let_("i", T.cuda.thread_idx("x"));
    const v = p.A.get([i]);
    p.Y.set([i], kind === "sum" ? T.cuda.warp_sum(v, 4) : T.cuda.warp_max(v, 4));
  });
}

describe("16-bit float warp reductions", () => {
  it("bfloat16 sum: shfl on the packed pair, fma.rn.bf16 with 1.0 (sm_80)", () => {
    const fn = kernel("bfloat16", "sum");
    const text = compileToPtx(fn, { arch: "sm_80" }).text;
    assembleLater(text, "sm_80", fn.name);
    const body = text
      .split("\n")
      .filter((l) => /shfl|fma|mov\.b(16|32)/.test(l))
      .map((l) => l.trim())
      .join("\n");
    expect(body).toMatchInlineSnapshot(`
      "mov.b32 %r2, {%h1, %h1};
      shfl.sync.bfly.b32 %r3, %r2, 2, 31, 0xffffffff;
      mov.b32 {%h3, %h4}, %r3;
      mov.b16 %h6, 0x3F80;
      fma.rn.bf16 %h5, %h1, %h6, %h3;
      mov.b32 %r4, {%h5, %h5};
      shfl.sync.bfly.b32 %r5, %r4, 1, 31, 0xffffffff;
      mov.b32 {%h7, %h8}, %r5;
      fma.rn.bf16 %h2, %h5, %h6, %h7;"
    `);
    // Values whose partial sums round in bfloat16 (8 significant bits).
    const a = Array.from({ length: 32 }, (_, l) => roundBf16(1 + l / 7 - (l % 3) * 0.0039));
    const x = tensor(a, { shape: [32], dtype: "bfloat16", device: dev });
    const y = tensor.zeros([32], "bfloat16", dev);
    compile(fn, { target: "cuda" })(x, y);
    const got = y.toArray() as ArrayLike<number>;
    let cur = [...a];
    for (let m = 2; m >= 1; m >>= 1) {
      const prev = cur;
      cur = prev.map((v, l) => roundBf16(v + prev[l ^ m]!));
    }
    expect(Array.from(got)).toEqual(cur);
  });

  it("float16 max assembles as max.f16 (sm_80)", () => {
    const fn = kernel("float16", "max");
    const text = compileToPtx(fn, { arch: "sm_80" }).text;
    assembleLater(text, "sm_80", fn.name);
    expect(text.match(/max\.f16/g)?.length).toBe(2);
  });
});
