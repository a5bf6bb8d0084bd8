import { mbarrierArg, stmtOp, valueArg } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * `mbarrier.arrive` on the mbarrier at the same shared offset in CTA `cta` of the cluster
 * (PTX ISA, mapa; mbarrier.arrive with `.shared::cluster`; sm_90, PTX 8.0): the consumer of a
 * multicast stage frees it in every CTA that the multicast writes. Default semantics
 * (`.release.cta`): `.release.cluster` would cost a GPU-wide memory barrier per arrive (seen as
 * MEMBAR.ALL.GPU in SASS of bench/cuda/gemm_hopper.cu), and a consumer's reads of the stage are
 * complete when its wgmma.wait_group returns. Lowering: the mbarrier's shared address, `mapa` to
 * CTA `cta`'s window, then the remote arrive.
 */
export const MBARRIER_CLUSTER_OPS: readonly OpDef[] = [
  stmtOp({
    name: "mbarrier.arrive.shared::cluster",
    family: "mbarrier",
    surface: "T.ptx.mbarrier.arrive.cluster",
    operands: [mbarrierArg(), valueArg("cta", ["uint32"])],
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, mapa; mbarrier.arrive (.shared::cluster)",
    archCode: "TX4007",
    lower: (c, _d, ops) => {
      // The mbarrier operand is a memory operand `[base]` or `[base+disp]`.
      const inner = ops[0]!.slice(1, -1);
      const plus = inner.lastIndexOf("+");
      const base = plus > 0 ? inner.slice(0, plus) : inner;
      const disp = plus > 0 ? inner.slice(plus + 1) : "";
      const a = c.tmp("uint32");
      c.ins(`mov.u32 ${a}, ${base}`);
      if (disp) c.ins(`add.s32 ${a}, ${a}, ${disp}`);
      const r = c.tmp("uint32");
      c.ins(`mapa.shared::cluster.u32 ${r}, ${a}, ${c.toReg(ops[1]!, "uint32")}`);
      c.ins(`mbarrier.arrive.shared::cluster.b64 _, [${r}]`);
    },
    effect: { unit: "mbarrier", action: "arrive_remote" },
  }),
];
