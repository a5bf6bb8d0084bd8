import {
  dtypeBits,
  dtypeKind,
  isFloat,
  isFloat8,
  isVector,
  laneDType,
  laneRegisters,
  type DType,
  type VectorDType,
} from "../dtype.js";
import { invariant } from "../invariant.js";

/**
 * How each dtype lives in PTX registers, for op lowerings and the code generator alike. Registers
 * are typed by class, as nvcc and tinygrad name them: `%p` pred, `%rs` 8/16-bit integers, `%h`
 * float16/bfloat16 bits, `%r` 32-bit integers, `%rd` 64-bit integers and addresses, `%f` float32,
 * `%fd` float64. 8-bit integers live in 16-bit `%rs` registers, sign- or zero-extended from their
 * low byte (PTX ISA, "Fundamental Types": no 8-bit register type); float8_e4m3/float8_e5m2 codes
 * likewise sit in the low byte of a `%rs` register (the `.b16` operand of `cvt ….e4m3x2`).
 * A vector (float32x4, int32x2, float16x8, …) is 2 or 4 registers of its lane's class, `%f` for
 * float32 lanes and `%r` for the rest (32-bit integers, or 16-bit float pairs), written as PTX's
 * vector operand `{%f1, %f2, %f3, %f4}` (PTX ISA, "Vectors"); `regClass` gives that class.
 */
export type RegClass = "p" | "rs" | "h" | "r" | "rd" | "f" | "fd";

/** The register class of `dt`. */
export function regClass(dt: DType): RegClass {
  if (isVector(dt)) return laneDType(dt) === "float32" ? "f" : "r";
  if (dt === "bool") return "p";
  if (dt === "float16" || dt === "bfloat16") return "h";
  if (dt === "float32") return "f";
  if (dt === "float64") return "fd";
  const bits = dtypeBits(dt);
  return bits <= 16 ? "rs" : bits === 32 ? "r" : "rd";
}

const INT_SUFFIX = (dt: DType): string => `${dtypeKind(dt) === "int" ? "s" : "u"}${dtypeBits(dt)}`;

/**
 * Type suffix of arithmetic and setp: 8-bit integers compute in their 16-bit registers. float8
 * has no arithmetic: its register moves as `b16`.
 */
export function opType(dt: DType): string {
  if (isFloat8(dt)) return "b16";
  if (isFloat(dt)) return `f${dtypeBits(dt)}`;
  if (dt === "bool") return "u16";
  const bits = Math.max(16, dtypeBits(dt));
  return `${dtypeKind(dt) === "int" ? "s" : "u"}${bits}`;
}

/**
 * Type suffix of cvt: the exact source/destination format (`.s8` reads the low byte; `.e4m3` /
 * `.e5m2` name a float8 format, which cvt takes only in its packed x2 forms).
 */
export function cvtType(dt: DType): string {
  if (dt === "float8_e4m3") return "e4m3";
  if (dt === "float8_e5m2") return "e5m2";
  if (dt === "float16") return "f16";
  if (dt === "bfloat16") return "bf16";
  if (isFloat(dt)) return `f${dtypeBits(dt)}`;
  return INT_SUFFIX(dt);
}

/**
 * Untyped suffix of the register width (`mov`, `selp` on raw bits); a vector's is its vector
 * type, `v4.f32`, `v2.b32` (PTX ISA, mov: vector operands `mov.v4.f32 {…}, {…}`).
 */
export function bitType(dt: DType): string {
  const cls = regClass(dt);
  if (isVector(dt)) return `v${laneRegisters(dt)}.${cls === "f" ? "f32" : "b32"}`;
  if (cls === "p") return "pred";
  if (cls === "f") return "f32";
  if (cls === "fd") return "f64";
  return { rs: "b16", h: "b16", r: "b32", rd: "b64" }[cls];
}

/**
 * The fix-up after `cvt.{rni,rzi,rmi,rpi}.<int to>.<float from>` that makes a NaN source 0 (the
 * IR's and the simulator's value): from float64, or into a 64-bit integer, the sm_80/sm_90
 * hardware gives the most negative integer's bits for NaN (measured on an H200,
 * test/gpu/ops-differential.test.ts), where the 32-bit conversions from narrower floats give 0.
 * `d` holds the conversion's result, `x` its source, `p` a free predicate register; `ins` emits
 * one PTX line. Emits nothing for the conversions that already give 0.
 */
export function cvtNanToZero(
  ins: (line: string) => void,
  d: string,
  x: string,
  from: DType,
  to: DType,
  p: () => string,
): void {
  if (from !== "float64" && dtypeBits(to) !== 64) return;
  const nan = p();
  ins(`setp.nan.${cvtType(from)} ${nan}, ${x}, ${x}`);
  ins(`selp.${bitType(to)} ${d}, 0, ${d}, ${nan}`);
}

/**
 * The registers of a vector operand `{%f1, %f2, %f3, %f4}` (as the code generator writes one), in
 * lane order; each holds one 32-bit lane, or a pair of 16-bit lanes (lane 2k low).
 * @throws InternalError (invariant) for text that is no vector operand of `dt`'s register count.
 */
export function vectorRegs(op: string, dt: VectorDType): string[] {
  const m = /^\{(.*)\}$/.exec(op.trim());
  const regs = m ? m[1]!.split(",").map((r) => r.trim()) : [];
  invariant(
    regs.length === laneRegisters(dt) && regs.every((r) => r.startsWith("%")),
    () => `${op} is no vector operand of ${dt}`,
  );
  return regs;
}

/** The vector operand `{a, b, …}` of `regs`. */
export const vectorOperand = (regs: readonly string[]): string => `{${regs.join(", ")}}`;
