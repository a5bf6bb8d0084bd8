import {
  dtypeBytes,
  isBigValue,
  numel,
  staticShape,
  stmtExprs,
  walkExpr,
  walkStmt,
  type Buffer,
  type Var,
  type VerifiedFunc,
} from "@tirx-ts/core";
import type { Placed } from "../exec/memory.js";

/**
 * Where every buffer and variable of a kernel lives in the simulator: tensor parameters by index,
 * static shared buffers packed in allocation order with their alignment (as the verifier counts
 * them), dynamic shared buffers all at one base after them, aligned like codegen's dyn_smem (they alias, like
 * `extern __shared__` arrays), local buffers in each thread's own local memory, and a register
 * slot per variable (number-valued and 64-bit separately).
 */
export interface Layout {
  readonly params: ReadonlyMap<number, number>;
  readonly shared: ReadonlyMap<number, Placed>;
  readonly sharedBytes: number;
  readonly local: ReadonlyMap<number, Placed>;
  readonly localStride: number;
  readonly slots: ReadonlyMap<number, { readonly wide: boolean; readonly slot: number }>;
  readonly numSlots: number;
  readonly bigSlots: number;
}

const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a;

/** Lay out the buffers and variables of `vf`. */
export function layoutOf(vf: VerifiedFunc): Layout {
  const params = new Map<number, number>();
  const slots = new Map<number, { wide: boolean; slot: number }>();
  let numSlots = 0;
  let bigSlots = 0;
  const addVar = (v: Var): void => {
    if (slots.has(v.id)) return;
    const wide = isBigValue(v.dtype);
    slots.set(v.id, { wide, slot: wide ? bigSlots++ : numSlots++ });
  };
  vf.fn.params.forEach((p, i) => {
    if (p.kind === "buffer") params.set(p.buffer.id, i);
    else addVar(p.var);
  });
  const shared = new Map<number, Placed>();
  const local = new Map<number, Placed>();
  const dyn: Buffer[] = [];
  let sharedEnd = 0;
  let localEnd = 0;
  const place = (b: Buffer, base: number): Placed => {
    const shape = staticShape(b, "a shared or local allocation", b.span);
    return {
      name: b.name,
      span: b.span,
      base,
      size: numel(shape) * dtypeBytes(b.dtype),
      dtype: b.dtype,
      shape,
    };
  };
  walkStmt(vf.entry.body, (s) => {
    if (s.kind === "Alloc") {
      const b = s.buffer;
      if (b.scope === "shared" && !shared.has(b.id)) {
        const p = place(b, alignUp(sharedEnd, b.align));
        shared.set(b.id, p);
        sharedEnd = p.base + p.size;
      } else if (b.scope === "shared.dyn") {
        dyn.push(b);
      } else if (b.scope === "local" && !local.has(b.id)) {
        const p = place(b, alignUp(localEnd, Math.max(b.align, 1)));
        local.set(b.id, p);
        localEnd = p.base + p.size;
      }
    }
    if (s.kind === "For") addVar(s.var);
    if (s.kind === "Let") addVar(s.var);
    for (const e of stmtExprs(s)) walkExpr(e, (x) => x.kind === "Var" && addVar(x));
  });
  // shared.dyn buffers are packed in program order, each aligned to its buffer's alignment, as
  // codegen's storage plan lays them out in the module's dynamic shared array.
  const dynBase = alignUp(sharedEnd, Math.max(16, ...dyn.map((b) => b.align)));
  const dynBytes = vf.launch.dynamicSharedBytes;
  let dynEnd = 0;
  for (const b of dyn) {
    const off = alignUp(dynEnd, b.align);
    const p = place(b, dynBase + off);
    shared.set(b.id, { ...p, size: Math.max(0, Math.min(p.size, dynBytes - off)) });
    dynEnd = off + p.size;
  }
  return {
    params,
    shared,
    sharedBytes: dyn.length > 0 ? dynBase + Math.max(dynBytes, dynEnd) : sharedEnd,
    local,
    localStride: alignUp(localEnd, 16),
    slots,
    numSlots,
    bigSlots,
  };
}
