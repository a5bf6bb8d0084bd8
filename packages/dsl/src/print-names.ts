// What the builder-syntax printer (printer.ts) and the script-syntax printer (script/print.ts)
// spell alike: identifiers and names, literals, flat views, op operands, views, allocations,
// statement op calls and tile instructions.
import {
  constInt,
  dtypeBytes,
  showTileLayout,
  swizzlePeriodBytes,
  tilePlanRecord,
  type Call,
  type TileApply,
  type TileOp,
  findOp,
  type Buffer,
  type Expr,
  type TileParam,
  type TensorMap,
  type Var,
  type View,
} from "@tirx-ts/core";

/** Words a printed identifier may not be (JS keywords and globals the module uses). */
export const RESERVED = new Set(
  (
    "T break case catch class const continue debugger default delete do else enum export extends " +
    "false finally for function if import in instanceof new null return super switch this throw " +
    "true try typeof var void while with yield let static implements interface package private " +
    "protected public await async of undefined NaN Infinity arguments eval"
  ).split(" "),
);

export const IDENT = /^[A-Za-z_$][\w$]*$/;

export function jsIdent(name: string): string {
  let n = name.replace(/[^\w$]/g, "_");
  if (!/^[A-Za-z_$]/.test(n)) n = `_${n}`;
  return RESERVED.has(n) ? `${n}_` : n;
}

export function num(v: number): string {
  if (Object.is(v, -0)) return "-0";
  if (Number.isNaN(v)) return "NaN";
  if (v === Infinity) return "Infinity";
  if (v === -Infinity) return "-Infinity";
  return String(v);
}

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
  /** The name a tensor map is declared under (printed inline when absent). */
  readonly mapRef?: (m: TensorMap) => string;
  readonly e: (x: Expr) => string;
  readonly arg: (x: Expr, like: string | undefined) => string;
}

/**
 * Tensor maps of a printed kernel, declared once each (`const A_tmap = T.tensormap_encode_tiled(...)`)
 * so that every use refers to the same map, as in the IR. `decls` lists the declarations in
 * first-use order; the printers put them after `T.device_entry`.
 */
export class TensorMapNames {
  readonly #names = new Map<number, string>();
  readonly decls: string[] = [];
  constructor(
    private readonly fresh: (base: string) => string,
    private readonly pieces: () => PieceSpellings,
  ) {}

  ref = (m: TensorMap): string => {
    let n = this.#names.get(m.id);
    if (n === undefined) {
      n = this.fresh(m.name);
      this.#names.set(m.id, n);
      this.decls.push(`const ${n} = ${tensorMapText(this.pieces(), m)};`);
    }
    return n;
  };
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
  if (Array.isArray(param)) return `[${(param as readonly Expr[]).map((e) => p.e(e)).join(", ")}]`;
  const x = param as Exclude<TileParam, readonly Expr[] | number | string | boolean>;
  if (x.kind === "View") return viewText(p, x);
  if (x.kind === "TensorMap") return p.mapRef ? p.mapRef(x) : tensorMapText(p, x);
  return p.e(x);
}

/** `T.tensormap_encode_tiled(A, { box, ... })` of a tensor map (fields at their defaults left out). */
export function tensorMapText(p: PieceSpellings, m: TensorMap): string {
  const opts = [`box: [${m.box.join(", ")}]`];
  if (m.elementStrides.some((e) => e !== 1))
    opts.push(`element_strides: [${m.elementStrides.join(", ")}]`);
  if (m.swizzle !== "none") opts.push(`swizzle: ${JSON.stringify(m.swizzle)}`);
  if (m.l2Promotion !== "none") opts.push(`l2_promotion: ${JSON.stringify(m.l2Promotion)}`);
  if (m.oobFill !== "none") opts.push(`oob_fill: ${JSON.stringify(m.oobFill)}`);
  if (m.name !== `${m.buffer.name}_tmap`) opts.push(`name: ${JSON.stringify(m.name)}`);
  return `T.tensormap_encode_tiled(${p.ref(m.buffer)}, { ${opts.join(", ")} })`;
}

/**
 * `const a = T.alloc_shared([...], "dtype", { name, align?, dynamic? });` of an allocation;
 * a local tile with a TileLayout as `T.alloc_local([...], "dtype", { name, layout: T.TileLayout("S[...]") })`.
 */
export function allocLine(p: PieceSpellings, b: Buffer, jsName: string): string {
  const label = IDENT.test(b.name) ? b.name : jsIdent(b.name);
  const opts = [`name: ${JSON.stringify(label)}`];
  if (b.scope !== "local") {
    const l = b.layout;
    if (l) {
      // Printed in elements of the dtype, which T.alloc_shared turns back into the same bytes.
      const m = l.perElement - Math.log2(dtypeBytes(b.dtype));
      const inner = l.swizzleInner ? "" : ", false";
      opts.push(`layout: T.SwizzleLayout(${m}, ${l.swizzleLen}, ${l.atomLen}${inner})`);
    }
    if (b.align !== 16 && !(l && b.align === swizzlePeriodBytes(l))) opts.push(`align: ${b.align}`);
    if (b.scope === "shared.dyn") opts.push("dynamic: true");
  } else if (b.tileLayout) {
    opts.push(`layout: T.TileLayout(${JSON.stringify(showTileLayout(b.tileLayout))})`);
  }
  const fn = b.scope === "local" ? "T.alloc_local" : "T.alloc_shared";
  const dims = b.shape.map((d) => (typeof d === "number" ? String(d) : p.ref(d))).join(", ");
  return `const ${jsName} = ${fn}([${dims}], "${b.dtype}", { ${opts.join(", ")} });`;
}

/**
 * A statement op call: `bar.sync 0` as `T.cuda.cta_sync();`, an op without operands as its
 * surface, anything else as `T.call_op(name, ...)`.
 */
export function callLine(p: PieceSpellings, x: Call): string {
  const op = findOp(x.op);
  if (x.op === "bar.sync" && x.args.length === 1 && constInt(x.args[0]!) === 0) {
    return "T.cuda.cta_sync();";
  }
  if (op && op.operands.length === 0 && x.args.length === 0) {
    return `${op.surface}(${op.surfaceArgs ?? ""});`;
  }
  return `T.call_op(${JSON.stringify(x.op)}${opArgsText(p, x.op, x.args)});`;
}

/** The comment a `TileOp` prints above its source `tile.apply` (the verifier plans it again). */
export function tileOpComment(x: TileOp): string {
  return `// TileOp: ${x.plan.kind}, ${tilePlanRecord(x.plan).show(x.plan)}`;
}

/** `T.cuda.tile.apply(T.ptx["opcode"], dst, src, { params });`. */
export function tileApplyLine(p: PieceSpellings, x: TileApply): string {
  const ps = Object.entries(x.params).map(
    ([k, v]) => `${JSON.stringify(k)}: ${tileParamText(p, v)}`,
  );
  return `T.cuda.tile.apply(T.ptx[${JSON.stringify(x.opcode)}], ${viewText(p, x.dst)}, ${viewText(p, x.src)}, { ${ps.join(", ")} });`;
}
