import type { Stmt, TileOp } from "../ir/stmt.js";
import { invariant } from "../invariant.js";
import type { VerifiedFunc } from "../verify/verify.js";
import { mapStmt } from "./map.js";
import { withEntryBody, type Pass } from "./pass.js";

/**
 * Replace every verified `TileApply` by a `TileOp` carrying its plan, and empty `vf.plans`:
 * after this pass no stage looks a plan up by node identity, so any pass may rebuild nodes.
 * Must run first after `verify` (the plans are keyed by the verified nodes).
 */
export function lowerTile(vf: VerifiedFunc): VerifiedFunc {
  if (vf.plans.size === 0) return vf;
  const body = mapStmt(vf.entry.body, {
    stmt: (s: Stmt): Stmt => {
      if (s.kind !== "TileApply") return s;
      const plan = vf.plans.get(s);
      invariant(
        plan,
        `lower-tile: tile.apply "${s.opcode}" has no plan; run it right after verify`,
      );
      const op: TileOp = { kind: "TileOp", plan, source: s, ...(s.span ? { span: s.span } : {}) };
      return op;
    },
  });
  return { ...withEntryBody(vf, body), plans: new Map() };
}

/** The `lower-tile` pass: {@link lowerTile}. */
export const lowerTilePass: Pass = {
  name: "lower-tile",
  description: "verified tile.apply → TileOp instruction nodes carrying their plans",
  run: lowerTile,
};
