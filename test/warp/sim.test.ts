// Simulator semantics of the warp, CTA and atomic families against independent CPU
// computations, and the hazards they report.
import { describe, expect, it } from "vitest";
import {
  intImm,
  isTirxError,
  verify,
  type DType,
  type KernelArg,
  type PrimFunc,
} from "@tirx-ts/core";
import { PrimExpr, T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";

/** Run `fn` on A (float32 or int32 data), returning B; B has `n` elements of `out`. */
function run(fn: PrimFunc, a: readonly number[], dt: DType, n: number, out: DType = dt): number[] {
  const b = simZeros([n], out);
  runSim(verify(fn), [simTensor(a, { shape: [a.length], dtype: dt }), b]);
  return Array.from(b.toArray() as ArrayLike<number>);
}

function kernel(
  n: number,
  dt: DType,
  out: DType,
  body: (x: PrimExpr, tid: PrimExpr, B: { set(i: PrimExpr[], v: PrimExpr): void }) => void,
  block = n,
): PrimFunc {
  return T.function("k", { A: T.Tensor([n], dt), B: T.Tensor([n], out) }, ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
    const tid = T.cuda.thread_idx("x");
    body(A.get([tid]), tid, B);
  });
}

/** Run and return the hazard codes and messages collected. */
function hazards(fn: PrimFunc, args: KernelArg[]): string[] {
  return runSim(verify(fn), args, { hazards: "collect" }).reports.map((e) => e.message);
}

const f = Math.fround;
/** Float32 values that make the sum order visible. */
const data = Array.from({ length: 64 }, (_, i) => f(Math.sin(i + 1) * 10 ** (i % 4)));

/** The butterfly order of PTX's warp_sum, computed here independently: v[l] += v[l ^ m]. */
function butterfly(vals: number[], width: number, op: (a: number, b: number) => number): number[] {
  let v = vals.slice();
  for (let m = width >> 1; m >= 1; m >>= 1) v = v.map((x, l) => op(x, v[l ^ m]!));
  return v;
}

describe("shuffles", () => {
  it("idx, up, down and xor follow shfl.sync's segment rule", () => {
    const a = Array.from({ length: 32 }, (_, i) => i * 10);
    const cases: [(x: PrimExpr, t: PrimExpr) => PrimExpr, (l: number) => number][] = [
      [(x) => T.cuda.__shfl_sync(0xffffffff, x, 5, 8), (l) => (l & ~7) + 5],
      [(x, t) => T.cuda.__shfl_sync(0xffffffff, x, t.add(1)), (l) => (l + 1) & 31],
      [(x) => T.cuda.__shfl_up_sync(0xffffffff, x, 3, 16), (l) => (l % 16 >= 3 ? l - 3 : l)],
      [(x) => T.cuda.__shfl_down_sync(0xffffffff, x, 2, 8), (l) => (l % 8 < 6 ? l + 2 : l)],
      [(x) => T.cuda.__shfl_xor_sync(0xffffffff, x, 5, 32), (l) => l ^ 5],
      // CUDA: a group may read earlier groups, never later ones (then its own value).
      [
        (x) => T.cuda.__shfl_xor_sync(0xffffffff, x, 4, 4),
        (l) => ((l ^ 4) < (l & ~3) + 4 ? l ^ 4 : l),
      ],
    ];
    for (const [body, src] of cases) {
      const got = run(
        kernel(32, "int32", "int32", (x, t, B) => B.set([t], body(x, t))),
        a,
        "int32",
        32,
      );
      expect(got).toEqual(a.map((_, l) => a[src(l)]!));
    }
  });

  it("int64 and float16 values move whole", () => {
    const k = T.function(
      "k",
      { A: T.Tensor([32], "int64"), B: T.Tensor([32], "int64") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        B.set([tid], T.cuda.__shfl_xor_sync(0xffffffff, A.get([tid]), 1));
      },
    );
    const a = Array.from({ length: 32 }, (_, i) => (1n << 40n) * BigInt(i) - 7n);
    const b = simZeros([32], "int64");
    runSim(verify(k), [simTensor(a as unknown as number[], { shape: [32], dtype: "int64" }), b]);
    expect(Array.from(b.toArray() as BigInt64Array)).toEqual(a.map((_, l) => a[l ^ 1]!));
  });
});

describe("warp reductions", () => {
  it("warp_sum adds in the PTX butterfly order, bit for bit", () => {
    for (const width of [32, 8, 2]) {
      const got = run(
        kernel(64, "float32", "float32", (x, t, B) => B.set([t], T.cuda.warp_sum(x, width))),
        data,
        "float32",
        64,
      );
      const want = [
        ...butterfly(data.slice(0, 32), width, (a, b) => f(a + b)),
        ...butterfly(data.slice(32), width, (a, b) => f(a + b)),
      ];
      expect(got).toEqual(want);
    }
    // The order matters: a left-to-right sum of the same values differs.
    const serial = data.slice(0, 32).reduce((s, x) => f(s + x), 0);
    expect(butterfly(data.slice(0, 32), 32, (a, b) => f(a + b))[0]).not.toBe(serial);
  });

  it("warp_max and warp_min over groups, int32 sums wrap", () => {
    const a = Array.from({ length: 32 }, (_, i) => ((i * 7919) % 97) - 40);
    const mx = run(
      kernel(32, "int32", "int32", (x, t, B) => B.set([t], T.cuda.warp_max(x, 16))),
      a,
      "int32",
      32,
    );
    const mn = run(
      kernel(32, "int32", "int32", (x, t, B) => B.set([t], T.cuda.warp_min(x, 4))),
      a,
      "int32",
      32,
    );
    expect(mx).toEqual(a.map((_, l) => Math.max(...a.slice(l & ~15, (l & ~15) + 16))));
    expect(mn).toEqual(a.map((_, l) => Math.min(...a.slice(l & ~3, (l & ~3) + 4))));
    const big = Array.from({ length: 32 }, () => 2 ** 30);
    const s = run(
      kernel(32, "int32", "int32", (x, t, B) => B.set([t], T.cuda.warp_sum(x))),
      big,
      "int32",
      32,
    );
    expect(s[0]).toBe(0); // 32 * 2^30 = 2^35 wraps to 0
  });

  it("cta_sum is the warp sums' butterfly over the per-warp partials, in every thread", () => {
    const k = T.function(
      "cta",
      { A: T.Tensor([128], "float32"), B: T.Tensor([128], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const scratch = T.alloc_shared([4], "float32");
        B.set([tid], T.cuda.cta_sum(A.get([tid]), 4, scratch));
      },
    );
    const a = [...data, ...data.map((x) => f(x * 3))];
    const partials = [0, 1, 2, 3].map(
      (w) => butterfly(a.slice(w * 32, w * 32 + 32), 32, (x, y) => f(x + y))[0]!,
    );
    const total = butterfly(partials, 4, (x, y) => f(x + y))[0]!;
    expect(run(k, a, "float32", 128)).toEqual(Array(128).fill(total));
  });
});

describe("votes and activemask", () => {
  it("ballot, all, any and activemask under a guard", () => {
    const a = Array.from({ length: 32 }, (_, i) => (i % 3 === 0 ? 1 : 0));
    const got = run(
      kernel(32, "int32", "uint32", (x, t, B) => {
        const ballot = T.cuda.__ballot_sync(0xffffffff, x.gt(0));
        const all = T.cuda.__all_sync(0xffffffff, t.lt(32));
        const any = T.cuda.__any_sync(0xffffffff, x.gt(5));
        B.set(
          [t],
          T.if_then_else(
            t.eq(0),
            ballot,
            T.if_then_else(t.eq(1), all.cast("uint32"), any.cast("uint32")),
          ),
        );
        T.if_(t.lt(10), () => {
          const m = T.cuda.__activemask();
          T.if_(t.eq(2), () => B.set([t], m));
        });
      }),
      a,
      "int32",
      32,
      "uint32",
    );
    let ballot = 0;
    a.forEach((v, l) => (ballot |= v > 0 ? 1 << l : 0));
    expect(got.slice(0, 4)).toEqual([ballot >>> 0, 1, 0x3ff, 0]);
  });
});

describe("TX6011: member masks", () => {
  const shflUnder = (mask: number, guard: (t: PrimExpr) => PrimExpr) =>
    kernel(32, "int32", "int32", (x, t, B) =>
      T.if_(guard(t), () => B.set([t], T.cuda.__shfl_xor_sync(mask, x, 1))),
    );
  const args = (): KernelArg[] => [
    simTensor(Array(32).fill(1), { shape: [32], dtype: "int32" }),
    simZeros([32], "int32"),
  ];

  it("a lane named in the mask that does not execute the shuffle", () => {
    const r = hazards(
      shflUnder(0xffffffff, (t) => t.lt(16)),
      args(),
    );
    expect(r[0]).toMatch(
      /^TX6011 .*member mask 0xffffffff names lane 16\.\.31, which does not execute it/,
    );
  });

  it("lanes that pass different masks, and a lane outside its own mask", () => {
    const k = kernel(32, "int32", "int32", (x, t, B) =>
      B.set(
        [t],
        T.cuda.__shfl_xor_sync(
          T.if_then_else(t.lt(16), T.uint32(0xffff), T.uint32(0xffffffff)),
          x,
          1,
        ),
      ),
    );
    // Collect mode keeps the first report of a site: the mask mismatch.
    expect(hazards(k, args())[0]).toMatch(
      /^TX6011 .*different member masks: lane 0 passes 0x0000ffff, lane 16 passes 0xffffffff/,
    );
    expect(
      hazards(
        shflUnder(0xffff, (t) => t.lt(32)),
        args(),
      )[0],
    ).toMatch(/^TX6011 .*lane 16\.\.31 executes it but is not named in member mask 0x0000ffff/);
  });

  it("a source lane outside the mask; a full-mask warp_sum under a guard", () => {
    const r = hazards(
      shflUnder(0x0000ffff, (t) => t.lt(16)),
      args(),
    );
    expect(r).toEqual([]);
    const r2 = hazards(
      kernel(32, "int32", "int32", (x, t, B) =>
        T.if_(t.lt(8), () => B.set([t], T.cuda.__shfl_down_sync(0xff, x, 8, 16))),
      ),
      args(),
    );
    expect(r2[0]).toMatch(
      /^TX6011 .*lane 0 reads lane 8, which does not execute it; the value is undefined/,
    );
    const r3 = hazards(
      kernel(32, "int32", "int32", (x, t, B) =>
        T.if_(t.ne(5), () => B.set([t], T.cuda.warp_sum(x))),
      ),
      args(),
    );
    expect(r3[0]).toMatch(
      /^TX6011 .*T\.cuda\.warp_sum in warp 0 .*names lane 5, which does not execute it/,
    );
  });

  it("__syncwarp with a lane of its mask missing; a partial warp is not missing lanes", () => {
    const r = hazards(
      kernel(32, "int32", "int32", (_x, t) => T.if_(t.lt(31), () => T.cuda.__syncwarp())),
      args(),
    );
    expect(r[0]).toMatch(/^TX6011 .*T\.cuda\.__syncwarp .*names lane 31/);
    const partial = kernel(40, "int32", "int32", (x, t, B) =>
      B.set([t], T.cuda.__shfl_sync(0xffffffff, x, 0)),
    );
    expect(
      hazards(partial, [
        simTensor(Array(40).fill(2), { shape: [40], dtype: "int32" }),
        simZeros([40], "int32"),
      ]),
    ).toEqual([]);
  });
});

describe("named barriers", () => {
  it("count matching the arriving threads is fine; fewer or more is TX6012", () => {
    const k = (count: number, guard: number) =>
      kernel(128, "int32", "int32", (x, t, B) =>
        T.if_(t.lt(guard), () => {
          B.set([t], x);
          T.cuda.bar_sync(1, count);
        }),
      );
    const args = (): KernelArg[] => [
      simTensor(Array(128).fill(1), { shape: [128], dtype: "int32" }),
      simZeros([128], "int32"),
    ];
    expect(hazards(k(64, 64), args())).toEqual([]);
    expect(hazards(k(96, 64), args())[0]).toMatch(
      /^TX6012 .*bar_sync\(1, 96\) .* reached by 64 threads, but its count is 96; it never releases/,
    );
    // 64 threads at count 32: the second warp's arrival is not ordered after the first
    // instance's, so which warps pair is not determined.
    expect(hazards(k(32, 64), args())[0]).toMatch(
      /^TX6012 .*bar_sync\(1, 32\).*nothing ordering it after .* previous instance \(count 32\)/,
    );
  });
});

describe("atomics", () => {
  it("histogram with atomic_add on shared and red_add on global", () => {
    const n = 256;
    const keys = Array.from({ length: n }, (_, i) => (i * 37 + (i >> 3)) % 16);
    const k = T.function(
      "hist",
      { A: T.Tensor([n], "int32"), H: T.Tensor([16], "int32"), O: T.Tensor([n], "int32") },
      ({ A, H, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const i = T.cuda.block_idx("x").mul(128).add(tid);
        const s = T.alloc_shared([16], "int32");
        T.if_(tid.lt(16), () => s.set([tid], 0));
        T.cuda.cta_sync();
        O.set([i], T.cuda.atomic_add(s.ptr([A.get([i])]), 1));
        T.cuda.cta_sync();
        T.if_(tid.lt(16), () => T.cuda.red_add(H.ptr([tid]), s.get([tid])));
      },
    );
    const h = simZeros([16], "int32");
    const o = simZeros([n], "int32");
    runSim(verify(k), [simTensor(keys, { shape: [n], dtype: "int32" }), h, o]);
    const want = Array(16).fill(0);
    for (const key of keys) want[key]++;
    expect(Array.from(h.toArray() as Int32Array)).toEqual(want);
    // Old values: thread order within the CTA, so the j-th thread with a key gets j.
    const seen = [Array(16).fill(0), Array(16).fill(0)];
    expect(Array.from(o.toArray() as Int32Array)).toEqual(
      keys.map((key, i) => seen[i >> 7]![key]++),
    );
  });

  it("min, max, exch, cas (bitwise for floats), uint64 add and f16x2 add", () => {
    const k = T.function(
      "misc",
      {
        U: T.Tensor([4], "uint32"),
        L: T.Tensor([1], "uint64"),
        F: T.Tensor([2], "float32"),
        P: T.Tensor([1], "uint32"),
        O: T.Tensor([32], "uint32"),
      },
      ({ U, L, F, P, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const u = tid.cast("uint32");
        T.cuda.red_min(U.ptr([0]), u.add(5));
        T.cuda.red_max(U.ptr([1]), u.mul(3));
        O.set([tid], T.cuda.atomic_exch(U.ptr([2]), u));
        T.cuda.red_add(L.ptr([0]), u.cast("uint64").mul(BigInt(2 ** 33)));
        T.if_(tid.eq(0), () => {
          T.let_("a", T.cuda.atomic_cas(F.ptr([0]), -0.0, 2.5)); // +0.0 in memory: no swap
          T.let_("b", T.cuda.atomic_cas(F.ptr([1]), 0.0, 2.5));
        });
        T.cuda.red_add_f16x2(P.ptr([0]), 0x3c003800); // (+0.5, +1.0) per thread
      },
    );
    const U = simTensor([1000, 0, 7, 0], { shape: [4], dtype: "uint32" });
    const L = simTensor([BigInt(2 ** 40)] as unknown as number[], { shape: [1], dtype: "uint64" });
    const F = simZeros([2], "float32");
    const P = simZeros([1], "uint32");
    const O = simZeros([32], "uint32");
    runSim(verify(k), [U, L, F, P, O]);
    expect(Array.from(U.toArray() as Uint32Array).slice(0, 3)).toEqual([5, 93, 31]);
    expect(Array.from(O.toArray() as Uint32Array)).toEqual([
      7,
      ...Array.from({ length: 31 }, (_, i) => i),
    ]);
    expect((L.toArray() as BigUint64Array)[0]).toBe(BigInt(2 ** 40) + BigInt(2 ** 33) * 496n);
    expect(Array.from(F.toArray() as Float32Array)).toEqual([0, 2.5]);
    // 32 * 0.5 = 16 (0x4c00) low, 32 * 1.0 = 32 (0x5000) high: exact in float16.
    expect((P.toArray() as Uint32Array)[0]!.toString(16)).toBe("50004c00");
  });

  it("atomics never race with each other; a plain store racing an atomic is TX6014", () => {
    const k = (plain: boolean) =>
      T.function("race", { H: T.Tensor([1], "int32") }, ({ H }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        if (plain) T.if_(tid.eq(3), () => H.set([0], 5));
        T.cuda.red_add(H.ptr([0]), 1);
      });
    expect(hazards(k(false), [simZeros([1], "int32")])).toEqual([]);
    expect(hazards(k(true), [simZeros([1], "int32")])[0]).toMatch(
      /^TX6014 .*atomically updates global "H" bytes 0..3, which thread \(3, 0, 0\) wrote with no synchronization/,
    );
  });
});

describe("errors at the author's line", () => {
  it("verifier and DSL refusals", () => {
    const codeOf = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        if (isTirxError(e)) return `${e.code} ${e.message.replace(/^TX\d+ \[[^\]]+\] /, "")}`;
        throw e;
      }
      return "no error";
    };
    const body = (fn: (x: PrimExpr, t: PrimExpr) => void, block = 64) =>
      codeOf(() => verify(kernel(64, "float32", "float32", (x, t) => fn(x, t), block)));
    expect(body((x) => T.cuda.warp_sum(x, 3))).toMatch(
      /^TX2010 width of T.cuda.warp_sum must be a static power of two in 2..32, got 3/,
    );
    expect(body((x) => T.cuda.__shfl_xor_sync(0xffffffff, x, 1, 64))).toMatch(/^TX2010/);
    expect(body((x) => T.cuda.warp_sum(x.cast("int8")))).toMatch(
      /^TX2005 T.cuda.warp_sum is not defined on int8/,
    );
    expect(body(() => T.cuda.bar_sync(16, 64))).toMatch(/^TX2010 barrier of bar.sync.named/);
    expect(body(() => T.cuda.bar_sync(1, 48))).toMatch(
      /^TX2014 count of T.cuda.bar_sync must be a multiple of 32/,
    );
    expect(body(() => T.cuda.bar_sync(1, 128))).toMatch(
      /^TX2014 count 128 of T.cuda.bar_sync exceeds the CTA's 64 threads/,
    );
    expect(body(() => T.cuda.bar_arrive(16, 64))).toMatch(/^TX2010 barrier of bar.arrive/);
    expect(body(() => T.cuda.bar_arrive(1, 48))).toMatch(
      /^TX2014 count of T.cuda.bar_arrive must be a multiple of 32/,
    );
    expect(body(() => T.cuda.bar_arrive(1, 128))).toMatch(
      /^TX2014 count 128 of T.cuda.bar_arrive exceeds the CTA's 64 threads/,
    );
    expect(body((x) => T.cuda.cta_sum(x, 2, T.alloc_shared([1], "float32")))).toMatch(
      /^TX2015 .*at least 2 float32 elements/,
    );
    expect(body((x) => T.cuda.cta_sum(x, 2, T.alloc_shared([2], "int32")))).toMatch(/^TX2015/);
    expect(body((x) => T.cuda.cta_sum(x, 3, T.alloc_shared([4], "float32")))).toMatch(
      /^TX2015 num_warps/,
    );
    expect(body((x) => T.cuda.atomic_max(T.alloc_shared([4], "float32").ptr([0]), x))).toMatch(
      /^TX2005 T.cuda.atomic_max is not defined on float32/,
    );
    expect(body((x) => T.cuda.atomic_add(T.alloc_local([4], "float32").ptr([0]), x))).toMatch(
      /^TX2009/,
    );
    expect(body((x) => T.cuda.__all_sync(0xffffffff, x))).toMatch(
      /^TX2010 predicate of vote.sync.all must be bool/,
    );
  });

  it("a collective in a loop bound is TX2016", () => {
    // The T surface binds collectives to a variable first; IR built otherwise is refused.
    const k = T.function("loop", { A: T.Tensor([32], "int32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const n = new PrimExpr({
        kind: "CallExpr",
        op: "shfl.sync.idx",
        args: [intImm(0xffffffff, "uint32"), A.get([0]).expr, intImm(0), intImm(32)],
        dtype: "int32",
      });
      for (const i of T.range(n)) A.set([i], 0);
    });
    expect(() => verify(k)).toThrow(
      /TX2016.*T\.cuda\.__shfl_sync is a warp collective and cannot be a loop bound/,
    );
  });
});
