// Random kernels over strided runs (consecutive threads, elements a fixed step apart): shared and
// global loads and stores with thread factors 2, 3, 4, 8, 33, columns of 2-D tensors and shared
// buffers, mixed with contiguous accesses in one statement, red.add on shared and global,
// partial __syncwarp, named barriers, cta_sync, masks, 2-iteration loops, 2 CTAs and clusters,
// 1/2/4/8-byte elements, a tensor passed twice. Fast ways vs the reference (first-diff.ts).
import fc from "fast-check";
import { dtypeBytes, type DType, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import { SimTensor, simZeros } from "@tirx-ts/runtime-sim";
import { checkSame } from "./first-diff.js";
import { AccessBatch } from "../../packages/runtime-sim/src/exec/access-batch.js";

export const stats = { verified: 0, strided: 0, stridedTaken: 0 };
const origFlush = AccessBatch.prototype.flush;
AccessBatch.prototype.flush = function (this: AccessBatch): boolean {
  let n = 0;
  for (const q of this.active) {
    for (let k = 0; k < q.runs; k++) if (q.rN[k]! > 1 && q.rStep[k] !== 1 << q.sh) n++;
  }
  stats.strided += n;
  const r = origFlush.call(this);
  if (r) stats.stridedTaken += n;
  return r;
};

const N = 4096;
const R = 64; // 2-D tensor rows
const C = 64; // 2-D tensor cols
const NS = 1024; // shared elements
type Idx = readonly [k: number, c: number, pj: number, mod: boolean];
type Buf = "A" | "B" | "A2" | "B2" | "s" | "s2" | "sm";
type Mask = "all" | "lt" | "w0" | "w1" | "odd" | "mid";
type Op =
  | { t: "st"; dst: Buf; di: Idx; srcs: readonly (readonly [Buf, Idx])[]; mask: Mask; dup: boolean }
  | { t: "red"; dst: "s" | "B"; di: Idx; mask: Mask }
  | { t: "sync" }
  | { t: "warp"; part: boolean }
  | { t: "named" }
  | { t: "loop"; body: readonly Op[] }
  | { t: "bulk"; off: number; wait: boolean }
  | { t: "s2g"; off: number; wait: 0 | 1 | 2 }
  | { t: "cp"; off: number; mask: Mask; wait: number };
interface Shape {
  readonly dtype: DType;
  readonly block: number;
  readonly grid: number;
  readonly cluster: boolean;
  readonly alias: boolean;
  readonly init: boolean;
  readonly ops: readonly Op[];
}

const ATOMIC: ReadonlySet<DType> = new Set(["int32", "float32", "uint32"]);

export function build(sh: Shape): PrimFunc {
  const th = sh.block;
  return T.function(
    "sfuzz",
    {
      A: T.Tensor([N], sh.dtype),
      B: T.Tensor([N], sh.dtype),
      A2: T.Tensor([R, C], sh.dtype),
      B2: T.Tensor([R, C], sh.dtype),
    },
    ({ A, B, A2, B2 }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: sh.grid,
          block: th,
          ...(sh.cluster ? { cluster: [2, 1, 1] } : {}),
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const s = T.alloc_shared([NS], sh.dtype);
      const s2 = T.alloc_shared([NS], sh.dtype);
      const sm = T.alloc_shared([32, 33], sh.dtype);
      const bufs: Record<Buf, TileView> = { A, B, A2, B2, s, s2, sm };
      const eb = dtypeBytes(sh.dtype);
      const bar = T.alloc_shared([1], "uint64");
      let phase = 0;
      if (sh.ops.some((o) => o.t === "bulk")) {
        T.if_(tid.eq(0), () => {
          T.ptx.mbarrier.init(bar.sub(0), 1);
          T.ptx.fence.mbarrier_init();
        });
        T.cuda.cta_sync();
      }
      if (sh.init) {
        for (const j of T.range(Math.ceil(NS / th))) {
          const i = tid.add(j.mul(th)).floormod(NS);
          s.set([i], A.get([i]));
          s2.set([i], A.get([i.add(NS)]));
        }
        for (const j of T.range(Math.ceil(1056 / th))) {
          const i = tid.add(j.mul(th)).floormod(1056);
          sm.set([i.floordiv(33), i.floormod(33)], A.get([i]));
        }
        T.cuda.cta_sync();
      }
      const masked = (m: Mask, f: () => void) => {
        if (m === "all") f();
        else if (m === "lt") T.if_(tid.lt(th - 5), f);
        else if (m === "w0") T.if_(tid.lt(32), f);
        else if (m === "w1") T.if_(tid.ge(th - 32), f);
        else if (m === "odd") T.if_(tid.floormod(2).eq(1), f);
        else T.if_(tid.ge(3).and(tid.lt(th - 3)), f);
      };
      const lin = (x: Idx, j: PrimExpr, size: number): PrimExpr => {
        const [k, c, pj, mod] = x;
        const e = tid.mul(k).add(j.mul(pj)).add(c);
        const lo = Math.min(0, k * (th - 1)) + c;
        const hi = Math.max(0, k * (th - 1)) + c + pj;
        return mod || lo < 0 || hi >= size ? e.floormod(size) : e;
      };
      const at = (b: Buf, x: Idx, j: PrimExpr): PrimExpr[] => {
        if (b === "A" || b === "B") return [lin(x, j, N)];
        if (b === "s" || b === "s2") return [lin(x, j, NS)];
        if (b === "sm") {
          // column (tid, c) or row (c, tid) of a 32x33 shared tile
          return x[0] >= 0
            ? [tid.floormod(32), T.int32(x[1] % 33).add(j.mul(x[2] % 2))]
            : [T.int32(x[1] % 32), tid.floormod(32).add(j.mul(x[2] % 2))];
        }
        // 2-D tensors: a column when k >= 0 (row tid*k + c), else a row
        return x[0] >= 0
          ? [
              tid
                .mul(Math.max(1, x[0] % 3))
                .add(cta.mul(x[1] % 5))
                .add(j)
                .floormod(R),
              T.int32(x[1] % C),
            ]
          : [T.int32(x[1] % R), tid.add(j.mul(x[2])).floormod(C)];
      };
      const emit = (op: Op, j: PrimExpr) => {
        switch (op.t) {
          case "st":
            return masked(op.mask, () => {
              let v: PrimExpr | undefined;
              for (const [b, x] of op.srcs) {
                const l = bufs[b].get(at(b, x, j));
                v = v === undefined ? l : v.add(l);
              }
              bufs[op.dst].set(at(op.dst, op.di, j), v!);
            });
          case "red":
            if (!ATOMIC.has(sh.dtype)) return;
            return masked(op.mask, () =>
              T.cuda.red_add(bufs[op.dst].ptr(at(op.dst, op.di, j)), T.int32(1).cast(sh.dtype)),
            );
          case "sync":
            return T.cuda.cta_sync();
          case "warp":
            if (op.part) T.if_(tid.floormod(32).lt(16), () => T.cuda.__syncwarp(0xffff));
            else T.cuda.__syncwarp();
            return;
          case "named":
            T.if_(
              tid.lt(32),
              () => T.cuda.bar_arrive(1, th),
              () => T.cuda.bar_sync(1, th),
            );
            return;
          case "loop":
            for (const jj of T.range(2)) for (const o of op.body) emit(o, jj);
            return;
          case "bulk": {
            // thread 0: 512 bytes of A into s at byte `off` (mbarrier complete_tx)
            const cnt = 512 / eb;
            const e0 = Math.min(op.off / eb, NS - cnt);
            T.if_(tid.eq(0), () => {
              T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 512);
              T.cuda.tile.apply(
                T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"]!,
                s.sub(`${e0}:${e0 + cnt}`),
                A.sub(`${e0}:${e0 + cnt}`),
                { chunk_bytes: 512, mbar: bar.sub(0) },
              );
            });
            if (op.wait) T.ptx.mbarrier.try_wait(bar.sub(0), phase % 2);
            phase++;
            return;
          }
          case "s2g": {
            const cnt = 512 / eb;
            const e0 = Math.min(op.off / eb, NS - cnt);
            T.if_(tid.eq(0), () => {
              T.ptx.fence.proxy_async();
              T.cuda.tile.apply(
                T.ptx["cp.async.bulk.global.shared::cta.bulk_group"]!,
                B.sub(`${e0 + 1024}:${e0 + 1024 + cnt}`),
                s.sub(`${e0}:${e0 + cnt}`),
                { chunk_bytes: 512 },
              );
              T.ptx.cp.async_.bulk.commit_group();
              if (op.wait === 1) T.ptx.cp.async_.bulk.wait_group_read(0);
              if (op.wait === 2) T.ptx.cp.async_.bulk.wait_group(0);
            });
            return;
          }
          case "cp": {
            const v = 16 / eb;
            const len = th * v;
            if (len > NS) return;
            const e0 = Math.min(op.off / eb, NS - len);
            const pat = "(r w t v) -> w t r v";
            const sz = { r: 1, w: th / 32, t: 32, v };
            masked(op.mask, () =>
              T.cuda.tile.apply(
                T.ptx["cp.async.cg.shared.global"]!,
                s.sub(`${e0}:${e0 + len}`).rearrange(pat, sz),
                A.sub(`${e0}:${e0 + len}`).rearrange(pat, sz),
                { chunk_bytes: 16, scope: "cta" },
              ),
            );
            T.ptx.cp.async_.commit_group();
            if (op.wait >= 0) T.ptx.cp.async_.wait_group(op.wait);
            return;
          }
        }
      };
      for (const op of sh.ops) emit(op, T.int32(0));
    },
  );
}

const idx: fc.Arbitrary<Idx> = fc.tuple(
  fc.constantFrom(1, 2, 2, 3, 4, 4, 8, 33, 0, -1),
  fc.constantFrom(0, 0, 1, 2, 5, 64, 100, 700),
  fc.constantFrom(0, 0, 1, 3, 128),
  fc.constantFrom(false, false, true),
);
const mask = fc.constantFrom<Mask>("all", "all", "all", "lt", "w0", "w1", "odd", "mid");
const gbuf = fc.constantFrom<Buf>("A", "B", "A2", "B2", "s", "s2", "sm", "s", "s");
const leaf: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .record({
        t: fc.constant("st" as const),
        dst: gbuf,
        di: idx,
        srcs: fc.array(fc.tuple(gbuf, idx), { minLength: 1, maxLength: 2 }),
        mask,
        // a buffer twice in one statement (not batched) now and then
        dup: fc.constantFrom(false, false, false, false, false, true),
      })
      .filter((o) => {
        const all = [o.dst, ...o.srcs.map((x) => x[0])];
        return new Set(all).size === all.length || o.dup;
      }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant("red" as const),
      dst: fc.constantFrom<"s" | "B">("s", "B"),
      di: idx,
      mask,
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant("sync" as const) }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("warp" as const), part: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("named" as const) }) },
);
const asyncOp: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    t: fc.constant("bulk" as const),
    off: fc.constantFrom(0, 0, 256, 1024, 2048),
    wait: fc.constantFrom(true, true, false),
  }),
  fc.record({
    t: fc.constant("s2g" as const),
    off: fc.constantFrom(0, 256, 1024),
    wait: fc.constantFrom<0 | 1 | 2>(0, 1, 2),
  }),
  fc.record({
    t: fc.constant("cp" as const),
    off: fc.constantFrom(0, 0, 512, 1024),
    mask,
    wait: fc.constantFrom(-1, 0, 0, 1),
  }),
);
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: leaf },
  { weight: 2, arbitrary: asyncOp },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant("loop" as const),
      body: fc.array(leaf, { minLength: 1, maxLength: 3 }),
    }),
  },
);
export const shape: fc.Arbitrary<Shape> = fc.record({
  dtype: fc.constantFrom<DType>("float32", "int32", "float16", "int8", "int16", "float64", "uint8"),
  block: fc.constantFrom(32, 64, 96, 128),
  grid: fc.constantFrom(1, 2),
  cluster: fc.boolean(),
  alias: fc.constantFrom(false, false, false, true),
  init: fc.constantFrom(true, true, false),
  ops: fc.array(op, { minLength: 1, maxLength: 7 }),
});

export function argsOf(sh: Shape): () => KernelArg[] {
  return () => {
    const eb = dtypeBytes(sh.dtype);
    const mk = (n: number, shape: number[]) => {
      const bytes = new Uint8Array(n * eb);
      for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 37 + 11) & 0x3f;
      return new SimTensor(bytes, shape, sh.dtype);
    };
    const a = mk(N, [N]);
    const a2 = mk(R * C, [R, C]);
    return [
      a,
      sh.alias ? a : simZeros([N], sh.dtype),
      a2,
      sh.alias ? a2 : simZeros([R, C], sh.dtype),
    ];
  };
}

export function check(sh0: Shape): void {
  const sh = sh0.cluster ? { ...sh0, grid: 2 } : sh0;
  if (checkSame(sh, build, argsOf(sh))) stats.verified++;
}
