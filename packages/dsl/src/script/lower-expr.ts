import {
  lineOfText,
  TirxError,
  withLineText,
  type BinaryOp,
  type CompareOp,
  type DiagnosticCode,
  type Span,
} from "@tirx-ts/core";
import type * as TsMorph from "ts-morph";
import { PrimExpr, freeBinary, freeCompare, if_then_else, type ExprLike } from "../expr.js";
import { FlatView } from "../flat.js";
import { unknownMemberError } from "../unknown-member.js";
import { PtxOp } from "../tile-apply.js";
import { withSpan } from "../span.js";
import { TileView } from "../view.js";
import { builderT as T } from "../builder-t.js";
import { tsMorph } from "./source.js";

export type Node = TsMorph.ts.Node;
type Ts = typeof TsMorph.ts;

const ARITH: Record<string, BinaryOp> = {
  "+": "add",
  "-": "sub",
  "*": "mul",
  "/": "div",
  "%": "mod",
  "&": "bitand",
  "|": "bitor",
  "^": "bitxor",
  "<<": "shl",
  ">>": "shr",
};
const COMPARE: Record<string, CompareOp> = {
  "<": "lt",
  "<=": "le",
  ">": "gt",
  ">=": "ge",
  "===": "eq",
  "!==": "ne",
  "==": "eq",
  "!=": "ne",
};

/** A lexical scope of the kernel body: names bound to builder values (or JS constants). */
export class Scope {
  private readonly vars = new Map<string, unknown>();
  constructor(readonly parent?: Scope) {}
  get(name: string): { value: unknown } | undefined {
    for (let s: Scope | undefined = this; s; s = s.parent) {
      if (s.vars.has(name)) return { value: s.vars.get(name) };
    }
    return undefined;
  }
  set(name: string, value: unknown): void {
    this.vars.set(name, value);
  }
}

export const isJs = (x: unknown): x is number | bigint | boolean =>
  typeof x === "number" || typeof x === "bigint" || typeof x === "boolean";

/** JS arithmetic on two constants, as TypeScript evaluates it (the builder's host-side math). */
function jsArith(op: string, a: number | bigint | boolean, b: number | bigint | boolean): unknown {
  const x = a as number;
  const y = b as number;
  switch (op) {
    case "+":
      return x + y;
    case "-":
      return x - y;
    case "*":
      return x * y;
    case "/":
      return x / y;
    case "%":
      return x % y;
    case "&":
      return x & y;
    case "|":
      return x | y;
    case "^":
      return x ^ y;
    case "<<":
      return x << y;
    case ">>":
      return x >> y;
    case "<":
      return x < y;
    case "<=":
      return x <= y;
    case ">":
      return x > y;
    case ">=":
      return x >= y;
    default:
      return op === "===" || op === "==" ? x === y : x !== y;
  }
}

/**
 * The expression half of the script-mode lowering (see {@link Lowerer}): values of syntax nodes,
 * made by builder calls under each node's span. Operators on expressions become
 * `T.add`/`T.lt`/...; operators on two JS constants are computed as TypeScript would; `A[i][j]`
 * is `A.get([i, j])`.
 */
export abstract class ExprLowerer {
  readonly ts: Ts;
  private readonly module = new Map<string, { value: unknown }>();

  constructor(
    readonly sf: TsMorph.ts.SourceFile,
    readonly file: string,
  ) {
    this.ts = tsMorph().ts;
  }

  /** The span of `n`, with the text of its line and the lines around it from the parsed text. */
  span(n: Node): Span {
    const start = n.getStart(this.sf);
    const p = this.sf.getLineAndCharacterOfPosition(start);
    const end = this.sf.getLineAndCharacterOfPosition(n.end);
    const span = {
      file: this.file,
      line: p.line + 1,
      col: p.character + 1,
      ...(end.line === p.line ? { length: n.end - start } : {}),
    };
    const starts = this.sf.getLineStarts();
    return withLineText(span, (k) => lineOfText(this.sf.text, starts, k));
  }

  error(code: DiagnosticCode, n: Node, message: string, hint?: string): TirxError {
    return new TirxError(code, message, this.span(n), hint ? [{ message: hint }] : []);
  }

  unsupported(n: Node, what: string, hint: string): TirxError {
    return this.error("TX1020", n, `script mode does not support ${what}`, hint);
  }

  /** Lower one statement (arrow-function bodies hold statements). */
  abstract stmt(n: TsMorph.ts.Statement, scope: Scope): void;

  bindName(name: TsMorph.ts.BindingName, value: unknown, scope: Scope): void {
    const ts = this.ts;
    if (ts.isIdentifier(name)) return scope.set(name.text, value);
    if (ts.isArrayBindingPattern(name) && Array.isArray(value)) {
      name.elements.forEach((el, i) => {
        if (ts.isOmittedExpression(el)) return;
        if (el.dotDotDotToken || el.initializer) {
          throw this.unsupported(el, "rest or default elements", "name each element: const [i, j]");
        }
        this.bindName(el.name, value[i], scope);
      });
      return;
    }
    throw this.unsupported(name, "this binding pattern", "bind one name, or [i, j] from T.grid");
  }

  place(
    e: TsMorph.ts.ElementAccessExpression,
    scope: Scope,
  ): { dtype: string; load(): PrimExpr; store(v: ExprLike): void } | undefined {
    const ts = this.ts;
    const idx: TsMorph.ts.Expression[] = [];
    let base: TsMorph.ts.Expression = e;
    // `A[i]![j]`: a non-null assertion (which noUncheckedIndexedAccess asks for) is erased.
    while (ts.isElementAccessExpression(base) || ts.isNonNullExpression(base)) {
      if (ts.isElementAccessExpression(base)) idx.unshift(base.argumentExpression);
      base = base.expression;
    }
    const b = this.expr(base, scope);
    if (!(b instanceof TileView || b instanceof FlatView)) return undefined;
    const indices = idx.map((i) => this.checkValue(this.expr(i, scope), i) as ExprLike);
    const rank = b instanceof FlatView ? 1 : b.buffer.shape.length;
    const viewRank = b instanceof TileView ? this.rank(b) : 1;
    if (indices.length !== viewRank && indices.length !== rank) {
      throw this.unsupported(
        e,
        `indexing ${indices.length} of ${viewRank} axes`,
        'index every axis, A[i][j]; a sub-view is A.sub(i, ":")',
      );
    }
    return {
      dtype: b.dtype,
      load: () => b.get(indices),
      store: (v) => b.set(indices, v),
    };
  }

  rank(v: TileView): number {
    try {
      return v.view.shape.length;
    } catch {
      return v.buffer.shape.length;
    }
  }

  // ---- expressions ----

  /** Refuse values that are not expressions where an expression is needed. */
  checkValue(v: unknown, n: Node): unknown {
    if (v instanceof PrimExpr || isJs(v)) return v;
    throw this.unsupported(
      n,
      "this value as an expression",
      "use an element A[i][j], a number, or a T.* value",
    );
  }

  expr(n: TsMorph.ts.Expression, scope: Scope): unknown {
    const ts = this.ts;
    switch (n.kind) {
      case ts.SyntaxKind.NumericLiteral:
        return Number((n as TsMorph.ts.NumericLiteral).text);
      case ts.SyntaxKind.BigIntLiteral:
        return BigInt((n as TsMorph.ts.BigIntLiteral).text.slice(0, -1));
      case ts.SyntaxKind.StringLiteral:
      case ts.SyntaxKind.NoSubstitutionTemplateLiteral:
        return (n as TsMorph.ts.StringLiteral).text;
      case ts.SyntaxKind.TrueKeyword:
        return true;
      case ts.SyntaxKind.FalseKeyword:
        return false;
      case ts.SyntaxKind.Identifier:
        return this.name(n as TsMorph.ts.Identifier, scope);
      case ts.SyntaxKind.ParenthesizedExpression:
        return this.expr((n as TsMorph.ts.ParenthesizedExpression).expression, scope);
      case ts.SyntaxKind.NonNullExpression:
        // `x!` asserts a type only (TypeScript erases it): `A[i]![j]!` under noUncheckedIndexedAccess.
        return this.expr((n as TsMorph.ts.NonNullExpression).expression, scope);
      case ts.SyntaxKind.PropertyAccessExpression: {
        const p = n as TsMorph.ts.PropertyAccessExpression;
        return this.member(this.expr(p.expression, scope), p.name.text, p);
      }
      case ts.SyntaxKind.ElementAccessExpression: {
        const e = n as TsMorph.ts.ElementAccessExpression;
        const place = this.place(e, scope);
        if (place) return withSpan(this.span(e), () => place.load());
        const obj = this.expr(e.expression, scope);
        const key = this.expr(e.argumentExpression, scope);
        if (typeof key !== "string" && typeof key !== "number") {
          throw this.unsupported(
            e,
            "this index",
            "index tensors with expressions, objects with strings",
          );
        }
        return this.member(obj, key, e);
      }
      case ts.SyntaxKind.CallExpression:
        return this.call(n as TsMorph.ts.CallExpression, scope);
      case ts.SyntaxKind.BinaryExpression:
        return this.binary(n as TsMorph.ts.BinaryExpression, scope);
      case ts.SyntaxKind.PrefixUnaryExpression:
        return this.prefix(n as TsMorph.ts.PrefixUnaryExpression, scope);
      case ts.SyntaxKind.ConditionalExpression: {
        const c = n as TsMorph.ts.ConditionalExpression;
        const cond = this.expr(c.condition, scope);
        if (isJs(cond)) return this.expr(cond ? c.whenTrue : c.whenFalse, scope);
        const t = this.checkValue(this.expr(c.whenTrue, scope), c.whenTrue);
        const f = this.checkValue(this.expr(c.whenFalse, scope), c.whenFalse);
        this.checkValue(cond, c.condition);
        return withSpan(this.span(c), () =>
          if_then_else(cond as ExprLike, t as ExprLike, f as ExprLike),
        );
      }
      case ts.SyntaxKind.ArrayLiteralExpression:
        return (n as TsMorph.ts.ArrayLiteralExpression).elements.map((el) => {
          if (ts.isSpreadElement(el)) throw this.unsupported(el, "spread", "list the elements");
          return this.expr(el, scope);
        });
      case ts.SyntaxKind.ObjectLiteralExpression:
        return this.object(n as TsMorph.ts.ObjectLiteralExpression, scope);
      case ts.SyntaxKind.ArrowFunction:
      case ts.SyntaxKind.FunctionExpression:
        return this.closure(n as TsMorph.ts.ArrowFunction, scope);
      case ts.SyntaxKind.AsExpression:
      case ts.SyntaxKind.TypeAssertionExpression:
      case ts.SyntaxKind.SatisfiesExpression:
        throw this.unsupported(
          n,
          "type assertions",
          "a kernel needs no casts: convert values with T.float32(x) and friends",
        );
      default:
        throw this.unsupported(
          n,
          `a ${ts.SyntaxKind[n.kind]} expression`,
          "expressions are numbers, names, A[i][j], operators, ?: and T.* calls",
        );
    }
  }

  name(n: TsMorph.ts.Identifier, scope: Scope): unknown {
    const hit = scope.get(n.text);
    if (hit) return hit.value;
    if (n.text === "T") return T;
    if (n.text === "undefined") return undefined;
    if (n.text === "NaN") return NaN;
    if (n.text === "Infinity") return Infinity;
    // JS's Math, for module constants such as Math.fround(Math.LOG2E); calls on expressions fail.
    if (n.text === "Math") return Math;
    const m = this.moduleConst(n.text);
    if (m) return m.value;
    throw this.error(
      "TX1024",
      n,
      `"${n.text}" is not defined in this kernel`,
      "a script kernel sees its parameters, its const locals, T, and module-level constants (const N = 128)",
    );
  }

  /** A module-level `const NAME = <constant expression>` of the kernel's file. */
  moduleConst(name: string): { value: unknown } | undefined {
    const cached = this.module.get(name);
    if (cached) return cached;
    const ts = this.ts;
    for (const s of this.sf.statements) {
      if (!ts.isVariableStatement(s) || !(s.declarationList.flags & ts.NodeFlags.Const)) continue;
      for (const d of s.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer) {
          const value = this.expr(d.initializer, new Scope());
          if (!isJs(value) && typeof value !== "string") return undefined;
          const hit = { value };
          this.module.set(name, hit);
          return hit;
        }
      }
    }
    return undefined;
  }

  member(obj: unknown, key: string | number, n: Node): unknown {
    if ((typeof obj !== "object" && typeof obj !== "function") || obj === null) {
      throw this.unsupported(
        n,
        `member ${String(key)} of this value`,
        "use T.* and tensor methods",
      );
    }
    const v: unknown = withSpan(this.span(n), () => (obj as Record<string | number, unknown>)[key]);
    if (v === undefined) {
      // A misspelled member (T.cuda.thread_id): an unknown name, with the nearest one.
      const owner = (n as TsMorph.ts.PropertyAccessExpression).expression.getText(this.sf);
      throw unknownMemberError(key, owner, obj as object, this.span(n));
    }
    // Methods are bound to their object; an opcode (`T.ptx[opcode]`, callable) needs no `this`
    // and stays a PtxOp for tile.apply; T.if_then_else stays itself, for `call` to fold.
    return typeof v === "function" && !(v instanceof PtxOp) && v !== if_then_else
      ? Object.assign((...a: unknown[]) => Reflect.apply(v, obj, a), v)
      : v;
  }

  call(n: TsMorph.ts.CallExpression, scope: Scope): unknown {
    const f = this.expr(n.expression, scope);
    if (typeof f !== "function") {
      throw this.unsupported(
        n.expression,
        "calling a value that is not a function",
        "call T.* functions",
      );
    }
    const args = n.arguments.map((a) => {
      if (this.ts.isSpreadElement(a))
        throw this.unsupported(a, "spread arguments", "list the arguments");
      return this.expr(a, scope);
    });
    // T.if_then_else on a condition known while lowering picks its arm, as `c ? t : f` does.
    if (f === if_then_else && typeof args[0] === "boolean") return args[0] ? args[1] : args[2];
    return withSpan(this.span(n), () => (f as (...a: unknown[]) => unknown)(...args));
  }

  object(n: TsMorph.ts.ObjectLiteralExpression, scope: Scope): Record<string, unknown> {
    const ts = this.ts;
    const out: Record<string, unknown> = {};
    for (const p of n.properties) {
      let key: string;
      let value: unknown;
      if (ts.isShorthandPropertyAssignment(p)) {
        key = p.name.text;
        value = this.name(p.name, scope);
      } else if (
        ts.isPropertyAssignment(p) &&
        (ts.isIdentifier(p.name) || ts.isStringLiteral(p.name) || ts.isNumericLiteral(p.name))
      ) {
        key = p.name.text;
        value = this.expr(p.initializer, scope);
      } else {
        throw this.unsupported(p, "this object member", "write { key: value }");
      }
      Object.defineProperty(out, key, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }

  /** An arrow function argument (a builder callback): a JS function lowering its body when called. */
  closure(n: TsMorph.ts.ArrowFunction, scope: Scope): (...a: unknown[]) => unknown {
    const ts = this.ts;
    return (...args: unknown[]) => {
      const inner = new Scope(scope);
      n.parameters.forEach((p, i) => this.bindName(p.name, args[i], inner));
      if (ts.isBlock(n.body)) {
        for (const s of n.body.statements) {
          if (ts.isReturnStatement(s))
            return s.expression ? this.expr(s.expression, inner) : undefined;
          this.stmt(s, inner);
        }
        return undefined;
      }
      return this.expr(n.body, inner);
    };
  }

  binary(n: TsMorph.ts.BinaryExpression, scope: Scope): unknown {
    const op = this.ts.tokenToString(n.operatorToken.kind) ?? "";
    if (!(op in ARITH) && !(op in COMPARE) && op !== "&&" && op !== "||") {
      throw this.unsupported(
        n.operatorToken,
        `the operator ${op}`,
        op === "**"
          ? "multiply, or call a T.* math function"
          : op.endsWith("=")
            ? "assign only as a statement, A[i][j] = x"
            : "use + - * / % & | ^ << >> < <= > >= === !== && || ! and ?:",
      );
    }
    const a = this.expr(n.left, scope);
    const b = this.expr(n.right, scope);
    return this.binaryOp(op, a, b, n, n.left, n.right);
  }

  binaryOp(op: string, a: unknown, b: unknown, n: Node, left: Node, right: Node): unknown {
    this.checkValue(a, left);
    this.checkValue(b, right);
    if (isJs(a) && isJs(b)) {
      if (op === "&&") return a && b;
      if (op === "||") return a || b;
      if (typeof a !== typeof b && (typeof a === "bigint" || typeof b === "bigint")) {
        throw this.unsupported(
          n,
          "mixing bigint and number constants",
          "write both as bigints (1n)",
        );
      }
      return jsArith(op, a, b);
    }
    const x = a as ExprLike;
    const y = b as ExprLike;
    return withSpan(this.span(n), () => {
      if (op === "&&") return T.and(x, y);
      if (op === "||") return T.or(x, y);
      const cmp = COMPARE[op];
      if (cmp) return freeCompare(cmp, x, y);
      return freeBinary(ARITH[op]!, x, y);
    });
  }

  prefix(n: TsMorph.ts.PrefixUnaryExpression, scope: Scope): unknown {
    const ts = this.ts;
    const v = this.checkValue(this.expr(n.operand, scope), n.operand);
    const span = this.span(n);
    switch (n.operator) {
      case ts.SyntaxKind.MinusToken:
        if (isJs(v)) return -(v as number);
        return withSpan(span, () => freeBinary("sub", 0, v as PrimExpr));
      case ts.SyntaxKind.PlusToken:
        return v;
      case ts.SyntaxKind.ExclamationToken:
        return isJs(v) ? !v : withSpan(span, () => T.not(v as PrimExpr));
      case ts.SyntaxKind.TildeToken:
        return isJs(v)
          ? ~(v as number)
          : withSpan(span, () => freeBinary("bitxor", v as PrimExpr, -1));
      default:
        throw this.unsupported(n, "++ and -- on values", "write x + 1");
    }
  }
}
