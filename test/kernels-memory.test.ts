// memoryRelation, the library calls' test of whether an output shares memory with an input: by
// identity, by CUDA byte ranges ([ptr, ptr + nbytes) on one device; tensors stand in for
// CudaTensor here, as the check reads only ptr, nbytes and device), and by simulated storage
// (views of one ArrayBuffer); refuseAliasing's in-place exception is for the very same memory
// only.
import { describe, expect, test } from "vitest";
import type { DeviceTensor } from "@tirx-ts/core";
import { memoryRelation, refuseAliasing } from "@tirx-ts/kernels";
import { SimTensor } from "@tirx-ts/runtime-sim";
import { errorOf } from "./util/error-of.js";

const gpu0 = { kind: "cuda", name: "gpu0" } as const;
const gpu1 = { kind: "cuda", name: "gpu1" } as const;
/** A CUDA-like tensor of `nbytes` at `ptr` on `device`. */
const cudaLike = (ptr: bigint, nbytes: number, device: object = gpu0) =>
  ({ ptr, nbytes, device, shape: [nbytes / 4], dtype: "float32" }) as unknown as DeviceTensor;

describe("memoryRelation", () => {
  test("CUDA byte ranges: same, overlapping by one byte, adjacent, other device", () => {
    const a = cudaLike(0x1000n, 256);
    expect(memoryRelation(a, a)).toBe("same");
    expect(memoryRelation(a, cudaLike(0x1000n, 256))).toBe("same");
    expect(memoryRelation(a, cudaLike(0x10ffn, 4))).toBe("overlap");
    expect(memoryRelation(a, cudaLike(0x0f00n, 257))).toBe("overlap");
    expect(memoryRelation(a, cudaLike(0x1100n, 4))).toBe("none");
    expect(memoryRelation(a, cudaLike(0x0f00n, 256))).toBe("none");
    expect(memoryRelation(a, cudaLike(0x1000n, 256, gpu1))).toBe("none");
    expect(memoryRelation(a, cudaLike(0x1000n, 0))).toBe("none");
  });
  test("simulated storage: views of one buffer, and separate buffers", () => {
    const buf = new Uint8Array(64);
    const x = new SimTensor(buf.subarray(0, 32), [8], "float32");
    const y = new SimTensor(buf.subarray(28, 60), [8], "float32");
    const z = new SimTensor(buf.subarray(32, 64), [8], "float32");
    expect(memoryRelation(x, y)).toBe("overlap");
    expect(memoryRelation(x, z)).toBe("none");
    expect(memoryRelation(x, new SimTensor(buf.subarray(0, 32), [8], "float32"))).toBe("same");
    expect(memoryRelation(x, new SimTensor(new Uint8Array(32), [8], "float32"))).toBe("none");
  });
  test("refuseAliasing: in place only as the very same memory; two outputs never", () => {
    const c = cudaLike(0x1000n, 256);
    const out = cudaLike(0x1000n, 256);
    expect(() => refuseAliasing("f", [["out", out]], [["c", c]], ["c"])).not.toThrow();
    const shifted = cudaLike(0x1004n, 256);
    const e = errorOf(() => refuseAliasing("f", [["out", shifted]], [["c", c]], ["c"]));
    expect([e.code, e.message]).toEqual(["TX9002", expect.stringMatching(/f: out overlaps c/)]);
    const e2 = errorOf(() =>
      refuseAliasing(
        "f",
        [
          ["x", out],
          ["y", shifted],
        ],
        [],
      ),
    );
    expect(e2.message).toMatch(/f: x and y share memory/);
  });
});
