import type { RangeScope } from "../analysis/range-scope.js";
import type { DiagnosticLog } from "../diagnostic-log.js";
import type { DeviceEntry, TileApply } from "../ir/stmt.js";
import type { TilePlan } from "../ir/tile-plan.js";
import type { RequirementLog } from "./requirements.js";

/**
 * What the checks of one `verify` share while its walk moves through the device entry: the
 * entry (and its launch), the scope at the statement being checked (names defined, ranges and
 * facts; `walkScoped` keeps it), where errors are collected, where target requirements are
 * recorded, and the plan of every `tile.apply` verified so far.
 */
export interface VerifyContext {
  readonly entry: DeviceEntry;
  readonly scope: RangeScope;
  readonly log: DiagnosticLog;
  readonly reqs: RequirementLog;
  readonly plans: Map<TileApply, TilePlan>;
}
