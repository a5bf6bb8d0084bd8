import {
  binary,
  cast,
  checkDepth,
  deepSafe,
  constInt,
  exactEqual,
  type BinaryOp,
  type Buffer,
  type Expr,
  type PrimFunc,
  type Stmt,
  type Var,
  type View,
} from "@tirx-ts/core";
import {
  TensorMapNames,
  type PieceSpellings,
  allocLine,
  bareLiteral,
  callLine,
  flatText,
  opArgsText,
  PrintNames,
  tileApplyLine,
  tileOpComment,
  viewText,
} from "../print-names.js";
import { dim3, format, FORMAT_MAX_DEPTH, IDENT, jsIdent, num, SPECIAL_FN } from "../printer.js";

/** Binary ops with a TypeScript operator; the rest print as `T.<op>(a, b)`. */
const OPERATOR: Partial<Record<BinaryOp, string>> = {
  add: "+",
  sub: "-",
  mul: "*",
  div: "/",
  mod: "%",
  bitand: "&",
  bitor: "|",
  bitxor: "^",
  shl: "<<",
  shr: ">>",
};
const COMPARE = { eq: "===", ne: "!==", lt: "<", le: "<=", gt: ">", ge: ">=" } as const;

/**
 * Print one kernel as `export const <exportName> = T.prim_func(function <name>(...) {...});`.
 * Each node prints as the script syntax that lowers back to it: operators where the builder's
 * folding leaves the node as it is (`T.raw.binary` / `T.raw.cast` otherwise), accesses through
 * the flat view `A.flat()[offset]` (the IR holds flat offsets), constants bare where they take
 * the other operand's dtype and `T.<dtype>(v)` elsewhere, `if`/`while` as statements, and
 * everything else as the `T.*` call the builder printer writes.
 */
function printKernel(fn: PrimFunc, exportName: string, dtypes: Set<string>): string {
  const { bind, ref, fresh } = new PrintNames(["T", "Tensor"], jsIdent);
  const bare = (x: Expr, like: string | undefined): string | undefined => bareLiteral(x, like, num);
  const arg = (x: Expr, like: string | undefined): string => {
    const b = bare(x, like);
    return b === undefined ? e(x) : b.startsWith("-") ? `(${b})` : b;
  };
  const kept = (make: () => Expr, x: Expr, same: (r: Expr) => boolean): boolean => {
    try {
      const r = make();
      return r.kind === x.kind && same(r);
    } catch {
      return false;
    }
  };
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
      case "Binary": {
        const ok = kept(
          () => binary(x.op, x.a, x.b),
          x,
          (r) => r.kind === "Binary" && r.op === x.op && r.a === x.a && r.b === x.b,
        );
        const op = OPERATOR[x.op];
        if (!ok) return `T.raw.binary("${x.op}", ${e(x.a)}, ${arg(x.b, x.a.dtype)})`;
        return op
          ? `(${e(x.a)} ${op} ${arg(x.b, x.a.dtype)})`
          : `T.${x.op}(${e(x.a)}, ${arg(x.b, x.a.dtype)})`;
      }
      case "Compare":
        return `(${e(x.a)} ${COMPARE[x.op]} ${arg(x.b, x.a.dtype)})`;
      case "Logical":
        // prettier rebalances `a && (b && c)` into `a && b && c`: a right operand with the same
        // operator prints as a call so that the tree stays as it is.
        return x.b.kind === "Logical" && x.b.op === x.op
          ? `T.${x.op}(${e(x.a)}, ${e(x.b)})`
          : `(${e(x.a)} ${x.op === "and" ? "&&" : "||"} ${arg(x.b, "bool")})`;
      case "Not":
        return `!${e(x.a)}`;
      case "Cast": {
        const ok = kept(
          () => cast(x.dtype, x.value),
          x,
          (r) => r.kind === "Cast" && r.value === x.value,
        );
        return ok ? `T.${x.dtype}(${e(x.value)})` : `T.raw.cast("${x.dtype}", ${e(x.value)})`;
      }
      case "IfThenElse":
        return `(${e(x.cond)} ? ${e(x.t)} : ${arg(x.f, x.t.dtype)})`;
      case "BufferLoad":
        return `${flat(x.buffer, x.dtype)}[${arg(x.offset, "int32")}]`;
      case "BufferPtr":
        return `${flat(x.buffer, x.buffer.dtype)}.ptr([${arg(x.offset, "int32")}])`;
      case "CallExpr":
        return `T.call_value(${JSON.stringify(x.op)}${opArgs(x.op, x.args)})`;
    }
  });
  const maps: TensorMapNames = new TensorMapNames(fresh, (): PieceSpellings => pieces);
  const pieces: PieceSpellings = {
    ref,
    mapRef: maps.ref,
    e: (x: Expr): string => e(x),
    arg: (x: Expr, like?: string) => arg(x, like),
  };
  const flat = (b: Buffer, dtype: string): string => flatText(pieces, b, dtype);
  const opArgs = (name: string, args: readonly Expr[]): string => opArgsText(pieces, name, args);
  const view = (w: View): string => viewText(pieces, w);

  const lines: string[] = [];
  let mapsAt: number | undefined;
  // Statements print from an explicit stack of work (a statement, or a line to print once the
  // statements scheduled before it are printed), so nesting costs no JS stack.
  const work: (Stmt | (() => void))[] = [];
  const then = (...items: (Stmt | (() => void))[]): void => {
    for (let i = items.length - 1; i >= 0; i--) work.push(items[i]!);
  };
  const block = (x: Stmt): void => {
    if (x.kind === "Seq") then(...x.stmts);
    else then(x);
  };
  const s = (x: Stmt): void => {
    const out = (l: string): void => {
      lines.push(l);
    };
    switch (x.kind) {
      case "Seq":
        block(x);
        return;
      case "DeviceEntry": {
        const l = x.launch;
        const grid = l.grid.map((g) => (typeof g === "number" ? String(g) : e(g)));
        const dyn =
          (l.dynamicSharedBytes ? `, dynamic_shared_bytes: ${l.dynamicSharedBytes}` : "") +
          (l.cluster ? `, cluster: [${l.cluster.join(", ")}]` : "");
        out(
          `T.device_entry({ launch: T.cuda.LaunchConfig({ grid: ${dim3(grid)}, block: ${dim3(l.block.map(String))}${dyn} }) });`,
        );
        mapsAt = lines.length;
        block(x.body);
        return;
      }
      case "For": {
        const fn = { serial: "T.range", unroll: "T.unroll", vectorized: "T.vectorized" }[
          x.annotation
        ];
        const lo = constInt(x.min);
        const ext = x.extent;
        let range: [string, string] | undefined;
        if (
          x.min.kind === "IntImm" &&
          x.min.dtype === "int32" &&
          ext.kind === "IntImm" &&
          ext.dtype === "int32" &&
          typeof ext.value === "number"
        ) {
          range = [String(lo), String(lo! + ext.value)];
        } else if (
          ext.kind === "Binary" &&
          ext.op === "sub" &&
          exactEqual(ext.b, x.min) &&
          !(ext.a.kind === "IntImm" && x.min.kind === "IntImm") &&
          ext.a.dtype === "int32" &&
          x.min.dtype === "int32"
        ) {
          range = [arg(x.min, "int32"), arg(ext.a, "int32")];
        }
        const v = bind(x.var);
        if (range && x.annotation === "serial") {
          out(`for (let ${v} = ${range[0]}; ${v} < ${range[1]}; ${v}++) {`);
        } else if (range) {
          out(`for (const ${v} of ${fn}(${range[0]}, ${range[1]})) {`);
        } else {
          out(
            `for (const ${v} of T.raw.loop(${arg(x.min, "int32")}, ${arg(ext, "int32")}, "${x.annotation}")) {`,
          );
        }
        then(x.body, () => out("}"));
        return;
      }
      case "While":
        out(`while (${arg(x.cond, "bool")}) {`);
        then(x.body, () => out("}"));
        return;
      case "If": {
        out(`if (${e(x.cond)}) {`);
        const other = x.else;
        if (other)
          then(
            x.then,
            () => out("} else {"),
            other,
            () => out("}"),
          );
        else then(x.then, () => out("}"));
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
        out(`${flat(x.buffer, x.dtype)}[${arg(x.offset, "int32")}] = ${arg(x.value, x.dtype)};`);
        return;
      case "Alloc":
        out(allocLine(pieces, x.buffer, bind(x.buffer)));
        return;
      case "Call":
        out(callLine(pieces, x));
        return;
      case "TileOp":
        // The plan is the verifier's, made again from the tile.apply when the module is loaded.
        out(tileOpComment(x));
        then(x.source);
        return;
      case "TileApply":
        out(tileApplyLine(pieces, x));
        return;
    }
  };

  // Bind every parameter first: a symbolic dim names a scalar declared after its tensor.
  const jsNames = fn.params.map((p) => (p.kind === "buffer" ? bind(p.buffer) : bind(p.var)));
  const decls: string[] = [];
  for (const [k, p] of fn.params.entries()) {
    const jsName = jsNames[k]!;
    if (p.kind === "scalar") {
      dtypes.add(p.var.dtype);
      decls.push(`${jsName}: ${p.var.dtype}`);
      continue;
    }
    const dims = p.buffer.shape.map((d) => {
      if (typeof d === "number") return String(d);
      const owner = fn.params.find((q) => q.kind === "scalar" && q.var.id === d.id);
      return JSON.stringify(owner?.kind === "scalar" ? ref(owner.var) : d.name);
    });
    decls.push(`${jsName}: Tensor<[${dims.join(", ")}], "${p.buffer.dtype}">`);
  }
  block(fn.body);
  while (work.length > 0) {
    const w = work.pop()!;
    if (typeof w === "function") w();
    else s(w);
  }
  if (mapsAt !== undefined) lines.splice(mapsAt, 0, ...maps.decls);
  return (
    `export const ${exportName} = T.prim_func(function ${jsIdent(fn.name)}(${decls.join(", ")}) {\n` +
    lines.join("\n") +
    (lines.length ? "\n" : "") +
    "});\n"
  );
}

/**
 * Several kernels as one script-mode module (unformatted): an import of the script `T` and the
 * types used, then `export const <name> = T.prim_func(function <name>(...) { ... });` per kernel.
 * Loading the module (or {@link parseScript} on its text) rebuilds PrimFuncs `structuralEqual`
 * to `fns` (TileOps print as their source tile.apply, which the verifier plans again).
 * @throws TirxError TX2013 when a kernel nests deeper than MAX_EXPR_DEPTH.
 */
export function printScriptModuleText(fns: readonly PrimFunc[]): string {
  const exports = new Set<string>();
  const dtypes = new Set<string>();
  const parts: string[] = [];
  for (const fn of fns) {
    checkDepth(fn);
    const base = jsIdent(fn.name);
    let name = base;
    for (let k = 1; exports.has(name); k++) name = `${base}_${k}`;
    exports.add(name);
    parts.push(printKernel(fn, name, dtypes));
  }
  const types = ["Tensor", ...[...dtypes].sort()].map((t) => `type ${t}`).join(", ");
  return [`import { script as T, ${types} } from "tirx-ts";\n`, ...parts].join("\n");
}

/**
 * `fn` as a script-mode TypeScript module, formatted with prettier (a kernel deeper than
 * FORMAT_MAX_DEPTH comes back unformatted): the printer of script
 * mode (TVMScript's printer), whose output `tirx build` and {@link parseScript} read back.
 * @throws TirxError TX2013 as {@link printScriptModuleText}.
 */
export async function printScript(fn: PrimFunc): Promise<string> {
  return printScriptModule([fn]);
}

/** {@link printScript} for several kernels in one module. */
export async function printScriptModule(fns: readonly PrimFunc[]): Promise<string> {
  const text = printScriptModuleText(fns);
  return fns.some((f) => checkDepth(f) > FORMAT_MAX_DEPTH) ? text : format(text);
}
