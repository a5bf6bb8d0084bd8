import { stmtOp, template, valueArg } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * The cluster unit's actions (PTX ISA, barrier.cluster.arrive[.relaxed] / barrier.cluster.wait,
 * mapa, the cluster special registers, mbarrier.arrive.release.cluster on a shared::cluster
 * address: `remote_arrive`).
 */
export type ClusterAction = {
  readonly unit: "cluster";
  readonly action: "register" | "arrive" | "wait" | "mapa" | "remote_arrive";
};

declare module "./op.js" {
  interface MachineUnits {
    cluster: ClusterAction;
  }
}

/**
 * The cluster special registers a kernel can read (PTX ISA, "Special Registers":
 * %cluster_ctarank, %cluster_nctarank, %cluster_ctaid, %cluster_nctaid, %clusterid,
 * %nclusterid; sm_90, PTX 7.8), as `[IR name, T surface, register]`.
 */
const REGISTERS: readonly (readonly [string, string, string])[] = [
  ["cluster.ctarank", "T.cuda.cluster_ctarank", "%cluster_ctarank"],
  ["cluster.nctarank", "T.cuda.cluster_nctarank", "%cluster_nctarank"],
  ...(["x", "y", "z"] as const).flatMap((a) => [
    [`cluster.ctaid.${a}`, `T.cuda.cluster_cta_idx("${a}")`, `%cluster_ctaid.${a}`] as const,
    [`cluster.nctaid.${a}`, `T.cuda.cluster_dim("${a}")`, `%cluster_nctaid.${a}`] as const,
    [`clusterid.${a}`, `T.cuda.cluster_idx("${a}")`, `%clusterid.${a}`] as const,
    [`nclusterid.${a}`, `T.cuda.cluster_grid_dim("${a}")`, `%nclusterid.${a}`] as const,
  ]),
];

/** What each cluster register is, for the simulator. */
export type ClusterRegister = (typeof REGISTERS)[number][0];

const special = ([name, surface, reg]: readonly [string, string, string]): OpDef => ({
  ...stmtOp({
    name,
    family: "cluster",
    surface,
    sm: 90,
    ptx: [7, 8],
    source: `PTX ISA, Special Registers: ${reg}`,
    archCode: "TX4007",
    lower: template(`mov.u32 $d, ${reg}`),
    effect: { unit: "cluster", action: "register" },
  }),
  // A pure read of the CTA's place in the launch; int32 like %ctaid in this IR.
  form: "value",
  result: () => "int32",
  signatures: [[]],
  effects: false,
});

/**
 * Thread-block clusters (sm_90): the cluster special registers and the cluster barrier
 * (PTX ISA, "barrier.cluster": every non-exited thread of every CTA of the cluster arrives, then
 * waits; `arrive` has release and `wait` acquire semantics by default, `.relaxed` drops the
 * release). `fence.mbarrier_init.release.cluster` is in sync.ts.
 */
export const CLUSTER_OPS: readonly OpDef[] = [
  ...REGISTERS.map(special),
  stmtOp({
    name: "barrier.cluster.arrive",
    family: "cluster",
    surface: "T.ptx.barrier.cluster.arrive",
    sm: 90,
    ptx: [7, 8],
    source: "PTX ISA, barrier.cluster",
    archCode: "TX4007",
    lower: template("barrier.cluster.arrive"),
    effect: { unit: "cluster", action: "arrive" },
  }),
  stmtOp({
    name: "barrier.cluster.arrive.relaxed",
    family: "cluster",
    surface: "T.ptx.barrier.cluster.arrive_relaxed",
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, barrier.cluster (.relaxed: PTX 8.0)",
    archCode: "TX4007",
    lower: template("barrier.cluster.arrive.relaxed"),
    effect: { unit: "cluster", action: "arrive" },
  }),
  {
    ...stmtOp({
      name: "mapa.shared::cluster",
      family: "cluster",
      surface: "T.ptx.mapa",
      operands: [valueArg("addr", ["uint32"]), valueArg("rank", ["int32", "uint32"])],
      sm: 90,
      ptx: [7, 8],
      source: "PTX ISA, mapa (shared::cluster window address of the same variable in CTA `rank`)",
      archCode: "TX4007",
      lower: template("mapa.shared::cluster.u32 $d, $0, $1"),
      effect: { unit: "cluster", action: "mapa" },
    }),
    // addr: a shared address (bars.ptr([i])); the result addresses CTA `rank`'s copy.
    form: "value",
    result: () => "uint32",
    signatures: [["uint32", "int32"]],
    effects: false,
  },
  stmtOp({
    name: "mbarrier.arrive.release.cluster.shared::cluster",
    family: "cluster",
    surface: "T.ptx.mbarrier.arrive_remote",
    operands: [valueArg("addr", ["uint32"])],
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, mbarrier.arrive (.release.cluster on a .shared::cluster address from mapa)",
    archCode: "TX4007",
    lower: template("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [$0]"),
    effect: { unit: "cluster", action: "remote_arrive" },
  }),
  stmtOp({
    name: "barrier.cluster.wait",
    family: "cluster",
    surface: "T.ptx.barrier.cluster.wait",
    sm: 90,
    ptx: [7, 8],
    source: "PTX ISA, barrier.cluster",
    archCode: "TX4007",
    lower: template("barrier.cluster.wait"),
    effect: { unit: "cluster", action: "wait" },
  }),
];
