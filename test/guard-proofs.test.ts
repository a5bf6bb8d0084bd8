// Bounds proofs for tensors with symbolic dims: a guard on the thread index itself proves the
// access (t < n, t <= n - 1, n > t, nested guards, the else arm of t >= n), as the guard on a
// sum (bid * 32 + t < n) did; accesses a guard does not cover stay TX2006. Accepted kernels
// compile (ptxas assembles them) and run on the simulator with the right results for n below,
// at and above the block.
import { describe, expect, test } from "vitest";
import { T } from "tirx-ts";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import type { PrimExpr, TileView } from "@tirx-ts/dsl";
import { runSim, simTensor } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";

/** A kernel of 32 threads over B (float32[n]) whose body guards B's accesses. */
const kernel = (body: (B: TileView, t: PrimExpr, n: PrimExpr) => void): PrimFunc =>
  T.function("guarded", { n: T.int32, B: T.Tensor(["n"], "float32") }, ({ n, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    body(B, T.cuda.thread_idx("x"), n);
  });

const store = (B: TileView, i: PrimExpr | number) => B.set([i], 7);

/**
 * A guarded store: the kernel body, and, for the check here, which (t, n) pass its guards and
 * which element the store writes then.
 */
interface Case {
  readonly body: (B: TileView, t: PrimExpr, n: PrimExpr) => void;
  readonly runs: (t: number, n: number) => boolean;
  readonly index: (t: number) => number;
}

const at = (t: number): number => t;

/** Accepted guards: each stores 7 at B[t] exactly where t < n. */
const ACCEPTED: Record<string, Case> = {
  "t < n": {
    body: (B, t, n) => T.if_(t.lt(n), () => store(B, t)),
    runs: (t, n) => t < n,
    index: at,
  },
  "t <= n - 1": {
    body: (B, t, n) => T.if_(t.le(n.sub(1)), () => store(B, t)),
    runs: (t, n) => t <= n - 1,
    index: at,
  },
  "n > t": {
    body: (B, t, n) => T.if_(n.gt(t), () => store(B, t)),
    runs: (t, n) => n > t,
    index: at,
  },
  "n - 1 >= t": {
    body: (B, t, n) => T.if_(n.sub(1).ge(t), () => store(B, t)),
    runs: (t, n) => n - 1 >= t,
    index: at,
  },
  "t < n && t < 64": {
    body: (B, t, n) => T.if_(t.lt(n).and(t.lt(64)), () => store(B, t)),
    runs: (t, n) => t < n && t < 64,
    index: at,
  },
  "nested: t < n, then t < 16 or not": {
    body: (B, t, n) =>
      T.if_(t.lt(n), () =>
        T.if_(
          t.lt(16),
          () => store(B, t),
          () => store(B, t),
        ),
      ),
    runs: (t, n) => t < n,
    index: at,
  },
  "nested: t < 64, then t < n": {
    body: (B, t, n) => T.if_(t.lt(64), () => T.if_(t.lt(n), () => store(B, t))),
    runs: (t, n) => t < 64 && t < n,
    index: at,
  },
  "the else arm of t >= n": {
    body: (B, t, n) =>
      T.if_(
        t.ge(n),
        () => undefined,
        () => store(B, t),
      ),
    runs: (t, n) => !(t >= n),
    index: at,
  },
  "a let of t": {
    body: (B, t, n) => {
      const i = T.let_("i", t);
      T.if_(i.lt(n), () => store(B, i));
    },
    runs: (t, n) => t < n,
    index: at,
  },
  "bid * 32 + t < n (already accepted)": {
    body: (B, t, n) => {
      const i = T.cuda.block_idx("x").mul(32).add(t);
      T.if_(i.lt(n), () => store(B, i));
    },
    runs: (t, n) => t < n,
    index: at,
  },
};

/** Guards that do not keep the access inside B for every n. */
const REFUSED: Record<string, Case> = {
  "no guard": { body: (B, t) => store(B, t), runs: () => true, index: at },
  "t <= n (t = n is past the end)": {
    body: (B, t, n) => T.if_(t.le(n), () => store(B, t)),
    runs: (t, n) => t <= n,
    index: at,
  },
  "t < n + 1": {
    body: (B, t, n) => T.if_(t.lt(n.add(1)), () => store(B, t)),
    runs: (t, n) => t < n + 1,
    index: at,
  },
  "t < n, B[t + 1]": {
    body: (B, t, n) => T.if_(t.lt(n), () => store(B, t.add(1))),
    runs: (t, n) => t < n,
    index: (t) => t + 1,
  },
  "t < n, B[t - 1] (negative at t = 0)": {
    body: (B, t, n) => T.if_(t.lt(n), () => store(B, t.sub(1))),
    runs: (t, n) => t < n,
    index: (t) => t - 1,
  },
  "t < 16 (n may be smaller)": {
    body: (B, t) => T.if_(t.lt(16), () => store(B, t)),
    runs: (t) => t < 16,
    index: at,
  },
  "t < n || t < 16": {
    body: (B, t, n) => T.if_(t.lt(n).or(t.lt(16)), () => store(B, t)),
    runs: (t, n) => t < n || t < 16,
    index: at,
  },
  "the then arm of t >= n": {
    body: (B, t, n) => T.if_(t.ge(n), () => store(B, t)),
    runs: (t, n) => t >= n,
    index: at,
  },
  "n > t, B[t + 2]": {
    body: (B, t, n) => T.if_(n.gt(t), () => store(B, t.add(2))),
    runs: (t, n) => n > t,
    index: (t) => t + 2,
  },
};

/** Whether the store stays inside B for every n of 0..64 and thread of the 32. */
const inBounds = (c: Case): boolean => {
  for (let n = 0; n <= 64; n++) {
    for (let t = 0; t < 32; t++) {
      if (c.runs(t, n) && (c.index(t) < 0 || c.index(t) >= n)) return false;
    }
  }
  return true;
};

describe("guards that prove the access", () => {
  for (const [name, c] of Object.entries(ACCEPTED)) {
    test(name, () => {
      expect(inBounds(c)).toBe(true);
      const fn = kernel(c.body);
      const ptx = compileToPtx(fn);
      assembleLater(ptx.text, ptx.target, name.replace(/\W+/g, "_"));
      for (const n of [0, 5, 32, 40]) {
        const b = simTensor(new Float32Array(n).fill(-1), { shape: [n], dtype: "float32" });
        runSim(verify(fn), [n, b]);
        const want = Array.from({ length: n }, (_, i) => (i < 32 && c.runs(i, n) ? 7 : -1));
        expect(Array.from(b.toArray() as Float32Array)).toEqual(want);
      }
    });
  }
});

describe("guards that do not: TX2006 at the access", () => {
  for (const [name, c] of Object.entries(REFUSED)) {
    test(name, () => {
      // Some n and thread do write outside B.
      expect(inBounds(c)).toBe(false);
      let err: unknown;
      try {
        verify(kernel(c.body));
      } catch (e) {
        err = e;
      }
      expect(isTirxError(err) && err.code).toBe("TX2006");
      expect(err).toMatchObject({ span: { file: expect.stringMatching(/guard-proofs/) } });
    });
  }
});
