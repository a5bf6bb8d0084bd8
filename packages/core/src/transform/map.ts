import type { View } from "../ir/buffer.js";
import type { AccessIndex, Expr } from "../ir/expr.js";
import type { Stmt, TileApply, TileParam } from "../ir/stmt.js";
import { planExprFields, type AtomSide, type TilePlan } from "../ir/tile-plan.js";
import { exprChildren, isExpr, isExprList, isView } from "../visit.js";

/**
 * Copy-on-write rewriting of IR, in the manner of TVM's `StmtExprMutator`: children are
 * rewritten first, and a node is rebuilt only when one of its children changed; otherwise the
 * very same object comes back, so `mapStmt(s, {}) === s` and passes that change nothing allocate
 * nothing. Expressions are rewritten iteratively (any depth is safe) and a sub-expression shared
 * by several parents is rewritten once and stays shared.
 */

/**
 * A rewrite of one expression whose children were already rewritten; return `e` to keep it.
 * `original` is the node as it was before its children were rewritten (`e` itself when none
 * changed): what a pass that analysed the input IR looks its findings up by.
 */
export type ExprRewrite = (e: Expr, original: Expr) => Expr;

/**
 * A rewrite of one statement whose children were already rewritten; return `s` to keep it.
 * `original` is the statement as it was in the input (see {@link ExprRewrite}).
 */
export type StmtRewrite = (s: Stmt, original: Stmt) => Stmt;

/** `e` with its direct children replaced by `cs` (in `exprChildren` order); `e` if none changed. */
export function withExprChildren(e: Expr, cs: readonly Expr[]): Expr {
  const old = exprChildren(e);
  if (old.length === cs.length && old.every((c, i) => c === cs[i])) return e;
  switch (e.kind) {
    case "Binary":
    case "Compare":
    case "Logical":
      return { ...e, a: cs[0]!, b: cs[1]! };
    case "Not":
      return { ...e, a: cs[0]! };
    case "Cast":
      return { ...e, value: cs[0]! };
    case "IfThenElse":
      return { ...e, cond: cs[0]!, t: cs[1]!, f: cs[2]! };
    case "BufferLoad":
    case "BufferPtr":
      return { ...e, offset: cs[0]! };
    case "CallExpr":
      return { ...e, args: [...cs] };
    default:
      return e;
  }
}

/**
 * The sub-expressions mapExpr rewrites: `exprChildren`, then a load's author indices (its
 * `AccessIndex`, each an expression of the same variables as its offset: a pass that renames
 * or substitutes variables must rewrite both, or the index would name a variable no longer bound).
 */
function mapKids(e: Expr): readonly Expr[] {
  if (e.kind !== "BufferLoad" || e.index === undefined) return exprChildren(e);
  return [e.offset, ...e.index.map((a) => a.index)];
}

/** `e` with the sub-expressions of {@link mapKids} replaced by `cs`; `e` if none changed. */
function withMapKids(e: Expr, cs: readonly Expr[]): Expr {
  if (e.kind !== "BufferLoad" || e.index === undefined) return withExprChildren(e, cs);
  const offset = cs[0]!;
  const index = withIndexExprs(e.index, cs.slice(1));
  return offset === e.offset && index === e.index ? e : { ...e, offset, index };
}

/** `index` with its expressions replaced by `xs` (in order); `index` itself if none changed. */
function withIndexExprs(index: AccessIndex, xs: readonly Expr[]): AccessIndex {
  if (index.every((a, k) => a.index === xs[k])) return index;
  return index.map((a, k) => (a.index === xs[k] ? a : { ...a, index: xs[k]! }));
}

/** A Store's author indices rewritten by `ex` (see {@link mapKids}); the same array if unchanged. */
function mapIndex(index: AccessIndex | undefined, ex: (e: Expr) => Expr): AccessIndex | undefined {
  return index === undefined
    ? undefined
    : withIndexExprs(
        index,
        index.map((a) => ex(a.index)),
      );
}

/**
 * Rewrite `e` bottom-up: `f` sees every node after its children (and a load's author indices,
 * its `index`) were rewritten. `memo` (shared by callers that rewrite many expressions with one
 * context-free `f`) maps an original node to its result.
 */
export function mapExpr(e: Expr, f: ExprRewrite, memo: Map<Expr, Expr> = new Map()): Expr {
  return mapNear(e, f, memo, 0);
}

/**
 * How deep {@link mapNear} recurses before it hands a sub-expression to the iterative walk:
 * far below the stack's limit, far above the heights realistic IR has.
 */
const RECURSE_HEIGHT = 256;

/**
 * mapExpr of `n`, reached `depth` levels down a plain recursion: the same calls of `f` in the
 * same order (children left to right, then the node; each distinct node once), without the
 * explicit stack's frames and per-node arrays. Past RECURSE_HEIGHT levels the iterative walk
 * takes over.
 */
function mapNear(n: Expr, f: ExprRewrite, memo: Map<Expr, Expr>, depth: number): Expr {
  const done = memo.get(n);
  if (done) return done;
  if (depth >= RECURSE_HEIGHT) return mapFar(n, f, memo);
  const cs = mapKids(n);
  let r: Expr;
  if (cs.length === 0) r = f(n, n);
  else {
    const out = new Array<Expr>(cs.length);
    for (let i = 0; i < cs.length; i++) out[i] = mapNear(cs[i]!, f, memo, depth + 1);
    r = f(withMapKids(n, out), n);
  }
  memo.set(n, r);
  return r;
}

/** mapExpr of `e` without recursion: any depth is safe. */
function mapFar(e: Expr, f: ExprRewrite, memo: Map<Expr, Expr>): Expr {
  const done = memo.get(e);
  if (done) return done;
  // Frames of an explicit post-order walk: the node and how many children are already pushed.
  const nodes: Expr[] = [e];
  const expanded: boolean[] = [false];
  while (nodes.length > 0) {
    const top = nodes.length - 1;
    const n = nodes[top]!;
    if (memo.has(n)) {
      nodes.pop();
      expanded.pop();
      continue;
    }
    const cs = mapKids(n);
    if (!expanded[top]) {
      expanded[top] = true;
      for (let i = cs.length - 1; i >= 0; i--) {
        if (!memo.has(cs[i]!)) {
          nodes.push(cs[i]!);
          expanded.push(false);
        }
      }
      continue;
    }
    nodes.pop();
    expanded.pop();
    memo.set(
      n,
      f(
        withMapKids(
          n,
          cs.map((c) => memo.get(c)!),
        ),
        n,
      ),
    );
  }
  return memo.get(e)!;
}

/** Rewrites of {@link mapStmt}: `expr` for every expression, `stmt` for every statement. */
export interface StmtRewrites {
  readonly expr?: ExprRewrite;
  readonly stmt?: StmtRewrite;
}

/** `v` with its offset rewritten. */
function mapView(v: View, ex: (e: Expr) => Expr): View {
  const offset = ex(v.offset);
  return offset === v.offset ? v : { ...v, offset };
}

function mapSide(s: AtomSide, ex: (e: Expr) => Expr): AtomSide {
  const view = mapView(s.view, ex);
  const baseBytes = ex(s.baseBytes);
  return view === s.view && baseBytes === s.baseBytes ? s : { ...s, view, baseBytes };
}

/**
 * `p` with every runtime expression rewritten, in `planExprs` order (the sides, then the plan's
 * expression fields as their record, `TILE_PLANS`, lists them); `p` if none changed.
 */
export function mapPlan(p: TilePlan, ex: (e: Expr) => Expr): TilePlan {
  const dst = mapSide(p.dst, ex);
  const src = mapSide(p.src, ex);
  const changed: Record<string, Expr | readonly Expr[]> = {};
  for (const [f, v] of planExprFields(p)) {
    if (Array.isArray(v)) {
      const l = (v as readonly Expr[]).map(ex);
      if (l.some((e, i) => e !== v[i])) changed[f] = l;
    } else {
      const w = ex(v as Expr);
      if (w !== v) changed[f] = w;
    }
  }
  if (dst === p.dst && src === p.src && Object.keys(changed).length === 0) return p;
  return { ...p, dst, src, ...changed } as TilePlan;
}

function mapTileApply(s: TileApply, ex: (e: Expr) => Expr): TileApply {
  const dst = mapView(s.dst, ex);
  const src = mapView(s.src, ex);
  let params = s.params;
  for (const [k, p] of Object.entries(s.params)) {
    let q: TileParam = p;
    if (isView(p)) q = mapView(p, ex);
    else if (isExpr(p)) q = ex(p);
    else if (isExprList(p)) {
      const l = p.map(ex);
      if (l.some((e, i) => e !== p[i])) q = l;
    }
    if (q !== p) params = { ...params, [k]: q };
  }
  return dst === s.dst && src === s.src && params === s.params ? s : { ...s, dst, src, params };
}

/** A statement being rebuilt by {@link mapStmt}: its rewritten expressions, then its children. */
interface Frame {
  readonly x: Stmt;
  readonly kids: readonly Stmt[];
  readonly done: Stmt[];
  /** For: min, extent; While, If: cond (rewritten before the children, as recursion would). */
  readonly pre: readonly Expr[];
}

/**
 * Rewrite `s` bottom-up: a statement's own loop bounds or condition (through `rw.expr`, with one
 * memo for the whole call), then its nested statements, then its other expressions, then
 * `rw.stmt` on the rebuilt statement. A `stmt` rewrite may return a `Seq` to replace one
 * statement by several; enclosing sequences flatten it. A statement that occurs twice is
 * rewritten twice. Iterative (an explicit stack of frames): any nesting is safe.
 */
export function mapStmt(s: Stmt, rw: StmtRewrites, memo: Map<Expr, Expr> = new Map()): Stmt {
  const ex = rw.expr ? (e: Expr): Expr => mapExpr(e, rw.expr!, memo) : (e: Expr): Expr => e;
  const open = (x: Stmt): Frame => {
    switch (x.kind) {
      case "Seq":
        return { x, kids: x.stmts, done: [], pre: [] };
      case "For":
        return { x, kids: [x.body], done: [], pre: [ex(x.min), ex(x.extent)] };
      case "While":
        return { x, kids: [x.body], done: [], pre: [ex(x.cond)] };
      case "If":
        return { x, kids: x.else ? [x.then, x.else] : [x.then], done: [], pre: [ex(x.cond)] };
      case "DeviceEntry":
        return { x, kids: [x.body], done: [], pre: [] };
      default:
        return { x, kids: [], done: [], pre: [] };
    }
  };
  const stack: Frame[] = [open(s)];
  let result: Stmt = s;
  while (stack.length > 0) {
    const f = stack[stack.length - 1]!;
    if (f.done.length < f.kids.length) {
      stack.push(open(f.kids[f.done.length]!));
      continue;
    }
    stack.pop();
    const y = rebuild(f, ex);
    const r = rw.stmt ? rw.stmt(y, f.x) : y;
    if (stack.length > 0) stack[stack.length - 1]!.done.push(r);
    else result = r;
  }
  return result;
}

/** `f.x` with its children replaced by `f.done` and its expressions rewritten by `ex`. */
function rebuild(f: Frame, ex: (e: Expr) => Expr): Stmt {
  const x = f.x;
  switch (x.kind) {
    case "Seq": {
      let changed = false;
      const out: Stmt[] = [];
      x.stmts.forEach((c, i) => {
        const d = f.done[i]!;
        if (d !== c) changed = true;
        if (d.kind === "Seq" && d !== c && !d.span) out.push(...d.stmts);
        else out.push(d);
      });
      return changed ? { ...x, stmts: out } : x;
    }
    case "For": {
      const [min, extent] = f.pre as [Expr, Expr];
      const body = f.done[0]!;
      return min === x.min && extent === x.extent && body === x.body
        ? x
        : { ...x, min, extent, body };
    }
    case "While": {
      const cond = f.pre[0]!;
      const body = f.done[0]!;
      return cond === x.cond && body === x.body ? x : { ...x, cond, body };
    }
    case "If": {
      const cond = f.pre[0]!;
      const then = f.done[0]!;
      const other = x.else ? f.done[1] : undefined;
      return cond === x.cond && then === x.then && other === x.else
        ? x
        : { ...x, cond, then, ...(other ? { else: other } : {}) };
    }
    case "Let": {
      const value = ex(x.value);
      return value === x.value ? x : { ...x, value };
    }
    case "Store": {
      const offset = ex(x.offset);
      const value = ex(x.value);
      const index = mapIndex(x.index, ex);
      return offset === x.offset && value === x.value && index === x.index
        ? x
        : { ...x, offset, value, ...(index ? { index } : {}) };
    }
    case "Call": {
      const args = x.args.map(ex);
      return args.every((a, i) => a === x.args[i]) ? x : { ...x, args };
    }
    case "TileApply":
      return mapTileApply(x, ex);
    case "TileOp": {
      const plan = mapPlan(x.plan, ex);
      const source = mapTileApply(x.source, ex);
      return plan === x.plan && source === x.source ? x : { ...x, plan, source };
    }
    case "DeviceEntry": {
      const body = f.done[0]!;
      return body === x.body ? x : { ...x, body };
    }
    case "Alloc":
      return x;
  }
}
