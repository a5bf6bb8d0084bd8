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

const stat = (name: string, min: number, max: number): IntrinsicArg => ({ kind: "static", name, min, max });

/**
 * Intrinsics a kernel may call (statement form), keyed by their PTX spelling. TIRx spellings in
 * the `T` namespace map onto these names one-to-one.
 */
export const INTRINSICS: Readonly<Record<string, IntrinsicInfo>> = {
  "cp.async.commit_group": { args: [], ptx: [7, 0], sm: 80, source: "PTX ISA, cp.async.commit_group" },
  "cp.async.wait_group": { args: [stat("n", 0, 7)], ptx: [7, 0], sm: 80, source: "PTX ISA, cp.async.wait_group" },
  "cp.async.wait_all": { args: [], ptx: [7, 0], sm: 80, source: "PTX ISA, cp.async.wait_all" },
  "bar.sync": { args: [stat("barrier", 0, 15)], ptx: [6, 0], sm: 30, source: "PTX ISA, bar.sync" },
};
