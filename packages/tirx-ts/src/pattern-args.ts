import {
  dtypeBytes,
  encodeHost,
  MAX_SIM_TENSOR_BYTES,
  numel,
  TirxError,
  type DType,
  type KernelArg,
  type PrimFunc,
} from "@tirx-ts/core";
import { simTensor } from "@tirx-ts/runtime-sim";

/** The period of the values `tirx trace` and `tirx layout` fill tensors with (i % 251). */
const PERIOD = 251;

/**
 * The launch arguments `tirx trace` and `tirx layout` simulate a kernel with: every scalar is
 * `scalars[name]` or 1; a symbolic tensor dim takes the scalar of its name; tensors hold the
 * pattern `i % 251` (element index i, row-major) in their dtype. The pattern is encoded once
 * per period and repeated as bytes, so a tensor costs its own bytes and no more.
 * @throws TirxError TX5003 when a symbolic dim's value is not a non-negative integer, and
 *   TX5007 when a tensor would exceed the simulator's MAX_SIM_TENSOR_BYTES (2^31 − 1) bytes.
 */
export function patternArgs(
  fn: PrimFunc,
  scalars: Readonly<Record<string, number>> = {},
): KernelArg[] {
  const value = (name: string): number => scalars[name] ?? 1;
  return fn.params.map((p) => {
    if (p.kind === "scalar") return value(p.name);
    const shape = p.buffer.shape.map((d, axis) => {
      if (typeof d === "number") return d;
      const v = value(d.name);
      if (!Number.isSafeInteger(v) || v < 0) {
        throw new TirxError(
          "TX5003",
          `dim ${axis} of "${p.name}" is the symbolic "${d.name}", which must be a non-negative integer, got ${v}`,
        );
      }
      return v;
    });
    const dtype = p.buffer.dtype as DType;
    const n = numel(shape);
    const eb = dtypeBytes(dtype);
    if (n * eb > MAX_SIM_TENSOR_BYTES) {
      throw new TirxError(
        "TX5007",
        `a simulated tensor of shape [${shape.join(", ")}] ${dtype} (parameter "${p.name}") has ${n * eb} bytes; the simulator holds at most ${MAX_SIM_TENSOR_BYTES} bytes per tensor`,
      );
    }
    return simTensor(patternBytes(n, dtype), { shape, dtype });
  });
}

/**
 * The bytes of `n` elements of `dtype` holding `i % 251`. One-byte dtypes come back as values
 * (0..250, which simTensor encodes to the same bytes), wider ones as raw bytes.
 */
function patternBytes(n: number, dtype: DType): Uint8Array {
  const first = Math.min(n, PERIOD);
  const period = encodeHost(
    Float64Array.from({ length: first }, (_, i) => i),
    dtype,
    first,
  );
  const total = n * dtypeBytes(dtype);
  const out = new Uint8Array(total);
  out.set(period);
  // Doubling copies keep out[k] = period[k mod period.length]: every copied prefix is a whole
  // number of periods.
  for (let filled = period.length; filled < total; filled *= 2) {
    out.copyWithin(filled, 0, Math.min(filled, total - filled));
  }
  return out;
}
