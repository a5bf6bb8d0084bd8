import type { Span } from "../span.js";
import type { Buffer } from "./buffer.js";
import type { Var } from "./expr.js";
import type { Stmt } from "./stmt.js";

/** A kernel parameter: a global tensor (passed as a `.u64` pointer) or a scalar. */
export type Param =
  | { readonly kind: "buffer"; readonly name: string; readonly buffer: Buffer }
  | { readonly kind: "scalar"; readonly name: string; readonly var: Var };

/** A kernel: name, parameters in launch order, and a body holding one `DeviceEntry`. */
export interface PrimFunc {
  readonly kind: "PrimFunc";
  readonly name: string;
  readonly params: readonly Param[];
  readonly body: Stmt;
  readonly span?: Span;
}
