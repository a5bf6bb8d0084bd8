import { TirxError } from "../diagnostics.js";
import { launchArgError } from "./call-site.js";
import { DTYPES, dtypeBits, dtypeBytes, dtypeKind, isDType, type DType } from "../dtype.js";
import { MAX_TENSOR_BYTES } from "../limits.js";
import { didYouMean } from "../suggest.js";
import { showValue, withArticle } from "../show.js";
import type { PrimFunc } from "../ir/func.js";
import { checkStorageDType, isStaticShape, showShape } from "../ir/buffer.js";
import type { DeviceLike, DeviceTensor } from "./tensor.js";

/** A launch argument: a device tensor for a tensor parameter, a number/bigint/boolean for a scalar. */
export type KernelArg = DeviceTensor | number | bigint | boolean;

/**
 * What is wrong with `a` as the value of a scalar parameter of `dtype`, or undefined when it is
 * right: an integer dtype takes an integer number or bigint within its range (PTX integer types
 * hold exactly that range; a fraction, NaN or a wrapped value would run the kernel on another
 * value than the caller's); a float dtype a number or bigint (rounded like a cast); bool `true`,
 * `false`, 0 or 1.
 */
export function scalarArgProblem(dtype: DType, a: unknown): string | undefined {
  if (scalarAccepts(dtype)(a)) return undefined;
  if (typeof a !== "number" && typeof a !== "bigint" && typeof a !== "boolean") {
    return `pass a ${dtype === "bool" ? "boolean" : "number"}, got ${showValue(a)}`;
  }
  if (dtype === "bool") return `pass true or false, got ${showValue(a)}`;
  if (typeof a === "boolean") return `pass a number, not ${a}`;
  if (typeof a === "number" && !Number.isInteger(a)) return `${a} is not an integer`;
  const [lo, hi] = intRange(dtype);
  return `${showValue(a)} is outside [${lo}, ${hi}]`;
}

/** The range of an integer dtype, as bigints. */
function intRange(dtype: DType): readonly [bigint, bigint] {
  const bits = BigInt(dtypeBits(dtype));
  return dtypeKind(dtype) === "int"
    ? [-(1n << (bits - 1n)), (1n << (bits - 1n)) - 1n]
    : [0n, (1n << bits) - 1n];
}

const accepters = new Map<DType, (a: unknown) => boolean>();

/**
 * The test {@link scalarArgProblem} makes, as a function of the value alone, built once per
 * dtype and allocating nothing per call (the launch fast path runs it on every launch).
 */
export function scalarAccepts(dtype: DType): (a: unknown) => boolean {
  let f = accepters.get(dtype);
  if (f) return f;
  if (dtype === "bool") {
    f = (a) => typeof a === "boolean" || a === 0 || a === 1 || a === 0n || a === 1n;
  } else if (dtypeKind(dtype) === "float") {
    f = (a) => typeof a === "number" || typeof a === "bigint";
  } else {
    const [lo, hi] = intRange(dtype);
    const nlo = Number(lo);
    const nhi = Number(hi);
    f = (a) =>
      typeof a === "number"
        ? Number.isInteger(a) &&
          (Math.abs(a) <= Number.MAX_SAFE_INTEGER
            ? a >= nlo && a <= nhi // exact below 2^53 (64-bit ends round, but lie beyond)
            : BigInt(a) >= lo && BigInt(a) <= hi)
        : typeof a === "bigint" && a >= lo && a <= hi;
  }
  accepters.set(dtype, f);
  return f;
}

/** True when `a` looks like a DeviceTensor. */
export function isDeviceTensor(a: unknown): a is DeviceTensor {
  return typeof a === "object" && a !== null && "device" in a && "shape" in a && "dtype" in a;
}

/**
 * Check launch arguments against `fn`'s parameters before anything runs: count, kind, dtype,
 * shape, and that every tensor lives on one device. Returns that device (undefined when the
 * kernel takes no tensors). Each error stands at the caller's line that launched the kernel,
 * with a note at the kernel's declaration (launchArgError).
 * A symbolic dim (`T.Tensor(["n"], ...)`) must equal the scalar argument it names.
 * @throws TirxError TX5001 (count), TX5002 (dtype), TX5003 (shape), TX5004 (device), TX5005 (kind,
 * or a scalar outside its dtype: see scalarArgProblem), TX5008 (a tensor extent differs from its
 * dim's scalar argument), TX5011 (a disposed tensor), TX5012 (a tensor whose device is not one),
 * TX2011 (a tensor with symbolic dims larger than 2^31 - 1 bytes).
 */
export function checkArgs(fn: PrimFunc, args: readonly KernelArg[]): DeviceLike | undefined {
  if (!Array.isArray(args)) {
    throw launchArgError(
      "TX5001",
      `kernel "${fn.name}" takes its arguments as a list, got ${showValue(args)}`,
      fn,
    );
  }
  if (args.length !== fn.params.length) {
    throw launchArgError(
      "TX5001",
      `kernel "${fn.name}" takes ${fn.params.length} arguments (${fn.params.map((p) => p.name).join(", ")}), got ${args.length}`,
      fn,
    );
  }
  let device: DeviceLike | undefined;
  fn.params.forEach((p, i) => {
    const a = args[i];
    if (p.kind === "buffer") {
      if (!isDeviceTensor(a) || !Array.isArray(a.shape)) {
        throw launchArgError(
          "TX5005",
          `argument ${i} ("${p.name}") must be a tensor (from tensor(), tensor.zeros() or tensor.empty()), got ${showValue(a)}`,
          fn,
        );
      }
      const dev: unknown = a.device;
      if (
        typeof dev !== "object" ||
        dev === null ||
        ((dev as DeviceLike).kind !== "sim" && (dev as DeviceLike).kind !== "cuda")
      ) {
        throw launchArgError(
          "TX5012",
          `argument ${i} ("${p.name}") is on ${showValue(dev)}, not a device from sim() or cuda(n)`,
          fn,
        );
      }
      if (a.disposed === true) {
        throw launchArgError(
          "TX5011",
          `argument ${i} ("${p.name}") was disposed (dispose() or the end of its \`using\` block); make the tensor again`,
          fn,
        );
      }
      if (a.dtype !== p.buffer.dtype) {
        throw launchArgError(
          "TX5002",
          `argument ${i} ("${p.name}") has dtype ${a.dtype}, expected ${p.buffer.dtype}`,
          fn,
        );
      }
      const want = p.buffer.shape;
      if (
        a.shape.length !== want.length ||
        a.shape.some((n, k) => typeof want[k] === "number" && n !== want[k])
      ) {
        throw launchArgError(
          "TX5003",
          `argument ${i} ("${p.name}") has shape [${a.shape.join(", ")}], expected ${showShape(want)}`,
          fn,
        );
      }
      if (!isStaticShape(want)) {
        // The verifier checks a static tensor's size (TX2011); a symbolic one's is known now.
        const bytes = a.shape.reduce((x, y) => x * y, 1) * dtypeBytes(a.dtype);
        if (bytes > MAX_TENSOR_BYTES) {
          throw launchArgError(
            "TX2011",
            `argument ${i} ("${p.name}") has ${bytes} bytes; a tensor holds at most ${MAX_TENSOR_BYTES} bytes (2^48, the GPU's address space)`,
            fn,
          );
        }
      }
      want.forEach((d, k) => {
        if (typeof d === "number") return;
        const j = fn.params.findIndex((q) => q.kind === "scalar" && q.var.id === d.id);
        const v = args[j];
        const n = typeof v === "bigint" ? Number(v) : v;
        if (n !== a.shape[k]) {
          throw launchArgError(
            "TX5008",
            `argument ${i} ("${p.name}") has ${a.shape[k]} elements along axis ${k}, but its dim "${d.name}" (argument ${j}) is ${showValue(v)}`,
            fn,
          );
        }
      });
      if (device && (device.kind !== a.device.kind || device !== a.device)) {
        throw launchArgError(
          "TX5004",
          `argument ${i} ("${p.name}") lives on ${a.device.name}, but earlier tensors live on ${device.name}`,
          fn,
        );
      }
      device = a.device;
    } else {
      const problem = scalarArgProblem(p.var.dtype, a);
      if (problem !== undefined) {
        throw launchArgError(
          "TX5005",
          `argument ${i} ("${p.name}") is ${withArticle(p.var.dtype)} scalar; ${problem}`,
          fn,
        );
      }
    }
  });
  return device;
}

/**
 * Check a tensor's shape and dtype before anything is allocated: a known dtype, a shape of
 * non-negative integers, and at most `maxBytes` bytes (default MAX_TENSOR_BYTES, 2^48; a
 * simulated device passes MAX_SIM_TENSOR_BYTES). Returns the element count.
 * @throws TirxError TX1003 (dtype), TX1027 (float16x2 / bfloat16x2: register values only), TX5007
 *   (shape or size).
 */
export function checkTensorSpec(
  shape: unknown,
  dtype: unknown,
  maxBytes: number = MAX_TENSOR_BYTES,
): number {
  if (dtype === undefined) {
    throw new TirxError(
      "TX1003",
      'a tensor needs a dtype, none given: tensor(data, { shape, dtype }), tensor.zeros(shape, dtype), e.g. "float32"',
    );
  }
  if (!isDType(dtype)) {
    const guess = typeof dtype === "string" ? didYouMean(dtype, DTYPES) : undefined;
    throw new TirxError(
      "TX1003",
      `unknown dtype ${showValue(dtype)}${guess ? `; did you mean "${guess}"?` : ""}`,
    );
  }
  checkStorageDType(dtype, "tensor");
  if (
    !Array.isArray(shape) ||
    shape.some((n) => typeof n !== "number" || !Number.isInteger(n) || n < 0)
  ) {
    throw new TirxError(
      "TX5007",
      `a tensor shape is a list of non-negative integers, got ${showValue(shape)}`,
    );
  }
  const count = (shape as number[]).reduce((a, b) => a * b, 1);
  const bytes = count * dtypeBytes(dtype);
  if (bytes > maxBytes) {
    const where =
      maxBytes === MAX_TENSOR_BYTES
        ? "the GPU's address space"
        : "a simulated device keeps each tensor in one ArrayBuffer";
    throw new TirxError(
      "TX5007",
      `a tensor of shape [${shape.join(", ")}] ${dtype} has ${bytes} bytes; at most ${maxBytes} (${where})`,
    );
  }
  return count;
}
