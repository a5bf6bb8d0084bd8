import { staticArg, stmtOp, template } from "./define.js";
import type { OpDef } from "./op.js";

/**
 * The CTA barrier unit's actions (PTX ISA, bar/barrier): `cta` is bar.sync 0 (cta_sync), `named`
 * and `arrive` are bar.sync / bar.arrive with a barrier id and count (ops/cta.ts), `warp` is
 * bar.warp.sync.
 */
export type BarrierAction = {
  readonly unit: "barrier";
  readonly action: "cta" | "named" | "arrive" | "warp";
};

/** The fence unit's actions (PTX ISA, fence.proxy.async, fence.mbarrier_init). */
export type FenceAction = {
  readonly unit: "fence";
  readonly action: "proxy_async" | "mbarrier_init";
  /** The state spaces a proxy fence orders (PTX ISA, fence.proxy.async's proxykind). */
  readonly spaces?: "shared::cta" | "global" | "all";
};

declare module "./op.js" {
  interface MachineUnits {
    barrier: BarrierAction;
    fence: FenceAction;
  }
}

/**
 * The proxy fence of state spaces `spaces`, spelled `T.ptx.fence.proxy_async(surfaceArgs)`
 * (PTX ISA, fence.proxy.async; sm_90).
 */
function proxyFence(
  name: string,
  spaces: "shared::cta" | "global" | "all",
  surfaceArgs?: string,
): OpDef {
  return stmtOp({
    name,
    family: "fence",
    surface: "T.ptx.fence.proxy_async",
    ...(surfaceArgs !== undefined ? { surfaceArgs } : {}),
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, fence.proxy.async",
    archCode: "TX4007",
    lower: template(name),
    effect: { unit: "fence", action: "proxy_async", spaces },
  });
}

/**
 * CTA barriers and proxy fences (PTX ISA, bar.sync; fence.proxy.async; fence.mbarrier_init).
 * The proxy fence comes in three state-space forms, one surface: T.ptx.fence.proxy_async(space).
 */
export const SYNC_OPS: readonly OpDef[] = [
  stmtOp({
    name: "bar.sync",
    family: "sync",
    surface: "T.cuda.cta_sync",
    operands: [staticArg("barrier", 0, 15)],
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, bar.sync",
    lower: template("bar.sync $0"),
    effect: { unit: "barrier", action: "cta" },
  }),
  proxyFence("fence.proxy.async.shared::cta", "shared::cta"),
  proxyFence("fence.proxy.async.global", "global", '"global"'),
  proxyFence("fence.proxy.async", "all", '"all"'),
  stmtOp({
    name: "fence.mbarrier_init.release.cluster",
    family: "fence",
    surface: "T.ptx.fence.mbarrier_init",
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, fence.mbarrier_init",
    archCode: "TX4007",
    lower: template("fence.mbarrier_init.release.cluster"),
    effect: { unit: "fence", action: "mbarrier_init" },
  }),
];
