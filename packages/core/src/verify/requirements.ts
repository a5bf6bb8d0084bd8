import type { Expr } from "../ir/expr.js";
import type { OpDef } from "../ops/op.js";
import type { TileOpDef } from "../patterns/tile-ops.js";
import type { TilePlan } from "../ir/tile-plan.js";
import type { Span } from "../span.js";
import { maxVersion, type PtxVersion, type Requirement } from "../target.js";

/**
 * The target requirements of a kernel, as the verifier's one walk meets them: each from the
 * record of what needs it (op, tile op, launch), in program order. Within one statement the
 * statement's own instruction (a `Call`'s op, a `tile.apply`'s opcode) comes before the ops of
 * its expressions, and an instruction before its qualifiers, so that the first requirement a
 * target lacks is the one to report.
 */
export class RequirementLog {
  private readonly list: Requirement[] = [];
  /** Where the current statement's requirements start. */
  private mark = 0;
  private span: Span | undefined;
  private version: PtxVersion = [7, 0];
  private sm = 75;

  /** Start the requirements of the statement at `span`. */
  enter(span: Span | undefined): void {
    this.mark = this.list.length;
    this.span = span;
  }

  /**
   * An op used in an expression of the current statement (a `CallExpr`) with operands `args`:
   * its own requirement, then what its static operands need (OpDef.needs).
   */
  exprOp(op: OpDef, args: readonly Expr[] = []): void {
    this.add(fromOp(op, this.span));
    this.#need(op, args, false);
  }

  /** The current statement's own op (a `Call`) with operands `args`, as exprOp. */
  stmtOp(op: OpDef, args: readonly Expr[] = []): void {
    this.add(fromOp(op, this.span), true);
    this.#need(op, args, true);
  }

  #need(op: OpDef, args: readonly Expr[], first: boolean): void {
    const n = op.needs?.(args);
    if (!n) return;
    const req: Requirement = {
      kind: "instruction",
      instr: n.instr,
      sm: n.sm,
      ptx: n.ptx,
      archSpecific: false,
      code: n.code,
      source: n.source,
      ...at(this.span),
    };
    // A statement's own op comes first; its qualifier right after it.
    if (first) this.list.splice(this.mark + 1, 0, req);
    else this.list.push(req);
    this.version = maxVersion(this.version, req.ptx);
    this.sm = Math.max(this.sm, req.sm);
  }

  /** The current statement's `tile.apply` of `opcode`, verified as `plan` by the tile op `def`. */
  tile(def: TileOpDef, opcode: string, plan: TilePlan): void {
    const base = { instr: opcode, sm: def.sm, ptx: plan.ptxVersion, ...at(this.span) };
    this.add(
      { kind: "instruction", ...base, archSpecific: false, code: def.archCode, source: def.source },
      true,
    );
    const q = def.archSpecific;
    if (q && q.uses(plan)) {
      this.add({ kind: "qualifier", ...base, archSpecific: true, code: q.code, source: q.source });
    }
  }

  /** A need of the launch configuration (clusters), at the device entry's `span`. */
  launch(sm: number, ptx: PtxVersion, source: string, span?: Span): void {
    this.add({
      kind: "launch",
      instr: "",
      sm,
      ptx,
      archSpecific: false,
      code: "TX5006",
      source,
      ...at(span),
    });
  }

  /** Every requirement, in order. */
  get requirements(): readonly Requirement[] {
    return this.list;
  }

  /** The lowest PTX ISA version covering every requirement (at least 7.0). */
  get ptxVersion(): PtxVersion {
    return this.version;
  }

  /** The lowest sm covering every requirement (at least 75). */
  get minSm(): number {
    return this.sm;
  }

  private add(req: Requirement, first = false): void {
    if (first) this.list.splice(this.mark, 0, req);
    else this.list.push(req);
    this.version = maxVersion(this.version, req.ptx);
    this.sm = Math.max(this.sm, req.sm);
  }
}

function fromOp(op: OpDef, span: Span | undefined): Requirement {
  return {
    kind: "instruction",
    instr: op.name,
    sm: op.sm,
    ptx: op.ptx,
    archSpecific: op.archSpecific === true,
    code: op.archCode ?? "TX5006",
    source: op.source,
    ...at(span),
    ...(op.registerCap ? { registerCap: true as const } : {}),
  };
}

const at = (span: Span | undefined): { span?: Span } => (span ? { span } : {});
