import type { DType } from "../dtype.js";
import { badDtypes, valueArg } from "./define.js";
import type { Expr } from "../ir/expr.js";
import type { Span } from "../span.js";
import {
  checkSem,
  clusterScopeNeed,
  MEMORY_SEMS,
  semScopeArgs,
  semScopeText,
} from "./memory-order.js";
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
  /**
   * The op's last two operands are its static `.sem` and `.scope` (`atom.sem.*`, `red.sem.*`;
   * ops/memory-order.ts), else absent: relaxed at gpu scope, the PTX defaults.
   */
  readonly ordered?: true;
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

/**
 * The IR name of an atomic: `atom.add`, `red.min`, `atom.add.noftz.f16x2`, ...; with `ordered`
 * the form taking a static sem and scope: `atom.sem.add`, `red.sem.min`.
 */
export function atomicName(returns: boolean, kind: string, ordered = false): string {
  const head = `${returns ? "atom" : "red"}${ordered ? ".sem" : ""}`;
  return kind === "f16x2" || kind === "bf16x2" ? `${head}.add.noftz.${kind}` : `${head}.${kind}`;
}

/** The `T.cuda` spelling: `atomic_add` (TIRx), `red_add`, `atomic_add_f16x2`, ... */
export function atomicSurface(returns: boolean, kind: string): string {
  const head = returns ? "T.cuda.atomic" : "T.cuda.red";
  return kind === "f16x2" || kind === "bf16x2" ? `${head}_add_${kind}` : `${head}_${kind}`;
}

function atomicOp(v: Variant, returns: boolean, ordered = false): OpDef {
  const types = TYPES[v.kind]!;
  const surface = atomicSurface(returns, v.kind);
  const operands: OperandSpec[] = [{ kind: "address", name: "ptr" }];
  if (v.action === "cas") operands.push(valueArg("compare"));
  operands.push(valueArg("value"));
  const values = operands.length;
  if (ordered) operands.push(...semScopeArgs);
  const ptxOp = v.kind === "f16x2" || v.kind === "bf16x2" ? "add" : v.kind;
  const head = returns ? "atom" : "red";
  return {
    name: atomicName(returns, v.kind, ordered),
    family: "atomic",
    surface,
    form: returns ? "value" : "stmt",
    operands,
    // dts[0] is the dtype of the addressed element; every value operand has that dtype.
    result(dts, span) {
      const dt = dts[0]!;
      if (!types[dt] || dts.slice(0, values).some((d) => d !== dt)) {
        throw badDtypes(surface, dts, span);
      }
      return returns ? dt : undefined;
    },
    signatures: Object.keys(types).map((dt) =>
      operands.map((o) => (o.kind === "static" ? "int32" : (dt as DType))),
    ),
    sm: ordered ? Math.max(v.sm, 70) : v.sm,
    ptx: v.ptx,
    source: `PTX ISA, ${head} (.${ptxOp}${v.kind === ptxOp ? "" : `.noftz.${v.kind}`}${ordered ? "; .sem and .scope: sm_70, PTX 6.0" : ""})`,
    ...(v.archCode ? { archCode: v.archCode } : {}),
    ...(ordered
      ? {
          check(args: readonly Expr[], span?: Span) {
            checkSem(surface, args, returns ? MEMORY_SEMS : ["relaxed", "release"], span);
          },
          needs: (args: readonly Expr[]) => clusterScopeNeed(head, args),
        }
      : {}),
    lower(c, d, ops, dts) {
      const dt = dts[0]!;
      const vals = ops.slice(1, values).map((o) => c.toReg(o, dt));
      const sem = ordered ? `.${semScopeText(ops)}` : "";
      const ins = `${head}${sem}.${c.space(0)}.${ptxOp}.${types[dt]!}`;
      c.ins(`${ins} ${[...(returns ? [d] : []), ops[0]!, ...vals].join(", ")}`);
    },
    sim: {
      kind: "machine",
      effect: {
        unit: "atomic",
        action: v.action,
        returns,
        ...(v.kind === "f16x2" || v.kind === "bf16x2" ? { packed: v.kind } : {}),
        ...(ordered ? { ordered: true as const } : {}),
      },
    },
    effects: true,
  };
}

/** The variants that take a `.sem` and `.scope` (the packed halves are left out). */
const ORDERED = VARIANTS.filter((v) => v.kind !== "f16x2" && v.kind !== "bf16x2");

/**
 * Atomics on global and shared memory: `atom` (returns the old value; TIRx `atomic_add`,
 * `atomic_cas(ptr, compare, value)`) and `red` (no result). Relaxed, GPU scope (PTX defaults).
 * The `atom.sem.*` / `red.sem.*` forms take a static sem and scope as their last operands
 * (`T.cuda.atomic_add(ptr, v, { sem: "acq_rel", scope: "gpu" })`: atom.acq_rel.gpu.global.add;
 * red takes relaxed or release; PTX ISA, atom / red, .sem and .scope: sm_70, PTX 6.0).
 * The simulator applies them in thread order within a warp and warp order within the CTA; the
 * GPU's order is unspecified, so float sums may differ in their last bits from run to run.
 */
export const ATOMIC_OPS: readonly OpDef[] = [
  ...VARIANTS.map((v) => atomicOp(v, true)),
  ...VARIANTS.filter((v) => v.action !== "cas" && v.action !== "exch").map((v) =>
    atomicOp(v, false),
  ),
  ...ORDERED.map((v) => atomicOp(v, true, true)),
  ...ORDERED.filter((v) => v.action !== "cas" && v.action !== "exch").map((v) =>
    atomicOp(v, false, true),
  ),
];
