import { staticArg, stmtOp, template } from "./define.js";
import type { OpDef } from "./op.js";

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
  stmtOp({
    name: "fence.proxy.async.shared::cta",
    family: "fence",
    surface: "T.ptx.fence.proxy_async",
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, fence.proxy.async",
    archCode: "TX4007",
    lower: template("fence.proxy.async.shared::cta"),
    effect: { unit: "fence", action: "proxy_async", spaces: "shared::cta" },
  }),
  stmtOp({
    name: "fence.proxy.async.global",
    family: "fence",
    surface: "T.ptx.fence.proxy_async",
    surfaceArgs: '"global"',
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, fence.proxy.async",
    archCode: "TX4007",
    lower: template("fence.proxy.async.global"),
    effect: { unit: "fence", action: "proxy_async", spaces: "global" },
  }),
  stmtOp({
    name: "fence.proxy.async",
    family: "fence",
    surface: "T.ptx.fence.proxy_async",
    surfaceArgs: '"all"',
    sm: 90,
    ptx: [8, 0],
    source: "PTX ISA, fence.proxy.async",
    archCode: "TX4007",
    lower: template("fence.proxy.async"),
    effect: { unit: "fence", action: "proxy_async", spaces: "all" },
  }),
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
