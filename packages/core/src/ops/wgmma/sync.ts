import { TirxError } from "../../diagnostics.js";
import { constInt } from "../../ir/expr.js";
import { staticArg, stmtOp, template } from "../define.js";
import type { OpDef } from "../op.js";

/**
 * The wgmma unit's actions (PTX ISA, wgmma.mma_async, wgmma.fence, wgmma.commit_group,
 * wgmma.wait_group): `mma` carries the shape and types of its instruction
 * (ops/wgmma/mma-async.ts).
 */
export type WgmmaAction =
  | {
      readonly unit: "wgmma";
      readonly action: "mma";
      /** N of m64nNk16 (m64nNk32 for float8). */
      readonly n: number;
      /** A's dtype, and B's unless `b` is set; K = 32 bytes / its size (k16, or k32 for float8). */
      readonly ab: "float16" | "bfloat16" | "float8_e4m3" | "float8_e5m2";
      /** B's dtype where it differs from A's (float8: `.e4m3.e5m2`, `.e5m2.e4m3`). */
      readonly b?: "float8_e4m3" | "float8_e5m2";
      /** The accumulator dtype: float32 unless set (float8 variants with `.f16` D). */
      readonly acc?: "float16";
      /** A from registers (8 elements per thread) instead of a shared-memory descriptor. */
      readonly aRegs: boolean;
      /**
       * The warpgroup's first mma_async needs a wgmma.fence before it (PTX ISA, wgmma.fence;
       * verify/wgmma-fence.ts).
       */
      readonly needsFence: true;
    }
  | {
      readonly unit: "wgmma";
      readonly action: "fence";
      /** Orders register accesses before the mma_asyncs after it (PTX ISA, wgmma.fence). */
      readonly fence: true;
    }
  | { readonly unit: "wgmma"; readonly action: "commit" | "wait" };

/** The register-budget unit's action (PTX ISA, setmaxnreg). */
export type RegsAction = { readonly unit: "regs"; readonly action: "setmaxnreg" };

declare module "../op.js" {
  interface MachineUnits {
    wgmma: WgmmaAction;
    regs: RegsAction;
  }
}

const common = {
  family: "wgmma",
  sm: 90,
  ptx: [8, 0],
  archCode: "TX7006",
} as const;

/** The register file of an SM: 64K 32-bit registers, shared by the CTA's warpgroups. */
const REGISTERS_PER_SM = 65536;
const THREADS_PER_WARPGROUP = 128;

/**
 * wgmma.fence / commit_group / wait_group (PTX ISA, wgmma; sm_90a, PTX 8.0) and setmaxnreg
 * (PTX ISA, setmaxnreg; sm_90a, PTX 8.0): `count` in 24..256, a multiple of 8. The verifier
 * checks the launch: a block of whole warpgroups, and `inc` counts that fit the register file in
 * the warp-specialised pattern, one warpgroup (the producer) at the 24-register minimum and the
 * other W − 1 at `count`: `(count·(W − 1) + 24)·128 ≤ 65536`. (`setmaxnreg.inc` blocks until
 * the registers are free, so a budget over the file hangs the CTA.) The rule does not see which
 * warpgroups take which branch; a kernel with several producers may pass it and still not fit.
 */
export const WGMMA_SYNC_OPS: readonly OpDef[] = [
  {
    ...stmtOp({
      ...common,
      name: "wgmma.fence.sync.aligned",
      surface: "T.ptx.wgmma.fence",
      source: "PTX ISA, wgmma.fence; sm_90a",
      lower: template("wgmma.fence.sync.aligned"),
      effect: { unit: "wgmma", action: "fence", fence: true },
    }),
    archSpecific: true,
    warpgroupAligned: true,
  },
  {
    ...stmtOp({
      ...common,
      name: "wgmma.commit_group.sync.aligned",
      surface: "T.ptx.wgmma.commit_group",
      source: "PTX ISA, wgmma.commit_group; sm_90a",
      lower: template("wgmma.commit_group.sync.aligned"),
      effect: { unit: "wgmma", action: "commit" },
    }),
    archSpecific: true,
    warpgroupAligned: true,
  },
  {
    ...stmtOp({
      ...common,
      name: "wgmma.wait_group.sync.aligned",
      surface: "T.ptx.wgmma.wait_group",
      operands: [staticArg("n", 0, 7)],
      source: "PTX ISA, wgmma.wait_group; sm_90a",
      lower: template("wgmma.wait_group.sync.aligned $0"),
      effect: { unit: "wgmma", action: "wait" },
    }),
    archSpecific: true,
    warpgroupAligned: true,
  },
  ...(["inc", "dec"] as const).map((dir): OpDef => ({
    ...stmtOp({
      ...common,
      name: `setmaxnreg.${dir}.sync.aligned.u32`,
      surface: `T.ptx.setmaxnreg`,
      operands: [staticArg("count", 24, 256, "TX7008")],
      source: "PTX ISA, setmaxnreg; sm_90a",
      lower: template(`setmaxnreg.${dir}.sync.aligned.u32 $0`),
      effect: { unit: "regs", action: "setmaxnreg" },
      check: (args, span) => {
        const n = constInt(args[0]!)!;
        if (n % 8 !== 0) {
          throw new TirxError(
            "TX7008",
            `setmaxnreg.${dir} count must be a multiple of 8 in 24..256, got ${n}`,
            span,
          );
        }
      },
    }),
    archSpecific: true,
    warpgroupAligned: true,
    registerCap: true,
    checkLaunch: (args, launch, span) => {
      const threads = launch.block[0] * launch.block[1] * launch.block[2];
      if (threads % THREADS_PER_WARPGROUP !== 0) {
        throw new TirxError(
          "TX7009",
          `setmaxnreg acts per warpgroup, but the block has ${threads} threads (not a multiple of 128)`,
          span,
        );
      }
      const n = constInt(args[0]!)!;
      const groups = threads / THREADS_PER_WARPGROUP;
      const need = (groups > 1 ? n * (groups - 1) + 24 : n) * THREADS_PER_WARPGROUP;
      if (dir === "inc" && need > REGISTERS_PER_SM) {
        throw new TirxError(
          "TX7009",
          `setmaxnreg.inc ${n} in a block of ${groups} warpgroups needs ${need} registers (${groups - 1} warpgroups at ${n}, one at the minimum 24), more than the ${REGISTERS_PER_SM} of an SM`,
          span,
        );
      }
    },
  })),
];
