import { badDtypes, valueArg } from "../define.js";
import type { OpDef } from "../op.js";
import { checkMembers, executingMask } from "./lanes.js";

const mask = valueArg("mask", ["uint32", "int32"]);

function voteOp(mode: "all" | "any" | "ballot"): OpDef {
  const surface = `T.cuda.__${mode}_sync`;
  const ballot = mode === "ballot";
  return {
    name: `vote.sync.${mode}`,
    family: "warp",
    surface,
    form: "value",
    operands: [mask, valueArg("predicate", ["bool"])],
    result(dts, span) {
      if (dts[1] !== "bool") throw badDtypes(surface, dts, span);
      return ballot ? "uint32" : "bool";
    },
    signatures: [["uint32", "bool"]],
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, vote.sync",
    lower(c, d, ops) {
      const p = c.toReg(ops[1]!, "bool");
      c.ins(`vote.sync.${mode}.${ballot ? "b32" : "pred"} ${d}, ${p}, ${ops[0]!}`);
    },
    // The vote covers the lanes of the member mask (all of which must execute it).
    sim: {
      kind: "warp",
      make: () => (w) => {
        const m = checkMembers(w, (l) => Number(w.arg(0, l)));
        let bits = 0;
        let count = 0;
        let members = 0;
        for (const l of w.lanes) {
          if (!((m >>> l) & 1)) continue;
          members++;
          if (Number(w.arg(1, l)) !== 0) {
            bits |= 1 << l;
            count++;
          }
        }
        const r = ballot ? bits >>> 0 : mode === "all" ? +(count === members) : +(count > 0);
        for (const l of w.lanes) w.set(l, r);
      },
    },
  };
}

/**
 * Warp votes (`__all_sync`, `__any_sync`, `__ballot_sync`; PTX ISA, vote.sync), the active
 * mask (`__activemask`; PTX ISA, activemask: PTX 6.2) and the warp barrier (`__syncwarp`; PTX
 * ISA, bar.warp.sync).
 */
export const VOTE_OPS: readonly OpDef[] = [
  voteOp("all"),
  voteOp("any"),
  voteOp("ballot"),
  {
    name: "activemask",
    family: "warp",
    surface: "T.cuda.__activemask",
    form: "value",
    operands: [],
    result: () => "uint32",
    signatures: [[]],
    sm: 30,
    ptx: [6, 2],
    source: "PTX ISA, activemask",
    lower(c, d) {
      c.ins(`activemask.b32 ${d}`);
    },
    // The lanes executing together: in the simulator's lockstep model, every lane that reaches
    // the statement (the GPU may report fewer when the warp has not reconverged).
    sim: {
      kind: "warp",
      make: () => (w) => {
        const m = executingMask(w);
        for (const l of w.lanes) w.set(l, m);
      },
    },
  },
  {
    name: "bar.warp.sync",
    family: "warp",
    surface: "T.cuda.__syncwarp",
    form: "stmt",
    operands: [mask],
    result: () => undefined,
    signatures: [["uint32"]],
    sm: 30,
    ptx: [6, 0],
    source: "PTX ISA, bar.warp.sync",
    lower(c, _d, ops) {
      c.ins(`bar.warp.sync ${ops[0]!}`);
    },
    sim: {
      kind: "warp",
      make: () => (w) => {
        checkMembers(w, (l) => Number(w.arg(0, l)));
      },
      ordersMemory: true,
    },
    effects: true,
  },
];
