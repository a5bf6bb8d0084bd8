import { dtypeBits, isFloat, isInt, isSigned, isWideInt, type DType } from "../dtype.js";
import { exprRange, type Interval, type RangeEnv } from "../analysis/bounds.js";
import { RangeScope } from "../analysis/range-scope.js";
import { walkScoped, type Descend } from "../analysis/scope-walk.js";
import type { BinaryOp, CompareOp, Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { exprChildren, impure } from "../visit.js";
import { compareInt, foldInt } from "../numeric/int-fold.js";
import { mapExpr, mapPlan } from "./map.js";
import { distinctPostOrder, exprHeight, SHALLOW_HEIGHT } from "../analysis/deep.js";
import { entryPass, type Pass } from "./pass.js";

/**
 * Constant folding and affine index simplification, never changing a result bit:
 * - integer constants fold at their dtype's width with PTX's wrap-around (bigint for 64 bits);
 *   division and remainder by zero, `MIN / -1` and shifts by the width or more are left alone;
 * - float constants fold only when the result is exact (integers below 2^24 for float32, 2^53
 *   for float64, adds, subs, muls, min, max); 16-bit floats never fold;
 * - integer sums `Σ c·x + d` are put in canonical form: like terms collected, constants folded,
 *   `(x·a)·b`, `(x + c1) + c2`, `x·0` and `x·1` resolved. Integer + and · are associative and
 *   distributive modulo 2^n, so this is exact for wrapped arithmetic too. Terms that read memory
 *   or call an intrinsic are never merged. The canonical form replaces the original only when it
 *   has fewer operations (so the emitted code never grows and untouched sums keep their shape);
 * - `(Σ a·c·x + a·d) / a` becomes `Σ c·x + d` only when range analysis proves every term and the
 *   sum non-negative and without overflow (then the division is exact and wraps nowhere);
 * - comparisons, logical operators, selects and `If` with constant conditions fold.
 */

const bits = (dt: DType): number => dtypeBits(dt);

/** `v` wrapped to `dt`'s width (two's complement for signed dtypes). */
export function wrapInt(v: bigint, dt: DType): bigint {
  const n = BigInt(bits(dt));
  return isSigned(dt) ? BigInt.asIntN(Number(n), v) : BigInt.asUintN(Number(n), v);
}

const isIntDType = (dt: DType): boolean => isInt(dt);

function intConst(e: Expr): bigint | undefined {
  if (e.kind !== "IntImm" || !isIntDType(e.dtype)) return undefined;
  return BigInt(e.value);
}

function mkInt(v: bigint, dt: DType): Expr {
  const w = wrapInt(v, dt);
  const value =
    isWideInt(dt) && (w > BigInt(Number.MAX_SAFE_INTEGER) || w < -BigInt(Number.MAX_SAFE_INTEGER))
      ? w
      : Number(w);
  return { kind: "IntImm", value, dtype: dt };
}

function foldFloat(op: BinaryOp, a: number, b: number, dt: DType): number | undefined {
  const limit = dt === "float32" ? 2 ** 24 : dt === "float64" ? 2 ** 53 : 0;
  const ok = (v: number): boolean =>
    Number.isInteger(v) && Math.abs(v) <= limit && !Object.is(v, -0);
  if (!ok(a) || !ok(b)) return undefined;
  const r =
    op === "add"
      ? a + b
      : op === "sub"
        ? a - b
        : op === "mul"
          ? a * b
          : op === "min"
            ? Math.min(a, b)
            : op === "max"
              ? Math.max(a, b)
              : undefined;
  return r !== undefined && ok(r) ? r : undefined;
}

const boolConst = (v: boolean): Expr => ({ kind: "IntImm", value: v ? 1 : 0, dtype: "bool" });

/** A linear form `Σ coef·atom + c` over one integer dtype; terms keep first-appearance order. */
interface Linear {
  readonly terms: Map<string, { atom: Expr; coef: bigint }>;
  c: bigint;
}

/** Per-call state: interned atom keys (linear-time keys for shared sub-trees) and forms. */
class Canon {
  private keys = new Map<Expr, string>();
  private interned = new Map<string, string>();
  private forms = new Map<Expr, Linear>();
  private unique = 0;

  /** A key equal for atoms that always compute the same value here. */
  key(e: Expr): string {
    const hit = this.keys.get(e);
    if (hit !== undefined) return hit;
    // A deep atom: its sub-atoms first, bottom-up, so that the recursion below is one level.
    if (exprHeight(e) > SHALLOW_HEIGHT && !impure(e))
      for (const x of distinctPostOrder(e, (y) => this.keys.has(y))) if (x !== e) this.key(x);
    let k: string;
    if (impure(e)) k = `!${this.unique++}`;
    else {
      const head = (() => {
        switch (e.kind) {
          case "IntImm":
          case "FloatImm":
            return `${e.kind}:${e.value}:${e.dtype}`;
          case "Var":
            return `v${e.id}`;
          case "Special":
            return `%${e.name}`;
          case "Binary":
          case "Compare":
          case "Logical":
            return `${e.kind}:${e.op}:${e.dtype}`;
          case "BufferPtr":
            return `ptr:${e.buffer.id}:${e.dtype}`;
          default:
            return `${e.kind}:${e.dtype}`;
        }
      })();
      const full = `${head}(${exprChildren(e)
        .map((c) => this.key(c))
        .join(",")})`;
      let id = this.interned.get(full);
      if (id === undefined) {
        id = `#${this.interned.size}`;
        this.interned.set(full, id);
      }
      k = id;
    }
    this.keys.set(e, k);
    return k;
  }

  /** The linear form of integer expression `e` (its children already simplified). */
  linear(e: Expr): Linear {
    const hit = this.forms.get(e);
    if (hit) return hit;
    // A deep sum or product: the forms of its affine sub-terms first, bottom-up, so that the
    // recursion below is one level.
    if (exprHeight(e) > SHALLOW_HEIGHT) {
      const inner = distinctPostOrder(e, (y) => this.forms.has(y), isAffineOp);
      for (const x of inner) if (x !== e) this.linear(x);
    }
    const dt = e.dtype;
    let out: Linear | undefined;
    const c = intConst(e);
    if (c !== undefined) out = { terms: new Map(), c };
    else if (e.kind === "Binary" && (e.op === "add" || e.op === "sub")) {
      const a = this.linear(e.a);
      const b = this.linear(e.b);
      out = combine(a, b, e.op === "add" ? 1n : -1n, dt);
    } else if (e.kind === "Binary" && e.op === "mul") {
      const a = this.linear(e.a);
      const b = this.linear(e.b);
      if (a.terms.size === 0) out = scale(b, a.c, dt);
      else if (b.terms.size === 0) out = scale(a, b.c, dt);
    }
    if (!out) out = { terms: new Map([[this.key(e), { atom: e, coef: 1n }]]), c: 0n };
    this.forms.set(e, out);
    return out;
  }
}

function combine(a: Linear, b: Linear, sign: bigint, dt: DType): Linear {
  const terms = new Map(a.terms);
  for (const [k, t] of b.terms) {
    const prev = terms.get(k);
    const coef = wrapInt((prev?.coef ?? 0n) + sign * t.coef, dt);
    if (coef === 0n) terms.delete(k);
    else terms.set(k, { atom: prev?.atom ?? t.atom, coef });
  }
  return { terms, c: wrapInt(a.c + sign * b.c, dt) };
}

function scale(a: Linear, k: bigint, dt: DType): Linear {
  const terms = new Map<string, { atom: Expr; coef: bigint }>();
  for (const [key, t] of a.terms) {
    const coef = wrapInt(t.coef * k, dt);
    if (coef !== 0n) terms.set(key, { atom: t.atom, coef });
  }
  return { terms, c: wrapInt(a.c * k, dt) };
}

const bin = (op: BinaryOp, a: Expr, b: Expr): Expr => ({
  kind: "Binary",
  op,
  a,
  b,
  dtype: a.dtype,
});

/** Signed view of a wrapped coefficient: small negatives print as subtraction. */
function signedOf(v: bigint, dt: DType): bigint {
  return BigInt.asIntN(bits(dt), v);
}

/** Build `Σ coef·atom + c`: positive terms first in order, then negative ones, constant last. */
function rebuild(l: Linear, dt: DType): Expr {
  let acc: Expr | undefined;
  const terms = [...l.terms.values()];
  const term = (atom: Expr, k: bigint): Expr => (k === 1n ? atom : bin("mul", atom, mkInt(k, dt)));
  for (const t of terms) {
    const k = signedOf(t.coef, dt);
    if (k > 0n) acc = acc ? bin("add", acc, term(t.atom, k)) : term(t.atom, k);
  }
  for (const t of terms) {
    const k = signedOf(t.coef, dt);
    if (k >= 0n) continue;
    acc = acc ? bin("sub", acc, term(t.atom, -k)) : term(t.atom, t.coef);
  }
  const c = signedOf(l.c, dt);
  if (!acc) return mkInt(l.c, dt);
  if (c > 0n) return bin("add", acc, mkInt(c, dt));
  if (c < 0n) return bin("sub", acc, mkInt(-c, dt));
  return acc;
}

/** Distinct operation nodes of `e` (shared sub-trees counted once). */
function cost(e: Expr): number {
  const seen = new Set<Expr>();
  const stack = [e];
  let n = 0;
  while (stack.length) {
    const x = stack.pop()!;
    if (seen.has(x)) continue;
    seen.add(x);
    const cs = exprChildren(x);
    if (cs.length > 0) n++;
    stack.push(...cs);
  }
  return n;
}

/**
 * Whether `r` (built by `rebuild`) has the shape of `e`: the same affine operators and integer
 * constants, over the very same atom nodes. Then `cost(r) >= cost(e)`: r's operator nodes are
 * new and unshared, its atoms are e's, so keeping e is what comparing costs would choose.
 * Iterative, and it stops at atoms, so it costs the size of the affine part only.
 */
function sameAffineShape(r: Expr, e: Expr): boolean {
  const stack: [Expr, Expr][] = [[r, e]];
  while (stack.length > 0) {
    const [x, y] = stack.pop()!;
    if (x === y) continue;
    if (x.kind === "IntImm" && y.kind === "IntImm") {
      if (x.value !== y.value || x.dtype !== y.dtype) return false;
      continue;
    }
    if (x.kind !== "Binary" || y.kind !== "Binary" || !isAffineOp(x)) return false;
    if (x.op !== y.op || x.dtype !== y.dtype) return false;
    stack.push([x.a, y.a], [x.b, y.b]);
  }
  return true;
}

const isAffineOp = (e: Expr): boolean =>
  e.kind === "Binary" && (e.op === "add" || e.op === "sub" || e.op === "mul");

/** Simplifies one node whose children are already simplified. */
function simplifyNode(e: Expr, canon: Canon, env: RangeEnv): Expr {
  switch (e.kind) {
    case "Binary": {
      const dt = e.dtype;
      if (isIntDType(dt)) {
        const a = intConst(e.a);
        const b = intConst(e.b);
        if (a !== undefined && b !== undefined) {
          // Shifts by the width or more stay as written (PTX clamps them; the code shows it).
          const wide = (e.op === "shl" || e.op === "shr") && (b < 0n || b >= BigInt(bits(dt)));
          const v = wide ? undefined : foldInt(e.op, a, b, dt);
          if (v !== undefined) return mkInt(v, dt);
        }
        if (isAffineOp(e)) {
          const r = rebuild(canon.linear(e), dt);
          // The rebuilt form has e's shape (its atoms are e's own nodes): e stays, with no walk
          // of what lies under the atoms (a chain of gathers asks at every level).
          if (sameAffineShape(r, e)) return e;
          return cost(r) < cost(e) ? r : e;
        }
        if ((e.op === "div" || e.op === "floordiv") && b !== undefined && b > 0n) {
          const q = exactQuotient(e.a, b, canon, env);
          if (q) return q;
        }
        if ((e.op === "div" || e.op === "floordiv") && b === 1n) return e.a;
        return e;
      }
      if (
        (dt === "float32" || dt === "float64") &&
        e.a.kind === "FloatImm" &&
        e.b.kind === "FloatImm"
      ) {
        const v = foldFloat(e.op, e.a.value, e.b.value, dt);
        if (v !== undefined) return { kind: "FloatImm", value: v, dtype: dt };
      }
      return e;
    }
    case "Compare": {
      const a = intConst(e.a);
      const b = intConst(e.b);
      if (a !== undefined && b !== undefined) return boolConst(compareInt(e.op, a, b));
      return e;
    }
    case "Logical": {
      const a = e.a.kind === "IntImm" ? Number(e.a.value) !== 0 : undefined;
      const b = e.b.kind === "IntImm" ? Number(e.b.value) !== 0 : undefined;
      // Both operands are pure values (no short circuit in the IR), so either may decide.
      if (e.op === "and") {
        if (a === false || b === false) return impure(e) ? e : boolConst(false);
        if (a === true) return e.b;
        if (b === true) return e.a;
      } else {
        if (a === true || b === true) return impure(e) ? e : boolConst(true);
        if (a === false) return e.b;
        if (b === false) return e.a;
      }
      return e;
    }
    case "Not":
      return e.a.kind === "IntImm" ? boolConst(Number(e.a.value) === 0) : e;
    case "IfThenElse":
      if (e.cond.kind === "IntImm" && !impure(Number(e.cond.value) !== 0 ? e.f : e.t))
        return Number(e.cond.value) !== 0 ? e.t : e.f;
      return e;
    case "Cast": {
      const v = intConst(e.value);
      if (v !== undefined && isIntDType(e.dtype)) return mkInt(v, e.dtype);
      if (v !== undefined && (e.dtype === "float32" || e.dtype === "float64")) {
        const limit = e.dtype === "float32" ? 2n ** 24n : 2n ** 53n;
        if (v <= limit && v >= -limit)
          return { kind: "FloatImm", value: Number(v), dtype: e.dtype };
      }
      return e;
    }
    default:
      return e;
  }
}

/**
 * `num / d` when every term of `num`'s linear form and its constant are multiples of `d` and
 * range analysis proves each term and the running sum in [0, max of the dtype]: then the
 * numerator never wrapped and divides exactly, so truncating and floor division agree.
 */
function exactQuotient(num: Expr, d: bigint, canon: Canon, env: RangeEnv): Expr | undefined {
  const dt = num.dtype;
  const l = canon.linear(num);
  if (l.terms.size === 0) return undefined;
  const max = isSigned(dt) ? 2 ** (bits(dt) - 1) - 1 : 2 ** bits(dt) - 1;
  const c = signedOf(l.c, dt);
  if (c < 0n || c % d !== 0n) return undefined;
  let hi = Number(c);
  const terms = new Map<string, { atom: Expr; coef: bigint }>();
  for (const [k, t] of l.terms) {
    const coef = signedOf(t.coef, dt);
    if (coef <= 0n || coef % d !== 0n) return undefined;
    const r: Interval = exprRange(t.atom, env);
    if (!(r.min >= 0) || !Number.isFinite(r.max)) return undefined;
    hi += Number(coef) * r.max;
    if (hi > max) return undefined;
    terms.set(k, { atom: t.atom, coef: coef / d });
  }
  return rebuild({ terms, c: c / d }, dt);
}

/** Simplify one expression under the variable ranges of `env`. */
export function simplifyExpr(e: Expr, env: RangeEnv = { vars: new Map() }): Expr {
  const canon = new Canon();
  return mapExpr(e, (x) => simplifyNode(x, canon, env));
}

/**
 * Simplify every expression of `body` under the facts of its scope (`walkScoped`: loop and let
 * ranges, narrowed in each arm of an `if` by its condition or the condition's negation) for the
 * exact-division rule; an `If` with a constant condition becomes its arm.
 */
export function simplifyStmt(body: Stmt, launch?: RangeEnv["launch"]): Stmt {
  const scope = new RangeScope(launch ? { launch } : {});
  const ex = (e: Expr): Expr => simplifyExpr(e, scope);
  // The result of each statement lands on `results` when the statement is left; a statement
  // with nested ones takes theirs off first.
  const results: Stmt[] = [];
  const push = (s: Stmt): void => void results.push(s);
  walkScoped(body, scope, {
    enter(s): Descend | void {
      switch (s.kind) {
        case "Seq":
          return {
            leave: () => {
              const done = results.splice(results.length - s.stmts.length);
              let changed = false;
              const out: Stmt[] = [];
              s.stmts.forEach((c, i) => {
                const d = done[i]!;
                if (d !== c) changed = true;
                if (d.kind === "Seq" && d !== c && !d.span) out.push(...d.stmts);
                else out.push(d);
              });
              push(changed ? { ...s, stmts: out } : s);
            },
          };
        case "DeviceEntry":
          return {
            leave: () => {
              const b = results.pop()!;
              push(b === s.body ? s : { ...s, body: b });
            },
          };
        case "For": {
          const min = ex(s.min);
          const extent = ex(s.extent);
          return {
            learn: { min, extent },
            leave: () => {
              const body = results.pop()!;
              push(
                min === s.min && extent === s.extent && body === s.body
                  ? s
                  : { ...s, min, extent, body },
              );
            },
          };
        }
        case "While": {
          const cond = ex(s.cond);
          return {
            leave: () => {
              const body = results.pop()!;
              push(cond === s.cond && body === s.body ? s : { ...s, cond, body });
            },
          };
        }
        case "If": {
          const cond = ex(s.cond);
          if (cond.kind === "IntImm") {
            // The arm that runs replaces the `if` (its result is left on `results`).
            if (Number(cond.value) !== 0) return { only: "then" };
            if (s.else) return { only: "else" };
            return { only: "none", leave: () => push({ kind: "Seq", stmts: [] }) };
          }
          return {
            learn: { cond },
            leave: () => {
              const other = s.else ? results.pop()! : undefined;
              const then = results.pop()!;
              push(
                cond === s.cond && then === s.then && other === s.else
                  ? s
                  : { ...s, cond, then, ...(other ? { else: other } : {}) },
              );
            },
          };
        }
        case "Let": {
          const value = ex(s.value);
          push(value === s.value ? s : { ...s, value });
          return { learn: { value } };
        }
        case "Store": {
          const offset = ex(s.offset);
          const value = ex(s.value);
          push(offset === s.offset && value === s.value ? s : { ...s, offset, value });
          return;
        }
        case "Call": {
          const args = s.args.map(ex);
          push(args.every((a, i) => a === s.args[i]) ? s : { ...s, args });
          return;
        }
        case "TileOp": {
          const plan = mapPlan(s.plan, ex);
          push(plan === s.plan ? s : { ...s, plan });
          return;
        }
        default:
          push(s);
      }
    },
  });
  return results.pop()!;
}

/** The `simplify` pass: {@link simplifyStmt} over the device entry, with the launch's ranges. */
export const simplifyPass: Pass = entryPass(
  "simplify",
  "constant folding (wrapping at the dtype width) and affine index canonicalisation",
  (body, vf) => simplifyStmt(body, vf.launch),
);
