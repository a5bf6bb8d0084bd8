import type { DiagnosticCode } from "../catalog.js";
import type { TileApply } from "../ir/stmt.js";
import type { PatternContext } from "./common.js";
import type { TilePlanKind, TilePlanOf } from "../ir/tile-plan.js";
import { planCpAsync } from "./cp-async.js";
import { planBulkCopy } from "./cp-async-bulk.js";
import { planTmaCopy } from "./tma.js";

/**
 * The tile instructions of `T.cuda.tile.apply`, one record each: the opcode family, its target
 * contract, and the contract checker that turns a verified application into its plan. An opcode
 * is parsed once into its dot-separated tokens; the family is the leading tokens it must have
 * (`cp.async.bulk.*` before `cp.async.*`), and the family's own parser checks the qualifiers.
 */
export interface TileOpDef<K extends TilePlanKind = TilePlanKind> {
  /** The family, as PTX spells its leading tokens. */
  readonly family:
    | "cp.async"
    | "cp.async.bulk"
    | "cp.reduce.async.bulk"
    | "cp.async.bulk.tensor"
    | "cp.async.bulk.prefetch.tensor"
    | "prefetch";
  /**
   * The kind of plan the family verifies to (`TILE_PLANS` in ir/tile-plan.ts): what the code
   * generator and the simulator key their emitters and compilers by.
   */
  readonly kind: K;
  /** Opcodes of the family, for "did you mean" suggestions. */
  readonly examples: readonly string[];
  readonly sm: number;
  /** The code of a target below `sm`. */
  readonly archCode: DiagnosticCode;
  /** Where the target rule comes from. */
  readonly source: string;
  /**
   * Qualifiers of the family that only the architecture-specific target `sm_{sm}a` has: `uses`
   * says whether a verified application has one, `code` is the error of a target without the
   * `a`. The verifier records them as requirements; codegen checks them after every instruction's
   * own target.
   */
  readonly archSpecific?: {
    uses(plan: TilePlanOf<K>): boolean;
    readonly code: DiagnosticCode;
    readonly source: string;
  };
  /** Check the operand and parameter contract; the verified plan. */
  plan(s: TileApply, ctx: PatternContext): TilePlanOf<K>;
}

/** A tile-op record of some kind, its plan and qualifier facts typed for that kind. */
type AnyTileOpDef = { [K in TilePlanKind]: TileOpDef<K> }[TilePlanKind];

const DEFS = [
  {
    family: "cp.async.bulk.tensor",
    kind: "cp.async.bulk.tensor",
    examples: [
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
      "cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group",
    ],
    sm: 90,
    archCode: "TX4007",
    source: "PTX ISA, cp.async.bulk.tensor: requires sm_90 or higher",
    archSpecific: {
      // .multicast::cluster
      uses: (p) => p.opcode.multicast,
      code: "TX4022",
      source:
        "PTX ISA, cp.async.bulk.tensor: .multicast::cluster is optimized for target architecture sm_90a; CCCL cp_async_bulk_tensor_multicast: enabled for SM_90a",
    },
    plan: planTmaCopy,
  },
  {
    family: "prefetch",
    kind: "cp.async.bulk.tensor",
    examples: ["prefetch.tensormap"],
    sm: 90,
    archCode: "TX4007",
    source: "PTX ISA, prefetch (.tensormap): requires sm_90 or higher",
    plan: planTmaCopy,
  },
  {
    family: "cp.async.bulk.prefetch.tensor",
    kind: "cp.async.bulk.tensor",
    examples: ["cp.async.bulk.prefetch.tensor.2d.L2.global.tile"],
    sm: 90,
    archCode: "TX4007",
    source: "PTX ISA, cp.async.bulk.prefetch.tensor: requires sm_90 or higher",
    plan: planTmaCopy,
  },
  {
    family: "cp.async.bulk",
    kind: "cp.async.bulk",
    examples: [
      "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes",
      "cp.async.bulk.global.shared::cta.bulk_group",
    ],
    sm: 90,
    archCode: "TX4007",
    source: "PTX ISA, cp.async.bulk: requires sm_90 or higher",
    plan: planBulkCopy,
  },
  {
    // The bulk reduction: a form of the shared → global bulk copy (same plan and checks).
    family: "cp.reduce.async.bulk",
    kind: "cp.async.bulk",
    examples: [
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32",
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.add.noftz.bf16",
      "cp.reduce.async.bulk.global.shared::cta.bulk_group.max.s32",
    ],
    sm: 90,
    archCode: "TX4007",
    source: "PTX ISA, cp.reduce.async.bulk: requires sm_90 or higher",
    plan: planBulkCopy,
  },
  {
    family: "cp.async",
    kind: "cp.async",
    examples: ["cp.async.cg.shared.global", "cp.async.ca.shared.global"],
    sm: 80,
    archCode: "TX3023",
    source: "PTX ISA, cp.async: requires sm_80 or higher",
    plan: planCpAsync,
  },
] as const satisfies readonly AnyTileOpDef[];

/** Plan kinds that no family verifies to: `never` when every kind has one. */
type Unplanned = Exclude<TilePlanKind, (typeof DEFS)[number]["kind"]>;
// Fails to compile, naming the kind, when a plan kind has no tile op that produces it.
const everyKindPlanned: [Unplanned] extends [never] ? true : Unplanned = true;
void everyKindPlanned;

/** The tile ops, most specific family first (see {@link tileOpOf}). */
export const TILE_OPS: readonly TileOpDef[] = DEFS;

/** The tile op whose family `opcode` belongs to, or undefined (tokens compared, most specific first). */
export function tileOpOf(opcode: string): TileOpDef | undefined {
  const tokens = opcode.split(".");
  return TILE_OPS.find((op) => {
    const head = op.family.split(".");
    return tokens.length > head.length && head.every((t, i) => tokens[i] === t);
  });
}
