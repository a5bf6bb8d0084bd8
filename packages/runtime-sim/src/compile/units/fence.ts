import type { UnitAction, UnitCompiler } from "../compiled.js";

/**
 * The fence unit: fences order proxies, recorded per thread in the happens-before clocks
 * (exec/clocks.ts) for the proxy rules (TX6015, TX6016). PTX ISA, fence.proxy.async (its
 * proxykind: the state spaces it orders, shared::cta unless the record says otherwise) and
 * fence.mbarrier_init. Statement ops only.
 */
export const FENCE_UNIT = {
  proxy_async: {
    stmt({ ec, fx }) {
      const clocks = ec.m.clocks;
      const spaces = fx.spaces ?? "shared::cta";
      return (lanes, n) => {
        for (let i = 0; i < n; i++) clocks.onProxyFence(lanes[i]!, spaces);
      };
    },
  },
  mbarrier_init: {
    stmt({ ec }) {
      const clocks = ec.m.clocks;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) clocks.onInitFence(lanes[i]!);
      };
    },
  },
} as const satisfies UnitCompiler<UnitAction<"fence">>;
