// cuTensorMapEncodeTiled itself against core's tensorMapViolation, the check the verifier, the
// CUDA runtime and the simulator share (docs/conformance-tensor-maps.md): on every case of
// test/tma/contract-cases.ts, an encoding the driver refuses is one the check refuses (so the
// simulator never runs a map the driver would refuse), and the valid encodings both accept.
// Where the check refuses what the driver takes, the case must be marked `stricter`. The driver
// is called directly (koffi), not through encodeTensorMap, which runs the check first. Skipped
// without a CUDA driver.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { tensorMapViolation, type TensorMapEncoding } from "@tirx-ts/core";
import { cudaAvailable, cudaEmpty, driver, libraryPath } from "@tirx-ts/runtime-cuda";
import { BASE, CONTRACT_CASES } from "../tma/contract-cases.js";

const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/tensor-map-contract: skipped, ${available.reason}`);
const gpu = available.ok ? describe : describe.skip;

type Koffi = typeof import("koffi");
type Encode = (...args: unknown[]) => number;

/** cuTensorMapEncodeTiled, bound here so that no check of ours runs before it. */
function bindEncode(): { k: Koffi; encode: Encode } {
  driver(); // cuInit
  const k = createRequire(import.meta.url)("koffi") as Koffi;
  const lib = k.load(libraryPath());
  const encode = lib.func("cuTensorMapEncodeTiled", "int", [
    "void *",
    "int",
    "uint32_t",
    "uint64_t",
    "void *",
    "void *",
    "void *",
    "void *",
    "int",
    "int",
    "int",
    "int",
  ]) as Encode;
  return { k, encode };
}

/**
 * The driver's CUresult for `e`, with the address `base + (e.globalAddress mod 256)` (base a
 * device allocation, 256-byte aligned, so the case's misalignment is kept). The arrays are
 * padded to 8 entries so that a rank beyond the case's lists reads defined values.
 */
function driverResult(encode: Encode, e: TensorMapEncoding, base: bigint, out: bigint): number {
  const pad = <T extends bigint | number>(a: ArrayLike<T | undefined>, fill: T): T[] =>
    Array.from({ length: 8 }, (_, i) => a[i] ?? fill);
  const dims = BigUint64Array.from(pad(e.globalDim, 1), (v) => BigInt(v));
  const strides = BigUint64Array.from(pad(e.globalStrides, 16), (v) => BigInt(v));
  const box = Uint32Array.from(pad(e.boxDim, 1));
  const es = Uint32Array.from(pad(e.elementStrides, 1));
  const address = base + ((e.globalAddress ?? 0n) % 256n);
  return encode(
    out,
    e.dataType,
    e.rank,
    address,
    dims,
    strides,
    box,
    es,
    e.interleave,
    e.swizzle,
    e.l2Promotion,
    e.oobFill,
  );
}

gpu("cuTensorMapEncodeTiled against tensorMapViolation", () => {
  it("every encoding the driver refuses, the check refuses; the valid ones both accept", () => {
    const { k, encode } = bindEncode();
    // A float32 tensor as large as any case's (the driver reads no memory at encode time).
    const t = cudaEmpty([64 * 64 * 4], "float32");
    const raw = k.alloc("uint8_t", 256) as bigint;
    const out = (raw + 63n) & ~63n; // CUtensorMap is 64-byte aligned
    try {
      const valid: TensorMapEncoding[] = [
        BASE,
        { ...BASE, dataType: 9, oobFill: 1, globalStrides: [64], boxDim: [32, 8], swizzle: 3 },
        { ...BASE, globalDim: [32, 2 ** 20], l2Promotion: 3 },
      ];
      for (const e of valid) {
        expect(tensorMapViolation("m", e)).toBeUndefined();
        expect(driverResult(encode, e, t.ptr, out)).toBe(0);
      }
      const table: string[] = [];
      const wrong: string[] = [];
      for (const c of CONTRACT_CASES) {
        const e = { ...BASE, ...c.over };
        const ours = tensorMapViolation("m", e);
        const code = driverResult(encode, e, t.ptr, out);
        table.push(`${c.what}: driver ${code}, check ${ours?.code ?? "accepts"}`);
        // The property the simulator relies on: the driver refuses ⇒ the check refuses.
        if (code !== 0 && ours === undefined)
          wrong.push(`${c.what}: the driver refuses, we accept`);
        // The check refuses what the driver takes only where a case says it is stricter.
        if (code === 0 && ours !== undefined && c.stricter !== true)
          wrong.push(
            `${c.what}: the driver accepts, we refuse (${ours.code}), not marked stricter`,
          );
      }
      // The whole table first, so one run shows every case.
      console.log(`cuTensorMapEncodeTiled cases:\n  ${table.join("\n  ")}`);
      expect(wrong).toEqual([]);
    } finally {
      k.free(raw);
      t.dispose();
    }
  });
});
