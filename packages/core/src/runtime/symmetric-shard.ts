import { TirxError } from "../diagnostics.js";
import { dtypeBytes, type DType } from "../dtype.js";
import { showValue } from "../show.js";

/**
 * The allocation granularity of H100 and H200 GPUs (2 MiB, cuMemGetAllocationGranularity): a
 * symmetric shard's usual padding (docs/multi-gpu.md, "Symmetric tensors"). Pure shape
 * arithmetic, shared by kernels built for GPUs and runtime-cuda's SymmetricTensor.
 */
export const SYMMETRIC_GRANULARITY = 2 << 20;

/**
 * The shard shape a kernel declares for a symmetric tensor whose data is `shard` elements of
 * `dtype`: the leading dim grown to the fewest rows whose bytes are a multiple of `granularity`
 * (symmetricGranularity of the GPUs, or SYMMETRIC_GRANULARITY), so each PE's slice starts on an
 * allocation granule (cuMemMap maps whole granules) while every index into the data stays the
 * same. `T.Tensor([P, ...symmetricShard(shard, dtype)], dtype)`; granularity 1 (no padding) for
 * the simulator. A row whose bytes share few factors of two with the granularity pads far (a
 * 4000-byte row: 65536 rows, 262 MB): flatten such a shard (`[3 * 1000]`) to pad only its tail.
 * @example symmetricShard([2], "uint64") // [262144]: 2 MiB of uint64
 * @example symmetricShard([4, 128], "bfloat16") // [8192, 128]: rows of 256 bytes
 * @throws TirxError TX5007 for an empty shard, a dim that is not a positive integer, or a
 *   granularity that is not a positive integer.
 */
export function symmetricShard(
  shard: readonly number[],
  dtype: DType,
  granularity: number = SYMMETRIC_GRANULARITY,
): number[] {
  if (
    !Array.isArray(shard) ||
    shard.length === 0 ||
    shard.some((d) => !Number.isSafeInteger(d) || d < 1) ||
    !Number.isSafeInteger(granularity) ||
    granularity < 1
  ) {
    throw new TirxError(
      "TX5007",
      `symmetricShard takes a shard of positive integer dims and a positive granularity in bytes, got ${showValue(shard)} and ${showValue(granularity)}`,
    );
  }
  const row = shard.slice(1).reduce((a, b) => a * b, 1) * dtypeBytes(dtype);
  const unit = granularity / gcd(row, granularity);
  return [Math.ceil(shard[0]! / unit) * unit, ...shard.slice(1)];
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
