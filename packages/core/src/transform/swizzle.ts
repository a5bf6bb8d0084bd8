import { bufferName } from "../buffer-name.js";
import { dtypeBytes, type DType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { binary } from "../ir/arith.js";
import type { Buffer } from "../ir/buffer.js";
import { constInt, intImm, type Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { knownDivisor } from "../analysis/bounds.js";
import {
  applySwizzle,
  showSwizzle,
  swizzleAtomBytes,
  swizzlePeriodBytes,
  type SwizzleLayout,
} from "../layout/swizzle.js";
import type { Span } from "../span.js";
import { mapStmt } from "./map.js";
import { walkStmt } from "../visit.js";
import { freeVars } from "../analysis/free-vars.js";
import { substitute } from "./substitute.js";
import { entryPass, type Pass } from "./pass.js";

/**
 * The additive terms of `e`, with constant factors distributed over sums:
 * `(a + 16) * 32 + b` → [a * 32, 512, b], so that whole-period steps separate from the rest.
 */
function addends(e: Expr): Expr[] {
  if (e.kind === "Binary" && e.op === "add") return [...addends(e.a), ...addends(e.b)];
  if (e.kind === "Binary" && e.op === "mul") {
    const cb = constInt(e.b);
    const ca = constInt(e.a);
    const c = cb ?? ca;
    const x = cb !== undefined ? e.a : e.b;
    if (c !== undefined && x.kind === "Binary" && (x.op === "add" || x.op === "mul")) {
      const k = intImm(c, e.dtype);
      const parts = addends(x);
      if (parts.length > 1) return parts.map((t) => binary("mul", t, k));
    }
  }
  return [e];
}

/**
 * The lanes of the body's `T.vectorized` loops (variable id → trip count, from 0) and a known
 * divisor of an offset there (through let bindings): see {@link swizzledOffset}.
 */
export interface VectorLanes {
  readonly extents: ReadonlyMap<number, number>;
  readonly divisor: (e: Expr) => number;
}

const sum = (xs: readonly Expr[]): Expr | undefined =>
  xs.reduce<Expr | undefined>((a, x) => (a ? binary("add", a, x) : x), undefined);

/**
 * The physical offset, in `elemBytes`-byte elements, of logical element offset `off` of a buffer
 * swizzled by byte layout `l`. Terms that are known multiples of the swizzle's period pass
 * through unchanged (the swizzle reads and writes only bits below the period, so
 * `swz(P + R) = P + swz(R)` for P a multiple of it): a stage index or a whole-tile step stays an
 * add or a displacement, and the XOR works on the loop-invariant rest.
 * @throws TirxError TX1016 when one element is wider than the swizzle's atom (it would be split).
 */
export function swizzledOffset(
  l: SwizzleLayout,
  off: Expr,
  elemBytes: number,
  buffer: Buffer,
  span?: Span,
  lanes?: VectorLanes,
): Expr {
  if (l.swizzleLen === 0) return off;
  const atom = swizzleAtomBytes(l);
  if (elemBytes > atom) {
    throw new TirxError(
      "TX1016",
      `an access of ${elemBytes} bytes to ${bufferName(buffer)} would be split by its ${showSwizzle(l)} (atoms of ${atom} bytes)`,
      span ?? off.span,
    );
  }
  // base + v, v the variable of a `T.vectorized` loop of n lanes from 0, n · elemBytes within
  // an atom and base a multiple of n: the lanes stay inside one atom, which the swizzle moves as
  // a whole, so swz(base + v) = swz(base) + v. Keeping v outside the XOR keeps the access
  // `base' + v`, which codegen turns into one vector access (PTX ISA "Vectors").
  if (lanes && lanes.extents.size > 0) {
    const terms = addends(off);
    const at = terms.findIndex((t) => t.kind === "Var" && lanes.extents.has(t.id));
    if (at >= 0) {
      const v = terms[at]!;
      const n = lanes.extents.get((v as { id: number }).id)!;
      const base = sum(terms.filter((_, i) => i !== at));
      if (
        (n & (n - 1)) === 0 &&
        n * elemBytes <= atom &&
        (!base || lanes.divisor(base) % n === 0) &&
        (!base || !freeVars(base).some((id) => lanes.extents.has(id)))
      ) {
        const b = base ? swizzledOffset(l, base, elemBytes, buffer, span) : intImm(0, off.dtype);
        return binary("add", b, v);
      }
    }
  }
  const c = constInt(off);
  if (c !== undefined) return intImm(applySwizzle(l, c * elemBytes) / elemBytes, off.dtype);
  const { pass: p, rest: r } = splitAtPeriod(l, off, elemBytes);
  if (!r) return off;
  const dt: DType = off.dtype;
  const shift = Math.log2(elemBytes);
  const rc = constInt(r);
  let swz: Expr;
  if (rc !== undefined) {
    swz = intImm(applySwizzle(l, rc * elemBytes) / elemBytes, dt);
  } else {
    const mask = intImm((2 ** l.swizzleLen - 1) * 2 ** (l.perElement - shift), dt);
    const s = intImm(l.atomLen, dt);
    const moved = l.swizzleInner
      ? binary("bitand", binary("shr", r, s), mask)
      : binary("shl", binary("bitand", r, mask), s);
    swz = binary("bitxor", r, moved);
  }
  return p ? binary("add", p, swz) : swz;
}

/**
 * `off` (in `elemBytes`-byte units) split into the sum of its terms that are known multiples of
 * the swizzle's period, which the swizzle passes through (`swz(P + R) = P + swz(R)`), and the
 * rest; either may be absent.
 */
export function splitAtPeriod(
  l: SwizzleLayout,
  off: Expr,
  elemBytes: number,
): { pass?: Expr; rest?: Expr } {
  const periodElems = swizzlePeriodBytes(l) / elemBytes;
  const pass: Expr[] = [];
  const rest: Expr[] = [];
  for (const t of addends(off)) (knownDivisor(t) % periodElems === 0 ? pass : rest).push(t);
  const p = sum(pass);
  const r = sum(rest);
  return { ...(p ? { pass: p } : {}), ...(r ? { rest: r } : {}) };
}

/**
 * Apply every shared buffer's swizzle to its element accesses: the offsets of loads, stores
 * and addresses (`buf.ptr(...)`, e.g. ldmatrix rows) of a swizzled buffer become physical
 * offsets. Tile instructions (cp.async) swizzle each atom where they are emitted.
 */
export function applySwizzles(body: Stmt): Stmt {
  const memo = new Map<Expr, Expr>();
  // The lanes of each `T.vectorized` loop from 0 with a constant trip count (see swizzledOffset).
  const extents = new Map<number, number>();
  const lets = new Map<number, Expr>();
  walkStmt(body, (x) => {
    if (x.kind === "Let") lets.set(x.var.id, x.value);
    if (x.kind !== "For" || x.annotation !== "vectorized" || constInt(x.min) !== 0) return;
    const n = constInt(x.extent);
    if (n !== undefined && n > 1) extents.set(x.var.id, n);
  });
  // Divisors see through `T.let_` bindings (each binds a fresh variable), a few levels deep.
  const divisor = (e: Expr): number => {
    let x = e;
    for (let i = 0; i < 8; i++) {
      const y = substitute(x, lets);
      if (y === x) break;
      x = y;
    }
    return knownDivisor(x);
  };
  const lanes: VectorLanes = { extents, divisor };
  return mapStmt(
    body,
    {
      expr: (e) => {
        if ((e.kind !== "BufferLoad" && e.kind !== "BufferPtr") || !e.buffer.layout) return e;
        const eb = dtypeBytes(e.kind === "BufferLoad" ? e.dtype : e.buffer.dtype);
        const offset = swizzledOffset(e.buffer.layout, e.offset, eb, e.buffer, e.span, lanes);
        return offset === e.offset ? e : { ...e, offset };
      },
      stmt: (s) => {
        if (s.kind !== "Store" || !s.buffer.layout) return s;
        const offset = swizzledOffset(
          s.buffer.layout,
          s.offset,
          dtypeBytes(s.dtype),
          s.buffer,
          s.span,
          lanes,
        );
        return offset === s.offset ? s : { ...s, offset };
      },
    },
    memo,
  );
}

/** The `swizzle` pass: {@link applySwizzles}. */
export const swizzlePass: Pass = entryPass(
  "swizzle",
  "logical offsets of loads, stores and addresses of swizzled shared buffers → physical offsets",
  (body) => applySwizzles(body),
);
