import {
  constInt,
  findOp,
  type Buffer,
  type Expr,
  type TileParam,
  type Var,
  type View,
} from "@tirx-ts/core";

/**
 * The JS names of the variables and buffers of one printed kernel, each unique, shared by the
 * builder-syntax and script-syntax printers.
 */
export class PrintNames {
  readonly #names = new Map<object, string>();
  readonly #used: Set<string>;

  readonly #ident: (name: string) => string;

  /** `reserved`: names the module itself uses; `ident`: an IR name as a JS identifier. */
  constructor(reserved: readonly string[], ident: (name: string) => string) {
    this.#used = new Set(reserved);
    this.#ident = ident;
  }

  /** A fresh identifier from `base`. */
  fresh = (base: string): string => {
    const b = this.#ident(base);
    let n = b;
    for (let k = 1; this.#used.has(n); k++) n = `${b}_${k}`;
    this.#used.add(n);
    return n;
  };

  /** Give `x` a fresh name. */
  bind = (x: Var | Buffer): string => {
    const n = this.fresh(x.name);
    this.#names.set(x, n);
    return n;
  };

  /**
   * The name of `x`. A binding met by reference before its definition (not valid IR) gets one, so
   * that the module fails to load where it is used rather than printing something else.
   */
  ref = (x: Var | Buffer): string => this.#names.get(x) ?? this.bind(x);
}

/** A constant as a bare JS literal, valid where the literal takes the dtype `like`. */
export function bareLiteral(
  x: Expr,
  like: string | undefined,
  num: (v: number) => string,
): string | undefined {
  if (like === undefined || x.dtype !== like) return undefined;
  if (x.kind === "IntImm") {
    if (x.dtype === "bool") return x.value === 0 || x.value === 0n ? "false" : "true";
    return typeof x.value === "bigint" ? `${x.value}n` : num(x.value);
  }
  if (x.kind === "FloatImm") return num(x.value);
  return undefined;
}

/** The printers' spellings of shared pieces, over a kernel's names and expression printer. */
export interface PieceSpellings {
  readonly ref: (x: Var | Buffer) => string;
  readonly e: (x: Expr) => string;
  readonly arg: (x: Expr, like: string | undefined) => string;
}

/** `A.flat()` / `A.flat("uint32")`: the 1-D view of a buffer that flat offsets index. */
export function flatText(p: PieceSpellings, b: Buffer, dtype: string): string {
  return `${p.ref(b)}.flat(${dtype === b.dtype ? "" : JSON.stringify(dtype)})`;
}

/** Operands of an op-table call: static operands as JS integers, the rest as expressions. */
export function opArgsText(p: PieceSpellings, name: string, args: readonly Expr[]): string {
  const op = findOp(name);
  return args
    .map((a, i) => {
      const c = constInt(a);
      return op?.operands[i]?.kind === "static" && c !== undefined ? `, ${c}` : `, ${p.e(a)}`;
    })
    .join("");
}

/** A view as `A.as_strided({ ... })`. */
export function viewText(p: PieceSpellings, w: View): string {
  const fields = [
    ...(w.dtype !== w.buffer.dtype ? [`dtype: "${w.dtype}"`] : []),
    `offset: ${p.arg(w.offset, "int32")}`,
    `shape: [${w.shape.join(", ")}]`,
    `strides: [${w.strides.join(", ")}]`,
    ...(w.axes.some((a) => a !== "") ? [`axes: ${JSON.stringify(w.axes)}`] : []),
  ];
  return `${p.ref(w.buffer)}.as_strided({ ${fields.join(", ")} })`;
}

/** A tile parameter: a JSON value, a view or an expression. */
export function tileParamText(p: PieceSpellings, param: TileParam): string {
  if (typeof param !== "object") return JSON.stringify(param);
  return param.kind === "View" ? viewText(p, param) : p.e(param);
}
