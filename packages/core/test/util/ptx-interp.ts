// A tiny interpreter of the scalar PTX that op lowerings emit (integer, predicate and .rn float
// instructions, labels and branches), to check a lowering's arithmetic on the CPU. Registers hold
// raw bits as bigints; float instructions decode, compute with JS (float64, correctly rounded for
// one operation) and round to float32 with Math.fround where the type is .f32.
import type { DType, LowerCtx } from "@tirx-ts/core";

const view = new DataView(new ArrayBuffer(8));
const f32bits = (x: number): bigint => (view.setFloat32(0, x), BigInt(view.getUint32(0)));
const f64bits = (x: number): bigint => (view.setFloat64(0, x), view.getBigUint64(0));
const bitsF32 = (b: bigint): number => (
  view.setUint32(0, Number(b & 0xffffffffn)),
  view.getFloat32(0)
);
const bitsF64 = (b: bigint): number => (
  view.setBigUint64(0, b & (2n ** 64n - 1n)),
  view.getFloat64(0)
);

/** A lowering's instructions, recorded through a LowerCtx. */
export class Recorder implements LowerCtx {
  lines: string[] = [];
  #n = 0;
  ins(line: string): void {
    this.lines.push(line);
  }
  tmp(dt: DType): string {
    return `%${dt}_${this.#n++}`;
  }
  label(name: string): void {
    this.lines.push(`${name}:`);
  }
  newLabel(hint: string): string {
    return `$L_${hint}${this.#n++}`;
  }
  space(): "global" | "shared" {
    return "global";
  }
  toReg(op: string): string {
    return op;
  }
}

const width = (t: string): number => Number(t.slice(1));

/** Value of a float register or immediate of type `t` (f32/f64) from bits. */
function toFloat(b: bigint, t: string): number {
  return t === "f32" ? bitsF32(b) : bitsF64(b);
}
function fromFloat(x: number, t: string): bigint {
  return t === "f32" ? f32bits(Math.fround(x)) : f64bits(x);
}
const signed = (b: bigint, w: number): bigint => BigInt.asIntN(w, b);
const mask = (b: bigint, w: number): bigint => BigInt.asUintN(w, b);

/** One line of `lines`, split once: a label, or an instruction with its guard and operands. */
interface Decoded {
  readonly label: boolean;
  /** The guard's predicate register and whether it is negated (`@!%p`). */
  readonly guard?: { readonly reg: string; readonly neg: boolean };
  readonly opc: readonly string[];
  readonly args: readonly string[];
  /** The line without its guard, for messages. */
  readonly text: string;
}

/** Each `lines` array decoded once (a lowering's lines run for every input). */
const decodedLines = new WeakMap<readonly string[], Decoded[]>();

function decode(lines: readonly string[]): Decoded[] {
  let out = decodedLines.get(lines);
  if (out) return out;
  out = lines.map((l): Decoded => {
    if (l.endsWith(":")) return { label: true, opc: [], args: [], text: l };
    let line = l;
    let guard: Decoded["guard"];
    if (line.startsWith("@")) {
      const sp = line.indexOf(" ");
      const g = line.slice(1, sp);
      const neg = g.startsWith("!");
      guard = { reg: neg ? g.slice(1) : g, neg };
      line = line.slice(sp + 1);
    }
    const sp = line.indexOf(" ");
    const opc = line.slice(0, sp).split(".");
    const args = line.slice(sp + 1).split(", ");
    return { label: false, ...(guard ? { guard } : {}), opc, args, text: line };
  });
  decodedLines.set(lines, out);
  return out;
}

/**
 * Run `lines` with registers `init` (bits), returning the register file.
 * @param maxSteps guard against a lowering that never terminates.
 */
export function runPtx(
  lines: readonly string[],
  init: Record<string, bigint>,
  maxSteps = 100_000,
): Map<string, bigint> {
  const regs = new Map<string, bigint>(Object.entries(init));
  const labels = new Map<string, number>();
  lines.forEach((l, i) => l.endsWith(":") && labels.set(l.slice(0, -1), i));
  const code = decode(lines);
  const imm = (x: string, t: string): bigint => {
    if (x.startsWith("%")) {
      const v = regs.get(x);
      if (v === undefined) throw new Error(`read of unset ${x}`);
      return v;
    }
    if (x.startsWith("0f")) return BigInt(`0x${x.slice(2)}`);
    if (x.startsWith("0d")) return BigInt(`0x${x.slice(2)}`);
    const v = BigInt(x);
    return t[0] === "f" ? fromFloat(Number(v), t) : mask(v, width(t) || 64);
  };
  let pc = 0;
  for (let steps = 0; pc < lines.length; steps++) {
    if (steps > maxSteps) throw new Error("runaway PTX loop");
    const ins = code[pc++]!;
    if (ins.label) continue;
    if (ins.guard && (regs.get(ins.guard.reg)! === 1n) === ins.guard.neg) continue;
    const { opc, args } = ins;
    const line = ins.text;
    const [d, x, y, z] = args;
    const set = (v: bigint) => regs.set(d!, v);
    const t = opc[opc.length - 1]!;
    const w = width(t);
    const X = () => imm(x!, t);
    const Y = () => imm(y!, t);
    switch (opc[0]) {
      case "bra":
        pc = labels.get(d!)!;
        break;
      case "mov":
        set(X());
        break;
      case "and":
      case "or":
      case "xor": {
        const v = opc[0] === "and" ? X() & Y() : opc[0] === "or" ? X() | Y() : X() ^ Y();
        set(t === "pred" ? v & 1n : mask(v, w));
        break;
      }
      case "not":
        set(1n - X());
        break;
      case "shl": {
        const s = imm(y!, "u32");
        set(s >= BigInt(w) ? 0n : mask(X() << s, w));
        break;
      }
      case "shr": {
        const s = imm(y!, "u32");
        set(s >= BigInt(w) ? 0n : X() >> s);
        break;
      }
      case "clz": {
        const v = X();
        set(BigInt(v === 0n ? w : w - v.toString(2).length));
        break;
      }
      case "add":
      case "sub":
      case "mul":
      case "div":
      case "min": {
        if (t[0] === "f") {
          const a = toFloat(X(), t);
          const b = toFloat(Y(), t);
          const r =
            opc[0] === "add" ? a + b : opc[0] === "sub" ? a - b : opc[0] === "mul" ? a * b : a / b;
          set(fromFloat(r, t));
        } else {
          const s = t[0] === "s";
          const a = s ? signed(X(), w) : X();
          const b = s ? signed(Y(), w) : Y();
          const r =
            opc[0] === "add"
              ? a + b
              : opc[0] === "sub"
                ? a - b
                : opc[0] === "min"
                  ? a < b
                    ? a
                    : b
                  : 0n;
          set(mask(r, w));
        }
        break;
      }
      case "setp": {
        const cmp = opc[1]!;
        const comb = opc.length === 4 ? opc[2] : undefined;
        let a: number | bigint = X();
        let b: number | bigint = Y();
        if (t[0] === "f") {
          a = toFloat(a as bigint, t);
          b = toFloat(b as bigint, t);
        } else if (t[0] === "s") {
          a = signed(a as bigint, w);
          b = signed(b as bigint, w);
        }
        const r = { eq: a === b, ne: a !== b, lt: a < b, le: a <= b, gt: a > b, ge: a >= b }[
          cmp as "eq"
        ];
        let v = r ? 1n : 0n;
        if (comb === "or") v |= regs.get(z!)!;
        if (comb === "and") v &= regs.get(z!)!;
        set(v);
        break;
      }
      case "selp":
        set(regs.get(z!) === 1n ? X() : Y());
        break;
      case "cvt": {
        const [dt, st] = [opc[opc.length - 2]!, t];
        const v = imm(x!, st);
        if (dt[0] === "f" && st[0] === "u") set(fromFloat(Number(v), dt));
        else if (dt[0] === "f" && st[0] === "f") set(fromFloat(toFloat(v, st), dt));
        else set(mask(v, width(dt)));
        break;
      }
      default:
        throw new Error(`interpreter lacks ${line}`);
    }
  }
  return regs;
}

export { bitsF32, bitsF64, f32bits, f64bits };
