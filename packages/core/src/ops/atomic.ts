import type { DType } from "../dtype.js";
import { badDtypes, valueArg } from "./define.js";
import type { OpDef, OperandSpec } from "./op.js";
import type { PtxVersion } from "../target.js";

/** The read-modify-write of an atom/red op (PTX ISA, atom). */
export type AtomicAction = "add" | "min" | "max" | "cas" | "exch" | "and" | "or" | "xor";

/**
 * The atomic unit's actions (PTX ISA, atom and red): the read-modify-write, and whether the op
 * returns the old value (atom) or not (red).
 */
export type AtomicUnitAction = {
  readonly unit: "atomic";
  readonly action: AtomicAction;
  readonly returns: boolean;
  /** A packed pair of halves per 32-bit element (`.noftz.f16x2` / `.bf16x2` add), else absent. */
  readonly packed?: "f16x2" | "bf16x2";
};

declare module "./op.js" {
  interface MachineUnits {
    atomic: AtomicUnitAction;
  }
}

/**
 * The memory dtypes of each atomic operation and the PTX type suffix for each (PTX ISA, atom /
 * red). Float min/max are left out: ptxas 13.0 refuses `atom.min.f32` / `atom.max.f32`.
 * `f16x2` / `bf16x2` are packed pairs: the element is a uint32 whose low 16 bits hold the
 * element at the lower address (reinterpret a float16 buffer as uint32 to address one).
 */
const TYPES: Record<string, Partial<Record<DType, string>>> = {
  add: { int32: "s32", uint32: "u32", uint64: "u64", float32: "f32" },
  min: { int32: "s32", uint32: "u32", uint64: "u64" },
  max: { int32: "s32", uint32: "u32", uint64: "u64" },
  cas: { int32: "b32", uint32: "b32", float32: "b32", uint64: "b64" },
  exch: { int32: "b32", uint32: "b32", float32: "b32", uint64: "b64" },
  f16x2: { uint32: "noftz.f16x2" },
  bf16x2: { uint32: "noftz.bf16x2" },
};

interface Variant {
  /** `add`, `min`, ... or the packed `f16x2` / `bf16x2` add. */
  readonly kind: keyof typeof TYPES;
  readonly action: AtomicAction;
  readonly sm: number;
  readonly ptx: PtxVersion;
  readonly archCode?: "TX4007";
}

const VARIANTS: readonly Variant[] = [
  { kind: "add", action: "add", sm: 30, ptx: [6, 0] },
  { kind: "min", action: "min", sm: 32, ptx: [6, 0] },
  { kind: "max", action: "max", sm: 32, ptx: [6, 0] },
  { kind: "cas", action: "cas", sm: 30, ptx: [6, 0] },
  { kind: "exch", action: "exch", sm: 30, ptx: [6, 0] },
  { kind: "f16x2", action: "add", sm: 60, ptx: [6, 3] },
  { kind: "bf16x2", action: "add", sm: 90, ptx: [7, 8], archCode: "TX4007" },
];

/** The IR name of an atomic: `atom.add`, `red.min`, `atom.add.noftz.f16x2`, ... */
export function atomicName(returns: boolean, kind: string): string {
  const head = returns ? "atom" : "red";
  return kind === "f16x2" || kind === "bf16x2" ? `${head}.add.noftz.${kind}` : `${head}.${kind}`;
}

/** The `T.cuda` spelling: `atomic_add` (TIRx), `red_add`, `atomic_add_f16x2`, ... */
export function atomicSurface(returns: boolean, kind: string): string {
  const head = returns ? "T.cuda.atomic" : "T.cuda.red";
  return kind === "f16x2" || kind === "bf16x2" ? `${head}_add_${kind}` : `${head}_${kind}`;
}

function atomicOp(v: Variant, returns: boolean): OpDef {
  const types = TYPES[v.kind]!;
  const surface = atomicSurface(returns, v.kind);
  const operands: OperandSpec[] = [{ kind: "address", name: "ptr" }];
  if (v.action === "cas") operands.push(valueArg("compare"));
  operands.push(valueArg("value"));
  const ptxOp = v.kind === "f16x2" || v.kind === "bf16x2" ? "add" : v.kind;
  return {
    name: atomicName(returns, v.kind),
    family: "atomic",
    surface,
    form: returns ? "value" : "stmt",
    operands,
    // dts[0] is the dtype of the addressed element; every value operand has that dtype.
    result(dts, span) {
      const dt = dts[0]!;
      if (!types[dt] || dts.some((d) => d !== dt)) throw badDtypes(surface, dts, span);
      return returns ? dt : undefined;
    },
    signatures: Object.keys(types).map((dt) => operands.map(() => dt as DType)),
    sm: v.sm,
    ptx: v.ptx,
    source: `PTX ISA, ${returns ? "atom" : "red"} (.${ptxOp}${v.kind === ptxOp ? "" : `.noftz.${v.kind}`})`,
    ...(v.archCode ? { archCode: v.archCode } : {}),
    lower(c, d, ops, dts) {
      const dt = dts[0]!;
      const vals = ops.slice(1).map((o) => c.toReg(o, dt));
      const head = `${returns ? "atom" : "red"}.${c.space(0)}.${ptxOp}.${types[dt]!}`;
      c.ins(`${head} ${[...(returns ? [d] : []), ops[0]!, ...vals].join(", ")}`);
    },
    sim: {
      kind: "machine",
      effect: {
        unit: "atomic",
        action: v.action,
        returns,
        ...(v.kind === "f16x2" || v.kind === "bf16x2" ? { packed: v.kind } : {}),
      },
    },
    effects: true,
  };
}

/**
 * Atomics on global and shared memory: `atom` (returns the old value; TIRx `atomic_add`,
 * `atomic_cas(ptr, compare, value)`) and `red` (no result). Relaxed, GPU scope (PTX defaults).
 * The simulator applies them in thread order within a warp and warp order within the CTA; the
 * GPU's order is unspecified, so float sums may differ in their last bits from run to run.
 */
export const ATOMIC_OPS: readonly OpDef[] = [
  ...VARIANTS.map((v) => atomicOp(v, true)),
  ...VARIANTS.filter((v) => v.action !== "cas" && v.action !== "exch").map((v) =>
    atomicOp(v, false),
  ),
];
