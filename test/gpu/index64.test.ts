// Real-GPU test of 64-bit indexing: a 4 GiB + 4 MiB int32 tensor written and read by kernels at
// element offsets whose byte offsets exceed 2^31 (static shape: 64-bit chosen at compile time;
// symbolic shape: the 64-bit module chosen at launch). Host copies stay small: sampled elements
// are read with cuMemcpyDtoH at an offset. Skipped (with the reason printed) where there is no
// driver.
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { cuda, cudaAvailable, cudaZeros, driver, type CudaTensor } from "@tirx-ts/runtime-cuda";
import { compile } from "tirx-ts";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/index64: skipped, ${available.reason}`);

const N = 2 ** 30 + 2 ** 20; // int32 elements: 4 GiB + 4 MiB
const BLOCK = 256;
const PROBE = 256;

/** A[i] = i ^ 0x5a5a5a5a for every i < N (one thread per element). */
const fillStatic = T.function("fill_static", { A: T.Tensor([N], "int32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: N / BLOCK, block: BLOCK }) });
  const i = T.cuda.block_idx("x").mul(BLOCK).add(T.cuda.thread_idx("x"));
  A.set([i], i.bitxor(0x5a5a5a5a));
});

/** The same with a symbolic extent: the runtime picks the 64-bit module from n at launch. */
const fillSymbolic = T.function(
  "fill_symbolic",
  { n: T.int32, A: T.Tensor(["n"], "int32") },
  ({ n, A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, BLOCK)], block: BLOCK }) });
    const i = T.cuda.block_idx("x").mul(BLOCK).add(T.cuda.thread_idx("x"));
    T.if_(i.lt(n), () => A.set([i], i.bitxor(0x5a5a5a5a)));
  },
);

/** B[k] = A[N - 1 - k * 4099] + 1 for k < 256: reads spread from the far end back to byte ~2^32. */
const probe = T.function(
  "probe_far",
  { A: T.Tensor([N], "int32"), B: T.Tensor([PROBE], "int32") },
  ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: PROBE }) });
    const k = T.cuda.thread_idx("x");
    B.set([k], A.get([k.mul(-4099).add(N - 1)]).add(1));
  },
);

const expected = (i: number): number => (i ^ 0x5a5a5a5a) | 0;

/** Element `i` of an int32 tensor, copied alone from the device. */
function elementAt(t: CudaTensor, i: number): number {
  const out = new Uint8Array(4);
  driver().memcpyDtoH(out, t.ptr + BigInt(i) * 4n);
  return new DataView(out.buffer).getInt32(0, true);
}

const SAMPLES = [0, 5, 2 ** 29 - 1, 2 ** 29, 2 ** 29 + 7, 2 ** 30 - 3, 2 ** 30 + 12345, N - 1];

describe.skipIf(!available.ok)("tensors over 2^31 bytes on the GPU", () => {
  it("a static-shape kernel writes, and another reads, elements beyond byte 2^31", () => {
    const dev = cuda(0);
    const run = compile(fillStatic, { target: "cuda" });
    expect(run.ptx).toContain("mad.lo.s64");
    using a = cudaZeros([N], "int32", dev);
    run(a);
    for (const i of SAMPLES) expect([i, elementAt(a, i)]).toEqual([i, expected(i)]);
    using b = cudaZeros([PROBE], "int32", dev);
    compile(probe, { target: "cuda" })(a, b);
    const got = Array.from(b.toArray() as Int32Array);
    expect(got).toEqual(
      Array.from({ length: PROBE }, (_, k) => (expected(N - 1 - k * 4099) + 1) | 0),
    );
  });

  it("a symbolic-shape kernel gets 64-bit offsets when its tensor exceeds 2^31 - 1 bytes", () => {
    const dev = cuda(0);
    const run = compile(fillSymbolic, { target: "cuda" });
    // The module compiled up front is the 32-bit one; a small tensor uses it.
    expect(run.ptx).not.toContain("mad.lo.s64");
    using small = cudaZeros([1000], "int32", dev);
    run(1000, small);
    expect(elementAt(small, 999)).toBe(expected(999));
    using a = cudaZeros([N], "int32", dev);
    run(N, a);
    for (const i of SAMPLES) expect([i, elementAt(a, i)]).toEqual([i, expected(i)]);
  });
});
