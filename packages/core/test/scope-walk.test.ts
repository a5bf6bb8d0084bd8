// walkScoped against a recursive reference: on random statement trees (loops, lets, ifs with and
// without else, blocks, variables shadowed), the hooks run in pre-order and post-order, and at
// every store the scope holds exactly the ranges and names the reference computes from the
// enclosing statements with the range analysis itself (exprRange, refineRanges, negateCond).
// Nesting far past MAX_EXPR_DEPTH costs no JS stack.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  exprRange,
  intImm,
  MAX_EXPR_DEPTH,
  mkBuffer,
  negateCond,
  RangeScope,
  refineRanges,
  stmtChildren,
  walkScoped,
  type BodyKind,
  type CompareOp,
  type Expr,
  type Interval,
  type Stmt,
  type Var,
} from "../src/index.js";

const BUF = mkBuffer("B", [1024], "int32", "global");
const POOL: readonly Var[] = Array.from({ length: 5 }, (_, i) => ({
  kind: "Var",
  name: `v${i}`,
  id: 9000 + i,
  dtype: "int32",
}));

const num = fc.integer({ min: -20, max: 40 }).map((v): Expr => intImm(v));
const variable = fc.constantFrom(...POOL);
const value: fc.Arbitrary<Expr> = fc.oneof(
  num,
  variable,
  fc
    .tuple(variable, fc.integer({ min: -5, max: 5 }))
    .map(([a, c]): Expr => ({ kind: "Binary", op: "add", a, b: intImm(c), dtype: "int32" })),
);
const compare = fc
  .tuple(fc.constantFrom<CompareOp>("lt", "le", "gt", "ge", "eq", "ne"), value, value)
  .map(([op, a, b]): Expr => ({ kind: "Compare", op, a, b, dtype: "bool" }));
const cond: fc.Arbitrary<Expr> = fc.oneof(
  compare,
  fc
    .tuple(fc.constantFrom("and" as const, "or" as const), compare, compare)
    .map(([op, a, b]): Expr => ({ kind: "Logical", op, a, b, dtype: "bool" })),
  compare.map((a): Expr => ({ kind: "Not", a, dtype: "bool" })),
);

let probes = 0;
const store = fc.constant(null).map((): Stmt => ({
  kind: "Store",
  buffer: BUF,
  dtype: "int32",
  offset: intImm(probes++),
  value: intImm(0),
}));

const { stmt } = fc.letrec<{ stmt: Stmt }>((tie) => ({
  stmt: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    store,
    fc.tuple(variable, value).map(([v, x]): Stmt => ({ kind: "Let", var: v, value: x })),
    fc.array(tie("stmt"), { maxLength: 4 }).map((stmts): Stmt => ({ kind: "Seq", stmts })),
    fc.tuple(variable, value, value, tie("stmt")).map(([v, min, extent, body]): Stmt => ({
      kind: "For",
      var: v,
      min,
      extent,
      annotation: "serial",
      body,
    })),
    fc
      .tuple(cond, tie("stmt"), fc.option(tie("stmt"), { nil: undefined }))
      .map(([c, then, other]): Stmt => ({
        kind: "If",
        cond: c,
        then,
        ...(other ? { else: other } : {}),
      })),
  ),
}));

interface Seen {
  readonly probe: number;
  readonly ranges: [number, Interval][];
  readonly defined: number[];
}

const sorted = (m: ReadonlyMap<number, Interval>): [number, Interval][] =>
  [...m].sort((a, b) => a[0] - b[0]);

/**
 * The reference: plain recursion with immutable maps. A block threads what its statements define
 * through them and forgets it at its end; a body is a scope of its own.
 */
function reference(root: Stmt): Seen[] {
  const out: Seen[] = [];
  type Env = { ranges: Map<number, Interval>; defined: Set<number> };
  const go = (s: Stmt, env: Env): Env => {
    switch (s.kind) {
      case "Store":
        out.push({
          probe: Number((s.offset as { value: number }).value),
          ranges: sorted(env.ranges),
          defined: [...env.defined].sort((a, b) => a - b),
        });
        return env;
      case "Let":
        return {
          ranges: new Map(env.ranges).set(s.var.id, exprRange(s.value, { vars: env.ranges })),
          defined: new Set(env.defined).add(s.var.id),
        };
      case "Seq": {
        let e = env;
        for (const c of s.stmts) e = go(c, e);
        return env;
      }
      case "For": {
        const lo = exprRange(s.min, { vars: env.ranges });
        const n = exprRange(s.extent, { vars: env.ranges });
        go(s.body, {
          ranges: new Map(env.ranges).set(s.var.id, { min: lo.min, max: lo.max + n.max - 1 }),
          defined: new Set(env.defined).add(s.var.id),
        });
        return env;
      }
      case "If": {
        go(s.then, { ranges: refineRanges(s.cond, { vars: env.ranges }), defined: env.defined });
        if (s.else) {
          const neg = negateCond(s.cond, { vars: env.ranges });
          const ranges = neg ? refineRanges(neg, { vars: env.ranges }) : env.ranges;
          go(s.else, { ranges, defined: env.defined });
        }
        return env;
      }
      default:
        return env;
    }
  };
  go(root, { ranges: new Map(), defined: new Set() });
  return out;
}

/** What `walkScoped` shows at each store, and its hook events. */
function walked(root: Stmt): { seen: Seen[]; events: string[] } {
  const seen: Seen[] = [];
  const events: string[] = [];
  const ids = new Map<Stmt, number>();
  const id = (s: Stmt): number => {
    if (!ids.has(s)) ids.set(s, ids.size);
    return ids.get(s)!;
  };
  const scope = new RangeScope();
  walkScoped(root, scope, {
    enter(s, sc) {
      events.push(`enter ${id(s)}`);
      if (s.kind === "Store") {
        seen.push({
          probe: Number((s.offset as { value: number }).value),
          ranges: sorted(sc.vars),
          defined: POOL.map((v) => v.id).filter((v) => sc.hasVar(v)),
        });
      }
    },
    leave(s) {
      events.push(`leave ${id(s)}`);
    },
  });
  return { seen, events };
}

/** Pre-order enters and post-order leaves, by recursion. */
function referenceEvents(root: Stmt): string[] {
  const events: string[] = [];
  const ids = new Map<Stmt, number>();
  const id = (s: Stmt): number => {
    if (!ids.has(s)) ids.set(s, ids.size);
    return ids.get(s)!;
  };
  const go = (s: Stmt): void => {
    events.push(`enter ${id(s)}`);
    for (const c of stmtChildren(s)) go(c);
    events.push(`leave ${id(s)}`);
  };
  go(root);
  return events;
}

describe("walkScoped", () => {
  it("matches the recursive reference on random statement trees (fast-check, seed 42)", () => {
    fc.assert(
      fc.property(stmt, (root) => {
        const { seen, events } = walked(root);
        expect(seen).toEqual(reference(root));
        expect(events).toEqual(referenceEvents(root));
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it("narrows the else arm by the negated condition, and forgets each arm's facts after it", () => {
    const i = POOL[0]!;
    const at = (k: number): Stmt => ({
      kind: "Store",
      buffer: BUF,
      dtype: "int32",
      offset: intImm(k),
      value: intImm(0),
    });
    const root: Stmt = {
      kind: "For",
      var: i,
      min: intImm(0),
      extent: intImm(32),
      annotation: "serial",
      body: {
        kind: "Seq",
        stmts: [
          {
            kind: "If",
            cond: { kind: "Compare", op: "lt", a: i, b: intImm(10), dtype: "bool" },
            then: at(0),
            else: at(1),
          },
          at(2),
        ],
      },
    };
    const got = new Map<number, Interval | undefined>();
    walkScoped(root, new RangeScope(), {
      enter(s, scope) {
        if (s.kind === "Store")
          got.set(Number(s.offset.kind === "IntImm" && s.offset.value), scope.vars.get(i.id));
      },
    });
    expect(got.get(0)).toEqual({ min: 0, max: 9 });
    expect(got.get(1)).toEqual({ min: 10, max: 31 });
    expect(got.get(2)).toEqual({ min: 0, max: 31 });
  });

  it("visits an unrolled loop's body once per copy, the variable defined without a range; only one arm of a known if", () => {
    const i = POOL[1]!;
    const body: Stmt = { kind: "Store", buffer: BUF, dtype: "int32", offset: i, value: intImm(0) };
    const loop: Stmt = {
      kind: "For",
      var: i,
      min: intImm(4),
      extent: intImm(3),
      annotation: "unroll",
      body,
    };
    const branch: Stmt = { kind: "If", cond: intImm(0, "bool"), then: body, else: body };
    const events: string[] = [];
    walkScoped({ kind: "Seq", stmts: [loop, branch] }, new RangeScope(), {
      enter(s, scope) {
        if (s === loop) {
          return {
            copies: 3,
            enterBody: (b: BodyKind, k: number) => events.push(`copy ${k} ${b}`),
            leaveBody: (_: BodyKind, k: number) => events.push(`end ${k}`),
          };
        }
        if (s === branch) {
          return { only: "else", enterBody: (b: BodyKind) => events.push(`arm ${b}`) };
        }
        if (s === body) {
          events.push(`store ${scope.hasVar(i.id)} ${scope.vars.has(i.id)}`);
        }
      },
    });
    expect(events).toEqual([
      "copy 0 body",
      "store true false",
      "end 0",
      "copy 1 body",
      "store true false",
      "end 1",
      "copy 2 body",
      "store true false",
      "end 2",
      "arm else",
      "store false false",
    ]);
  });

  it(`walks nesting far past MAX_EXPR_DEPTH (${MAX_EXPR_DEPTH}) without recursion, restoring every scope`, () => {
    const depth = 4 * MAX_EXPR_DEPTH;
    const i = POOL[2]!;
    let s: Stmt = { kind: "Store", buffer: BUF, dtype: "int32", offset: i, value: intImm(0) };
    for (let d = 0; d < depth; d++) {
      s =
        d % 2 === 0
          ? {
              kind: "If",
              cond: { kind: "Compare", op: "lt", a: i, b: intImm(1000 - d), dtype: "bool" },
              then: s,
            }
          : { kind: "Seq", stmts: [s] };
    }
    const root: Stmt = {
      kind: "For",
      var: i,
      min: intImm(0),
      extent: intImm(5000),
      annotation: "serial",
      body: s,
    };
    const scope = new RangeScope();
    let inner: Interval | undefined;
    let entered = 0;
    let left = 0;
    walkScoped(root, scope, {
      enter(x, sc) {
        entered++;
        if (x.kind === "Store") inner = sc.vars.get(i.id);
      },
      leave() {
        left++;
      },
    });
    // The innermost guard is the tightest: i < 1000 - (depth - 2).
    expect(inner).toEqual({ min: 0, max: 1000 - (depth - 2) - 1 });
    expect(inner!.max).toBeLessThan(0);
    expect(entered).toBe(depth + 2);
    expect(left).toBe(entered);
    expect(scope.vars.size).toBe(0);
    expect(scope.hasVar(i.id)).toBe(false);
    expect(scope.unreachable).toBe(false);
  });
});
