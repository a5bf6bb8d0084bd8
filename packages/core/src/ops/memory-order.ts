import { TirxError } from "../diagnostics.js";
import type { DType } from "../dtype.js";
import { constInt, type Expr } from "../ir/expr.js";
import type { Span } from "../span.js";
import { badDtypes, staticArg, stmtOp, template, valueArg } from "./define.js";
import type { OpDef, OpNeed } from "./op.js";

/**
 * The memory-ordering semantics of a strong memory operation (PTX ISA, "Memory Consistency
 * Model", "Operation types" and "Release and Acquire Patterns"): `relaxed` orders nothing by
 * itself (it is still a strong access, morally strong with other strong accesses of a scope that
 * covers both threads, so it never races with them), `acquire` / `release` / `acq_rel` make the
 * operation the acquire or release side of a synchronizes-with pair.
 */
export type MemorySem = "relaxed" | "acquire" | "release" | "acq_rel";

/**
 * The scope of a strong memory operation or fence (PTX ISA, "Scope"): the set of threads it
 * orders with: the CTA, the cluster (sm_90), the GPU (the grid and every grid on the device), the
 * system (host threads and peer devices too; on the simulator the same threads as `gpu`).
 */
export type MemoryScope = "cta" | "cluster" | "gpu" | "sys";

/** Static operand values of `sem`, in order (0: relaxed ... 3: acq_rel). */
export const MEMORY_SEMS: readonly MemorySem[] = ["relaxed", "acquire", "release", "acq_rel"];

/** Static operand values of `scope`, in order (0: cta ... 3: sys). */
export const MEMORY_SCOPES: readonly MemoryScope[] = ["cta", "cluster", "gpu", "sys"];

/**
 * The memory-order unit's actions (simulator semantics of the PTX memory consistency model beyond
 * barriers): a `fence` of `sem` at `scope` (fence.sc / fence.acq_rel), and strong loads and
 * stores whose sem and scope are the op's last two static operands (`ld.relaxed|acquire`,
 * `st.relaxed|release`). Strong atomics are the atomic unit's (`ordered` in AtomicUnitAction).
 */
export type OrderAction =
  | {
      readonly unit: "order";
      readonly action: "fence";
      readonly sem: "sc" | "acq_rel";
      readonly scope: MemoryScope;
    }
  | { readonly unit: "order"; readonly action: "load" | "store" }
  | {
      readonly unit: "order";
      readonly action: "griddep";
      /** griddepcontrol.wait or griddepcontrol.launch_dependents. */
      readonly which: "wait" | "launch_dependents";
    };

declare module "./op.js" {
  interface MachineUnits {
    order: OrderAction;
  }
}

/**
 * The sem and scope of a call whose last two operands are the static `sem` and `scope` (a
 * verified call: both constants in range).
 */
export function semScopeOf(args: readonly Expr[]): { sem: MemorySem; scope: MemoryScope } {
  const n = args.length;
  return {
    sem: MEMORY_SEMS[constInt(args[n - 2]!)!]!,
    scope: MEMORY_SCOPES[constInt(args[n - 1]!)!]!,
  };
}

/** The static `sem` and `scope` operands of an ordered memory op. */
export const semScopeArgs = [staticArg("sem", 0, 3), staticArg("scope", 0, 3)] as const;

/**
 * TX2010 unless the call's `sem` (second to last operand) is one of `allowed` (PTX ISA: ld takes
 * .relaxed/.acquire, st and red .relaxed/.release, atom all four).
 */
export function checkSem(
  surface: string,
  args: readonly Expr[],
  allowed: readonly MemorySem[],
  span?: Span,
): void {
  const i = constInt(args[args.length - 2]!);
  const sem = i === undefined ? undefined : MEMORY_SEMS[i];
  if (sem === undefined || !allowed.includes(sem)) {
    throw new TirxError(
      "TX2010",
      `${surface} takes sem ${allowed.map((s) => `"${s}"`).join(", ")}, got ${sem === undefined ? String(i) : `"${sem}"`}`,
      span,
    );
  }
}

/**
 * The further requirement of a `.cluster` scope (PTX ISA, "Scope": the cluster scope is sm_90,
 * PTX 7.8), or undefined for the other scopes.
 */
export function clusterScopeNeed(name: string, args: readonly Expr[]): OpNeed | undefined {
  if (constInt(args[args.length - 1]!) !== 1) return undefined;
  return {
    instr: `${name} with .cluster scope`,
    sm: 90,
    ptx: [7, 8],
    code: "TX4007",
    source: "PTX ISA, Memory Consistency Model, Scope (.cluster: sm_90, PTX 7.8)",
  };
}

/** The PTX spelling `.sem.scope` of an ordered op's last two operand texts (immediates). */
export function semScopeText(ops: readonly string[]): string {
  const n = ops.length;
  return `${MEMORY_SEMS[Number(ops[n - 2])]!}.${MEMORY_SCOPES[Number(ops[n - 1])]!}`;
}

/** The dtypes of strong ld / st and the PTX type suffix of each (PTX ISA, ld / st). */
const LDST_TYPES: Partial<Record<DType, string>> = {
  int32: "s32",
  uint32: "u32",
  float32: "f32",
  int64: "s64",
  uint64: "u64",
  float64: "f64",
};

/** A fence of `sem` at `scope` (PTX ISA, membar/fence; sm_70, PTX 6.0; `.cluster`: sm_90, PTX 7.8). */
function fenceOp(sem: "sc" | "acq_rel", scope: MemoryScope): OpDef {
  const cluster = scope === "cluster";
  return stmtOp({
    name: `fence.${sem}.${scope}`,
    family: "fence",
    surface: `T.ptx.fence.${sem}`,
    surfaceArgs: JSON.stringify(scope),
    sm: cluster ? 90 : 70,
    ptx: cluster ? [7, 8] : [6, 0],
    source: `PTX ISA, membar/fence (fence.${sem}${cluster ? "; .cluster scope: sm_90, PTX 7.8" : ""})`,
    ...(cluster ? { archCode: "TX4007" as const } : {}),
    lower: template(`fence.${sem}.${scope}`),
    effect: { unit: "order", action: "fence", sem, scope },
  });
}

/** A strong load: `ld.{relaxed,acquire}.{scope}.{global,shared}.type` (PTX ISA, ld). */
const LD_SEM: OpDef = {
  name: "ld.sem",
  family: "memory",
  surface: "T.ptx.ld",
  form: "value",
  operands: [{ kind: "address", name: "ptr" }, ...semScopeArgs],
  result(dts, span) {
    const dt = dts[0]!;
    if (!LDST_TYPES[dt]) throw badDtypes("T.ptx.ld", dts, span);
    return dt;
  },
  signatures: Object.keys(LDST_TYPES).map((dt) => [dt as DType, "int32", "int32"]),
  sm: 70,
  ptx: [6, 0],
  source: "PTX ISA, ld (.relaxed/.acquire with .scope: sm_70, PTX 6.0)",
  check(args, span) {
    checkSem("T.ptx.ld", args, ["relaxed", "acquire"], span);
  },
  needs: (args) => clusterScopeNeed("ld", args),
  lower(c, d, ops, dts) {
    c.ins(`ld.${semScopeText(ops)}.${c.space(0)}.${LDST_TYPES[dts[0]!]!} ${d}, ${ops[0]!}`);
  },
  sim: { kind: "machine", effect: { unit: "order", action: "load" } },
  effects: true,
};

/** A strong store: `st.{relaxed,release}.{scope}.{global,shared}.type` (PTX ISA, st). */
const ST_SEM: OpDef = {
  ...stmtOp({
    name: "st.sem",
    family: "memory",
    surface: "T.ptx.st",
    operands: [{ kind: "address", name: "ptr" }, valueArg("value"), ...semScopeArgs],
    sm: 70,
    ptx: [6, 0],
    source: "PTX ISA, st (.relaxed/.release with .scope: sm_70, PTX 6.0)",
    lower(c, _d, ops, dts) {
      const dt = dts[0]!;
      const v = c.toReg(ops[1]!, dt);
      c.ins(`st.${semScopeText(ops)}.${c.space(0)}.${LDST_TYPES[dt]!} ${ops[0]!}, ${v}`);
    },
    effect: { unit: "order", action: "store" },
    check(args, span) {
      checkSem("T.ptx.st", args, ["relaxed", "release"], span);
    },
  }),
  // dts[0] is the addressed element's dtype; the value has that dtype.
  result(dts, span) {
    const dt = dts[0]!;
    if (!LDST_TYPES[dt] || dts[1] !== dt) throw badDtypes("T.ptx.st", dts, span);
    return undefined;
  },
  signatures: Object.keys(LDST_TYPES).map((dt) => [dt as DType, dt as DType, "int32", "int32"]),
  needs: (args) => clusterScopeNeed("st", args),
};

/**
 * Programmatic dependent launch (PTX ISA, griddepcontrol; sm_90, PTX 7.8):
 * `griddepcontrol.launch_dependents` lets the grids that depend on this one (launched with the
 * programmatic stream serialization attribute) be scheduled before this grid completes, once
 * every CTA issued it or exited; `griddepcontrol.wait` waits until the prerequisite grids
 * completed and their memory operations are performed and visible to this grid. Without such a
 * launch both are no-ops. The simulator runs launches one after another, so a grid's
 * prerequisites have always completed and their writes are ordered before it: both are no-ops
 * there too.
 */
function griddepOp(which: "wait" | "launch_dependents"): OpDef {
  return stmtOp({
    name: `griddepcontrol.${which}`,
    family: "sync",
    surface: `T.ptx.griddepcontrol.${which}`,
    sm: 90,
    ptx: [7, 8],
    source: "PTX ISA, griddepcontrol (sm_90, PTX 7.8)",
    archCode: "TX4007",
    lower: template(`griddepcontrol.${which}`),
    effect: { unit: "order", action: "griddep", which },
  });
}

/**
 * The PTX memory model beyond barriers (PTX ISA, "Memory Consistency Model"; membar/fence; ld;
 * st): `fence.sc` and `fence.acq_rel` at each scope (`T.ptx.fence.sc("gpu")`; CUDA's
 * `__threadfence()` is `T.cuda.threadfence()`, fence.sc.gpu, which the PTX ISA gives the
 * semantics of membar.gl), and strong loads and stores with a sem and scope
 * (`T.ptx.ld(ptr, { sem: "acquire", scope: "gpu" })`, `T.ptx.st(ptr, v, { sem: "release",
 * scope: "gpu" })`). Strong atomics with a sem and scope are the atomic family's `atom.sem.*` /
 * `red.sem.*`. The simulator establishes happens-before through release and acquire patterns
 * (runtime-sim exec/memory-order.ts).
 */
export const MEMORY_ORDER_OPS: readonly OpDef[] = [
  ...(["sc", "acq_rel"] as const).flatMap((sem) => MEMORY_SCOPES.map((s) => fenceOp(sem, s))),
  LD_SEM,
  ST_SEM,
  griddepOp("launch_dependents"),
  griddepOp("wait"),
];
