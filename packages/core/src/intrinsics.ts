import type { DType } from "./dtype.js";

/** An operand of an intrinsic: a static integer in [min, max], or a runtime value of a dtype. */
export type IntrinsicArg =
  | { readonly kind: "static"; readonly name: string; readonly min: number; readonly max: number }
  | { readonly kind: "value"; readonly name: string; readonly dtypes: readonly DType[] };

/** Contract of one intrinsic: operands, lowest PTX ISA version and lowest sm target. */
export interface IntrinsicInfo {
  readonly args: readonly IntrinsicArg[];
  readonly ptx: readonly [number, number];
  readonly sm: number;
  /** PTX ISA section the rule comes from. */
  readonly source: string;
}

const stat = (name: string, min: number, max: number): IntrinsicArg => ({
  kind: "static",
  name,
  min,
  max,
});
/** The shared-memory address of an mbarrier object (a BufferPtr into a shared uint64 buffer). */
const mbar: IntrinsicArg = { kind: "value", name: "mbarrier", dtypes: ["uint32"] };

/**
 * Intrinsics a kernel may call (statement form), keyed by their PTX spelling. TIRx spellings in
 * the `T` namespace map onto these names one-to-one.
 */
export const INTRINSICS: Readonly<Record<string, IntrinsicInfo>> = {
  "cp.async.commit_group": {
    args: [],
    ptx: [7, 0],
    sm: 80,
    source: "PTX ISA, cp.async.commit_group",
  },
  "cp.async.wait_group": {
    args: [stat("n", 0, 7)],
    ptx: [7, 0],
    sm: 80,
    source: "PTX ISA, cp.async.wait_group",
  },
  "cp.async.wait_all": { args: [], ptx: [7, 0], sm: 80, source: "PTX ISA, cp.async.wait_all" },
  "cp.async.bulk.commit_group": {
    args: [],
    ptx: [8, 0],
    sm: 90,
    source: "PTX ISA, cp.async.bulk.commit_group",
  },
  "cp.async.bulk.wait_group": {
    args: [stat("n", 0, 7)],
    ptx: [8, 0],
    sm: 90,
    source: "PTX ISA, cp.async.bulk.wait_group",
  },
  "cp.async.bulk.wait_group.read": {
    args: [stat("n", 0, 7)],
    ptx: [8, 0],
    sm: 90,
    source: "PTX ISA, cp.async.bulk.wait_group",
  },
  "mbarrier.init": {
    args: [mbar, { kind: "value", name: "count", dtypes: ["uint32", "int32"] }],
    ptx: [7, 8],
    sm: 80,
    source: "PTX ISA, mbarrier.init",
  },
  "mbarrier.arrive": { args: [mbar], ptx: [7, 8], sm: 80, source: "PTX ISA, mbarrier.arrive" },
  "mbarrier.arrive.expect_tx": {
    args: [mbar, { kind: "value", name: "tx_bytes", dtypes: ["uint32", "int32"] }],
    ptx: [8, 0],
    sm: 90,
    source: "PTX ISA, mbarrier.arrive (expect_tx)",
  },
  "fence.proxy.async.shared::cta": {
    args: [],
    ptx: [8, 0],
    sm: 90,
    source: "PTX ISA, fence.proxy.async",
  },
  "fence.mbarrier_init.release.cluster": {
    args: [],
    ptx: [8, 0],
    sm: 90,
    source: "PTX ISA, fence.mbarrier_init",
  },
  "bar.sync": { args: [stat("barrier", 0, 15)], ptx: [6, 0], sm: 30, source: "PTX ISA, bar.sync" },
};

/**
 * Value-returning intrinsics (CallExpr), with their result dtype.
 * `mbarrier.try_wait.parity(mbar, phase)`: true once the phase with parity `phase` completed;
 * may return false spuriously, so callers loop (PTX ISA, mbarrier.test_wait/try_wait).
 */
export const VALUE_INTRINSICS: Readonly<
  Record<string, IntrinsicInfo & { readonly result: DType }>
> = {
  "mbarrier.try_wait.parity": {
    args: [mbar, { kind: "value", name: "phase", dtypes: ["uint32", "int32"] }],
    result: "bool",
    ptx: [7, 8],
    sm: 90,
    source: "PTX ISA, mbarrier.try_wait",
  },
};

/** Intrinsics whose first operand is an mbarrier object. */
export function takesMbarrier(op: string): boolean {
  return op.startsWith("mbarrier.");
}
