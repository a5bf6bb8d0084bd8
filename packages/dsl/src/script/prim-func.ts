import {
  isDType,
  sourceLines,
  TirxError,
  withLineText,
  type DType,
  type PrimFunc,
} from "@tirx-ts/core";
import type * as TsMorph from "ts-morph";
import { checkFunction } from "../expr.js";
import { function_, type ParamType } from "../function.js";
import { callerSpan, withSpan } from "../span.js";
import { builderT as T } from "../builder-t.js";
import { Tensor } from "../types.js";
import { Lowerer, Scope } from "./lower.js";
import { callAt, primFuncCalls, sourceFileOf, tsMorph, withinParser } from "./source.js";

type Fn = TsMorph.ts.FunctionExpression | TsMorph.ts.ArrowFunction;

const HINT = 'write T.prim_func(function name(A: Tensor<[128, 32], "float16">, n: int32) { ... })';

/** A parameter's declared type, from its annotation: `Tensor<[dims], "dtype">` or a dtype name. */
function paramType(low: Lowerer, p: TsMorph.ts.ParameterDeclaration): ParamType {
  const ts = low.ts;
  const t = p.type;
  const bad = (n: TsMorph.ts.Node, what: string): TirxError =>
    low.error(
      "TX1022",
      n,
      `parameter "${p.name.getText(low.sf)}": ${what}`,
      'annotate a tensor as Tensor<[128, 32], "float16"> and a scalar as a dtype such as int32',
    );
  if (!t) throw bad(p, "no type annotation");
  if (!ts.isTypeReferenceNode(t)) throw bad(t, "the annotation is not Tensor<...> or a dtype");
  const name = ts.isIdentifier(t.typeName) ? t.typeName.text : t.typeName.right.text;
  if (isDType(name) && !t.typeArguments) return T[name];
  if (name !== "Tensor" || t.typeArguments?.length !== 2) {
    throw bad(t, `unknown type ${t.getText(low.sf)}`);
  }
  const [shapeT, dtypeT] = t.typeArguments as unknown as [TsMorph.ts.TypeNode, TsMorph.ts.TypeNode];
  const literal = (n: TsMorph.ts.Node): number | string | undefined => {
    if (!ts.isLiteralTypeNode(n)) return undefined;
    if (ts.isNumericLiteral(n.literal)) return Number(n.literal.text);
    if (ts.isStringLiteral(n.literal)) return n.literal.text;
    return undefined;
  };
  if (!ts.isTupleTypeNode(shapeT)) throw bad(shapeT, "the shape must be a tuple such as [128, 32]");
  const shape = shapeT.elements.map((d) => {
    const v = literal(d);
    if (v === undefined) throw bad(d, "a dim must be a number or the name of an int32 parameter");
    return v;
  });
  const dtype = literal(dtypeT);
  if (typeof dtype !== "string" || !isDType(dtype)) {
    throw bad(dtypeT, 'the dtype must be a dtype name such as "float16"');
  }
  return withSpan(low.span(t), () => Tensor(shape, dtype as DType));
}

/** The kernel's name: the function's own name, else the const it is assigned to. */
function kernelName(low: Lowerer, fn: Fn, call: TsMorph.ts.CallExpression): string {
  const ts = low.ts;
  if (ts.isFunctionExpression(fn) && fn.name) return fn.name.text;
  const parent = call.parent;
  if (ts.isVariableDeclaration(parent) && ts.isIdentifier(parent.name)) return parent.name.text;
  throw low.error("TX1021", fn, "T.prim_func: the kernel has no name", HINT);
}

/** Lower the kernel function of one `T.prim_func(...)` call to a PrimFunc. */
function lowerCall(
  sf: TsMorph.ts.SourceFile,
  file: string,
  call: TsMorph.ts.CallExpression,
): PrimFunc {
  const { ts } = tsMorph();
  const low = new Lowerer(sf, file);
  const fn = call.arguments[0];
  if (
    call.arguments.length !== 1 ||
    !fn ||
    !(ts.isFunctionExpression(fn) || ts.isArrowFunction(fn))
  ) {
    throw low.error(
      "TX1021",
      fn ?? call,
      "T.prim_func takes one function written in place (its source is what is compiled)",
      HINT,
    );
  }
  if (fn.asteriskToken || fn.modifiers?.length) {
    throw low.unsupported(fn, "async or generator kernels", HINT);
  }
  const names: string[] = [];
  const params: Record<string, ParamType> = {};
  for (const p of fn.parameters) {
    if (!ts.isIdentifier(p.name) || p.dotDotDotToken || p.initializer || p.questionToken) {
      throw low.unsupported(p, "this parameter form", "each parameter is name: Type");
    }
    names.push(p.name.text);
    Object.defineProperty(params, p.name.text, {
      value: paramType(low, p),
      enumerable: true,
    });
  }
  const name = kernelName(low, fn, call);
  return withSpan(low.span(fn), () =>
    function_(name, params, (handles) => {
      const scope = new Scope();
      // The namespace the kernel is handed to (`T` or `script`, however it was imported) is `T`.
      const ns = (call.expression as TsMorph.ts.PropertyAccessExpression).expression;
      if (ts.isIdentifier(ns)) scope.set(ns.text, T);
      for (const k of names) scope.set(k, (handles as Record<string, unknown>)[k]);
      if (ts.isBlock(fn.body)) low.block(fn.body.statements, scope);
      else low.exprStmt(fn.body, scope);
    }),
  );
}

/**
 * Define a kernel in script mode (TIRx `@T.prim_func`): `fn` is an ordinary TypeScript function
 * that is never run. Its source is found from this call's file and position (a stack frame,
 * mapped through source maps), parsed with ts-morph (once per file version; one Project for all
 * files), and lowered through the builder into the PrimFunc the same kernel written with
 * `T.function` makes. Parameters are typed `Tensor<[dims], "dtype">` or a dtype (`int32`).
 * @example
 * export const k = T.prim_func(function k(A: Tensor<[128], "float32">) {
 *   T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
 *   const i = T.cuda.thread_idx("x");
 *   A[i] = A[i] * 2;
 * });
 * @throws TirxError TX1020 (unsupported syntax, also an async or generator kernel), TX1021 (source
 * not found), TX1022 (annotation), TX1023 (stored dtype), TX1024 (unknown name), TX2013 (source
 * nested too deep to parse: withinParser), and whatever the builder throws, at the node.
 */
export function prim_func(fn: (...args: never[]) => void): PrimFunc {
  const site = callerSpan();
  checkFunction(fn, "T.prim_func needs the kernel function", site);
  if (!site) {
    throw new TirxError("TX1021", "T.prim_func: the calling source file cannot be located", site);
  }
  return withinParser(site, () => {
    const { sf, call } = callAt(site);
    return lowerCall(sf, site.file, call);
  });
}

/**
 * Every `T.prim_func(...)` kernel of a script-mode module given as text (named `file` in spans),
 * in source order; the text is parsed, never run.
 * @throws TirxError as {@link prim_func}.
 */
export function parseScript(text: string, file = "script.ts"): PrimFunc[] {
  const start = withLineText({ file, line: 1, col: 1 }, sourceLines(text, 2));
  return withinParser(start, () => {
    const sf = sourceFileOf(text, file);
    return primFuncCalls(sf).map((c) => lowerCall(sf, file, c));
  });
}
