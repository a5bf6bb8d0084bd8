import type * as TsMorph from "ts-morph";
import { isDType } from "@tirx-ts/core";
import { PrimExpr, type ExprLike } from "../expr.js";
import { LocalScalar } from "../local-scalar.js";
import { withSpan } from "../span.js";
import { withBindingName } from "../binding-name.js";
import { builderT as T } from "../builder-t.js";
import { ExprLowerer, Scope, isJs, type Node } from "./lower-expr.js";
import { withArticle } from "@tirx-ts/core";

/**
 * The script-mode lowering: walks a kernel function's syntax tree (never running it) and makes
 * the builder calls that the same kernel written in builder mode makes, each under the span of
 * its syntax node: `A[i][j] = v` is `A.set([i, j], v)`, `for`/`if`/`while` are
 * `T.range`/`T.if_`/`T.while_`, `const` binds a value, `let s = T.local_scalar(...)` a mutable
 * scalar. Expressions are {@link ExprLowerer}'s.
 */
export class Lowerer extends ExprLowerer {
  // ---- statements ----

  block(stmts: readonly TsMorph.ts.Statement[], scope: Scope): void {
    for (const s of stmts) this.stmt(s, scope);
  }

  body(n: TsMorph.ts.Statement, scope: Scope): void {
    const inner = new Scope(scope);
    if (this.ts.isBlock(n)) this.block(n.statements, inner);
    else this.stmt(n, inner);
  }

  stmt(n: TsMorph.ts.Statement, scope: Scope): void {
    const ts = this.ts;
    if (ts.isBlock(n)) return this.block(n.statements, new Scope(scope));
    if (ts.isEmptyStatement(n)) return;
    if (ts.isVariableStatement(n)) return this.declare(n.declarationList, scope);
    if (ts.isExpressionStatement(n)) return this.exprStmt(n.expression, scope);
    if (ts.isIfStatement(n)) return this.ifStmt(n, scope);
    if (ts.isForStatement(n)) return this.forStmt(n, scope);
    if (ts.isForOfStatement(n)) return this.forOf(n, scope);
    if (ts.isWhileStatement(n)) {
      withSpan(this.span(n), () =>
        T.while_(
          () => this.expr(n.expression, scope) as ExprLike,
          () => this.body(n.statement, scope),
        ),
      );
      return;
    }
    const kind = ts.SyntaxKind[n.kind];
    throw this.unsupported(
      n,
      `a ${kind} statement`,
      "a kernel body holds const declarations, assignments to elements, T.* calls, for, if and while",
    );
  }

  declare(list: TsMorph.ts.VariableDeclarationList, scope: Scope): void {
    const ts = this.ts;
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    const mutable = (list.flags & ts.NodeFlags.Let) !== 0;
    for (const d of list.declarations) {
      if (!d.initializer || (!isConst && !mutable)) {
        throw this.unsupported(d, "a declaration without a value, or var", "write const x = ...;");
      }
      const init = d.initializer;
      const value = ts.isIdentifier(d.name)
        ? withBindingName(this.span(init), d.name.text, () => this.expr(init, scope))
        : this.expr(init, scope);
      // `const x: float16 = ...`: the annotation is a dtype the value must have.
      const t = d.type;
      if (
        t &&
        ts.isTypeReferenceNode(t) &&
        ts.isIdentifier(t.typeName) &&
        isDType(t.typeName.text)
      ) {
        this.checkStore(t.typeName.text, value, d.initializer, `const ${d.name.getText(this.sf)}`);
      }
      if (mutable && !(value instanceof LocalScalar)) {
        throw this.unsupported(
          d,
          "let of a value",
          'bind values with const; a mutable scalar is let x = T.local_scalar("float32", 0)',
        );
      }
      this.bindName(d.name, value, scope);
    }
  }

  exprStmt(e: TsMorph.ts.Expression, scope: Scope): void {
    const ts = this.ts;
    if (ts.isBinaryExpression(e)) {
      const k = e.operatorToken.kind;
      if (k >= ts.SyntaxKind.FirstAssignment && k <= ts.SyntaxKind.LastAssignment) {
        const text = ts.tokenToString(k)!;
        return this.assign(e, text === "=" ? undefined : text.slice(0, -1), scope);
      }
    }
    if (ts.isCallExpression(e)) {
      this.expr(e, scope);
      return;
    }
    throw this.unsupported(
      e,
      "an expression statement that is not a call or an assignment",
      "a statement is a T.* call or a store such as A[i][j] = x",
    );
  }

  /** `A[i][j] = v` or `A[i][j] op= v`: a store (of `A[i][j] op v`). */
  assign(e: TsMorph.ts.BinaryExpression, op: string | undefined, scope: Scope): void {
    const ts = this.ts;
    let left = e.left;
    while (ts.isNonNullExpression(left)) left = left.expression; // `x! = v`: the `!` is erased
    if (ts.isIdentifier(left)) {
      // `acc = v` / `acc += v` on a `let acc = T.local_scalar(...)`: LocalScalar.set.
      const s = scope.get(left.text)?.value;
      if (s instanceof LocalScalar) {
        let value = this.checkValue(this.expr(e.right, scope), e.right);
        if (op !== undefined) value = this.binaryOp(op, s, value, e, left, e.right);
        this.checkStore(s.dtype, value, e.right);
        withSpan(this.span(e), () => s.set(value as ExprLike));
        return;
      }
    }
    if (!ts.isElementAccessExpression(left)) {
      throw this.unsupported(
        left,
        "assignment to a name",
        'names are const; a mutable scalar is let x = T.local_scalar("float32", 0)',
      );
    }
    const target = this.place(left, scope);
    if (!target) {
      throw this.unsupported(
        left,
        "a store into something that is not a tensor element",
        "store into an element of a tensor, A[i][j] = x",
      );
    }
    let value = this.expr(e.right, scope);
    if (op !== undefined) {
      const old = withSpan(this.span(left), () => target.load());
      value = this.binaryOp(op, old, value, e, left, e.right);
    }
    this.checkStore(target.dtype, value, e.right);
    this.checkValue(value, e.right);
    withSpan(this.span(e), () => target.store(value as ExprLike));
  }

  /** TX1023 unless `value` has the element dtype `dtype` (a literal takes it). */
  checkStore(dtype: string, value: unknown, n: Node, what?: string): void {
    const bad =
      value instanceof PrimExpr
        ? value.dtype !== dtype
          ? value.dtype
          : undefined
        : typeof value === "bigint" && !dtype.startsWith("int") && !dtype.startsWith("uint")
          ? "int64"
          : undefined;
    if (bad !== undefined) {
      throw this.error(
        "TX1023",
        n,
        what
          ? `${what}: ${dtype} cannot hold a value of dtype ${bad}`
          : `${withArticle(dtype)} element cannot store a value of dtype ${bad}`,
        `convert it explicitly: T.${dtype}(...)`,
      );
    }
  }

  /** The element an access chain names, or undefined when its base is not a tensor. */
  ifStmt(n: TsMorph.ts.IfStatement, scope: Scope): void {
    const c = this.expr(n.expression, scope);
    if (isJs(c)) {
      // A condition on constants picks its branch while lowering, as a JS `if` does in a builder body.
      if (c) this.body(n.thenStatement, scope);
      else if (n.elseStatement) this.body(n.elseStatement, scope);
      return;
    }
    this.checkValue(c, n.expression);
    const otherwise = n.elseStatement;
    withSpan(this.span(n), () =>
      T.if_(
        c as ExprLike,
        () => this.body(n.thenStatement, scope),
        otherwise ? () => this.body(otherwise, scope) : undefined,
      ),
    );
  }

  /** `for (let i = a; i < b; i += s)` (or `i++`, `++i`, `i += 1`): `T.range(a, b, s)`. */
  forStmt(n: TsMorph.ts.ForStatement, scope: Scope): void {
    const ts = this.ts;
    const hint = "write for (let i = a; i < b; i += s), or for (const i of T.range(a, b, s))";
    const init = n.initializer;
    if (
      !init ||
      !ts.isVariableDeclarationList(init) ||
      !(init.flags & ts.NodeFlags.Let) ||
      init.declarations.length !== 1 ||
      !ts.isIdentifier(init.declarations[0]!.name) ||
      !init.declarations[0]!.initializer
    ) {
      throw this.unsupported(init ?? n, "this loop initializer", hint);
    }
    const name = (init.declarations[0]!.name as TsMorph.ts.Identifier).text;
    const isI = (x: Node): boolean => ts.isIdentifier(x) && x.text === name;
    const cond = n.condition;
    if (
      !cond ||
      !ts.isBinaryExpression(cond) ||
      cond.operatorToken.kind !== ts.SyntaxKind.LessThanToken ||
      !isI(cond.left)
    ) {
      throw this.unsupported(cond ?? n, `a loop condition other than ${name} < bound`, hint);
    }
    const inc = n.incrementor;
    let step: unknown = 1;
    if (
      inc &&
      (ts.isPostfixUnaryExpression(inc) || ts.isPrefixUnaryExpression(inc)) &&
      inc.operator === ts.SyntaxKind.PlusPlusToken &&
      isI(inc.operand)
    ) {
      step = 1;
    } else if (
      inc &&
      ts.isBinaryExpression(inc) &&
      inc.operatorToken.kind === ts.SyntaxKind.PlusEqualsToken &&
      isI(inc.left)
    ) {
      step = this.expr(inc.right, scope);
    } else {
      throw this.unsupported(inc ?? n, "this loop increment", hint);
    }
    const lo = this.expr(init.declarations[0]!.initializer, scope) as ExprLike;
    const hi = this.expr(cond.right, scope) as ExprLike;
    const iter = withSpan(this.span(n), () =>
      step === 1 ? T.range(lo, hi) : T.range(lo, hi, step as number),
    );
    this.iterate(iter, n, scope, (v, s) => s.set(name, v), n.statement);
  }

  forOf(n: TsMorph.ts.ForOfStatement, scope: Scope): void {
    const ts = this.ts;
    const init = n.initializer;
    if (
      !ts.isVariableDeclarationList(init) ||
      !(init.flags & ts.NodeFlags.Const) ||
      init.declarations.length !== 1
    ) {
      throw this.unsupported(init, "this loop variable", "write for (const i of T.range(n))");
    }
    const iter = this.expr(n.expression, scope);
    if (typeof iter !== "object" || iter === null || !(Symbol.iterator in iter)) {
      throw this.unsupported(
        n.expression,
        "iterating over this value",
        "iterate over T.range, T.serial, T.unroll, T.grid or T.vectorized",
      );
    }
    const decl = init.declarations[0]!;
    this.iterate(
      iter as Iterable<unknown>,
      n,
      scope,
      (v, s) => this.bindName(decl.name, v, s),
      n.statement,
    );
  }

  /** Drive a builder loop generator under the loop's span, lowering the body once per item. */
  iterate(
    iter: Iterable<unknown>,
    n: Node,
    scope: Scope,
    bind: (v: unknown, s: Scope) => void,
    body: TsMorph.ts.Statement,
  ): void {
    const span = this.span(n);
    const it = withSpan(span, () => iter[Symbol.iterator]());
    for (let r = withSpan(span, () => it.next()); !r.done; r = withSpan(span, () => it.next())) {
      const inner = new Scope(scope);
      bind(r.value, inner);
      this.body(body, inner);
    }
  }
}

export { Scope };
