import { TirxError } from "../../diagnostics.js";
import type { DType } from "../../dtype.js";
import { badDtypes, valueArg } from "../define.js";
import type { OpDef, SimValue } from "../op.js";
import { checkMembers } from "./lanes.js";

/** The operations of redux.sync (PTX ISA, redux.sync). */
export type ReduxKind = "add" | "min" | "max" | "and" | "or" | "xor";

/**
 * The type suffix of redux.sync's `op` on `dt` (PTX ISA, redux.sync: `.add/.min/.max` take
 * `.u32`/`.s32`, `.and/.or/.xor` take `.b32`), or undefined.
 */
function suffix(kind: ReduxKind, dt: DType): string | undefined {
  if (dt !== "int32" && dt !== "uint32") return undefined;
  if (kind === "and" || kind === "or" || kind === "xor") return "b32";
  return dt === "int32" ? "s32" : "u32";
}

/** `a op b` on 32-bit integers of `dt`, as redux.sync computes it (add wraps modulo 2^32). */
export function reduxCombine(kind: ReduxKind, dt: DType): (a: number, b: number) => number {
  const wrap = dt === "int32" ? (x: number) => x | 0 : (x: number) => x >>> 0;
  switch (kind) {
    case "add":
      return (a, b) => wrap(a + b);
    case "min":
      return (a, b) => (a < b ? a : b);
    case "max":
      return (a, b) => (a > b ? a : b);
    case "and":
      return (a, b) => wrap(a & b);
    case "or":
      return (a, b) => wrap(a | b);
    case "xor":
      return (a, b) => wrap(a ^ b);
  }
}

function reduxOp(kind: ReduxKind): OpDef {
  const surface = `T.cuda.__reduce_${kind}_sync`;
  return {
    name: `redux.sync.${kind}`,
    family: "warp",
    surface,
    form: "value",
    operands: [valueArg("mask", ["uint32", "int32"]), valueArg("value")],
    result(dts, span) {
      const dt = dts[1]!;
      if (dt === "float32" && (kind === "min" || kind === "max")) {
        throw new TirxError(
          "TX2005",
          `${surface} on float32 is redux.sync.${kind}.f32, which exists only on sm_100a and later (PTX ISA, redux.sync; PTX 8.6); tirx-ts targets sm_80..sm_90a: reduce float32 with T.cuda.warp_${kind}`,
          span,
        );
      }
      if (!suffix(kind, dt)) throw badDtypes(surface, dts, span);
      return dt;
    },
    signatures: [
      ["uint32", "int32"],
      ["uint32", "uint32"],
    ],
    sm: 80,
    ptx: [7, 0],
    source: "PTX ISA, redux.sync (.u32/.s32/.b32: sm_80, PTX 7.0)",
    lower(c, d, ops, dts) {
      const dt = dts[1]!;
      const v = c.toReg(ops[1]!, dt);
      c.ins(`redux.sync.${kind}.${suffix(kind, dt)!} ${d}, ${v}, ${ops[0]!}`);
    },
    // Every lane of the member mask must execute it (TX6011 otherwise); each gets the reduction
    // over the members' values.
    sim: {
      kind: "warp",
      make(dts) {
        const op = reduxCombine(kind, dts[1]!);
        return (w) => {
          const m = checkMembers(w, (l) => Number(w.arg(0, l)));
          let acc: number | undefined;
          for (const l of w.lanes) {
            if (!((m >>> l) & 1)) continue;
            const v = Number(w.arg(1, l));
            acc = acc === undefined ? v : op(acc, v);
          }
          const r: SimValue = acc ?? 0;
          for (const l of w.lanes) w.set(l, r);
        };
      },
    },
  };
}

/**
 * Warp reductions in one instruction (CUDA `__reduce_add_sync(mask, value)` and min, max, and,
 * or, xor; PTX ISA, redux.sync, sm_80): every lane named in `mask` executes it and gets the
 * reduction of the named lanes' values. int32 (`.s32`; `.b32` for the bit operations) and uint32
 * (`.u32`); add wraps modulo 2^32. The float32 min/max forms (`.f32`, `.abs`, `.NaN`) are
 * sm_100a only and refused (TX2005). Like shfl.sync, redux.sync orders no memory.
 */
export const REDUX_OPS: readonly OpDef[] = (["add", "min", "max", "and", "or", "xor"] as const).map(
  reduxOp,
);
