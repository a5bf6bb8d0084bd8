// T.tile.wg.cast from float32 to float16 / bfloat16 in pairs (cvt.rn.{f16x2,bf16x2}.f32 per two
// adjacent slots of a wgmma accumulator tile, core tile/cast-pair.ts) on the GPU: its 16-bit
// codes must equal the same tile cast slot by slot on the GPU (one cvt.rn.{f16,bf16}.f32 each)
// and the simulator's, bit for bit, a NaN matching any NaN (PTX leaves NaN payloads unspecified),
// over edge values (NaN, ±inf, subnormals, rounding ties, values past the 16-bit formats' largest
// finite) and random float32 bit patterns (test/util/cast-pair-kernels.ts). The simulator side
// is test/tile-cast-pair.test.ts. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { cuda, cudaAvailable, sim } from "tirx-ts";
import { accCast, castInputs, runAccCast, sameHalf, type Half } from "../util/cast-pair-kernels.js";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/tile-cast-pair: skipped, no CUDA driver (${probe.reason})`);

const N = 128;

describe.skipIf(!probe.ok)(
  "tile cast in pairs: GPU against the scalar cast and the simulator",
  () => {
    it.each(["float16", "bfloat16"] as const)("%s: 64 × 128 wgmma accumulator tile", (dt: Half) => {
      // The kernel takes the pair path (8 · 4 pairs a thread).
      const text = compileToPtx(accCast(dt, N), { arch: "sm_80" }).text;
      expect(text.match(/cvt\.rn\.(f16|bf16)x2\.f32 /g)?.length).toBe(N / 4);
      const x = castInputs(64 * N, dt === "float16" ? 21 : 22);
      const gpu = runAccCast(cuda(0), dt, N, x);
      const simulated = runAccCast(sim(), dt, N, x);
      const differ: string[] = [];
      for (let i = 0; i < 64 * N && differ.length < 8; i++) {
        const [pair, scalar, s] = [gpu[i]!, gpu[64 * N + i]!, simulated[i]!];
        if (!sameHalf(pair, scalar, dt) || !sameHalf(pair, s, dt)) {
          differ.push(
            `[${i}] x=${x[i]}: GPU pair ${pair.toString(16)}, GPU scalar ${scalar.toString(16)}, simulator ${s.toString(16)}`,
          );
        }
      }
      console.log(`tile cast pairs ${dt} on ${cuda(0).name}: ${differ.length} differences`);
      expect(differ, differ.join("\n")).toEqual([]);
    });
  },
);
