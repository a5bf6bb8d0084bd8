import { TirxError } from "../diagnostics.js";
import type { DeviceEntry, Stmt } from "../ir/stmt.js";
import type { VerifiedFunc } from "../verify/verify.js";

/**
 * A named IR → IR step between `verify` and code generation (TVM's `tvm.transform.Pass`).
 * Passes take and return a {@link VerifiedFunc}: the IR in `fn` (with `entry` its device entry)
 * plus the facts the verifier established (launch, PTX version, sm, shared bytes), which a
 * semantics-preserving rewrite keeps valid. Passes are pure: the input is never mutated.
 */
export interface Pass {
  /** Stable kebab-case name, as `--emit ir --after NAME` spells it. */
  readonly name: string;
  /** One line: what the pass does. */
  readonly description: string;
  readonly run: (vf: VerifiedFunc) => VerifiedFunc;
  /**
   * Facts the stage decided that the IR does not show (e.g. storage planning's placement of
   * buffers), as lines a printer adds as comments after this stage.
   */
  readonly notes?: (vf: VerifiedFunc) => readonly string[];
}

/**
 * `vf` with its device entry's body replaced by `body` (`fn.body` and `entry` rebuilt);
 * `vf` itself when `body` is the current body.
 */
export function withEntryBody(vf: VerifiedFunc, body: Stmt): VerifiedFunc {
  if (body === vf.entry.body) return vf;
  const entry: DeviceEntry = { ...vf.entry, body };
  const fnBody: Stmt =
    vf.fn.body.kind === "Seq"
      ? { ...vf.fn.body, stmts: vf.fn.body.stmts.map((s) => (s === vf.entry ? entry : s)) }
      : entry;
  return { ...vf, fn: { ...vf.fn, body: fnBody }, entry };
}

/** A pass that rewrites the device entry's body with `f`. */
export function entryPass(
  name: string,
  description: string,
  f: (body: Stmt, vf: VerifiedFunc) => Stmt,
): Pass {
  return { name, description, run: (vf) => withEntryBody(vf, f(vf.entry.body, vf)) };
}

/** Options of {@link runPipeline}. */
export interface PipelineOptions {
  /** Stop after the pass of this name (its result is returned). */
  readonly after?: string;
  /** Called after each pass with its name and result (to print or check stages). */
  readonly onStage?: (name: string, vf: VerifiedFunc, pass: Pass) => void;
}

/**
 * Run `passes` in order over `vf`, stopping after `opts.after` when given.
 * @throws TirxError TX1002 when `opts.after` names no pass of the list (the message lists them).
 */
export function runPipeline(
  vf: VerifiedFunc,
  passes: readonly Pass[],
  opts: PipelineOptions = {},
): VerifiedFunc {
  if (opts.after !== undefined && !passes.some((p) => p.name === opts.after)) {
    throw new TirxError(
      "TX1002",
      `no pass named "${opts.after}"; the passes are ${passes.map((p) => p.name).join(", ")}`,
    );
  }
  let cur = vf;
  for (const p of passes) {
    cur = p.run(cur);
    opts.onStage?.(p.name, cur, p);
    if (p.name === opts.after) break;
  }
  return cur;
}
