// Copies on the simulator (issue 9, simulator speed): a Store of a bare load of its own dtype
// moves the element's bits, as ld / st do on the GPU, so NaN payloads and signaling NaNs survive;
// and on a generated statement function, a copy over a block of consecutive threads whose two
// offsets are the thread index plus a constant moves as one range (vector loops and block copies,
// packages/runtime-sim/src/compile/vector.ts, affine.ts). Random copy kernels (offsets with and
// without that form, 1-D and 2-D blocks, loops, a runtime factor, barriers left out) must report
// and leave the same bytes on the closures, on generated functions from the first lane, and with
// every access checked as it is made.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { verify, type DType, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { runSim, SimTensor, simTensor, simZeros, type SimOptions } from "@tirx-ts/runtime-sim";
import { same } from "./util/same-outcome.js";
import { specialBytes, stagedCopy } from "./kernels/staged-copy.js";

const WAYS: readonly SimOptions[] = [
  { jitAfter: 0 },
  { jitAfter: Infinity },
  { rangeChecks: false, jitAfter: Infinity },
];

describe("a copy moves bits", () => {
  for (const dtype of ["float64", "float32", "float16", "bfloat16"] as const) {
    it(`${dtype}: NaN payloads and signaling NaNs survive A → shared → B`, () => {
      const n = 1024;
      const bytes = specialBytes(dtype, n);
      for (const way of WAYS) {
        const a = new SimTensor(bytes.slice(), [n], dtype);
        const b = simZeros([n], dtype);
        runSim(verify(stagedCopy(dtype, n)), [a, b], way);
        expect(Buffer.from(b.toBytes()).equals(Buffer.from(bytes)), JSON.stringify(way)).toBe(true);
      }
    });
  }
});

/** One random copy kernel's shape. */
interface Shape {
  readonly dtype: DType;
  readonly bx: number;
  readonly by: number;
  readonly grid: number;
  readonly reps: number;
  /** Per index (A's, shared store's, shared load's, B's): constant, %tid.x, %tid.y, loop, k factors. */
  readonly idx: readonly (readonly [number, number, number, number, number])[];
  readonly sync: boolean;
  readonly k: number;
}

const N = 4096;

function build(sh: Shape): PrimFunc {
  return T.function(
    "copy_fuzz",
    { A: T.Tensor([N], sh.dtype), B: T.Tensor([N], sh.dtype), k: T.int32 },
    ({ A, B, k }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: sh.grid, block: [sh.bx, sh.by] }),
      });
      const tx = T.cuda.thread_idx("x");
      const ty = T.cuda.thread_idx("y");
      const s = T.alloc_shared([1024], sh.dtype);
      const at = (i: number, j: PrimExpr): PrimExpr => {
        const [c, px, py, pj, pk] = sh.idx[i]!;
        return tx
          .mul(px)
          .add(ty.mul(py * sh.bx))
          .add(j.mul(pj))
          .add(k.mul(pk))
          .add(c);
      };
      for (const j of T.range(sh.reps)) s.set([at(1, j)], A.get([at(0, j)]));
      if (sh.sync) T.cuda.cta_sync();
      for (const j of T.range(sh.reps)) B.set([at(3, j)], s.get([at(2, j)]));
    },
  );
}

const shape: fc.Arbitrary<Shape> = fc.record({
  dtype: fc.constantFrom<DType>("float32", "float16", "int32"),
  bx: fc.constantFrom(32, 64, 96),
  by: fc.constantFrom(1, 2),
  grid: fc.constantFrom(1, 2),
  reps: fc.constantFrom(1, 2),
  idx: fc.array(
    fc.tuple(
      fc.integer({ min: 0, max: 300 }),
      fc.constantFrom(1, 1, 1, 2, 0, -1),
      fc.constantFrom(1, 1, 0, 2),
      fc.constantFrom(0, 192, 200, 1),
      fc.constantFrom(0, 0, 1),
    ),
    { minLength: 4, maxLength: 4 },
  ),
  sync: fc.boolean(),
  k: fc.constantFrom(0, 1, 3, 5000),
});

describe("random copy kernels: generated block copies report as element checks do", () => {
  it("offsets with and without the thread-plus-constant form, every way alike", () => {
    let ran = 0;
    fc.assert(
      fc.property(shape, (sh) => {
        const fn = build(sh);
        const args = (): KernelArg[] => [
          simTensor(
            Array.from({ length: N }, (_, i) => (i * 7) % 251),
            { shape: [N], dtype: sh.dtype },
          ),
          simZeros([N], sh.dtype),
          sh.k,
        ];
        const r = same(fn, args, [0, 2], ["collect", "throw"], WAYS);
        if (!r.some((x) => x.startsWith("TX2"))) ran++;
      }),
      { numRuns: 30, seed: 9 },
    );
    // Most kernels pass the verifier and run (the comparison is the point).
    expect(ran).toBeGreaterThan(15);
  });
});

describe("cp.async tiles issued as one run report as thread-by-thread issue does", () => {
  /**
   * A cp.async tile of A's row `row + k` (a runtime offset) into shared memory by `threads`
   * threads of each of 2 CTAs, read back by other threads with or without the barrier.
   */
  const tile = (threads: number, sync: boolean, chunk: 4 | 8 | 16): PrimFunc =>
    T.function(
      `tile_${threads}_${sync}_${chunk}`,
      { A: T.Tensor([8, 512], "float32"), B: T.Tensor([8, 512], "float32"), k: T.int32 },
      ({ A, B, k }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: threads }) });
        const tid = T.cuda.thread_idx("x");
        const row = T.cuda.block_idx("x");
        const s = T.alloc_shared([512], "float32");
        const v = chunk / 4;
        const src = A.sub(row.add(k), ":").rearrange("(r w t v) -> w t r v", {
          w: threads / 32,
          t: 32,
          v,
        });
        const dst = s.rearrange("(r w t v) -> w t r v", { w: threads / 32, t: 32, v });
        T.cuda.tile.apply(T.ptx["cp.async.ca.shared.global"]!, dst, src, {
          chunk_bytes: chunk,
          scope: "cta",
        });
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        if (sync) T.cuda.cta_sync();
        for (const j of T.range(512 / threads)) {
          const col = tid.add(j.mul(threads)).add(1).floormod(512);
          B.set([row, col], s.get([col]));
        }
      },
    );
  const a = (k: number) => (): KernelArg[] => [
    simTensor(
      Array.from({ length: 4096 }, (_, i) => i * 0.25),
      { shape: [8, 512], dtype: "float32" },
    ),
    simZeros([8, 512], "float32"),
    k,
  ];
  const ways: SimOptions[] = [{}, { jitAfter: 0 }, { rangeChecks: false, jitAfter: Infinity }];
  for (const threads of [32, 64, 128]) {
    for (const chunk of [4, 8, 16] as const) {
      if ((512 * 4) / (threads * chunk) < 1) continue;
      it(`${threads} threads, ${chunk}-byte chunks: clean, racy, and out of bounds`, () => {
        expect(same(tile(threads, true, chunk), a(0), [0, 2], ["collect", "throw"], ways)).toEqual(
          [],
        );
        const racy = same(tile(threads, false, chunk), a(1), [0, 2], ["collect", "throw"], ways);
        expect(racy.length).toBeGreaterThan(0);
        // Row 1 + k = 8 for CTA 1 with k = 7: past the end of A.
        const oob = same(tile(threads, true, chunk), a(7), [0, 2], ["collect", "throw"], ways);
        expect(oob.some((x) => x.startsWith("TX6005"))).toBe(true);
      });
    }
  }
});
