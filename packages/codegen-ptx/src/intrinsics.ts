/**
 * The table from intrinsic to PTX, next to `ops.ts`'s operator table: each entry says how its
 * operands reach PTX and renders one instruction (without `;`). No commit, wait, fence or barrier
 * is ever added beyond the one the author called. Forms checked with ptxas 13.0:
 * `mbarrier.{init,arrive}.shared::cta.b64` assemble at PTX 7.8 on sm_80 (the `::cta` spelling
 * needs 7.8; the `_` sink is refused only below 7.7); `mbarrier.arrive.expect_tx`,
 * `fence.proxy.async`, `fence.mbarrier_init` and the `cp.async.bulk` group operations need PTX 8.0
 * and sm_90; `mbarrier.try_wait.parity` needs sm_90 and PTX 7.8 (PTX ISA "mbarrier",
 * "membar/fence", "cp.async.bulk.commit_group", "cp.async.bulk.wait_group").
 */

/**
 * How one operand reaches PTX: `imm` a static integer immediate, `mbar` the 32-bit shared address
 * of an mbarrier object as a memory operand (`[%r5+8]`), `b32` a 32-bit register or immediate.
 */
export type OperandForm = "imm" | "mbar" | "b32";

/** Lowering of a statement intrinsic (`Call`). */
export interface IntrinsicLowering {
  readonly operands: readonly OperandForm[];
  readonly ptx: (ops: readonly string[]) => string;
}

/** Lowering of a value intrinsic (`CallExpr`); `d` is the result register. */
export interface ValueIntrinsicLowering {
  readonly operands: readonly OperandForm[];
  readonly ptx: (d: string, ops: readonly string[]) => string;
}

const plain = (text: string): IntrinsicLowering => ({ operands: [], ptx: () => text });
const waitN = (name: string): IntrinsicLowering => ({
  operands: ["imm"],
  ptx: ([n]) => `${name} ${n}`,
});

/** Statement intrinsics by their IR name (core `INTRINSICS`). */
export const INTRINSIC_PTX: Readonly<Record<string, IntrinsicLowering>> = {
  "cp.async.commit_group": plain("cp.async.commit_group"),
  "cp.async.wait_group": waitN("cp.async.wait_group"),
  "cp.async.wait_all": plain("cp.async.wait_all"),
  "cp.async.bulk.commit_group": plain("cp.async.bulk.commit_group"),
  "cp.async.bulk.wait_group": waitN("cp.async.bulk.wait_group"),
  "cp.async.bulk.wait_group.read": waitN("cp.async.bulk.wait_group.read"),
  "bar.sync": waitN("bar.sync"),
  "mbarrier.init": {
    operands: ["mbar", "b32"],
    ptx: ([bar, count]) => `mbarrier.init.shared::cta.b64 ${bar}, ${count}`,
  },
  // The arrival state is never read back (waits use the phase parity), so it goes to the sink.
  "mbarrier.arrive": {
    operands: ["mbar"],
    ptx: ([bar]) => `mbarrier.arrive.shared::cta.b64 _, ${bar}`,
  },
  "mbarrier.arrive.expect_tx": {
    operands: ["mbar", "b32"],
    ptx: ([bar, tx]) => `mbarrier.arrive.expect_tx.shared::cta.b64 _, ${bar}, ${tx}`,
  },
  "fence.proxy.async.shared::cta": plain("fence.proxy.async.shared::cta"),
  "fence.mbarrier_init.release.cluster": plain("fence.mbarrier_init.release.cluster"),
};

/** Value intrinsics by their IR name (core `VALUE_INTRINSICS`). */
export const VALUE_INTRINSIC_PTX: Readonly<Record<string, ValueIntrinsicLowering>> = {
  "mbarrier.try_wait.parity": {
    operands: ["mbar", "b32"],
    ptx: (d, [bar, phase]) => `mbarrier.try_wait.parity.shared::cta.b64 ${d}, ${bar}, ${phase}`,
  },
};
