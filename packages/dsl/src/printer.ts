import { checkDepth, type PrimFunc } from "@tirx-ts/core";
import { IDENT } from "./print-names.js";
import { LOOP_FN, printKernels, rawLoop, type KernelSyntax } from "./print-kernel.js";

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

/**
 * Builder syntax's spellings (the printer core, print-kernel.ts, does the rest): methods for
 * operators, `.get` / `.set` on flat views, `T.if_` / `T.while_` with arrow bodies, `for ... of`
 * over `T.range` / `T.unroll` / `T.vectorized` / `T.raw.loop`, and the kernel as
 * `T.function(name, { params }, ({ ... }) => { ... })`.
 */
const BUILDER: KernelSyntax = {
  reserved: ["T"],
  indent: "  ",
  literal: (text) => text,
  open: (_p, fn, exportName, names) => {
    const keys: string[] = [];
    const decls: string[] = [];
    for (const [k, p] of fn.params.entries()) {
      const jsName = names[k]!;
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
    return `export const ${exportName} = T.function(${JSON.stringify(fn.name)}, { ${decls.join(", ")} }, ({ ${keys.join(", ")} }) => {`;
  },
  expr: {
    Binary: (p, x) => `${p.e(x.a)}.${x.op}(${p.arg(x.b, x.a.dtype)})`,
    Compare: (p, x) => `${p.e(x.a)}.${x.op}(${p.arg(x.b, x.a.dtype)})`,
    Logical: (p, x) => `${p.e(x.a)}.${x.op}(${p.arg(x.b, "bool")})`,
    Not: (p, x) => `${p.e(x.a)}.not()`,
    Cast: (p, x) => `${p.e(x.value)}.cast("${x.dtype}")`,
    IfThenElse: (p, x) =>
      // A constant condition prints as T.bool(...): T.if_then_else, T.if_ and T.while_ refuse
      // a JavaScript boolean (the value of `===` on a traced expression).
      `T.if_then_else(${p.e(x.cond)}, ${p.e(x.t)}, ${p.arg(x.f, x.t.dtype)})`,
    BufferLoad: (p, x) => `${p.flat(x.buffer, x.dtype)}.get([${p.arg(x.offset, "int32")}])`,
  },
  stmt: {
    Store: (p, x) =>
      `${p.flat(x.buffer, x.dtype)}.set([${p.arg(x.offset, "int32")}], ${p.arg(x.value, x.dtype)});`,
    For: (p, x, r) => {
      const fn = LOOP_FN[x.annotation];
      const head = r ? (r.zero ? `${fn}(${r.hi})` : `${fn}(${r.lo}, ${r.hi})`) : rawLoop(p, x);
      return `for (const ${p.bind(x.var)} of ${head}) {`;
    },
    While: (p, x) => `T.while_(() => ${p.e(x.cond)}, () => {`,
    If: (p, x) => `T.if_(${p.e(x.cond)}, () => {`,
  },
  close: { For: "}", While: "});", If: "});", Else: "}, () => {" },
};

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
  return ['import { T } from "tirx-ts";\n', ...printKernels(fns, BUILDER)].join("\n");
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
