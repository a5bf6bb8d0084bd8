import {
  TirxError,
  callSite,
  dtypeBytes,
  dtypeKind,
  isDeviceTensor,
  writeElement,
  withArticle,
  type DType,
  type DeviceTensor,
  type KernelArg,
  type Param,
} from "@tirx-ts/core";

/**
 * Kernel argument packing, pure (no driver): each parameter gets an 8-byte, 8-aligned slot in
 * one argument buffer; `kernelParams` for cuLaunchKernel points at each slot. A tensor parameter
 * is its `.u64` device pointer; a scalar is its dtype's bytes (bool as one byte 0/1, int32 as
 * s32, uint64 as u64, float16/bfloat16 as their 16 bits, float32 as f32, ...), little-endian.
 */

/** Bytes of one argument slot; every PTX `.param` scalar and pointer fits in it. */
export const ARG_SLOT_BYTES = 8;

/** How one parameter is passed: its PTX `.param` type and byte size. */
export interface ArgSlot {
  readonly name: string;
  /** PTX `.param` type of the kernel parameter, e.g. "u64" for a tensor, "s32" for int32. */
  readonly ptxType: string;
  /** Bytes of the value (≤ ARG_SLOT_BYTES). */
  readonly bytes: number;
  /** Byte offset of the slot in the argument buffer. */
  readonly offset: number;
}

const PTX_SCALAR: Record<DType, string> = {
  bool: "u8",
  int8: "s8",
  int16: "s16",
  int32: "s32",
  int64: "s64",
  uint8: "u8",
  uint16: "u16",
  uint32: "u32",
  uint64: "u64",
  float8_e4m3: "b8",
  float8_e5m2: "b8",
  float16: "b16",
  bfloat16: "b16",
  float32: "f32",
  float64: "f64",
  float16x2: "b32",
  bfloat16x2: "b32",
  // Vectors are never scalar parameters (the verifier's TX1027); their bits' width, for the table.
  float32x2: "b64",
  float32x4: "b128",
  int32x2: "b64",
  int32x4: "b128",
  uint32x2: "b64",
  uint32x4: "b128",
  float16x4: "b64",
  float16x8: "b128",
  bfloat16x4: "b64",
  bfloat16x8: "b128",
};

/** The PTX `.param` type a parameter is passed as: "u64" for tensors, the scalar's type otherwise. */
export function ptxParamType(p: Param): string {
  return p.kind === "buffer" ? "u64" : PTX_SCALAR[p.var.dtype];
}

/** Slots for `params`, in order; the buffer is `params.length * ARG_SLOT_BYTES` bytes. */
export function argLayout(params: readonly Param[]): ArgSlot[] {
  return params.map((p, i) => ({
    name: p.name,
    ptxType: ptxParamType(p),
    bytes: p.kind === "buffer" ? 8 : dtypeBytes(p.var.dtype),
    offset: i * ARG_SLOT_BYTES,
  }));
}

const INT_RANGE: Partial<Record<DType, readonly [bigint, bigint]>> = {
  int8: [-(1n << 7n), (1n << 7n) - 1n],
  int16: [-(1n << 15n), (1n << 15n) - 1n],
  int32: [-(1n << 31n), (1n << 31n) - 1n],
  int64: [-(1n << 63n), (1n << 63n) - 1n],
  uint8: [0n, (1n << 8n) - 1n],
  uint16: [0n, (1n << 16n) - 1n],
  uint32: [0n, (1n << 32n) - 1n],
  uint64: [0n, (1n << 64n) - 1n],
};

/**
 * Write `args` into the argument buffer `view` (at least `params.length * ARG_SLOT_BYTES`
 * bytes). `pointerOf` gives a tensor's device address, or throws when the tensor cannot be used
 * here. Counts and kinds are assumed checked by core's `checkArgs`; scalars are checked for
 * their dtype's range here.
 * @throws TirxError TX5005 for a non-integer or out-of-range integer scalar, or a wrong kind, at
 * the caller's line that launched the kernel (core's callSite).
 */
export function packArgs(
  params: readonly Param[],
  args: readonly KernelArg[],
  view: DataView,
  pointerOf: (t: DeviceTensor, index: number) => bigint,
): void {
  params.forEach((p, i) => {
    const a = args[i];
    const off = i * ARG_SLOT_BYTES;
    if (p.kind === "buffer") {
      if (!isDeviceTensor(a))
        throw new TirxError(
          "TX5005",
          `argument ${i} ("${p.name}") must be a tensor, got ${typeof a}`,
          callSite(),
        );
      view.setBigUint64(off, pointerOf(a, i), true);
      return;
    }
    if (typeof a !== "number" && typeof a !== "bigint" && typeof a !== "boolean") {
      throw new TirxError(
        "TX5005",
        `argument ${i} ("${p.name}") is ${withArticle(p.var.dtype)} scalar; pass a number`,
        callSite(),
      );
    }
    const dt = p.var.dtype;
    const range = INT_RANGE[dt];
    if (range && typeof a !== "boolean") {
      if (typeof a === "number" && !Number.isInteger(a)) {
        throw new TirxError(
          "TX5005",
          `argument ${i} ("${p.name}") is ${withArticle(dt)} scalar; ${a} is not an integer`,
          callSite(),
        );
      }
      const v = BigInt(a);
      if (v < range[0] || v > range[1]) {
        throw new TirxError(
          "TX5005",
          `argument ${i} ("${p.name}") is ${withArticle(dt)} scalar; ${a} is outside [${range[0]}, ${range[1]}]`,
          callSite(),
        );
      }
    }
    view.setBigUint64(off, 0n, true); // clear the slot so unused high bytes are deterministic
    writeElement(view, off, dt, dtypeKind(dt) === "float" && typeof a === "bigint" ? Number(a) : a);
  });
}
