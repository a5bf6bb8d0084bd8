import type { DType } from "../../dtype.js";
import { badDtypes, staticArg, valueArg } from "../define.js";
import type { LowerCtx, OpDef, SimValue } from "../op.js";
import { opType } from "../ptx-type.js";
import { combine, type ReduceKind } from "./reduce.js";
import { checkWidth, emitShfl } from "./shfl.js";
import { checkMembers, shflC } from "./lanes.js";

/** Dtypes of the warp scans and the key–value reductions. */
export const SCAN_DTYPES: readonly DType[] = [
  "float32",
  "float64",
  "int32",
  "uint32",
  "int64",
  "uint64",
];

/**
 * The identity of `kind` on `dt` (an exclusive scan's first lane): +0 for sums, −∞ / +∞ for float
 * max / min, the dtype's minimum / maximum for integer max / min.
 */
export function scanIdentity(kind: ReduceKind, dt: DType): SimValue {
  const float = dt === "float32" || dt === "float64";
  if (kind === "sum") return dt === "int64" || dt === "uint64" ? 0n : 0;
  if (float) return kind === "max" ? -Infinity : Infinity;
  const bits = dt.endsWith("64") ? 64n : 32n;
  const signed = dt.startsWith("int");
  const lo = signed ? -(1n << (bits - 1n)) : 0n;
  const hi = signed ? (1n << (bits - 1n)) - 1n : (1n << bits) - 1n;
  const v = kind === "max" ? lo : hi;
  return bits === 64n ? v : Number(v);
}

/** The PTX immediate of scanIdentity. */
function identityText(kind: ReduceKind, dt: DType): string {
  if (dt === "float32") {
    return kind === "sum" ? "0f00000000" : kind === "max" ? "0fFF800000" : "0f7F800000";
  }
  if (dt === "float64") {
    return kind === "sum"
      ? "0d0000000000000000"
      : kind === "max"
        ? "0dFFF0000000000000"
        : "0d7FF0000000000000";
  }
  return String(scanIdentity(kind, dt));
}

/** `%laneid & (width - 1)`: the lane's index in its group of `width`. */
function laneInGroup(c: LowerCtx, width: number): string {
  const lane = c.tmp("uint32");
  const lig = c.tmp("uint32");
  c.ins(`mov.u32 ${lane}, %laneid`);
  c.ins(`and.b32 ${lig}, ${lane}, ${width - 1}`);
  return lig;
}

function scanOp(kind: ReduceKind): OpDef {
  const surface = `T.cuda.warp_scan`;
  const ins = kind === "sum" ? "add" : kind;
  return {
    name: `warp_scan_${kind}`,
    family: "warp",
    surface,
    form: "value",
    operands: [valueArg("value"), staticArg("width", 2, 32), staticArg("exclusive", 0, 1)],
    result(dts, span) {
      const dt = dts[0]!;
      if (!SCAN_DTYPES.includes(dt)) throw badDtypes(`${surface}(…, "${kind}")`, dts, span);
      return dt;
    },
    signatures: SCAN_DTYPES.map((dt) => [dt, "int32", "int32"]),
    sm: 30,
    ptx: [6, 0],
    source:
      "Hillis–Steele scan: log2(width) steps of __shfl_up_sync(0xFFFFFFFF, v, d, width), d = 1 .. width/2 (PTX ISA, shfl.sync .up)",
    check(args, span) {
      checkWidth(surface, args[1]!, 2, span);
    },
    // Step d: t = shfl.up(v, d) within the group; lanes at least d into the group take
    // v = t op v, the others keep v. Exclusive: the inclusive result shifted up by one lane, the
    // group's first lane the identity.
    lower(c, d, ops, dts) {
      const dt = dts[0]!;
      const width = Number(ops[1]);
      const exclusive = Number(ops[2]) === 1;
      const t = opType(dt);
      const lig = laneInGroup(c, width);
      const cc = shflC("up", width);
      let v = c.toReg(ops[0]!, dt);
      for (let s = 1; s < width; s <<= 1) {
        const up = c.tmp(dt);
        const sum = c.tmp(dt);
        const p = c.tmp("bool");
        emitShfl(c, "up", up, v, dt, String(s), cc, "0xffffffff");
        // `.rn` on float sums: the rounding is then fixed (no contraction into an fma).
        const rn = kind === "sum" && (dt === "float32" || dt === "float64") ? ".rn" : "";
        c.ins(`${ins}${rn}.${t} ${sum}, ${up}, ${v}`);
        c.ins(`setp.ge.u32 ${p}, ${lig}, ${s}`);
        const nv = !exclusive && s << 1 >= width ? d : c.tmp(dt);
        c.ins(`selp.${t} ${nv}, ${sum}, ${v}, ${p}`);
        v = nv;
      }
      if (exclusive) {
        const up = c.tmp(dt);
        const p = c.tmp("bool");
        emitShfl(c, "up", up, v, dt, "1", cc, "0xffffffff");
        c.ins(`setp.eq.u32 ${p}, ${lig}, 0`);
        c.ins(`selp.${t} ${d}, ${identityText(kind, dt)}, ${up}, ${p}`);
      }
    },
    sim: {
      kind: "warp",
      make(dts) {
        const dt = dts[0]!;
        const op = combine(kind, dt);
        const id = scanIdentity(kind, dt);
        return (w) => {
          checkMembers(w, () => 0xffffffff);
          const l0 = w.lanes[0]!;
          const width = Number(w.arg(1, l0));
          const exclusive = Number(w.arg(2, l0)) === 1;
          const v: SimValue[] = [];
          for (const l of w.lanes) v[l] = w.arg(0, l);
          for (let s = 1; s < width; s <<= 1) {
            const prev = [...v];
            for (const l of w.lanes) if ((l & (width - 1)) >= s) v[l] = op(prev[l - s]!, prev[l]!);
          }
          for (const l of w.lanes) {
            w.set(l, !exclusive ? v[l]! : (l & (width - 1)) === 0 ? id : v[l - 1]!);
          }
        };
      },
    },
  };
}

/**
 * The order of argmax / argmin: is (ov, oi) better than (v, i)? NaN is worse than every number
 * (ignored, as max/min ignore it), equal values (−0 == +0) and two NaNs tie, ties go to the lower
 * index. A total preorder, so any combining order picks the same (value, index).
 */
export function argBetter(
  kind: "max" | "min",
): (ov: SimValue, oi: number, v: SimValue, i: number) => boolean {
  return (ov, oi, v, i) => {
    const vn = typeof v === "number" && v !== v;
    const on = typeof ov === "number" && ov !== ov;
    if (vn || on) return vn && (!on || oi < i);
    if (ov === v || (typeof ov === "number" && ov === Number(v))) return oi < i;
    return kind === "max" ? ov > v : ov < v;
  };
}

function argOp(kind: "max" | "min"): OpDef {
  const surface = `T.cuda.warp_arg${kind}`;
  return {
    name: `warp_arg${kind}`,
    family: "warp",
    surface,
    form: "value",
    operands: [valueArg("value"), valueArg("index", ["int32"]), staticArg("width", 2, 32)],
    result(dts, span) {
      if (!SCAN_DTYPES.includes(dts[0]!) || dts[1] !== "int32") throw badDtypes(surface, dts, span);
      return "int32";
    },
    signatures: SCAN_DTYPES.map((dt) => [dt, "int32", "int32"]),
    sm: 30,
    ptx: [6, 0],
    source:
      "key–value butterfly: log2(width) steps of __shfl_xor_sync on the value and the index, m = width/2 .. 1 (PTX ISA, shfl.sync .bfly; setp, selp)",
    check(args, span) {
      checkWidth(surface, args[2]!, 2, span);
    },
    lower(c, d, ops, dts) {
      const dt = dts[0]!;
      const width = Number(ops[2]);
      const t = opType(dt);
      const float = dt === "float32" || dt === "float64";
      const cc = shflC("bfly", 32);
      let v = c.toReg(ops[0]!, dt);
      let i = c.toReg(ops[1]!, "int32");
      for (let m = width >> 1; m >= 1; m >>= 1) {
        const [ov, oi] = [c.tmp(dt), c.tmp("int32")];
        emitShfl(c, "bfly", ov, v, dt, String(m), cc, "0xffffffff");
        emitShfl(c, "bfly", oi, i, "int32", String(m), cc, "0xffffffff");
        const [gt, eq, lt, take] = [c.tmp("bool"), c.tmp("bool"), c.tmp("bool"), c.tmp("bool")];
        c.ins(`setp.${kind === "max" ? "gt" : "lt"}.${t} ${gt}, ${ov}, ${v}`);
        c.ins(`setp.eq.${t} ${eq}, ${ov}, ${v}`);
        c.ins(`setp.lt.s32 ${lt}, ${oi}, ${i}`);
        if (float) {
          // Two NaNs tie; a NaN own value loses to any number.
          const [vn, on, both, lose] = [c.tmp("bool"), c.tmp("bool"), c.tmp("bool"), c.tmp("bool")];
          c.ins(`setp.nan.${t} ${vn}, ${v}, ${v}`);
          c.ins(`setp.nan.${t} ${on}, ${ov}, ${ov}`);
          c.ins(`and.pred ${both}, ${vn}, ${on}`);
          c.ins(`or.pred ${eq}, ${eq}, ${both}`);
          c.ins(`not.pred ${on}, ${on}`);
          c.ins(`and.pred ${lose}, ${vn}, ${on}`);
          c.ins(`or.pred ${gt}, ${gt}, ${lose}`);
        }
        c.ins(`and.pred ${eq}, ${eq}, ${lt}`);
        c.ins(`or.pred ${take}, ${gt}, ${eq}`);
        const [nv, ni] = [c.tmp(dt), m === 1 ? d : c.tmp("int32")];
        c.ins(`selp.${t} ${nv}, ${ov}, ${v}, ${take}`);
        c.ins(`selp.s32 ${ni}, ${oi}, ${i}, ${take}`);
        v = nv;
        i = ni;
      }
    },
    sim: {
      kind: "warp",
      make() {
        const better = argBetter(kind);
        return (w) => {
          checkMembers(w, () => 0xffffffff);
          const width = Number(w.arg(2, w.lanes[0]!));
          for (const l of w.lanes) {
            const base = l & ~(width - 1);
            let bv = w.arg(0, base);
            let bi = Number(w.arg(1, base));
            for (let k = base + 1; k < base + width; k++) {
              const ov = w.arg(0, k);
              const oi = Number(w.arg(1, k));
              if (better(ov, oi, bv, bi)) [bv, bi] = [ov, oi];
            }
            w.set(l, bi);
          }
        };
      },
    },
  };
}

/**
 * Warp scans `warp_scan_{sum,max,min}` (inclusive or exclusive prefix over each group of `width`
 * adjacent lanes; Hillis–Steele with shfl.sync.up: step d = 1, 2, …, width/2 makes lane l's value
 * v[l−d] ⊕ v[l] when l is at least d into its group, each step rounded as the dtype's add/min/max
 * instruction rounds, so the simulator's float sums match the GPU bit for bit) and key–value
 * reductions `warp_argmax` / `warp_argmin` (the int32 index of the best value in the group; NaN
 * values never win unless all are NaN, equal values tie, ties go to the lowest index). Every lane
 * of the warp executes them (full member mask; TX6011 in the simulator otherwise).
 */
export const SCAN_OPS: readonly OpDef[] = [
  scanOp("sum"),
  scanOp("max"),
  scanOp("min"),
  argOp("max"),
  argOp("min"),
];
