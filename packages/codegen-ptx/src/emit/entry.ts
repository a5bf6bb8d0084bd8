import type { TensorMap, VerifiedFunc } from "@tirx-ts/core";
import { declareTensorMap, tensorMapsOf } from "../patterns/tma.js";
import { planStorage, ptxIdent, type StoragePlan } from "../lower/storage.js";
import { memType, paramType } from "../types.js";
import { EmitContext } from "./context.js";
import { StmtEmitter } from "./stmt.js";

/** The pieces of one `.entry`, ready for `render.ts`. */
export interface EntryParts {
  readonly name: string;
  /** `.param .u64 NAME_param_0`, ...; tensor maps last (`.param .align 128 .b8 NAME_param_k[128]`). */
  readonly params: readonly string[];
  /** The tensor maps passed after the declared parameters, in `.param` order. */
  readonly tensorMaps: readonly TensorMap[];
  /** `.reg` lines. */
  readonly registers: readonly string[];
  readonly storage: StoragePlan;
  /** Prologue and body instructions, labels included. */
  readonly lines: readonly string[];
}

/**
 * Emit the entry of `vf`: parameters are read with `ld.param` (tensor pointers then go through
 * `cvta.to.global.u64`; a bool parameter is a byte, turned into a predicate with `setp`), then
 * the device body, then `ret`.
 */
export function emitEntry(vf: VerifiedFunc): EntryParts {
  const name = ptxIdent(vf.fn.name);
  const storage = planStorage(vf.entry.body);
  const ctx = new EmitContext(vf, storage);
  const params: string[] = vf.fn.params.map((p, i) => {
    const pname = `${name}_param_${i}`;
    if (p.kind === "buffer") {
      const raw = ctx.regs.fresh("rd");
      const base = ctx.regs.fresh("rd");
      ctx.pro(`ld.param.u64 ${raw}, [${pname}]`);
      ctx.pro(`cvta.to.global.u64 ${base}, ${raw}`);
      ctx.setParamBase(p.buffer, base);
      return `.param .u64 ${pname}`;
    }
    const dt = p.var.dtype;
    if (dt === "bool") {
      const byte = ctx.regs.fresh("rs");
      const pred = ctx.reg("bool");
      ctx.pro(`ld.param.u8 ${byte}, [${pname}]`);
      ctx.pro(`setp.ne.u16 ${pred}, ${byte}, 0`);
      ctx.env.set(p.var.id, pred);
    } else {
      const r = ctx.reg(dt);
      ctx.pro(`ld.param.${memType(dt)} ${r}, [${pname}]`);
      ctx.env.set(p.var.id, r);
    }
    return `.param .${paramType(dt)} ${pname}`;
  });
  const tensorMaps = tensorMapsOf(vf.entry.body);
  tensorMaps.forEach((m, k) =>
    params.push(declareTensorMap(ctx, m, `${name}_param_${vf.fn.params.length + k}`)),
  );
  new StmtEmitter(ctx).emit(vf.entry.body);
  ctx.ins("ret");
  return {
    name,
    params,
    tensorMaps,
    registers: ctx.regs.declarations(),
    storage,
    lines: [...ctx.prologue, ...ctx.body],
  };
}
