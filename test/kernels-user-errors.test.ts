// Misuse of the library calls as a new user writes it, each caught before anything is built or
// launched: an output that shares memory with an input other CTAs still read (a race, wrong data
// on the GPU) is TX9002 — gemm()'s out over a, b, a scale or the bias (also a tensor over part
// of the same buffer), attention()'s out over q, k or v, attentionBackward's gradients over an
// input or each other — while gemm()'s out may be c or the residual itself (in place, right on
// the simulator with split-K too); attention() with a batch or heads of 0 is TX9002 at the call (not
// the tensor map's TX4024 from inside the kernel); option values in messages are shown as
// values ("2" a string, NaN as NaN), not through String or JSON; a tensor without a dtype is
// TX1003 saying so.
import { describe, expect, test } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { attention, attentionBackward, gemm, gemmChoice, sim, tensor } from "tirx-ts";
import { SimTensor } from "@tirx-ts/runtime-sim";
import { errorOf } from "./util/error-of.js";

const dev = sim();
const t = (shape: number[], dtype: "float16" | "float32" = "float16") =>
  tensor(new Float32Array(shape.reduce((p, q) => p * q, 1)), { shape, dtype, device: dev });

describe("gemm(): operand dtypes wgmma does not multiply together", () => {
  test("float16 with bfloat16, or a 16-bit dtype with float8, is TX9002 naming both", () => {
    const f8 = tensor.zeros([16, 32], "float8_e4m3", dev);
    const bf = tensor.zeros([32, 16], "bfloat16", dev);
    for (const [a, b, want] of [
      [t([16, 32]), bf, /got float16 and bfloat16/],
      [f8, t([32, 16]), /got float8_e4m3 and float16/],
    ] as const) {
      const e = errorOf(() => gemm(a, b));
      expect([e.code, e.message]).toEqual([
        "TX9002",
        expect.stringMatching(/gemm: a and b must have one 16-bit dtype, or both be float8/),
      ]);
      expect(e.message).toMatch(want);
    }
  });
});

describe("gemm(): out that is an operand", () => {
  test("out === a or out === b is TX9002 at the caller's line", () => {
    const a = t([16, 16]);
    const b = t([16, 16]);
    for (const [out, name] of [
      [a, "a"],
      [b, "b"],
    ] as const) {
      const e = errorOf(() => gemm(a, b, { out }));
      expect([e.code, e.message]).toEqual([
        "TX9002",
        expect.stringMatching(
          new RegExp(`gemm: out is ${name}: the output cannot be written over an input`),
        ),
      ]);
      expect(e.span?.file).toMatch(/kernels-user-errors\.test\.ts$/);
    }
  });
  test("out over part of the bias's or a scale's buffer is TX9002", () => {
    // Two tensors over one buffer (Uint8Array views): out's bytes 64 … 127 are the bias's.
    const storage = new Uint8Array(16 * 16 * 4);
    const out = new SimTensor(storage, [16, 16], "float32");
    const bias = new SimTensor(storage.subarray(64, 64 + 16 * 4), [16], "float32");
    const e1 = errorOf(() => gemm(t([16, 16]), t([16, 16]), { out, bias }));
    expect([e1.code, e1.message]).toEqual([
      "TX9002",
      expect.stringMatching(/gemm: out overlaps bias in memory/),
    ]);
    // Block scales: scaleA [m, ⌈k/128⌉] = [16, 1] over out's first 64 bytes.
    const f8 = (shape: number[]) => tensor.zeros(shape, "float8_e4m3", dev);
    const scaleA = new SimTensor(storage.subarray(0, 16 * 4), [16, 1], "float32");
    const scaleB = tensor.zeros([1, 1], "float32", dev);
    const e2 = errorOf(() =>
      gemm(f8([16, 128]), f8([16, 128]), { transB: true, scaleA, scaleB, out: out as never }),
    );
    expect([e2.code, e2.message]).toEqual([
      "TX9002",
      expect.stringMatching(/gemm: out overlaps scaleA in memory/),
    ]);
    // The same buffer's two disjoint halves are two tensors that share nothing.
    const lo = new SimTensor(storage.subarray(0, 512), [8, 16], "float32");
    const hi = new SimTensor(storage.subarray(512), [8, 16], "float32");
    expect(() => gemm(t([8, 16]), t([16, 16]), { c: lo, beta: 1, out: hi })).not.toThrow();
  });
  test("out === c (β = 1) and out === residual update in place, also with split-K", () => {
    const [m, n, k] = [20, 64, 256];
    const ints = (len: number, seed: number) =>
      Float32Array.from({ length: len }, (_, i) => ((i * 5 + seed) % 5) - 2);
    const A = ints(m * k, 1);
    const B = ints(k * n, 2);
    const C = ints(m * n, 3);
    const want = Array.from({ length: m * n }, (_, e) => {
      let d = C[e]!;
      for (let x = 0; x < k; x++) d += A[Math.floor(e / n) * k + x]! * B[x * n + (e % n)]!;
      return d;
    });
    const f16 = (x: Float32Array, shape: number[]) =>
      tensor(x, { shape, dtype: "float16", device: dev });
    for (const splitK of [1, 2]) {
      for (const role of ["c", "residual"] as const) {
        const c = tensor(C, { shape: [m, n], dtype: "float32", device: dev });
        const inPlace = role === "c" ? { c, beta: 1 } : { residual: c };
        gemm(f16(A, [m, k]), f16(B, [k, n]), {
          ...inPlace,
          out: c,
          config: { bm: 64, bn: 64, stages: 2, splitK },
        });
        expect(Array.from(c.toArray() as Float32Array), `${role}, split-K ${splitK}`).toEqual(want);
      }
    }
  });
  test("a string or NaN alpha is shown as what it is", () => {
    const a = t([16, 16]);
    expect(errorOf(() => gemm(a, a, { alpha: "2" as never })).message).toMatch(
      /alpha is a finite number, got "2"/,
    );
    expect(errorOf(() => gemm(a, a, { alpha: Number.NaN })).message).toMatch(
      /alpha is a finite number, got NaN/,
    );
  });
});

describe("attention(): empty batch or heads, option values in messages", () => {
  test("a batch or heads of 0 is TX9002 naming them", () => {
    const x = t([0, 128, 1, 64]);
    const e = errorOf(() => attention(x, x, x));
    expect([e.code, e.message]).toEqual([
      "TX9002",
      expect.stringMatching(/batch, heads and kvHeads must be at least 1.*got batch 0, heads 1/),
    ]);
    const h = t([1, 128, 0, 64]);
    const lse = t([1, 0, 128], "float32");
    const eb = errorOf(() => attentionBackward(h, h, h, h, h, lse));
    expect([eb.code, eb.message]).toEqual([
      "TX9002",
      expect.stringMatching(/batch, heads and kvHeads must be at least 1.*heads 0/),
    ]);
  });
  test("an out over q, k or v, and gradients over an input or each other, are TX9002", () => {
    const q = t([1, 128, 1, 64]);
    const k = t([1, 128, 1, 64]);
    const v = t([1, 128, 1, 64]);
    for (const [out, name] of [
      [q, "q"],
      [k, "k"],
      [v, "v"],
    ] as const) {
      const e = errorOf(() => attention(q, k, v, { out }));
      expect([e.code, e.message]).toEqual([
        "TX9002",
        expect.stringMatching(new RegExp(`attention: out is ${name}: the output cannot be`)),
      ]);
    }
    const o = t([1, 128, 1, 64]);
    const dO = t([1, 128, 1, 64]);
    const lse = t([1, 1, 128], "float32");
    const dq = t([1, 128, 1, 64]);
    const bwd = (out: object) => errorOf(() => attentionBackward(q, k, v, o, dO, lse, { out }));
    expect(bwd({ dq: dO }).message).toMatch(/attentionBackward: out\.dq is dO: the output cannot/);
    expect(bwd({ dk: k }).message).toMatch(/attentionBackward: out\.dk is k/);
    expect(bwd({ dq, dv: dq }).message).toMatch(/out\.dq and out\.dv share memory/);
    expect(bwd({ dq, dv: dq }).code).toBe("TX9002");
  });
  test("lse, window and maxSeqQ values are shown as given", () => {
    const x = t([1, 128, 1, 64]);
    const bad = (opts: object) => errorOf(() => attention(x, x, x, opts as never)).message;
    expect(bad({ lse: "true" })).toMatch(/lse is a boolean, got "true"/);
    expect(bad({ window: [Number.NaN, 0] })).toMatch(/two integers .*got \[NaN, 0\]/);
  });
});

describe("tensor(): a missing dtype", () => {
  test("is TX1003 saying a dtype is needed, not 'unknown dtype undefined'", () => {
    const zeros = tensor.zeros as unknown as (shape: number[]) => unknown;
    const e = errorOf(() => zeros([4]));
    expect([e.code, e.message]).toEqual([
      "TX1003",
      expect.stringMatching(/a tensor needs a dtype, none given/),
    ]);
    const e2 = errorOf(() => tensor(new Float32Array(4), { shape: [4] } as never));
    expect(e2.code).toBe("TX1003");
    expect(e2.message).toMatch(/none given/);
  });
});

describe("gemm(): a config field it lacks", () => {
  test("is TX9001 naming the nearest field", () => {
    const a = t([16, 16]);
    const e = errorOf(() =>
      gemm(a, a, { config: { bm: 64, bn: 64, stages: 2, splitk: 2 } as never }),
    );
    expect([e.code, e.message]).toEqual([
      "TX9001",
      expect.stringMatching(/config has no field "splitk"; did you mean "splitK"\?/),
    ]);
  });
});

describe("gemm(): options checked whatever the sizes, tuning errors at the caller's line", () => {
  test("an unknown tune option is TX9001 with the nearest name", () => {
    const e = errorOf(() => gemm(t([16, 16]), t([16, 16]), { tune: { retnue: true } as never }));
    expect([e.code, e.message]).toEqual([
      "TX9001",
      expect.stringMatching(/tune has no option "retnue"; did you mean "retune"\?/),
    ]);
  });

  test("an empty D still refuses options a launching call refuses (fastAccum on bfloat16, beta without c)", () => {
    const a = tensor.zeros([0, 16], "bfloat16", dev);
    const b = tensor.zeros([16, 8], "bfloat16", dev);
    expect(errorOf(() => gemm(a, b, { fastAccum: true })).code).toBe("TX9001");
    expect(errorOf(() => gemm(a, b, { activation: "tanh" as never })).code).toBe("TX9001");
    expect(gemm(a, b).shape).toEqual([0, 8]);
  });

  test("a tuning option autotune refuses is reported at the caller's line", () => {
    const e = errorOf(() =>
      gemm(t([16, 16]), t([16, 16]), { tune: { iters: 0, measure: () => 1, cacheDir: false } }),
    );
    expect(e.code).toBe("TX1002");
    expect(e.span?.file).toMatch(/kernels-user-errors\.test\.ts$/);
  });

  test("beta 0 reads no C: a NaN there does not reach D", () => {
    const c = tensor(new Float32Array(256).fill(Number.NaN), {
      shape: [16, 16],
      dtype: "float32",
      device: dev,
    });
    const d = gemm(t([16, 16]), t([16, 16]), { c, beta: 0, outDtype: "float32" });
    expect(Array.from(d.toArray() as Float32Array).every((v) => v === 0)).toBe(true);
  });

  test("a cache folder that is a file, or a cached config the kernel no longer takes, is no cache", () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-gemm-cache-"));
    const before = process.env["TIRX_CACHE_DIR"];
    process.env["TIRX_CACHE_DIR"] = dir;
    try {
      writeFileSync(join(dir, "autotune"), "not a folder");
      // Sizes of their own, so that no earlier call's memo answers.
      expect(gemmChoice(t([24, 16]), t([16, 40])).source).not.toBe("cache");
      expect(gemm(t([24, 16]), t([16, 40])).shape).toEqual([24, 40]);
    } finally {
      if (before === undefined) delete process.env["TIRX_CACHE_DIR"];
      else process.env["TIRX_CACHE_DIR"] = before;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("attention(): a scale whose product with log2 e is 0", () => {
  test("scale 0 and one that underflows float32 are TX9001 (0 · inf would be NaN where masked)", () => {
    const q = tensor.zeros([1, 1, 128, 64], "float16", dev);
    for (const scale of [0, 3e-46]) {
      const e = errorOf(() => attention(q, q, q, { causal: true, scale }));
      expect([e.code, e.message]).toEqual([
        "TX9001",
        expect.stringMatching(/scale · log2 e is 0 in float32/),
      ]);
    }
  });
});

describe("gemm(): alpha and beta are float32 values", () => {
  test("an alpha past float32's range is TX9001 (it would be Inf in the epilogue)", () => {
    const e = errorOf(() => gemm(t([16, 16]), t([16, 16]), { alpha: 1e39 }));
    expect([e.code, e.message]).toEqual(["TX9001", expect.stringMatching(/past float32's range/)]);
  });
});

describe("attention(): grid extents", () => {
  test("heads or a batch past 65535 is TX9001 at the call (CUDA's grid y and z limits)", () => {
    const wide = tensor.zeros([1, 1, 65536, 64], "float16", dev);
    const e1 = errorOf(() => attention(wide, wide, wide));
    expect([e1.code, e1.message]).toEqual([
      "TX9001",
      expect.stringMatching(/heads 65536 is past 65535/),
    ]);
    expect(e1.span?.file).toMatch(/kernels-user-errors\.test\.ts$/);
    const tall = tensor.zeros([65536, 1, 1, 64], "float16", dev);
    const e2 = errorOf(() => attention(tall, tall, tall));
    expect([e2.code, e2.message]).toEqual([
      "TX9001",
      expect.stringMatching(/batch 65536 is past 65535/),
    ]);
  });
});

describe("library calls: a disposed tensor is TX5011 naming its role, not a kernel parameter", () => {
  test("gemm (a read through its padded copy, out, c, a block scaleA transposed, an empty call), attention's out, attentionBackward's lse and out.dq", () => {
    const gone = (shape: number[], dtype: "float16" | "float32" | "float8_e4m3" = "float16") => {
      const x = tensor.zeros(shape, dtype, dev);
      x.dispose();
      return x;
    };
    const a = t([16, 16]);
    const q = tensor.zeros([1, 128, 1, 64], "float16", dev);
    const lse = tensor.zeros([1, 1, 128], "float32", dev);
    const f8 = (shape: number[]) => tensor.zeros(shape, "float8_e4m3", dev);
    const f32 = (shape: number[]) => tensor.zeros(shape, "float32", dev);
    const cases: [string, () => unknown][] = [
      // [16, 15] float16: rows of 30 bytes, read from a zero-padded copy (the launch's "X").
      ["gemm: a was disposed", () => gemm(gone([16, 15]), t([15, 16]))],
      ["gemm: out was disposed", () => gemm(a, a, { out: gone([16, 16]) })],
      ["gemm: c was disposed", () => gemm(a, a, { c: gone([16, 16]), beta: 1 })],
      // k 640: 5 K blocks, A's scales transposed for "tma" (the transposition's input).
      [
        "gemm: scaleA was disposed",
        () =>
          gemm(f8([16, 640]), f8([16, 640]), {
            transB: true,
            scaleA: gone([16, 5], "float32"),
            scaleB: f32([1, 5]),
            config: { bm: 64, bn: 64, stages: 2, scaleLoad: "tma" },
          }),
      ],
      // m 0: nothing launches, and the tensor is refused all the same.
      ["gemm: a was disposed", () => gemm(gone([0, 16]), a)],
      ["attention: out was disposed", () => attention(q, q, q, { out: gone([1, 128, 1, 64]) })],
      [
        "attentionBackward: lse was disposed",
        () => attentionBackward(q, q, q, q, q, gone([1, 1, 128], "float32")),
      ],
      [
        "attentionBackward: out.dq was disposed",
        () => attentionBackward(q, q, q, q, q, lse, { out: { dq: gone([1, 128, 1, 64]) } }),
      ],
    ];
    for (const [want, call] of cases) {
      const e = errorOf(call);
      expect([e.code, e.message], want).toEqual(["TX5011", expect.stringContaining(want)]);
      expect(e.span?.file, want).toMatch(/kernels-user-errors\.test\.ts$/);
    }
  });
});

describe("library calls: a launch's error is placed at the user's line", () => {
  test("a Proxy of a tensor (TX5004) and a disposed tensor (TX5011) name this file's line, for gemm, attention and attentionBackward", () => {
    const here = /kernels-user-errors\.test\.ts$/;
    const a = t([16, 16]);
    // [batch, seq, heads, headDim], lse [batch, heads, seq].
    const q = tensor.zeros([1, 128, 1, 64], "float16", dev);
    const lse = tensor.zeros([1, 1, 128], "float32", dev);
    const calls: [string, (x: typeof a) => unknown, typeof a][] = [
      ["gemm", (x) => gemm(x, a), a],
      ["attention", (x) => attention(x, q, q), q],
      ["attentionBackward", (x) => attentionBackward(x, q, q, q, q, lse), q],
    ];
    for (const [name, call, x] of calls) {
      const proxied = errorOf(() => call(new Proxy(x, {})));
      expect([proxied.code, proxied.span?.file], name).toEqual([
        "TX5004",
        expect.stringMatching(here),
      ]);
      const gone = tensor.zeros([...x.shape], x.dtype, dev);
      gone.dispose();
      const disposed = errorOf(() => call(gone));
      expect([disposed.code, disposed.span?.file], name).toEqual([
        "TX5011",
        expect.stringMatching(here),
      ]);
    }
  });
});
