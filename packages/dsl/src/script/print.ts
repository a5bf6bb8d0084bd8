import { checkDepth, type BinaryOp, type PrimFunc } from "@tirx-ts/core";
import { jsIdent } from "../print-names.js";
import { LOOP_FN, printKernels, rawLoop, type KernelSyntax } from "../print-kernel.js";
import { format, FORMAT_MAX_DEPTH } from "../printer.js";

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
 * Script syntax's spellings (the printer core, print-kernel.ts, does the rest): each node prints
 * as the script syntax that lowers back to it: operators where the builder's folding leaves the
 * node as it is, accesses through the flat view `A.flat()[offset]` (the IR holds flat offsets),
 * constants bare where they take the other operand's dtype (negative ones in parentheses) and
 * `T.<dtype>(v)` elsewhere, `if` / `while` / `for` as statements, and everything else as the
 * `T.*` call the builder printer writes. The kernel is `T.prim_func(function <name>(...) {...})`;
 * the dtypes of its scalar parameters are added to `dtypes` (the module imports their types).
 */
function scriptSyntax(dtypes: Set<string>): KernelSyntax {
  return {
    reserved: ["T", "Tensor"],
    indent: "",
    literal: (text) => (text.startsWith("-") ? `(${text})` : text),
    open: (p, fn, exportName, names) => {
      const decls = fn.params.map((q, k) => {
        const jsName = names[k]!;
        if (q.kind === "scalar") {
          dtypes.add(q.var.dtype);
          return `${jsName}: ${q.var.dtype}`;
        }
        const dims = q.buffer.shape.map((d) => {
          if (typeof d === "number") return String(d);
          const owner = fn.params.find((o) => o.kind === "scalar" && o.var.id === d.id);
          return JSON.stringify(owner?.kind === "scalar" ? p.ref(owner.var) : d.name);
        });
        return `${jsName}: Tensor<[${dims.join(", ")}], "${q.buffer.dtype}">`;
      });
      return `export const ${exportName} = T.prim_func(function ${jsIdent(fn.name)}(${decls.join(", ")}) {`;
    },
    expr: {
      Binary: (p, x) => {
        const op = OPERATOR[x.op];
        return op
          ? `(${p.e(x.a)} ${op} ${p.arg(x.b, x.a.dtype)})`
          : `T.${x.op}(${p.e(x.a)}, ${p.arg(x.b, x.a.dtype)})`;
      },
      Compare: (p, x) => `(${p.e(x.a)} ${COMPARE[x.op]} ${p.arg(x.b, x.a.dtype)})`,
      // prettier rebalances `a && (b && c)` into `a && b && c`: a right operand with the same
      // operator prints as a call so that the tree stays as it is.
      Logical: (p, x) =>
        x.b.kind === "Logical" && x.b.op === x.op
          ? `T.${x.op}(${p.e(x.a)}, ${p.e(x.b)})`
          : `(${p.e(x.a)} ${x.op === "and" ? "&&" : "||"} ${p.arg(x.b, "bool")})`,
      Not: (p, x) => `!${p.e(x.a)}`,
      Cast: (p, x) => `T.${x.dtype}(${p.e(x.value)})`,
      IfThenElse: (p, x) => `(${p.e(x.cond)} ? ${p.e(x.t)} : ${p.arg(x.f, x.t.dtype)})`,
      BufferLoad: (p, x) => `${p.flat(x.buffer, x.dtype)}[${p.arg(x.offset, "int32")}]`,
    },
    stmt: {
      Store: (p, x) =>
        `${p.flat(x.buffer, x.dtype)}[${p.arg(x.offset, "int32")}] = ${p.arg(x.value, x.dtype)};`,
      For: (p, x, r) => {
        const v = p.bind(x.var);
        if (r && x.annotation === "serial")
          return `for (let ${v} = ${r.lo}; ${v} < ${r.hi}; ${v}++) {`;
        if (r) return `for (const ${v} of ${LOOP_FN[x.annotation]}(${r.lo}, ${r.hi})) {`;
        return `for (const ${v} of ${rawLoop(p, x)}) {`;
      },
      // A constant condition as T.bool(...): a JavaScript one would be folded while lowering.
      While: (p, x) => `while (${p.e(x.cond)}) {`,
      If: (p, x) => `if (${p.e(x.cond)}) {`,
    },
    close: { For: "}", While: "}", If: "}", Else: "} else {" },
  };
}

/**
 * Several kernels as one script-mode module (unformatted): an import of the script `T` and the
 * types used, then `export const <name> = T.prim_func(function <name>(...) { ... });` per kernel.
 * Loading the module (or {@link parseScript} on its text) rebuilds PrimFuncs `structuralEqual`
 * to `fns` (TileOps print as their source tile.apply, which the verifier plans again).
 * @throws TirxError TX2013 when a kernel nests deeper than MAX_EXPR_DEPTH.
 */
export function printScriptModuleText(fns: readonly PrimFunc[]): string {
  const dtypes = new Set<string>();
  const parts = printKernels(fns, scriptSyntax(dtypes));
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
