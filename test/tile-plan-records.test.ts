import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  intImm,
  mapPlan,
  mkVar,
  planExprs,
  stmtExprs,
  tilePlanRecord,
  TILE_PLANS,
  type BulkCopyPlan,
  type CpAsyncPlan,
  type Expr,
  type TileApply,
  type TileOp,
  type TilePlan,
  type TmaPlan,
} from "@tirx-ts/core";
import { tileOpComment } from "../packages/dsl/src/print-names.js";

// The tile-plan records (core ir/tile-plan.ts, TILE_PLANS) replaced code that tested each plan
// kind by hand. These references are that code, written out per kind: visit.ts planExprs,
// transform/map.ts mapPlan, verify/expect-tx.ts, codegen's tensorMapsOf and the printers'
// TileOp comment. Random plans
// of every kind, with every optional expression present or absent, must give the same results.

function refPlanExprs(p: TilePlan): Expr[] {
  const out: Expr[] = [p.dst.view.offset, p.dst.baseBytes, p.src.view.offset, p.src.baseBytes];
  if (p.kind === "cp.async") {
    for (const e of [p.srcSize, p.ignoreSrc, p.cachePolicy, p.pred]) if (e) out.push(e);
  } else if (p.kind === "cp.async.bulk.tensor") {
    out.push(...p.coords);
    for (const e of [p.mbar, p.ctaMask, p.cachePolicy, p.pred]) if (e) out.push(e);
  } else {
    for (const e of [p.mbar, p.cachePolicy, p.pred]) if (e) out.push(e);
  }
  return out;
}

/** The fields a rewrite of every expression of `p` changes, by the reference's per-kind lists. */
function refExprFields(p: TilePlan): string[] {
  const opt =
    p.kind === "cp.async"
      ? ["srcSize", "ignoreSrc", "cachePolicy", "pred"]
      : p.kind === "cp.async.bulk.tensor"
        ? ["mbar", "ctaMask", "cachePolicy", "pred", "coords"]
        : ["mbar", "cachePolicy", "pred"];
  return opt.filter((k) => (p as unknown as Record<string, unknown>)[k] !== undefined);
}

function refCompleteTx(p: TilePlan): { mbar: Expr; bytes: number | undefined } | undefined {
  if (p.kind === "cp.async.bulk" && p.mbar) {
    return { mbar: p.mbar, bytes: p.pred ? undefined : p.totalBytes };
  } else if (p.kind === "cp.async.bulk.tensor" && p.mbar) {
    return { mbar: p.mbar, bytes: p.pred || p.opcode.multicast ? undefined : p.boxBytes };
  }
  return undefined;
}

function refComment(p: TilePlan): string {
  if (p.kind === "cp.async.bulk.tensor") return `// TileOp: ${p.kind}, box ${p.boxBytes} bytes`;
  return `// TileOp: ${p.kind}, chunk ${p.chunkBytes} bytes, repeat [${p.repeatShape.join(", ")}]`;
}

let names = 0;
const v = (dtype: "int32" | "uint32" | "uint64" | "bool" = "int32"): Expr =>
  mkVar(`x${names++}`, dtype);
const maybe = (
  present: boolean,
  dtype?: "int32" | "uint32" | "uint64" | "bool",
): Expr | undefined => (present ? v(dtype) : undefined);
const side = () => ({
  view: { kind: "View", offset: v() },
  buffer: { kind: "Buffer" },
  baseBytes: v(),
  groupStridesBytes: [],
  repeatStridesBytes: [],
});

/** A plan of `kind` whose optional expressions are present where `flags` says (plain data). */
function plan(kind: TilePlan["kind"], flags: readonly boolean[], n: number, mc: boolean): TilePlan {
  const [a, b, c, d, e] = flags;
  const common = { dst: side(), src: side(), ptxVersion: [8, 0] as const };
  if (kind === "cp.async") {
    const p = {
      ...common,
      kind,
      chunkBytes: 16,
      repeatShape: [n, 2],
      srcSize: maybe(!!a, "uint32"),
      ignoreSrc: maybe(!!b, "bool"),
      cachePolicy: maybe(!!c, "uint64"),
      pred: maybe(!!d, "bool"),
    };
    return p as unknown as CpAsyncPlan;
  }
  if (kind === "cp.async.bulk") {
    const p = {
      ...common,
      kind,
      chunkBytes: 16 * n,
      repeatShape: [n],
      totalBytes: 16 * n * n,
      mbar: maybe(!!a, "uint32"),
      cachePolicy: maybe(!!c, "uint64"),
      pred: maybe(!!d, "bool"),
    };
    return p as unknown as BulkCopyPlan;
  }
  const p = {
    ...common,
    kind,
    opcode: { multicast: mc },
    map: { kind: "TensorMap", id: n },
    coords: Array.from({ length: n }, () => v()),
    boxBytes: 128 * n,
    mbar: maybe(!!a, "uint32"),
    ctaMask: maybe(!!b, "uint32"),
    cachePolicy: maybe(!!c, "uint64"),
    pred: maybe(!!e, "bool"),
  };
  return p as unknown as TmaPlan;
}

const plans = fc
  .tuple(
    fc.constantFrom<TilePlan["kind"]>("cp.async", "cp.async.bulk", "cp.async.bulk.tensor"),
    fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
    fc.integer({ min: 1, max: 5 }),
    fc.boolean(),
  )
  .map(([k, f, n, mc]) => plan(k, f, n, mc));

describe("tile-plan records", () => {
  it("list every plan kind", () => {
    expect(Object.keys(TILE_PLANS).sort()).toEqual(
      ["cp.async", "cp.async.bulk", "cp.async.bulk.tensor"].sort(),
    );
  });

  it("planExprs and a TileOp's stmtExprs give the reference's expressions, in order", () => {
    fc.assert(
      fc.property(plans, (p) => {
        expect(planExprs(p)).toEqual(refPlanExprs(p));
        const op = { kind: "TileOp", plan: p, source: {} as TileApply } as TileOp;
        expect(stmtExprs(op)).toEqual(refPlanExprs(p));
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it("mapPlan rewrites exactly those expressions and keeps the plan when none changes", () => {
    fc.assert(
      fc.property(plans, (p) => {
        expect(mapPlan(p, (e) => e)).toBe(p);
        const seen: Expr[] = [];
        const fresh = new Map<Expr, Expr>();
        const q = mapPlan(p, (e) => {
          seen.push(e);
          const w = intImm(seen.length, "int32");
          fresh.set(e, w);
          return w;
        });
        expect([...seen].sort(byName)).toEqual(refPlanExprs(p).sort(byName));
        const rec = p as unknown as Record<string, unknown>;
        const out = q as unknown as Record<string, unknown>;
        for (const k of refExprFields(p)) {
          const old = rec[k];
          expect(out[k]).toEqual(
            Array.isArray(old) ? old.map((e: Expr) => fresh.get(e)) : fresh.get(old as Expr),
          );
        }
        expect(q.dst.baseBytes).toBe(fresh.get(p.dst.baseBytes));
        expect(q.src.view.offset).toBe(fresh.get(p.src.view.offset));
        // Every other field is the very same value.
        const changed = new Set([...refExprFields(p), "dst", "src"]);
        for (const k of Object.keys(rec)) if (!changed.has(k)) expect(out[k]).toBe(rec[k]);
      }),
      { seed: 42, numRuns: 300 },
    );
  });

  it("completeTx, the tensor map and the printed comment match the reference", () => {
    fc.assert(
      fc.property(plans, (p) => {
        expect(tilePlanRecord(p).completeTx(p)).toEqual(refCompleteTx(p));
        // codegen's tensorMapsOf took the map of TMA plans only.
        const map = p.kind === "cp.async.bulk.tensor" ? p.map : undefined;
        expect(tilePlanRecord(p).tensorMap(p)).toBe(map);
        const op = { kind: "TileOp", plan: p, source: {} as TileApply } as TileOp;
        expect(tileOpComment(op)).toBe(refComment(p));
      }),
      { seed: 42, numRuns: 300 },
    );
  });
});

function byName(a: Expr, b: Expr): number {
  const n = (e: Expr): string => (e.kind === "Var" ? e.name : "");
  return n(a) < n(b) ? -1 : n(a) > n(b) ? 1 : 0;
}
