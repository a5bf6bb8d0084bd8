import { stmtOp, template, valueArg } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * The cluster unit's actions (PTX ISA, barrier.cluster.arrive[.relaxed] / barrier.cluster.wait,
 * mapa, the cluster special registers, mbarrier.arrive.release.cluster on a shared::cluster
 * address: `remote_arrive`).
 */
export type ClusterAction =
  | {
      readonly unit: "cluster";
      readonly action: "register";
      /** Which special register (its PTX name without `%` and axis). */
      readonly register: ClusterRegisterKind;
      /** Its axis (0: x, 1: y, 2: z); 0 for the scalar `ctarank` and `nctarank`. */
      readonly axis: 0 | 1 | 2;
    }
  | {
      readonly unit: "cluster";
      readonly action: "arrive";
      /** `.relaxed`: the arrival releases nothing (PTX ISA, barrier.cluster). */
      readonly relaxed: boolean;
    }
  | { readonly unit: "cluster"; readonly action: "wait" | "mapa" | "remote_arrive" };

/**
 * The cluster special registers (PTX ISA, "Special Registers"): the CTA's rank in its cluster,
 * the cluster's CTA count, the CTA's position in its cluster, the cluster's dims, the cluster's
 * position in the grid and the grid's dims in clusters.
 */
export type ClusterRegisterKind =
  "ctarank" | "nctarank" | "ctaid" | "nctaid" | "clusterid" | "nclusterid";

declare module "./op.js" {
  interface MachineUnits {
    cluster: ClusterAction;
  }
}

/**
 * The cluster special registers a kernel can read (PTX ISA, "Special Registers":
 * %cluster_ctarank, %cluster_nctarank, %cluster_ctaid, %cluster_nctaid, %clusterid,
 * %nclusterid; sm_90, PTX 7.8), as `[IR name, T surface, register, kind, axis]`.
 */
const REGISTERS: readonly (readonly [string, string, string, ClusterRegisterKind, 0 | 1 | 2])[] = [
  ["cluster.ctarank", "T.cuda.cluster_ctarank", "%cluster_ctarank", "ctarank", 0],
  ["cluster.nctarank", "T.cuda.cluster_nctarank", "%cluster_nctarank", "nctarank", 0],
  ...(["x", "y", "z"] as const).flatMap((a, k) => {
    const axis = k as 0 | 1 | 2;
    return [
      [
        `cluster.ctaid.${a}`,
        `T.cuda.cluster_cta_idx("${a}")`,
        `%cluster_ctaid.${a}`,
        "ctaid",
        axis,
      ],
      [`cluster.nctaid.${a}`, `T.cuda.cluster_dim("${a}")`, `%cluster_nctaid.${a}`, "nctaid", axis],
      [`clusterid.${a}`, `T.cuda.cluster_idx("${a}")`, `%clusterid.${a}`, "clusterid", axis],
      [
        `nclusterid.${a}`,
        `T.cuda.cluster_grid_dim("${a}")`,
        `%nclusterid.${a}`,
        "nclusterid",
        axis,
      ],
    ] as const;
  }),
];

/** The IR names of the cluster registers. */
export type ClusterRegister = (typeof REGISTERS)[number][0];

const special = ([name, surface, reg, register, axis]: (typeof REGISTERS)[number]): OpDef => ({
  ...stmtOp({
    name,
    family: "cluster",
    surface,
    sm: 90,
    ptx: [7, 8],
    source: `PTX ISA, Special Registers: ${reg}`,
    archCode: "TX4007",
    lower: template(`mov.u32 $d, ${reg}`),
    effect: { unit: "cluster", action: "register", register, axis },
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
    effect: { unit: "cluster", action: "arrive", relaxed: false },
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
    effect: { unit: "cluster", action: "arrive", relaxed: true },
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
