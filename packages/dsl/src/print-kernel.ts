// The printer core: the walk both printers share (builder syntax, printer.ts; script syntax,
// script/print.ts). It owns the structure (statements from an explicit stack, expressions
// bottom-up), names, indentation, parameters, allocations, op calls and tile instructions; a
// `KernelSyntax` table says how each form the two syntaxes write differently is spelled.
import {
  binary,
  cast,
  checkDepth,
  deepSafe,
  constInt,
  exactEqual,
  type Buffer,
  type Expr,
  type PrimFunc,
  type Stmt,
  type Var,
} from "@tirx-ts/core";
import {
  TensorMapNames,
  type PieceSpellings,
  allocLine,
  bareLiteral,
  callLine,
  flatText,
  IDENT,
  jsIdent,
  num,
  opArgsText,
  PrintNames,
  tileApplyLine,
  tileOpComment,
} from "./print-names.js";

/** The IR node of kind `K`, expression or statement. */
type Node<K extends (Expr | Stmt)["kind"]> = Extract<Expr | Stmt, { kind: K }>;

/** The spellings a syntax reads while one kernel prints: its names and sub-expressions. */
export interface KernelPieces extends PieceSpellings {
  /** Give a variable or buffer its fresh JS name (at its definition). */
  readonly bind: (x: Var | Buffer) => string;
  /** `A.flat()` / `A.flat("uint32")`, the flat view an offset of dtype `dtype` indexes. */
  readonly flat: (b: Buffer, dtype: string) => string;
}

/**
 * The bounds of a loop whose extent has the form the builder makes (`hi - lo`, or constants):
 * `lo` and `hi` as JS text, `zero` when `lo` is the constant 0.
 */
export interface LoopRange {
  readonly lo: string;
  readonly hi: string;
  readonly zero: boolean;
}

/**
 * How one syntax spells the forms the builder and script syntaxes write differently; every form
 * rebuilds exactly the node it prints (`structuralEqual`). Binary and Cast are asked only for
 * nodes the builder's folding leaves as they are; the core prints the rest as `T.raw.binary` /
 * `T.raw.cast`.
 */
export interface KernelSyntax {
  /** Names the module itself uses (no variable or buffer takes them). */
  readonly reserved: readonly string[];
  /** One level of statement indentation; the kernel body is one level in. */
  readonly indent: string;
  /** A bare literal (`5`, `-1`, `true`, `7n`) as an operand. */
  readonly literal: (text: string) => string;
  /** The kernel's opening text up to its body's `{`; `names`: the parameters' JS names. */
  readonly open: (p: KernelPieces, fn: PrimFunc, exportName: string, names: string[]) => string;
  readonly expr: {
    readonly [
      K in "Binary" | "Compare" | "Logical" | "Not" | "Cast" | "IfThenElse" | "BufferLoad"
    ]: (p: KernelPieces, x: Node<K>) => string;
  };
  /** `For` binds its variable (p.bind) and gets `range` when the extent has the builder's form. */
  readonly stmt: {
    readonly Store: (p: KernelPieces, x: Node<"Store">) => string;
    readonly For: (p: KernelPieces, x: Node<"For">, range: LoopRange | undefined) => string;
    readonly While: (p: KernelPieces, x: Node<"While">) => string;
    readonly If: (p: KernelPieces, x: Node<"If">) => string;
  };
  /** The lines that close a `for`, a `while` and an `if`, and the one between then and else. */
  readonly close: {
    readonly For: string;
    readonly While: string;
    readonly If: string;
    readonly Else: string;
  };
}

/** The builder function of each loop annotation. */
export const LOOP_FN = { serial: "T.range", unroll: "T.unroll", vectorized: "T.vectorized" };

/** `T.raw.loop(min, extent, annotation)`: a loop whose extent has no builder form. */
export function rawLoop(p: KernelPieces, x: Node<"For">): string {
  return `T.raw.loop(${p.arg(x.min, "int32")}, ${p.arg(x.extent, "int32")}, "${x.annotation}")`;
}

/** The builder function of each special register (`tid` → `T.cuda.thread_idx`). */
const SPECIAL_FN = {
  tid: "thread_idx",
  ctaid: "block_idx",
  ntid: "block_dim",
  nctaid: "grid_dim",
};

/** A 3-D extent without its trailing 1s (`[4, 1, 1]` → `4`), as LaunchConfig takes it. */
function dim3(d: readonly string[]): string {
  const n = d.length - [...d].reverse().findIndex((x) => x !== "1");
  const kept = d.slice(0, n > d.length ? 1 : Math.max(n, 1));
  return kept.length === 1 ? kept[0]! : `[${kept.join(", ")}]`;
}

/** True when `make()` rebuilds a node that `same` accepts (the builder's folding keeps it). */
function keeps(make: () => Expr, same: (r: Expr) => boolean): boolean {
  try {
    return same(make());
  } catch {
    return false;
  }
}

/** `[lo, hi)` of a loop whose extent is a constant or `hi - lo` (int32), else undefined. */
function loopRange(p: KernelPieces, x: Node<"For">): LoopRange | undefined {
  const lo = constInt(x.min);
  const ext = x.extent;
  const zero = lo === 0 && x.min.kind === "IntImm";
  if (
    x.min.kind === "IntImm" &&
    x.min.dtype === "int32" &&
    ext.kind === "IntImm" &&
    ext.dtype === "int32" &&
    typeof ext.value === "number"
  ) {
    return { lo: String(lo), hi: String(lo! + ext.value), zero };
  }
  if (
    ext.kind === "Binary" &&
    ext.op === "sub" &&
    exactEqual(ext.b, x.min) &&
    !(ext.a.kind === "IntImm" && x.min.kind === "IntImm") &&
    ext.a.dtype === "int32" &&
    x.min.dtype === "int32"
  ) {
    return { lo: p.arg(x.min, "int32"), hi: p.arg(ext.a, "int32"), zero };
  }
  return undefined;
}

/** One kernel as `export const <exportName> = ...;` in syntax `syn` (no import line). */
function printKernel(fn: PrimFunc, exportName: string, syn: KernelSyntax): string {
  const { bind, ref, fresh } = new PrintNames(syn.reserved, jsIdent);
  const bare = (x: Expr, like: string | undefined): string | undefined => bareLiteral(x, like, num);
  /** `x` where a literal would take the dtype `like` (an operator's or method's operand). */
  const arg = (x: Expr, like: string | undefined): string => {
    const b = bare(x, like);
    return b === undefined ? e(x) : syn.literal(b);
  };
  const ex = syn.expr;
  // Deep expressions are printed bottom-up (deepSafe): no recursion per level.
  const e = deepSafe((x: Expr): string => {
    switch (x.kind) {
      case "IntImm":
      case "FloatImm":
        return `T.${x.dtype}(${bare(x, x.dtype)!})`;
      case "Var":
        return ref(x);
      case "Special":
        return `T.raw.special(${JSON.stringify(x.name)})`;
      case "Binary":
        return keeps(
          () => binary(x.op, x.a, x.b),
          (r) => r.kind === "Binary" && r.op === x.op && r.a === x.a && r.b === x.b,
        )
          ? ex.Binary(p, x)
          : `T.raw.binary("${x.op}", ${e(x.a)}, ${arg(x.b, x.a.dtype)})`;
      case "Cast":
        return keeps(
          () => cast(x.dtype, x.value),
          (r) => r.kind === "Cast" && r.value === x.value,
        )
          ? ex.Cast(p, x)
          : `T.raw.cast("${x.dtype}", ${e(x.value)})`;
      case "Compare":
        return ex.Compare(p, x);
      case "Logical":
        return ex.Logical(p, x);
      case "Not":
        return ex.Not(p, x);
      case "IfThenElse":
        return ex.IfThenElse(p, x);
      case "BufferLoad":
        return ex.BufferLoad(p, x);
      case "BufferPtr":
        return `${p.flat(x.buffer, x.buffer.dtype)}.ptr([${arg(x.offset, "int32")}])`;
      case "CallExpr":
        return `T.call_value(${JSON.stringify(x.op)}${opArgsText(p, x.op, x.args)})`;
    }
  });
  const maps: TensorMapNames = new TensorMapNames(fresh, (): PieceSpellings => p);
  const p: KernelPieces = {
    ref,
    bind,
    mapRef: maps.ref,
    e: (x: Expr): string => e(x),
    arg: (x: Expr, like?: string) => arg(x, like),
    flat: (b: Buffer, dtype: string): string => flatText(p, b, dtype),
  };

  const lines: string[] = [];
  let mapsAt: { at: number; ind: string } | undefined;
  // Statements print from an explicit stack of work (a statement and its indent, or a line to
  // print once the statements scheduled before it are printed), so nesting costs no JS stack.
  type Work = readonly [Stmt, string] | (() => void);
  const work: Work[] = [];
  const then = (...items: Work[]): void => {
    for (let i = items.length - 1; i >= 0; i--) work.push(items[i]!);
  };
  const block = (x: Stmt, ind: string): void => {
    if (x.kind === "Seq") then(...x.stmts.map((c) => [c, ind] as const));
    else then([x, ind]);
  };
  const s = (x: Stmt, ind: string): void => {
    const out = (l: string): void => {
      lines.push(ind + l);
    };
    const inner = ind + syn.indent;
    /** The statement's head line, its body one level in, then its closing line. */
    const nest = (head: string, body: Stmt, close: string): void => {
      out(head);
      then(
        () => block(body, inner),
        () => out(close),
      );
    };
    switch (x.kind) {
      case "Seq":
        block(x, ind);
        return;
      case "DeviceEntry": {
        const l = x.launch;
        const grid = l.grid.map((g) => (typeof g === "number" ? String(g) : e(g)));
        const dyn =
          (l.dynamicSharedBytes ? `, dynamic_shared_bytes: ${l.dynamicSharedBytes}` : "") +
          (l.cluster ? `, cluster: [${l.cluster.join(", ")}]` : "") +
          (l.minCtasPerSm !== undefined ? `, min_ctas_per_sm: ${l.minCtasPerSm}` : "");
        out(
          `T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ${dim3(grid)}, block: ${dim3(l.block.map(String))}${dyn} }) });`,
        );
        mapsAt = { at: lines.length, ind };
        block(x.body, ind);
        return;
      }
      case "For":
        nest(syn.stmt.For(p, x, loopRange(p, x)), x.body, syn.close.For);
        return;
      case "While":
        nest(syn.stmt.While(p, x), x.body, syn.close.While);
        return;
      case "If": {
        const other = x.else;
        if (!other) {
          nest(syn.stmt.If(p, x), x.then, syn.close.If);
          return;
        }
        out(syn.stmt.If(p, x));
        then(
          () => block(x.then, inner),
          () => out(syn.close.Else),
          () => block(other, inner),
          () => out(syn.close.If),
        );
        return;
      }
      case "Let": {
        const v = x.value;
        if (v.kind === "Special" && x.var.dtype === "int32") {
          const [k, axis] = v.name.split(".") as [keyof typeof SPECIAL_FN, string];
          out(`const ${bind(x.var)} = T.cuda.${SPECIAL_FN[k]}("${axis}");`);
          return;
        }
        const value = e(v);
        const label = IDENT.test(x.var.name) ? x.var.name : jsIdent(x.var.name);
        out(`const ${bind(x.var)} = T.let_(${JSON.stringify(label)}, ${value});`);
        return;
      }
      case "Store":
        out(syn.stmt.Store(p, x));
        return;
      case "Alloc":
        out(allocLine(p, x.buffer, bind(x.buffer)));
        return;
      case "Call":
        out(callLine(p, x));
        return;
      case "TileOp":
        // The plan is the verifier's, made again from the tile.apply when the module is loaded.
        out(tileOpComment(x));
        then([x.source, ind]);
        return;
      case "TileApply":
        out(tileApplyLine(p, x));
        return;
    }
  };

  // Every parameter is bound first, so that their JS names are their own (and a symbolic dim
  // can name a scalar declared after its tensor).
  const head = syn.open(
    p,
    fn,
    exportName,
    fn.params.map((q) => (q.kind === "buffer" ? bind(q.buffer) : bind(q.var))),
  );
  block(fn.body, syn.indent);
  while (work.length > 0) {
    const w = work.pop()!;
    if (typeof w === "function") w();
    else s(w[0], w[1]);
  }
  if (mapsAt) lines.splice(mapsAt.at, 0, ...maps.decls.map((d) => mapsAt!.ind + d));
  return `${head}\n${lines.join("\n")}${lines.length ? "\n" : ""}});\n`;
}

/**
 * Each kernel of `fns` printed in syntax `syn`, exported under its name as a JS identifier
 * (`_1`, `_2`, ... appended to a repeated one), in order.
 * @throws TirxError TX2013 when a kernel nests deeper than MAX_EXPR_DEPTH (checked before it prints).
 */
export function printKernels(fns: readonly PrimFunc[], syn: KernelSyntax): string[] {
  const exports = new Set<string>();
  return fns.map((fn) => {
    checkDepth(fn);
    const base = jsIdent(fn.name);
    let name = base;
    for (let k = 1; exports.has(name); k++) name = `${base}_${k}`;
    exports.add(name);
    return printKernel(fn, name, syn);
  });
}
