// The schedulers read what a machine action does from its entry in its unit's table
// (ActionTraits, compile/units/*.ts), never from an op's spelling, unit or action name. This
// pins the traits of every machine op record to the facts the schedulers used before they were
// traits (by unit and action), so moving a fact cannot change a schedule.
import { describe, expect, it } from "vitest";
import { allOps, type MachineAction, type OpDef } from "@tirx-ts/core";
import { actionTraits } from "../src/compile/units.js";

/** The facts as they were tested by unit and action name (schedule, wait-loop, blocking, lane-split). */
function byName(op: OpDef, fx: MachineAction): Record<string, unknown> {
  const { unit, action } = fx;
  return {
    syncs:
      (unit === "barrier" && op.form === "stmt") ||
      (unit === "mbarrier" && op.form === "value") ||
      (unit === "nvshmem" && action === "signal_test") ||
      // wgmma.wait_group waits for the warpgroup's group (exec/wgmma.ts).
      (unit === "wgmma" && action === "wait"),
    // An NVSHMEM signal wait polls its word as an mbarrier wait polls its phase.
    polls: (unit === "mbarrier" && action === "try_wait") || action === "signal_test",
    stateless:
      (unit === "cluster" && (action === "register" || action === "mapa")) ||
      (unit === "nvshmem" && action === "pe"),
    waitsForCluster: unit === "cluster" && action === "wait",
    waitsForWarpgroup: unit === "wgmma" && action === "wait",
    ctaBarrier:
      unit !== "barrier" || action === "warp"
        ? undefined
        : { whole: action === "cta", waits: action !== "arrive" },
    warpWide: unit === "wgmma" || unit === "regs" || (unit === "barrier" && action === "warp"),
  };
}

describe("ActionTraits", () => {
  const machine = allOps().flatMap((op) =>
    op.sim.kind === "machine" ? [[op, op.sim.effect] as const] : [],
  );

  it("every machine op has traits, equal to the facts the schedulers tested by name", () => {
    expect(machine.length).toBeGreaterThan(0);
    for (const [op, fx] of machine) {
      const t = actionTraits(op.name);
      expect(t, op.name).toBeDefined();
      expect(
        {
          syncs: t!.syncs === true,
          polls: t!.polls === true,
          stateless: t!.stateless === true,
          waitsForCluster: t!.waitsForCluster === true,
          waitsForWarpgroup: t!.waitsForWarpgroup === true,
          ctaBarrier: t!.ctaBarrier,
          warpWide: t!.warpWide === true,
        },
        op.name,
      ).toEqual(byName(op, fx));
    }
  });

  it("an op with no machine action, or no record, has none", () => {
    expect(actionTraits("no.such.op")).toBeUndefined();
    const pure = allOps().find((op) => op.sim.kind !== "machine")!;
    expect(actionTraits(pure.name)).toBeUndefined();
  });
});
