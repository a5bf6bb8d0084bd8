import { isLaneAccess } from "../dtype.js";
import type { Expr } from "../ir/expr.js";
import type { Buffer } from "../ir/buffer.js";
import { numel, staticShape } from "../ir/buffer.js";
import type { Stmt } from "../ir/stmt.js";
import { findOp } from "../ops/registry.js";
import type { Span } from "../span.js";
import { isView, stmtExprs, walkExpr, walkStmt } from "../visit.js";
import { isStaticInt } from "./static-int.js";
import { tileStorage } from "../tile/slots.js";

/**
 * The most elements a local array may have to live in registers. A thread has at most 255
 * registers (PTX ISA "Maximum number of registers per thread"); a larger array would only spill.
 */
export const MAX_REGISTER_ARRAY = 128;

const where = (span?: Span): string =>
  span ? ` at ${span.file.split(/[\\/]/).pop()}:${span.line}:${span.col}` : "";

/**
 * Which local arrays can live in registers, as nvcc does for arrays indexed by constants after
 * unrolling: every load and store of the array must have an element index built from constants,
 * variables of loops that codegen unrolls (`T.unroll`, `T.vectorized` with constant bounds) and
 * lets of such values, must read the array's own dtype (or a vector of it with 32-bit lanes,
 * `isLaneAccess`: its lanes are the elements' registers), and the array's address must never be
 * taken (no `BufferPtr`, no tile-pattern view). Returns, for each local array that stays in
 * `.local`, the reason (for a PTX comment); arrays not in the map live in registers. The
 * verifier plans the IR it checks (and refuses fragments of arrays left in `.local`, TX7001);
 * codegen plans the IR after the passes, where indices are only more constant.
 */
export function planRegisterArrays(body: Stmt): Map<number, string> {
  const known = new Set<number>();
  const memory = new Map<number, string>();
  // The reason is built only when it is kept: it names the access's line, and reading a span
  // costs a position lookup (spans are resolved when first read).
  const keep = (b: Buffer, why: () => string): void => {
    if (b.scope === "local" && !memory.has(b.id)) memory.set(b.id, why());
  };
  walkStmt(body, (s) => {
    switch (s.kind) {
      case "Alloc":
        if (s.buffer.scope !== "local") return;
        // A laid-out tile (T.alloc_local with a TileLayout) holds only the thread's own slots.
        const own = tileStorage(s.buffer);
        if (numel(staticShape(own, "a local array", s.span)) > MAX_REGISTER_ARRAY) {
          keep(s.buffer, () => `it has more than ${MAX_REGISTER_ARRAY} elements`);
        }
        return;
      case "For":
        if (unrolledLoop(s)) known.add(s.var.id);
        break;
      case "Let":
        if (isStaticInt(s.value, known)) known.add(s.var.id);
        break;
      case "Store":
        if (s.dtype !== s.buffer.dtype && !isLaneAccess(s.dtype, s.buffer.dtype))
          keep(s.buffer, () => `a store${where(s.span)} reinterprets it`);
        else if (!isStaticInt(s.offset, known)) {
          keep(
            s.buffer,
            () => `the index of the store${where(s.span)} is not a constant after unrolling`,
          );
        }
        break;
      case "TileApply":
        for (const v of [s.dst, s.src, ...Object.values(s.params).filter(isView)]) {
          keep(v.buffer, () => `a tile pattern${where(s.span)} uses it`);
        }
        break;
      default:
        break;
    }
    // Fragment operands of warp-level matrix instructions name register-array elements by
    // address (frag.ptr([i])) without taking the address: codegen passes the registers.
    const fragments = fragmentArgs(s);
    for (const e of stmtExprs(s)) {
      if (fragments.has(e)) {
        if (e.kind === "BufferPtr" && !isStaticInt(e.offset, known)) {
          keep(
            e.buffer,
            () => `the fragment offset${where(e.span ?? s.span)} is not a constant after unrolling`,
          );
        }
        continue;
      }
      walkExpr(e, (x) => {
        const at = (): string => where(x.span ?? s.span);
        if (x.kind === "BufferPtr") keep(x.buffer, () => `its address is taken${at()}`);
        if (x.kind !== "BufferLoad") return;
        if (x.dtype !== x.buffer.dtype && !isLaneAccess(x.dtype, x.buffer.dtype))
          keep(x.buffer, () => `a load${at()} reinterprets it`);
        else if (!isStaticInt(x.offset, known)) {
          keep(x.buffer, () => `the index of the load${at()} is not a constant after unrolling`);
        }
      });
    }
  });
  return memory;
}

/** True when codegen unrolls loop `s` (a `T.unroll` or `T.vectorized` loop with constant bounds). */
export function unrolledLoop(s: Extract<Stmt, { kind: "For" }>): boolean {
  return (
    s.annotation !== "serial" && isStaticInt(s.min, new Set()) && isStaticInt(s.extent, new Set())
  );
}

/** The arguments of a statement op that are fragment operands (op table kind `fragment`). */
export function fragmentArgs(s: Stmt): Map<Expr, number> {
  const out = new Map<Expr, number>();
  if (s.kind !== "Call") return out;
  const op = findOp(s.op);
  op?.operands.forEach((spec, i) => {
    const a = s.args[i];
    if (spec.kind === "fragment" && a?.kind === "BufferPtr" && a.buffer.scope === "local")
      out.set(a, spec.count);
  });
  return out;
}
