// Real-GPU test of compile(fn, { checkBounds: true }): a gather with one index out of range
// reports TX6005 with the same message, line and note as the simulator, skips the access (the
// load reads 0) and leaves the context usable; so does a column past its row whose flat offset
// stays inside the tensor (an axis guard). Skipped (with the reason printed) where there is
// no driver.
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { TirxError, verify } from "@tirx-ts/core";
import { cuda, cudaAvailable, cudaTensor, cudaZeros } from "@tirx-ts/runtime-cuda";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { compile } from "tirx-ts";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/check-bounds: skipped, ${available.reason}`);

const N = 1024;
const M = 64;
const gather = T.function(
  "gpu_gather",
  { A: T.Tensor([N], "float32"), idx: T.Tensor([M], "int32"), B: T.Tensor([M], "float32") },
  ({ A, idx, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: M }) });
    const t = T.cuda.thread_idx("x");
    B.set([t], A.get([idx.get([t])]));
  },
);

/** A histogram whose bins are data: both atomics are guarded. */
const histogram = T.function(
  "gpu_histogram",
  { A: T.Tensor([M], "int32"), H: T.Tensor([16], "uint32"), Old: T.Tensor([M], "uint32") },
  ({ A, H, Old }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: M }) });
    const t = T.cuda.thread_idx("x");
    const bin = T.let_("bin", A.get([t]));
    T.cuda.red_add(H.ptr([bin]), 1);
    Old.set([t], T.cuda.atomic_add(H.ptr([bin.add(1)]), 2));
  },
);

/** B[t, col[t]] = 1 on B [64, 32]: a column past its row keeps the flat offset inside B. */
const colStore = T.function(
  "gpu_col_store",
  { col: T.Tensor([M], "int32"), B: T.Tensor([M, 32], "float32") },
  ({ col, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: M }) });
    const t = T.cuda.thread_idx("x");
    B.set([t, col.get([t])], T.float32(1));
  },
);

const a = Float32Array.from({ length: N }, (_, i) => i + 0.5);
const indices = (bad: number, at: number): number[] =>
  Array.from({ length: M }, (_, i) => (i === at ? bad : (i * 7) % N));

function errorOf(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

describe.skipIf(!available.ok)("checkBounds on the GPU", () => {
  it("reports an out-of-range gather index as the simulator does, and skips the access", () => {
    const dev = cuda(0);
    const run = compile(gather, { target: "cuda", checkBounds: true });
    expect(run.ptx).toContain("tirx_oob");
    const idx = indices(5000, 37);
    using A = cudaTensor(a, { shape: [N], dtype: "float32", device: dev });
    using I = cudaTensor(idx, { shape: [M], dtype: "int32", device: dev });
    using B = cudaZeros([M], "float32", dev);
    const gpu = errorOf(() => run(A, I, B));
    const sim = errorOf(() =>
      runSim(verify(gather), [
        simTensor(a, { shape: [N], dtype: "float32" }),
        simTensor(idx, { shape: [M], dtype: "int32" }),
        simZeros([M], "float32"),
      ]),
    );
    expect(gpu.code).toBe("TX6005");
    expect(gpu.message).toBe(sim.message);
    expect(gpu.message).toContain("thread (37, 0, 0) of CTA (0, 0, 0) reads global");
    expect(gpu.span?.line).toBe(sim.span?.line);
    expect(gpu.notes[0]).toEqual(sim.notes[0]);
    const b = Array.from(B.toArray() as Float32Array);
    expect(b).toEqual(idx.map((j, i) => (i === 37 ? 0 : a[j]!)));

    // The record was cleared and the context survives: an in-range launch runs and reports nothing.
    using J = cudaTensor(indices(1, 37), { shape: [M], dtype: "int32", device: dev });
    run(A, J, B);
    expect((B.toArray() as Float32Array)[37]).toBe(1.5);
    // A negative index is out of range too.
    using K = cudaTensor(indices(-3, 5), { shape: [M], dtype: "int32", device: dev });
    expect(errorOf(() => run(A, K, B)).message).toContain("thread (5, 0, 0)");
  });

  it("reports a column past its row (the flat offset inside B) as the simulator does, and skips the store", () => {
    const dev = cuda(0);
    const run = compile(colStore, { target: "cuda", checkBounds: true });
    const cols = Array.from({ length: M }, (_, i) => (i === 5 ? 32 : i % 32));
    using C = cudaTensor(cols, { shape: [M], dtype: "int32", device: dev });
    using B = cudaZeros([M, 32], "float32", dev);
    const gpu = errorOf(() => run(C, B));
    const sim = errorOf(() =>
      runSim(verify(colStore), [
        simTensor(cols, { shape: [M], dtype: "int32" }),
        simZeros([M, 32], "float32"),
      ]),
    );
    expect(gpu.code).toBe("TX6005");
    expect(gpu.message).toBe(sim.message);
    expect(gpu.message).toContain(
      'thread (5, 0, 0) of CTA (0, 0, 0) writes axis 1 of global "B" (extent 32) at index 32',
    );
    expect(gpu.span?.line).toBe(sim.span?.line);
    expect(gpu.notes.slice(0, 2)).toEqual(sim.notes.slice(0, 2));
    const b = B.toArray() as Float32Array;
    expect(b[6 * 32]).toBe(0); // B[5, 32] would have been B[6, 0]
    expect(b[6 * 32 + 6]).toBe(1);
    // In range: no report.
    using D = cudaTensor(
      cols.map((c) => (c === 32 ? 31 : c)),
      { shape: [M], dtype: "int32", device: dev },
    );
    run(D, B);
    expect((B.toArray() as Float32Array)[5 * 32 + 31]).toBe(1);
  });

  it("reports an out-of-range atomic as the simulator does; the other atomics happen", () => {
    const dev = cuda(0);
    const run = compile(histogram, { target: "cuda", checkBounds: true });
    const bins = Array.from({ length: M }, (_, i) => (i === 9 ? 40 : i % 8));
    using A = cudaTensor(bins, { shape: [M], dtype: "int32", device: dev });
    using H = cudaZeros([16], "uint32", dev);
    using Old = cudaZeros([M], "uint32", dev);
    const gpu = errorOf(() => run(A, H, Old));
    const sim = errorOf(() =>
      runSim(verify(histogram), [
        simTensor(bins, { shape: [M], dtype: "int32" }),
        simZeros([16], "uint32"),
        simZeros([M], "uint32"),
      ]),
    );
    expect(gpu.code).toBe("TX6005");
    expect(gpu.message).toBe(sim.message);
    expect(gpu.message).toContain(
      'thread (9, 0, 0) of CTA (0, 0, 0) atomically updates global "H"',
    );
    expect(gpu.span?.line).toBe(sim.span?.line);
    const want = new Array<number>(16).fill(0);
    bins.forEach((b, i) => {
      if (i === 9) return;
      want[b]! += 1;
      want[b + 1]! += 2;
    });
    expect(Array.from(H.toArray() as Uint32Array)).toEqual(want);
    expect((Old.toArray() as Uint32Array)[9]).toBe(0); // the skipped atomic read 0
  });
});
