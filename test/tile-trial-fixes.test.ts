// Fixes from a first trial of the tile layer, checked on the simulated device against host math:
// - layouts that mix thread axes (`32@tid_in_wg` with `1@laneid`, `32@tid` with `1@laneid`, …)
//   are read as digits of the linear thread index: random such layouts copy global → tile →
//   global exactly and reduce to the host's sums (integer inputs: every float32 sum is exact);
//   overlapping digits are TX2022 naming the overlap;
// - a warp permute_layout between two notations of one element → thread map is register moves;
// - a column sum across warps (other elements on lanes) goes through per-lane partials;
// - the messages: copy between two memory views by direction, a wg reduction over warpid with
//   the rewritten layouts, a primitive at a scope its record does not serve.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { T, compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { isTirxError, TILE_PRIMITIVES, TILE_SCOPES } from "@tirx-ts/core";
import { errorOf } from "./util/error-of.js";

const dev = sim();

/** Integers in [-20, 20]. */
function ints(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  return Float32Array.from(
    { length: n },
    () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) % 41) - 20,
  );
}

type Scope = "wg" | "cta";
/** A stride as T.S takes it: a number (on m) or `k@axis`. */
type Stride = Parameters<typeof T.S>[1] extends readonly (infer X)[] | undefined ? X : never;
type Iter = { extent: number; stride: Stride };
/** A random layout of a [rows, cols] float32 tile over the scope's threads. */
interface Case {
  scope: Scope;
  threads: number;
  dims: [Iter[], Iter[]];
  replica: Iter[];
  /** An offset term (`k@axis`), or none. */
  offset?: Stride;
  shape: [number, number];
}

/**
 * A layout whose thread iters split the linear thread index into chunks of bits, each on an axis
 * that can name it (laneid below bit 5, tid_in_wg below 7, warpid from bit 5, wgid from 7, tid
 * anywhere; wg scope: laneid and tid_in_wg only), as shard or replica; a whole lane or warp
 * field may be left unnamed (implicit replicas); 0–2 `m` iters; iters dealt to the two dims.
 */
function randomCase(seed: number): Case {
  let s = seed >>> 0 || 1;
  // The high bits of an LCG (its low bits cycle with short periods).
  const rnd = (n: number): number => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) >>> 16) % n;
  const scope: Scope = rnd(2) ? "cta" : "wg";
  const bits = scope === "wg" ? 7 : 8;
  const unnamed = rnd(6) === 0 ? (scope === "cta" && rnd(2) ? "lane" : "warp") : "none";
  const skip = (b: number): boolean =>
    (unnamed === "lane" && b < 5) || (unnamed === "warp" && b >= 5 && b < 7);
  const thread: { it: Iter; replica: boolean }[] = [];
  let offset: Stride | undefined;
  let lo = 0;
  while (lo < bits) {
    if (skip(lo)) {
      lo++;
      continue;
    }
    let hi = Math.min(bits, lo + 1 + rnd(3));
    for (let b = lo; b < hi; b++) if (skip(b)) hi = b;
    const axes: [string, number][] = [];
    if (hi <= 5) axes.push(["laneid", 1]);
    if (hi <= 7 && unnamed === "none") axes.push(["tid_in_wg", 1]);
    if (scope === "cta" && lo >= 5) axes.push(["warpid", 32]);
    if (scope === "cta" && lo >= 7) axes.push(["wgid", 128]);
    if (scope === "cta" && unnamed === "none") axes.push(["tid", 1]);
    if (axes.length === 0) {
      // No axis names the chunk: cut it at the field boundary.
      hi = lo < 5 ? 5 : 7;
      continue;
    }
    const [axis, base] = axes[rnd(axes.length)]!;
    const role = rnd(8);
    // A gap: threads whose bits there are not 0 hold nothing (or, for a whole field, copies);
    // the top gap may become an offset (the layout on the upper threads instead).
    if (role === 0) {
      if (hi === bits && rnd(2)) offset = `${2 ** lo / base}@${axis}` as Stride;
    } else
      thread.push({
        it: { extent: 2 ** (hi - lo), stride: `${2 ** lo / base}@${axis}` as Stride },
        replica: role === 1,
      });
    lo = hi;
  }
  const ms: Iter[] = Array.from({ length: rnd(3) }, () => ({
    extent: 2 ** (1 + rnd(2)),
    stride: 0,
  }));
  // m strides: mixed radix in a random order.
  let reach = 1;
  for (const m of [...ms].sort(() => rnd(3) - 1)) {
    m.stride = reach;
    reach *= m.extent;
  }
  const shard = [...thread.filter((t) => !t.replica).map((t) => t.it), ...ms];
  while (shard.length < 2) {
    shard.push({ extent: 2, stride: reach });
    reach *= 2;
  }
  const dims: [Iter[], Iter[]] = [[], []];
  shard.sort(() => rnd(3) - 1).forEach((it, i) => dims[i < 1 ? 0 : i < 2 ? 1 : rnd(2)]!.push(it));
  const prod = (xs: Iter[]): number => xs.reduce((a, x) => a * x.extent, 1);
  return {
    scope,
    threads: scope === "wg" ? 128 : 256,
    dims,
    replica: thread.filter((t) => t.replica).map((t) => t.it),
    ...(offset !== undefined ? { offset } : {}),
    shape: [prod(dims[0]), prod(dims[1])],
  };
}

function layoutOf(shard: Iter[], replica: Iter[], offset?: Stride) {
  const sp = T.S(
    shard.map((x) => x.extent),
    shard.map((x) => x.stride),
  );
  const rp = T.R(
    replica.map((x) => x.extent),
    replica.map((x) => x.stride),
  );
  if (offset !== undefined) return T.TileLayout(sp, rp, T.O(offset));
  return replica.length === 0 ? T.TileLayout(sp) : T.TileLayout(sp, rp);
}

const isThread = (x: Iter): boolean => typeof x.stride === "string";

/**
 * Copy X → tile, doubled by the register-only primitives (mul, a cast to float16 and back, a
 * register copy), → Y, and the sum of the tile along `axis` into R. Threads a layout leaves
 * out (a gap or an offset) hold nothing: none of these may read their registers (TX6028).
 */
function kernel(c: Case, axis: 0 | 1): PrimFunc {
  const [rows, cols] = c.shape;
  const src = layoutOf([...c.dims[0], ...c.dims[1]], c.replica, c.offset);
  // dst: the kept iters (m iters compacted), the reduced thread iters as replicas.
  const kept = c.dims[1 - axis]!;
  let m = 1;
  const keptIters = kept.map((x) => {
    if (isThread(x)) return x;
    const it = { extent: x.extent, stride: m };
    m *= x.extent;
    return it;
  });
  const one = { extent: 1, stride: 0 };
  const dShard = axis === 1 ? [...keptIters, one] : [one, ...keptIters];
  const dst = layoutOf(dShard, [...c.replica, ...c.dims[axis]!.filter(isThread)], c.offset);
  const dShape = axis === 1 ? [rows, 1] : [1, cols];
  return T.function(
    "mixed",
    {
      X: T.Tensor([rows, cols], "float32"),
      Y: T.Tensor([rows, cols], "float32"),
      R: T.Tensor(dShape, "float32"),
    },
    ({ X, Y, R }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.threads }) });
      const f = T.alloc_local([rows, cols], "float32", { layout: src });
      const g = T.alloc_local([rows, cols], "float16", { layout: src });
      const h = T.alloc_local([rows, cols], "float32", { layout: src });
      const d = T.alloc_local(dShape, "float32", { layout: dst });
      T.tile[c.scope].copy(f, X);
      T.tile[c.scope].mul(f, f, T.float32(2));
      T.tile[c.scope].cast(g, f);
      T.tile[c.scope].cast(h, g);
      T.tile[c.scope].copy(f, h);
      T.tile[c.scope].copy(Y, f);
      T.tile[c.scope].sum(d, f, axis);
      T.tile[c.scope].copy(R, d);
    },
  );
}

describe("layouts mixing thread axes are digits of the linear thread index", () => {
  it("random mixed layouts: the round trip with register primitives is exact and the sum matches the host", () => {
    let accepted = 0;
    const refused: string[] = [];
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        fc.integer({ min: 0, max: 1 }),
        (seed, ax) => {
          const c = randomCase(seed);
          const axis = ax as 0 | 1;
          let fn: PrimFunc;
          try {
            fn = kernel(c, axis);
          } catch (e) {
            // Only the documented refusal may happen (none expected for these layouts).
            if (!isTirxError(e)) throw e;
            refused.push(e.message);
            return;
          }
          accepted++;
          const [rows, cols] = c.shape;
          const x = ints(rows * cols, seed);
          const X = tensor(x, { shape: [rows, cols], dtype: "float32", device: dev });
          const Y = tensor.zeros([rows, cols], "float32", dev);
          const R = tensor.zeros(axis === 1 ? [rows, 1] : [1, cols], "float32", dev);
          compile(fn, { target: "cuda" })(X, Y, R);
          const x2 = x.map((v) => 2 * v);
          expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x2));
          const want =
            axis === 1
              ? Array.from({ length: rows }, (_, r) =>
                  x2.slice(r * cols, (r + 1) * cols).reduce((a, b) => a + b, 0),
                )
              : Array.from({ length: cols }, (_, j) =>
                  Array.from({ length: rows }, (_, r) => x2[r * cols + j]!).reduce(
                    (a, b) => a + b,
                    0,
                  ),
                );
          expect(Array.from(R.toArray() as Float32Array)).toEqual(want);
          for (const t of [X, Y, R]) t.dispose();
        },
      ),
      { numRuns: 10, seed: 20261202 },
    );
    expect(refused).toEqual([]);
    expect(accepted).toBe(10);
  });

  it("the trial's wg copy S[(4, 32) : (32@tid_in_wg, 1@laneid)] moves every element", () => {
    const c: Case = {
      scope: "wg",
      threads: 128,
      dims: [[{ extent: 4, stride: "32@tid_in_wg" }], [{ extent: 32, stride: "1@laneid" }]],
      replica: [],
      shape: [4, 32],
    };
    const fn = kernel(c, 1);
    const x = ints(128, 7);
    const X = tensor(x, { shape: [4, 32], dtype: "float32", device: dev });
    const Y = tensor.zeros([4, 32], "float32", dev);
    const R = tensor.zeros([4, 1], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y, R);
    const x2 = x.map((v) => 2 * v);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x2));
    expect(Array.from(R.toArray() as Float32Array)).toEqual(
      [0, 1, 2, 3].map((r) => x2.slice(r * 32, r * 32 + 32).reduce((a, b) => a + b, 0)),
    );
  });

  it("a column sum across warps with columns on lanes: a partial per lane and warp", () => {
    const c: Case = {
      scope: "cta",
      threads: 128,
      dims: [
        [{ extent: 4, stride: "1@warpid" }],
        [
          { extent: 32, stride: "1@laneid" },
          { extent: 2, stride: 1 },
        ],
      ],
      replica: [],
      shape: [4, 64],
    };
    const fn = kernel(c, 0);
    expect(explainTile(fn)[6]).toMatch(
      /T\.tile\.cta\.sum → shared scratch \(4 warps, a partial per lane\) \+ bar\.sync: reduces axis 0/,
    );
    const x = ints(256, 11);
    const X = tensor(x, { shape: [4, 64], dtype: "float32", device: dev });
    const Y = tensor.zeros([4, 64], "float32", dev);
    const R = tensor.zeros([1, 64], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y, R);
    expect(Array.from(R.toArray() as Float32Array)).toEqual(
      Array.from({ length: 64 }, (_, j) =>
        [0, 1, 2, 3].reduce((a, r) => a + 2 * x[r * 64 + j]!, 0),
      ),
    );
  });

  it("digits that overlap are TX2022 naming them", () => {
    const copyWith = (layout: string, scope: Scope, shape: [number, number]) => () =>
      T.function("bad", { X: T.Tensor(shape, "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 256 }) });
        const f = T.alloc_local(shape, "float32", { layout: T.TileLayout(layout) });
        T.tile[scope].copy(f, X);
      });
    const overlap = errorOf(
      copyWith("S[(4, 4, 8) : (32@tid_in_wg, 1@warpid, 1@laneid)]", "cta", [16, 8]),
    );
    expect(overlap.code).toBe("TX2022");
    expect(overlap.message).toMatch(
      /4:32@tid_in_wg and 4:1@warpid name the same threads: .* 4:32@tid and 4:32@tid, which overlap on tid 32\.\.127/,
    );
  });
});

describe("permute_layout keeps elements on their threads at any scope", () => {
  it("one element → thread map in two notations is register moves at warp scope", () => {
    const fn = T.function(
      "perm",
      { X: T.Tensor([32, 4], "float32"), Y: T.Tensor([32, 4], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([32, 4], "float32", {
          layout: T.TileLayout("S[(4, 8, 4) : (8@laneid, 1@laneid, 1)]"),
        });
        const b = T.alloc_local([32, 4], "float32", {
          layout: T.TileLayout("S[(32, 2, 2) : (1@laneid, 1, 2)]"),
        });
        T.tile.warp.copy(a, X);
        T.tile.warp.permute_layout(b, a);
        T.tile.warp.copy(Y, b);
      },
    );
    expect(explainTile(fn)[1]).toMatch(
      /T\.tile\.warp\.permute_layout → in-thread register moves \(4 slots per thread/,
    );
    const x = ints(128, 3);
    const X = tensor(x, { shape: [32, 4], dtype: "float32", device: dev });
    const Y = tensor.zeros([32, 4], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x));
  });

  it("register moves on a layout that leaves lanes 16-31 out: those lanes move nothing", () => {
    const fn = T.function(
      "perm16",
      { X: T.Tensor([16, 4], "float32"), Y: T.Tensor([16, 4], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([16, 4], "float32", {
          layout: T.TileLayout("S[(16, 4) : (1@laneid, 1)]"),
        });
        const b = T.alloc_local([16, 4], "float32", {
          layout: T.TileLayout("S[(16, 2, 2) : (1@laneid, 1, 2)]"),
        });
        T.tile.warp.copy(a, X);
        T.tile.warp.permute_layout(b, a);
        T.tile.warp.copy(Y, b);
      },
    );
    expect(explainTile(fn)[1]).toMatch(/in-thread register moves \(4 slots per thread/);
    const x = ints(64, 9);
    const X = tensor(x, { shape: [16, 4], dtype: "float32", device: dev });
    const Y = tensor.zeros([16, 4], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x));
  });

  it("a slot that depends on the thread goes through a per-thread scratch", () => {
    // Every lane holds the whole tile (m only); dst gives lane t the row t.
    const fn = T.function(
      "perm2",
      { X: T.Tensor([32, 4], "float32"), Y: T.Tensor([32, 4], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([32, 4], "float32", {
          layout: T.TileLayout("S[(32, 4) : (4, 1)]"),
        });
        const b = T.alloc_local([32, 4], "float32", {
          layout: T.TileLayout("S[(32, 4) : (1@laneid, 1)]"),
        });
        T.tile.warp.copy(a, X);
        T.tile.warp.permute_layout(b, a);
        T.tile.warp.copy(Y, b);
      },
    );
    expect(explainTile(fn)[1]).toMatch(
      /per-thread scratch of 128 elements \(the slot depends on the thread\)/,
    );
    const x = ints(128, 5);
    const X = tensor(x, { shape: [32, 4], dtype: "float32", device: dev });
    const Y = tensor.zeros([32, 4], "float32", dev);
    compile(fn, { target: "cuda" })(X, Y);
    expect(Array.from(Y.toArray() as Float32Array)).toEqual(Array.from(x));
  });

  it("moving elements between lanes below cta scope stays TX2022", () => {
    const e = errorOf(() =>
      T.function("perm", { X: T.Tensor([32, 4], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const a = T.alloc_local([32, 4], "float32", {
          layout: T.TileLayout("S[(32, 4) : (1@laneid, 1)]"),
        });
        const b = T.alloc_local([32, 4], "float32", {
          layout: T.TileLayout("S[(32, 4) : (1, 1@laneid)]"),
        });
        T.tile.warp.permute_layout(b, a);
      }),
    );
    expect(e.message).toMatch(
      /moves elements between threads.*nearest that works: T\.tile\.cta\.permute_layout/,
    );
  });
});

describe("messages", () => {
  const memCopy = (dir: "s2g" | "g2s") => () =>
    T.function("m", { A: T.Tensor([8, 8], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const s = T.alloc_shared([8, 8], "float32");
      if (dir === "s2g") T.tile.cta.copy(A, s);
      else T.tile.cta.copy(s, A);
    });

  it("copy between two memory views suggests by direction", () => {
    expect(errorOf(memCopy("s2g")).text).toMatch(
      /nearest that works: a register tile in between .*T\.tile\.copy_async\(A, \w+\) at thread scope .*global ← shared bulk \/ TMA stores$/,
    );
    expect(errorOf(memCopy("g2s")).text).toMatch(
      /nearest that works: a register tile in between .*T\.tile\.copy_async\(\w+, A\) for shared ← global async copies/,
    );
  });

  it("a wg reduction over warpid gives the layouts over tid_in_wg", () => {
    const e = errorOf(() =>
      T.function("r", { X: T.Tensor([4, 32], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const f = T.alloc_local([4, 32], "float32", {
          layout: T.TileLayout("S[(4, 32) : (1@warpid, 1@laneid)]"),
        });
        const d = T.alloc_local([1, 32], "float32", {
          layout: T.TileLayout(T.S([1, 32], [0, "1@laneid"]), T.R([4], ["1@warpid"])),
        });
        T.tile.wg.sum(d, f, 0);
      }),
    );
    expect(e.message).toMatch(
      /nearest that works: src S\[\(4, 32\) : \(32@tid_in_wg, 1@tid_in_wg\)\] and dst .*R\[4 : 32@tid_in_wg\] \(the same threads in each warpgroup\) with T\.tile\.wg\.sum/,
    );
  });

  it("a wg copy over a mix of tid and laneid names the layout over tid_in_wg", () => {
    const e = errorOf(() =>
      T.function("c", { X: T.Tensor([4, 32], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const f = T.alloc_local([4, 32], "float32", {
          layout: T.TileLayout("S[(4, 32) : (32@tid, 1@laneid)]"),
        });
        T.tile.wg.copy(f, X);
      }),
    );
    expect(e.text).toMatch(
      /nearest that works: S\[\(4, 32\) : \(32@tid_in_wg, 1@tid_in_wg\)\] \(the same threads in each warpgroup\) with T\.tile\.wg\.copy, or this layout with T\.tile\.cta\.copy$/,
    );
  });

  it("a primitive at a scope its record does not serve is TX2022 naming the scopes", () => {
    const e = errorOf(() =>
      T.function("g", { X: T.Tensor([1], "float32") }, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const c = T.alloc_local([16, 8], "float32");
        T.tile.cta.gemm(c, c, c);
      }),
    );
    expect(e.code).toBe("TX2022");
    expect(e.text).toMatch(
      /^T\.tile\.cta\.gemm: gemm runs at warp scope only .*nearest that works: T\.tile\.warp\.gemm$/,
    );
  });
});

describe("declared scopes are the served scopes", () => {
  /** A layout over the threads of each scope (128 threads launched). */
  const over = {
    thread: undefined,
    warp: "S[(32, 2) : (1@laneid, 1)]",
    wg: "S[(128, 2) : (1@tid_in_wg, 1)]",
    cta: "S[(128, 2) : (1@tid, 1)]",
  } as const;
  type Ns = Record<string, (...a: unknown[]) => void>;

  it("every record lowers at each declared scope and the surface refuses the others", () => {
    const served: Record<string, string[]> = {};
    for (const scope of TILE_SCOPES) {
      const ns = (scope === "thread" ? T.tile : T.tile[scope]) as unknown as Ns;
      // Trivially valid operands for the records that take register tiles and views (gemm,
      // gemm_async and copy_async have their own tests of every scope).
      T.function("s", { X: T.Tensor([128, 2], "float32") }, ({ X }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const l = over[scope];
        const shape = scope === "thread" ? [4, 2] : [scope === "warp" ? 32 : 128, 2];
        const mk = (sh: number[], layout?: string) =>
          T.alloc_local(sh, "float32", layout ? { layout: T.TileLayout(layout) } : {});
        const a = mk(shape, l);
        const b = mk(shape, l);
        const r = mk(
          [shape[0]!, 1],
          l
            ? l.replace(
                /\(\w+, 2\) : \((\S+), 1\)/,
                (_m, t: string) => `(${shape[0]}, 1) : (${t}, 1)`,
              )
            : undefined,
        );
        const view = X.sub(T.slice(0, shape[0]!), T.slice(0, 2));
        const calls: Record<string, () => void> = {
          fill: () => ns.fill!(a, 1),
          add: () => ns.add!(b, a, a),
          exp2: () => ns.exp2!(b, a),
          copy: () => ns.copy!(a, view),
          memset: () => ns.memset!(view, 0),
          permute_layout: () => ns.permute_layout!(b, a),
          sum: () => ns.sum!(r, a, 1),
        };
        for (const [name, call] of Object.entries(calls)) {
          const rec = TILE_PRIMITIVES[name as keyof typeof TILE_PRIMITIVES];
          if (rec.scopes.includes(scope)) {
            call();
            (served[name] ??= []).push(scope);
          }
        }
        for (const [name, rec] of Object.entries(TILE_PRIMITIVES)) {
          if (rec.scopes.includes(scope)) continue;
          expect(errorOf(() => ns[name]!()).text).toMatch(
            new RegExp(`^\\S+: ${name} runs at .* scope only`),
          );
        }
      });
    }
    for (const name of ["fill", "add", "exp2", "copy", "memset", "permute_layout", "sum"])
      expect(served[name]).toEqual([
        ...TILE_PRIMITIVES[name as keyof typeof TILE_PRIMITIVES].scopes,
      ]);
    expect(TILE_PRIMITIVES.gemm_async.scopes).toEqual(["wg"]);
  });
});
