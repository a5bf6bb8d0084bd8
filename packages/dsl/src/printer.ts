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
  type View,
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
  viewText,
} from "./print-names.js";

/**
 * The IR printer: a PrimFunc as a TypeScript module in `T` builder syntax, which, run (with tsx
 * or any TypeScript loader that resolves `tirx-ts`), rebuilds a PrimFunc structurally equal to
 * the printed one (`structuralEqual`: equal up to variable and buffer renaming and spans).
 *
 * How each node prints, and why the spelling rebuilds it exactly:
 * - accesses go through the flat view `A.flat(dtype?).get([offset])` / `.set` / `.ptr`, since
 *   the IR holds flat element offsets;
 * - operators print as methods (`a.add(b)`, `a.lt(b)`, `c.and(d)`, `x.cast("float32")`) when the
 *   method's folding leaves the node as it is, and as `T.raw.binary` / `T.raw.cast` otherwise;
 *   constants print bare (`5`, `2.5`, `7n`, `true`) where the receiver's dtype is theirs, and as
 *   `T.<dtype>(v)` elsewhere;
 * - loops print as `T.range` / `T.unroll` when the extent has the builder's `hi - lo` form, as
 *   `T.raw.loop(min, extent, annotation)` otherwise;
 * - op-table calls print as `T.call_op(name, ...)` / `T.call_value(name, ...)` (zero-operand
 *   ops as their surface, `bar.sync 0` as `T.cuda.cta_sync()`);
 * - tile operands print as `A.as_strided({ dtype, offset, shape, strides, axes })`; a `TileOp`
 *   prints as its source `tile.apply`, which the verifier plans again.
 */

export { IDENT, jsIdent, num, RESERVED } from "./print-names.js";

/** A 3-D extent without its trailing 1s (`[4, 1, 1]` → `4`), as LaunchConfig takes it. */
export function dim3(d: readonly string[]): string {
  const n = d.length - [...d].reverse().findIndex((x) => x !== "1");
  const kept = d.slice(0, n > d.length ? 1 : Math.max(n, 1));
  return kept.length === 1 ? kept[0]! : `[${kept.join(", ")}]`;
}

export const SPECIAL_FN = {
  tid: "thread_idx",
  ctaid: "block_idx",
  ntid: "block_dim",
  nctaid: "grid_dim",
};

/** Print one kernel as `export const <exportName> = T.function(...)` (no import line). */
function printKernel(fn: PrimFunc, exportName: string): string {
  const { bind, ref, fresh } = new PrintNames(["T"], jsIdent);
  const bare = (x: Expr, like: string | undefined): string | undefined => bareLiteral(x, like, num);
  /** `x` where a literal would take the dtype `like` (a method's operand). */
  const arg = (x: Expr, like: string | undefined): string => bare(x, like) ?? e(x);
  /** `x` as a JS expression whose value is a PrimExpr. */
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
        let kept = false;
        try {
          const r = binary(x.op, x.a, x.b);
          kept = r.kind === "Binary" && r.op === x.op && r.a === x.a && r.b === x.b;
        } catch {
          kept = false;
        }
        return kept
          ? `${e(x.a)}.${x.op}(${arg(x.b, x.a.dtype)})`
          : `T.raw.binary("${x.op}", ${e(x.a)}, ${arg(x.b, x.a.dtype)})`;
      }
      case "Compare":
        return `${e(x.a)}.${x.op}(${arg(x.b, x.a.dtype)})`;
      case "Logical":
        return `${e(x.a)}.${x.op}(${arg(x.b, "bool")})`;
      case "Not":
        return `${e(x.a)}.not()`;
      case "Cast": {
        let kept = false;
        try {
          const r = cast(x.dtype, x.value);
          kept = r.kind === "Cast" && r.value === x.value;
        } catch {
          kept = false;
        }
        return kept
          ? `${e(x.value)}.cast("${x.dtype}")`
          : `T.raw.cast("${x.dtype}", ${e(x.value)})`;
      }
      case "IfThenElse":
        return `T.if_then_else(${arg(x.cond, "bool")}, ${e(x.t)}, ${arg(x.f, x.t.dtype)})`;
      case "BufferLoad":
        return `${flat(x.buffer, x.dtype)}.get([${arg(x.offset, "int32")}])`;
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
    switch (x.kind) {
      case "Seq":
        block(x, ind);
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
        mapsAt = { at: lines.length, ind };
        block(x.body, ind);
        return;
      }
      case "For": {
        const fn = { serial: "T.range", unroll: "T.unroll", vectorized: "T.vectorized" }[
          x.annotation
        ];
        const lo = constInt(x.min);
        const ext = x.extent;
        let head: string;
        if (
          x.min.kind === "IntImm" &&
          x.min.dtype === "int32" &&
          ext.kind === "IntImm" &&
          ext.dtype === "int32" &&
          typeof ext.value === "number"
        ) {
          const hi = lo! + ext.value;
          head = lo === 0 ? `${fn}(${hi})` : `${fn}(${lo}, ${hi})`;
        } else if (
          ext.kind === "Binary" &&
          ext.op === "sub" &&
          exactEqual(ext.b, x.min) &&
          !(ext.a.kind === "IntImm" && x.min.kind === "IntImm") &&
          ext.a.dtype === "int32" &&
          x.min.dtype === "int32"
        ) {
          head =
            lo === 0 && x.min.kind === "IntImm"
              ? `${fn}(${arg(ext.a, "int32")})`
              : `${fn}(${arg(x.min, "int32")}, ${arg(ext.a, "int32")})`;
        } else {
          head = `T.raw.loop(${arg(x.min, "int32")}, ${arg(ext, "int32")}, "${x.annotation}")`;
        }
        out(`for (const ${bind(x.var)} of ${head}) {`);
        then(
          () => block(x.body, ind + "  "),
          () => out("}"),
        );
        return;
      }
      case "While":
        out(`T.while_(() => ${arg(x.cond, "bool")}, () => {`);
        then(
          () => block(x.body, ind + "  "),
          () => out("});"),
        );
        return;
      case "If": {
        out(`T.if_(${arg(x.cond, "bool")}, () => {`);
        const other = x.else;
        const inner = ind + "  ";
        if (other) {
          then(
            () => block(x.then, inner),
            () => out("}, () => {"),
            () => block(other, inner),
            () => out("});"),
          );
        } else
          then(
            () => block(x.then, inner),
            () => out("});"),
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
        out(
          `${flat(x.buffer, x.dtype)}.set([${arg(x.offset, "int32")}], ${arg(x.value, x.dtype)});`,
        );
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
        then([x.source, ind]);
        return;
      case "TileApply":
        out(tileApplyLine(pieces, x));
        return;
    }
  };

  // Parameters first, so that their JS names are their own.
  const keys: string[] = [];
  const decls: string[] = [];
  for (const p of fn.params) {
    const jsName = p.kind === "buffer" ? bind(p.buffer) : bind(p.var);
    const key = IDENT.test(p.name) ? p.name : JSON.stringify(p.name);
    keys.push(jsName === p.name ? jsName : `${key}: ${jsName}`);
    if (p.kind === "scalar") {
      decls.push(`${key}: T.${p.var.dtype}`);
      continue;
    }
    const dims = p.buffer.shape.map((d) => {
      if (typeof d === "number") return String(d);
      const owner = fn.params.find((q) => q.kind === "scalar" && q.var.id === d.id);
      return JSON.stringify(owner?.name ?? d.name);
    });
    decls.push(`${key}: T.Tensor([${dims.join(", ")}], "${p.buffer.dtype}")`);
  }
  block(fn.body, "  ");
  while (work.length > 0) {
    const w = work.pop()!;
    if (typeof w === "function") w();
    else s(w[0], w[1]);
  }
  if (mapsAt) lines.splice(mapsAt.at, 0, ...maps.decls.map((d) => mapsAt!.ind + d));
  return (
    `export const ${exportName} = T.function(${JSON.stringify(fn.name)}, { ${decls.join(", ")} }, ({ ${keys.join(", ")} }) => {\n` +
    lines.join("\n") +
    (lines.length ? "\n" : "") +
    "});\n"
  );
}

/**
 * `fn` as a complete TypeScript module in `T` builder syntax (unformatted; see
 * {@link printFuncAsync}): `import { T } from "tirx-ts";` and
 * `export const <name> = T.function("<name>", { params }, ({ ... }) => { ... });`. Importing
 * the module rebuilds a PrimFunc `structuralEqual` to `fn` (for IR the builder can make, and
 * after every pass of the PTX pipeline: TileOps print as their source tile.apply).
 * @throws TirxError TX2013 when `fn` nests deeper than MAX_EXPR_DEPTH (checked before printing).
 */
export function printFunc(fn: PrimFunc): string {
  return printModule([fn]);
}

/**
 * Several kernels as one module: one import line, then one export per kernel, named after the
 * kernel (`_1`, `_2`, ... appended to repeated or reserved names).
 * @throws TirxError TX2013 as {@link printFunc}.
 */
export function printModule(fns: readonly PrimFunc[]): string {
  const exports = new Set<string>();
  const parts = ['import { T } from "tirx-ts";\n'];
  for (const fn of fns) {
    checkDepth(fn);
    const base = jsIdent(fn.name);
    let name = base;
    for (let k = 1; exports.has(name); k++) name = `${base}_${k}`;
    exports.add(name);
    parts.push(printKernel(fn, name));
  }
  return parts.join("\n");
}

/**
 * Deepest kernel (levels of statements and expressions, `checkDepth`) the `...Async` printers
 * format with prettier. Prettier walks the syntax tree by recursion, several frames per level: a
 * deeper kernel (up to MAX_EXPR_DEPTH) is returned as the printer made it (valid TypeScript, one
 * statement per line), which is also much faster than prettier on such text.
 */
export const FORMAT_MAX_DEPTH = 256;

/**
 * Format TypeScript text with prettier (the repository's width of 100). Should prettier's
 * recursion overflow the stack all the same, the text comes back unformatted.
 */
export async function format(text: string): Promise<string> {
  const prettier = await import("prettier");
  try {
    return await prettier.format(text, { parser: "typescript", printWidth: 100 });
  } catch (e) {
    if (e instanceof RangeError && /call stack/.test(e.message)) return text;
    throw e;
  }
}

/** {@link printFunc}, formatted with prettier (up to FORMAT_MAX_DEPTH deep). */
export async function printFuncAsync(fn: PrimFunc): Promise<string> {
  return printModuleAsync([fn]);
}

/** {@link printModule}, formatted with prettier (up to FORMAT_MAX_DEPTH deep). */
export async function printModuleAsync(fns: readonly PrimFunc[]): Promise<string> {
  const text = printModule(fns);
  return fns.some((f) => checkDepth(f) > FORMAT_MAX_DEPTH) ? text : format(text);
}
