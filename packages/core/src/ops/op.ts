import type { DiagnosticCode } from "../catalog.js";
import type { DType } from "../dtype.js";
import type { Expr } from "../ir/expr.js";
import type { LaunchConfig } from "../ir/stmt.js";
import type { Span } from "../span.js";
import type { PtxVersion } from "../target.js";

/** The families of the op table, one folder or file each under `core/src/ops/`. */
export type OpFamily =
  | "arith"
  | "math"
  | "warp"
  | "cta"
  | "atomic"
  | "memory"
  | "sync"
  | "cp-async"
  | "bulk"
  | "mbarrier"
  | "fence"
  | "mma"
  | "wgmma"
  | "cluster"
  | "nvshmem";

/**
 * One operand of an op.
 * - `static`: a compile-time integer in `[min, max]`, emitted as an immediate;
 * - `value`: a runtime value; `dtypes` limits it (otherwise the op's type rule decides);
 * - `mbarrier`: the shared-memory address of an mbarrier object (`bars.ptr([i])`), emitted as a
 *   memory operand `[%r+disp]`;
 * - `address`: the address of an element of a global or shared buffer (`buf.ptr([i])`), emitted
 *   as a memory operand in that buffer's state space;
 * - `fragment`: `count` consecutive elements of a local register array (`frag.ptr([i])`), the
 *   fragment of a warp-level matrix instruction; emitted as a vector of 32-bit registers
 *   `{%r1, %r2, ...}` (16- and 8-bit elements packed, first element in the low bits), read
 *   and/or written per `access`.
 */
export type OperandSpec =
  | {
      readonly kind: "static";
      readonly name: string;
      readonly min: number;
      readonly max: number;
      /**
       * The code of an out-of-range value (default TX2010) and of a value that is not a static
       * integer (default TX2017).
       */
      readonly code?: DiagnosticCode;
    }
  | { readonly kind: "value"; readonly name: string; readonly dtypes?: readonly DType[] }
  | { readonly kind: "mbarrier"; readonly name: string }
  | { readonly kind: "address"; readonly name: string }
  | {
      readonly kind: "fragment";
      readonly name: string;
      /** Number of elements of the register array the fragment spans. */
      readonly count: number;
      /** The element dtypes accepted (all of one bit width). */
      readonly dtypes: readonly DType[];
      readonly access: "read" | "write" | "readwrite";
      /** The instruction takes `.b32` registers (float32 elements move through them: tf32). */
      readonly b32?: boolean;
      /**
       * The operand is one 32-bit register, not a vector expression `{...}` (mma.sp's metadata:
       * PTX ISA, mma.sp, operand `e`); `count` is then 1 element of 32 bits.
       */
      readonly scalar?: true;
    };

/**
 * What a lowering can ask of the code generator: append an instruction (no `;`), a scratch
 * register of a dtype's class, fresh labels.
 */
export interface LowerCtx {
  ins(line: string): void;
  tmp(dt: DType): string;
  label(name: string): void;
  newLabel(hint: string): string;
  /** The PTX state space of an `address` operand (`global`, `shared`), by operand index. */
  space(operand: number): "global" | "shared";
  /** `op` (a register or immediate) in a register of `dt`'s class. */
  toReg(op: string, dt: DType): string;
}

/**
 * The PTX lowering of an op, in the manner of tinygrad's `asm_for_op`: `d` is the result register
 * (empty for statements), `ops` the operands as PTX text (immediates, registers or memory
 * operands per {@link OperandSpec}), `dts` the operand dtypes and `rt` the result dtype.
 */
export type Lowering = (
  c: LowerCtx,
  d: string,
  ops: readonly string[],
  dts: readonly DType[],
  rt: DType | undefined,
) => void;

/** A simulator value: numbers for every dtype but int64/uint64, which are bigints; bool is 0/1. */
export type SimValue = number | bigint;

/** A pure per-thread function of the operand values. */
export type ThreadFn = (...args: SimValue[]) => SimValue;

/**
 * A warp collective as the simulator runs it: once per warp for the lanes that execute it,
 * with every operand evaluated for every executing lane.
 */
export interface WarpCall {
  /** Lanes (0..31) that execute the instruction, ascending. */
  readonly lanes: readonly number[];
  /** Operand `i` of `lane` (an executing lane). */
  arg(i: number, lane: number): SimValue;
  /** Set the result of `lane`. */
  set(lane: number, v: SimValue): void;
  /** Report a hazard (TX6011: a lane named in the mask does not execute, and friends). */
  hazard(message: string): void;
  /** The warp's index in its CTA. */
  readonly warp: number;
  /**
   * Bit mask of the lanes of this warp that exist in the CTA (all 32 but in a last, partial
   * warp). Lanes outside it count as exited: a member mask may name them (PTX ISA, shfl.sync:
   * "all non-exited threads named in membermask").
   */
  readonly present: number;
}

/**
 * A warp-level matrix instruction (ldmatrix, stmatrix, mma.sync) as the simulator runs it: once
 * per warp, after the simulator checked that all 32 lanes execute it (`.sync.aligned`).
 * Fragment operands are read and written per lane as raw bytes (little-endian, element 0 first:
 * the packing of a 32-bit register) or as element values; `address` operands give each lane's
 * shared bytes, bounds- and hazard-checked.
 */
export interface FragmentCall {
  /** The warp's index in its CTA. */
  readonly warp: number;
  /**
   * Report a hazard at the instruction: TX6011 (lanes), TX6018 (a row address), TX6029 (an
   * operand value the PTX ISA leaves undefined, such as mma.sp metadata).
   */
  hazard(code: "TX6011" | "TX6018" | "TX6029", message: string): void;
  /** The value of static operand `i` (an immediate such as mma.sp's sparsity selector). */
  staticArg(i: number): number;
  /** The bytes of fragment operand `i` of `lane` (a copy). */
  bytes(i: number, lane: number): Uint8Array;
  /** Overwrite fragment operand `i` of `lane` with `b` (its whole byte length). */
  setBytes(i: number, lane: number, b: Uint8Array): void;
  /** The element values of fragment operand `i` of `lane`. */
  values(i: number, lane: number): SimValue[];
  /** Store element values (rounded/wrapped once to the element dtype) into fragment `i`. */
  setValues(i: number, lane: number, v: readonly SimValue[]): void;
  /**
   * `n` bytes of shared memory at the address operand `i` of `lane`; undefined after a reported
   * hazard (misaligned or out of the buffer: TX6018).
   */
  loadShared(i: number, lane: number, n: number): Uint8Array | undefined;
  /** Store `b` at the address operand `i` of `lane` (same checks as loadShared). */
  storeShared(i: number, lane: number, b: Uint8Array): void;
}

/**
 * The simulated machine's hardware units for ops with state (async copies, barriers, memory),
 * by unit name: each property's type is that unit's actions, `{ unit, action, …parameters }`.
 * The simulator implements each action once (runtime-sim `compile/units/`); ops say which they
 * perform. The family whose records drive a unit declares it in its own record file by
 * augmenting this interface (ops/bulk.ts: `declare module "./op.js" { interface MachineUnits {
 * bulk: BulkAction } }`), so a new action is declared beside its records and op.ts imports no
 * family (no import circle). `ops/index.ts` re-exports each unit's action type, which keeps its
 * declaration in the declaration files the other packages read (a unit left out there is a
 * compile error in runtime-sim's `MACHINE_UNITS`).
 */
export interface MachineUnits {}

/** An action of one of the machine's units (MachineUnits): a record's `sim.effect`. */
export type MachineAction = MachineUnits[keyof MachineUnits];

/** Simulator semantics of an op. */
export type SimSemantics =
  | {
      readonly kind: "thread";
      /** The per-thread function for these operand dtypes and result dtype. */
      make(dts: readonly DType[], rt: DType): ThreadFn;
    }
  | {
      readonly kind: "warp";
      /** Build the per-warp runner for these operand dtypes and result dtype. */
      make(dts: readonly DType[], rt: DType | undefined): (w: WarpCall) => void;
      /**
       * True when the instruction orders memory among the lanes that execute it together (the
       * race tracker's happens-before). Only `bar.warp.sync` does ("bar.warp.sync also
       * guarantee memory ordering among threads participating in barrier", PTX ISA,
       * bar.warp.sync); shfl.sync, vote.sync and redux.sync only wait for the lanes of the mask,
       * and activemask does not even wait, so they order no memory.
       */
      readonly ordersMemory?: true;
    }
  | { readonly kind: "machine"; readonly effect: MachineAction }
  | {
      readonly kind: "fragment";
      /** The per-warp runner (every one of the 32 lanes executes; the simulator checked). */
      make(dts: readonly DType[]): (w: FragmentCall) => void;
    };

/** A requirement of one call of an op beyond the op's own `sm` and `ptx` (OpDef.needs). */
export interface OpNeed {
  /** The instruction with the qualifier that needs it, for messages (`atom with .cluster scope`). */
  readonly instr: string;
  readonly sm: number;
  readonly ptx: PtxVersion;
  /** The code of a target below `sm`. */
  readonly code: DiagnosticCode;
  /** Where the rule comes from. */
  readonly source: string;
}

/** The documented error bound of an approximate op, checked by the differential test. */
export interface ApproxBound {
  /** Maximum error in units in the last place of the result dtype, against the exact result. */
  readonly ulp: number;
  /** Or, where a relative or absolute bound is the documented one: `|got - exact| <= abs + rel*|exact|`. */
  readonly abs?: number;
  readonly rel?: number;
  /** Where the bound comes from (e.g. "CUDA C Programming Guide, Table 'Intrinsic functions'"). */
  readonly source: string;
  /** The input domain the bound holds on, in words (e.g. "|x| < 100"). */
  readonly domain?: string;
  /**
   * The same domain, machine-checkable, on the first operand's value. Outside it the bound is not
   * claimed; the differential test then requires only that the result is NaN exactly where the
   * exact result is NaN.
   */
  readonly inDomain?: (x: number) => boolean;
  /** The ulp bound grows with |x| (CUDA's `__expf`): `ulp + floor(ulpPerUnit·|x|)`. */
  readonly ulpPerUnit?: number;
  /**
   * The bound is on the float32 result; a 16-bit result is that value rounded once more, so it
   * may be off by a further half ulp of its format. Always true for the float32-computed math ops.
   */
  readonly viaFloat32?: boolean;
}

/**
 * One op: every fact about it in one record, read by the DSL (surface), the verifier
 * (operands, type rule, target and version contract, extra checks), the code generator
 * (lowering) and the simulator (semantics). Models: TVM's op registry with attributes
 * (`register_codegen`), tinygrad's `asm_for_op`.
 */
export interface OpDef {
  /** IR name, as in `CallExpr.op` / `Call.op`: the PTX spelling or the TIRx name. */
  readonly name: string;
  readonly family: OpFamily;
  /** The `T` spelling, for messages and docs (e.g. `T.exp`, `T.ptx.cp.async_.commit_group`). */
  readonly surface: string;
  /**
   * The literal arguments of the surface call when one surface spells several statement ops
   * (`"global"` for `fence.proxy.async.global`, spelled `T.ptx.fence.proxy_async("global")`):
   * printers write `surface(surfaceArgs)`. Absent: the surface called with no arguments.
   */
  readonly surfaceArgs?: string;
  /**
   * `value` ops are expressions (`CallExpr`); `stmt` ops are statements (`Call`); `operator`
   * records describe the `Binary`/`Compare` IR nodes of the same name and are never called.
   */
  readonly form: "value" | "stmt" | "operator";
  readonly operands: readonly OperandSpec[];
  /**
   * Result dtype for these operand dtypes (value ops), or undefined for statements.
   * @throws TirxError TX2005 for operand dtypes the op does not accept.
   */
  result(dts: readonly DType[], span?: Span): DType | undefined;
  /** The dtypes the op accepts, as operand-dtype lists, for the differential test and docs. */
  readonly signatures: readonly (readonly DType[])[];
  /** Lowest sm target and PTX ISA version, and the rule's source. */
  readonly sm: number;
  readonly ptx: PtxVersion;
  readonly source: string;
  /** The code of a target below `sm` (default TX5006): TX3023 for cp.async, TX4007 for sm_90 ops. */
  readonly archCode?: DiagnosticCode;
  /**
   * The op needs the architecture-specific target `sm_{sm}a` (wgmma, setmaxnreg: sm_90a), not
   * only an sm number of at least `sm`; a plain `sm_90` target gets `archCode`.
   */
  readonly archSpecific?: boolean;
  /**
   * The kernel entry must declare a register cap (`.maxntid` with `.minnctapersm 1`, as
   * `__launch_bounds__(threads, 1)` gives): setmaxnreg is honoured only under one (ptxas C7508).
   */
  readonly registerCap?: true;
  /**
   * The instruction is `.sync.aligned` at warpgroup scale: all 128 threads of a warpgroup execute
   * it together, so it must not sit under a condition that splits a warpgroup (PTX ISA, wgmma:
   * "all threads in the warpgroup must execute the same wgmma instruction"; setmaxnreg, whose
   * `.sync.aligned` asks the same of the warpgroup's threads). The verifier refuses one under a
   * provably divergent condition (TX7012, verify/warpgroup-convergence.ts).
   */
  readonly warpgroupAligned?: true;
  /** Checks beyond operands and dtypes (static ranges of runtime-constant operands, ...). */
  check?(args: readonly Expr[], span?: Span): void;
  /**
   * A further target requirement of one call, chosen by its static operands (a `.cluster` scope
   * needs sm_90 and PTX 7.8 where the op itself needs sm_70), or undefined; the verifier records
   * it after the op's own.
   */
  needs?(args: readonly Expr[]): OpNeed | undefined;
  /** Checks against the kernel's launch (the verifier runs them; e.g. a named barrier's count). */
  checkLaunch?(args: readonly Expr[], launch: LaunchConfig, span?: Span): void;
  readonly lower: Lowering;
  readonly sim: SimSemantics;
  /** Set for approximate ops; exact ops match IEEE (or the exact result rounded once) bit for bit. */
  readonly approx?: ApproxBound;
  /** True when the op reads or writes memory or synchronizes (never folded, hoisted or merged). */
  readonly effects?: boolean;
}
