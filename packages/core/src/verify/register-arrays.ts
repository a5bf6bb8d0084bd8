import { exprRange, type Interval } from "../analysis/bounds.js";
import { freeVars } from "../analysis/free-vars.js";
import { tileStorage } from "../tile/slots.js";
import { fragmentArgs, planRegisterArrays, unrolledLoop } from "../analysis/register-arrays.js";
import { evalInt, isStaticInt } from "../analysis/static-int.js";
import { bufferName } from "../buffer-name.js";
import { laneCount, type DType, type VectorDType } from "../dtype.js";
import { TirxError } from "../diagnostics.js";
import { numel, staticShape, type Buffer } from "../ir/buffer.js";
import { intRange } from "../numeric/int.js";
import type { Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { findOp } from "../ops/registry.js";
import type { Span } from "../span.js";
import { stmtExprs, walkExpr, walkStmt } from "../visit.js";

/**
 * Iterations of the unrolled loops an index depends on that are evaluated one by one, when
 * interval arithmetic cannot place the index (shifts, bit operators). Codegen emits a copy of the
 * access per iteration, so this is also a bound on the code the access becomes.
 */
const MAX_ITERATIONS = 1 << 16;

/**
 * True when interval arithmetic gives `x`'s own value (as its dtype holds it, wrapped): every
 * value in `r` is one the dtype holds, so nothing wrapped (64-bit: within 2^53, exact in floats).
 */
function unwrapped(x: Expr, r: Interval): boolean {
  const [min, max] =
    x.dtype === "int64"
      ? [-(2 ** 53), 2 ** 53]
      : x.dtype === "uint64"
        ? [0, 2 ** 53]
        : intRange(x.dtype);
  return r.min >= min && r.max <= max;
}

/** True when no node of `e` can wrap over `ranges` (see `unwrapped`). */
function noWrap(e: Expr, ranges: ReadonlyMap<number, Interval>): boolean {
  let ok = true;
  walkExpr(e, (x) => {
    if (ok && !unwrapped(x, exprRange(x, { vars: ranges }))) ok = false;
  });
  return ok;
}

/**
 * What code generation assumes of local arrays that live in registers (`planRegisterArrays`:
 * every index a constant once the unrolled loops are unrolled, one register per element), checked
 * on the IR being verified:
 * - a fragment operand of a warp-level matrix instruction (`frag.ptr([i])`) names an array that
 *   lives in registers: TX7001 otherwise, saying why it stays in `.local`;
 * - in every iteration of the unrolled loops around it, an access's index evaluates (TX2006 when
 *   it divides by zero) to an element of the array (TX2006; a fragment's whole span, TX7001).
 *   Code under a guard that never holds is checked too: codegen emits it, with a register for
 *   each element it names.
 * Each error is handed to `report`. Rules: PTX ISA "Registers" (a register array element is a
 * register, named at compile time), the fragment layouts of `mma`, `ldmatrix` and `wgmma`.
 */
export function checkRegisterArrays(body: Stmt, report: (e: TirxError) => void): void {
  const memory = planRegisterArrays(body);
  /** Element counts of the local arrays that live in registers, by buffer id. */
  const sizes = new Map<number, number>();
  /** Unrolled loops (first value and trip count) and lets of constants, by variable id. */
  const loops = new Map<number, { readonly min: bigint; readonly extent: bigint }>();
  const lets = new Map<number, Expr>();
  const known = new Set<number>();
  /** Ranges of those variables; a let's is left out when part of its value could wrap. */
  const ranges = new Map<number, Interval>();

  /**
   * The first iteration (values of the unrolled loops `offset` depends on) at which elements
   * `offset .. offset + count - 1` are not all inside `n` elements, with the first element there
   * (undefined: the index divides by zero); undefined when there is none.
   */
  const firstOutside = (
    offset: Expr,
    count: number,
    n: number,
  ): { at: Map<number, bigint>; first: bigint | undefined } | undefined => {
    if (placed(offset, count, n)) return undefined;
    const vars = loopVarsOf(offset);
    let total = 1n;
    for (const v of vars) total *= loops.get(v)!.extent;
    if (total > BigInt(MAX_ITERATIONS)) return undefined;
    const at = new Map<number, bigint>();
    const lookup = (id: number): bigint | undefined => {
      const hit = at.get(id);
      if (hit !== undefined) return hit;
      const value = lets.get(id);
      return value === undefined ? undefined : evalInt(value, lookup);
    };
    for (let k = 0n; k < total; k++) {
      let rest = k;
      for (const v of vars) {
        const { min, extent } = loops.get(v)!;
        at.set(v, min + (rest % extent));
        rest /= extent;
      }
      const first = evalInt(offset, lookup);
      if (first === undefined || first < 0n || first + BigInt(count) > BigInt(n)) {
        return { at: new Map(at), first };
      }
    }
    return undefined;
  };

  /** True when interval arithmetic places every value of `offset` (no wrap-around) inside. */
  const placed = (offset: Expr, count: number, n: number): boolean => {
    if (!freeVars(offset).every((id) => ranges.has(id)) || !noWrap(offset, ranges)) return false;
    const r = exprRange(offset, { vars: ranges });
    return r.min >= 0 && r.max + count <= n;
  };

  /** The unrolled loop variables `e` depends on, through lets, in a fixed order. */
  const loopVarsOf = (e: Expr): number[] => {
    const out = new Set<number>();
    const seen = new Set<number>();
    const work = [e];
    while (work.length > 0) {
      walkExpr(work.pop()!, (x) => {
        if (x.kind !== "Var" || seen.has(x.id)) return;
        seen.add(x.id);
        if (loops.has(x.id)) out.add(x.id);
        const value = lets.get(x.id);
        if (value) work.push(value);
      });
    }
    return [...out].sort((a, b) => a - b);
  };

  const names = new Map<number, string>();
  const iteration = (at: Map<number, bigint>): string =>
    at.size === 0
      ? ""
      : ` when ${[...at].map(([id, v]) => `${names.get(id) ?? "i"} = ${v}`).join(", ")}`;

  /**
   * An access of `count` elements of `b` from `offset` (a load, a store or a fragment); `dtype`,
   * the access's, counts `offset` and the array in vectors when it is a vector of the elements.
   */
  const access = (
    b: Buffer,
    offset: Expr,
    count: number,
    span: Span | undefined,
    fragment?: string,
    dtype: DType = b.dtype,
  ): void => {
    const all = sizes.get(b.id);
    if (all === undefined) return;
    const n = dtype === b.dtype ? all : Math.floor(all / laneCount(dtype as VectorDType));
    const bad = firstOutside(offset, count, n);
    if (!bad) return;
    const when = iteration(bad.at);
    if (bad.first === undefined) {
      report(new TirxError("TX2006", `the index of ${bufferName(b)} divides by zero${when}`, span));
    } else if (fragment !== undefined) {
      report(
        new TirxError(
          "TX7001",
          `${fragment} spans ${count} elements from ${bad.first}${when}, but ${bufferName(b)} holds ${n}`,
          span,
        ),
      );
    } else {
      report(
        new TirxError(
          "TX2006",
          dtype === b.dtype
            ? `access to ${bufferName(b)} at element ${bad.first}${when}, but it holds ${n} elements (shape [${b.shape.join(", ")}])`
            : `access to ${bufferName(b)} as ${dtype} at vector ${bad.first}${when}, but it holds ${n} whole vectors of ${dtype} (shape [${b.shape.join(", ")}])`,
          span,
          [
            {
              message:
                "a register array's elements are named when the kernel is compiled, also in code a guard skips",
            },
          ],
        ),
      );
    }
  };

  walkStmt(body, (s) => {
    switch (s.kind) {
      case "Alloc":
        if (s.buffer.scope === "local" && !memory.has(s.buffer.id)) {
          sizes.set(
            s.buffer.id,
            numel(staticShape(tileStorage(s.buffer), "a local array", s.span)),
          );
        }
        break;
      case "For":
        if (unrolledLoop(s)) {
          known.add(s.var.id);
          names.set(s.var.id, s.var.name);
          const min = evalInt(s.min, () => undefined);
          const trips = evalInt(s.extent, () => undefined);
          if (min !== undefined && trips !== undefined) {
            // A loop of no iterations is emitted as nothing: its accesses need no register.
            const extent = trips > 0n ? trips : 0n;
            loops.set(s.var.id, { min, extent });
            if (extent > 0n)
              ranges.set(s.var.id, { min: Number(min), max: Number(min + extent - 1n) });
          }
        }
        break;
      case "Let":
        if (isStaticInt(s.value, known)) {
          lets.set(s.var.id, s.value);
          known.add(s.var.id);
          if (noWrap(s.value, ranges)) ranges.set(s.var.id, exprRange(s.value, { vars: ranges }));
        }
        break;
      case "Store":
        access(s.buffer, s.offset, 1, s.span, undefined, s.dtype);
        break;
      default:
        break;
    }
    const fragments = fragmentArgs(s);
    const op = s.kind === "Call" ? findOp(s.op) : undefined;
    for (const e of stmtExprs(s)) {
      const count = fragments.get(e);
      if (count !== undefined && e.kind === "BufferPtr") {
        const i = s.kind === "Call" ? s.args.indexOf(e) : -1;
        const spec = op?.operands[i];
        const what = `${spec?.name ?? "a fragment"} of ${op?.surface ?? "the instruction"}`;
        const why = memory.get(e.buffer.id);
        if (why !== undefined) {
          report(
            new TirxError(
              "TX7001",
              `${what}: register array ${bufferName(e.buffer)} must live in registers with a constant element offset after unrolling (index its elements only with constants and T.unroll variables)`,
              e.span ?? s.span,
              [{ message: `it stays in .local memory: ${why}` }],
            ),
          );
        } else {
          access(e.buffer, e.offset, count, e.span ?? s.span, what);
        }
        continue;
      }
      walkExpr(e, (x) => {
        if (x.kind === "BufferLoad")
          access(x.buffer, x.offset, 1, x.span ?? s.span, undefined, x.dtype);
      });
    }
  });
}
