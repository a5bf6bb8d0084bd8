import type { DiagnosticCode } from "../catalog.js";
import { TirxError } from "../diagnostics.js";
import type { DType } from "../dtype.js";
import type { Span } from "../span.js";
import type { Lowering, MachineAction, OpDef, OperandSpec, OpFamily } from "./op.js";
import type { PtxVersion } from "../target.js";

/** A static integer operand in `[min, max]`. */
export const staticArg = (
  name: string,
  min: number,
  max: number,
  code?: DiagnosticCode,
): OperandSpec => ({ kind: "static", name, min, max, ...(code ? { code } : {}) });

/** A runtime operand of one of `dtypes`. */
export const valueArg = (name: string, dtypes?: readonly DType[]): OperandSpec => ({
  kind: "value",
  name,
  ...(dtypes ? { dtypes } : {}),
});

/** The shared address of an mbarrier object. */
export const mbarrierArg = (name = "mbarrier"): OperandSpec => ({ kind: "mbarrier", name });

/** The fields of a statement op that has machine semantics. */
export interface StmtOpSpec {
  readonly name: string;
  readonly family: OpFamily;
  readonly surface: string;
  readonly surfaceArgs?: string;
  readonly operands?: readonly OperandSpec[];
  readonly sm: number;
  readonly ptx: PtxVersion;
  readonly source: string;
  readonly lower: Lowering;
  readonly effect: MachineAction;
  readonly check?: OpDef["check"];
  readonly archCode?: DiagnosticCode;
}

/** A statement op (no result) whose semantics are an action of the simulated machine. */
export function stmtOp(spec: StmtOpSpec): OpDef {
  const operands = spec.operands ?? [];
  return {
    name: spec.name,
    family: spec.family,
    surface: spec.surface,
    ...(spec.surfaceArgs !== undefined ? { surfaceArgs: spec.surfaceArgs } : {}),
    form: "stmt",
    operands,
    result: () => undefined,
    signatures: [operands.flatMap((o) => (o.kind === "value" && o.dtypes ? [o.dtypes[0]!] : []))],
    sm: spec.sm,
    ptx: spec.ptx,
    source: spec.source,
    lower: spec.lower,
    sim: { kind: "machine", effect: spec.effect },
    effects: true,
    ...(spec.check ? { check: spec.check } : {}),
    ...(spec.archCode ? { archCode: spec.archCode } : {}),
  };
}

/** A lowering that prints `text` with the operands substituted for `$0`, `$1`, ... and `$d`. */
export function template(text: string): Lowering {
  return (c, d, ops) =>
    c.ins(text.replace(/\$(d|\d+)/g, (_, k: string) => (k === "d" ? d : ops[Number(k)]!)));
}

/** TX2005 for operand dtypes an op does not accept. */
export function badDtypes(surface: string, dts: readonly DType[], span?: Span): TirxError {
  return new TirxError(
    "TX2005",
    `${surface} is not defined on ${dts.join(", ") || "no operands"}`,
    span,
  );
}
