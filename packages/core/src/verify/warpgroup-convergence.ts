import { TirxError } from "../diagnostics.js";
import { dtypeBits, dtypeKind, isFloat } from "../dtype.js";
import type { Expr } from "../ir/expr.js";
import type { LaunchConfig, Stmt } from "../ir/stmt.js";
import { foldInt } from "../numeric/int-fold.js";
import { findOp } from "../ops/index.js";
import { stmtChildren } from "../visit.js";

/** Threads of a warpgroup (PTX ISA, wgmma: "a warpgroup is a set of four contiguous warps"). */
const WARPGROUP = 128;

/**
 * An instruction that all 128 threads of a warpgroup execute together (`warpgroupAligned` on its
 * op record: wgmma.fence / commit_group / wait_group / mma_async, setmaxnreg; PTX ISA, wgmma and
 * setmaxnreg, `.sync.aligned`) must not sit under an `if` whose condition differs between the
 * threads of one warpgroup. The verifier refuses the cases it can prove: a condition that depends
 * only on thread indices (`T.cuda.thread_idx`, block dimensions, constants, and lets of those)
 * is evaluated for every thread of the CTA (the launch's block), and one that is true for some
 * threads of a warpgroup and false for others is divergent (`tid < 64`, `tid % 2 == 0`). A
 * condition true or false for whole warpgroups passes (`tid < 128` in a block of 256,
 * `floordiv(tid, 128) == 1`), and so does one that reads anything else (a block index, a loop
 * variable, a load): uniformity there is left to the simulator's check (TX6011), which sees the
 * threads that actually execute the instruction.
 * @param root the kernel body (the device entry's).
 * @param launch the launch (its block gives the threads evaluated).
 * @param report receives each error; the walk goes on after one.
 * @throws TirxError only what `report` throws; each error is TX7012 at the instruction, naming it,
 *   the condition's line and a fix.
 */
export function checkWarpgroupConvergence(
  root: Stmt,
  launch: LaunchConfig,
  report: (e: TirxError) => void,
): void {
  const lets = new Map<number, Expr>();
  const work: Stmt[] = [root];
  while (work.length > 0) {
    const s = work.pop()!;
    if (s.kind === "Let") lets.set(s.var.id, s.value);
    const cs = stmtChildren(s);
    for (let i = cs.length - 1; i >= 0; i--) work.push(cs[i]!);
  }
  const ev = new ThreadEval(launch, lets);
  // The enclosing If conditions of each statement, from an explicit stack (any nesting is safe).
  const conds: { cond: Expr; span: Stmt["span"] }[] = [];
  const stack: (Stmt | "leave")[] = [root];
  while (stack.length > 0) {
    const s = stack.pop()!;
    if (s === "leave") {
      conds.pop();
      continue;
    }
    if (s.kind === "Call" && findOp(s.op)?.warpgroupAligned) {
      for (const c of conds) {
        const split = ev.divergence(c.cond);
        if (split === undefined) continue;
        const line = c.span ? ` (line ${c.span.line})` : "";
        report(
          new TirxError(
            "TX7012",
            `${s.op} is executed by all 128 threads of a warpgroup together (.sync.aligned), but it sits under an if${line} whose condition differs within warpgroup ${split.group}: it holds for thread ${split.yes} and not for thread ${split.no}; issue it outside the if, or branch on a warpgroup-uniform value such as floordiv(thread_idx, 128)`,
            s.span,
            c.span ? [{ message: "the divergent condition", span: c.span }] : [],
          ),
        );
        break;
      }
    }
    if (s.kind === "If") {
      conds.push({ cond: s.cond, span: s.span });
      stack.push("leave");
    }
    const cs = stmtChildren(s);
    for (let i = cs.length - 1; i >= 0; i--) stack.push(cs[i]!);
  }
}

/** Evaluates thread-index expressions for each thread of the block. */
class ThreadEval {
  readonly #block: readonly [number, number, number];
  readonly #lets: ReadonlyMap<number, Expr>;
  readonly #memo = new Map<Expr, { group: number; yes: number; no: number } | null>();
  #tid: [bigint, bigint, bigint] = [0n, 0n, 0n];

  constructor(launch: LaunchConfig, lets: ReadonlyMap<number, Expr>) {
    this.#block = launch.block;
    this.#lets = lets;
  }

  /**
   * The first warpgroup whose threads disagree on `cond` (with the first thread where it holds and the
   * first where it does not, as linear thread indices), or undefined when it is uniform per warpgroup
   * or cannot be evaluated from thread indices alone.
   */
  divergence(cond: Expr): { group: number; yes: number; no: number } | undefined {
    const hit = this.#memo.get(cond);
    if (hit !== undefined) return hit ?? undefined;
    const [bx, by, bz] = this.#block;
    const n = bx * by * bz;
    let found: { group: number; yes: number; no: number } | null = null;
    let yes = -1;
    let no = -1;
    for (let t = 0; t < n && found === null; t++) {
      if (t % WARPGROUP === 0) {
        yes = -1;
        no = -1;
      }
      this.#tid = [
        BigInt(t % bx),
        BigInt(Math.floor(t / bx) % by),
        BigInt(Math.floor(t / (bx * by))),
      ];
      const v = this.#eval(cond, 0);
      if (v === undefined) {
        this.#memo.set(cond, null);
        return undefined;
      }
      if (v !== 0n) yes = yes < 0 ? t : yes;
      else no = no < 0 ? t : no;
      if (yes >= 0 && no >= 0) found = { group: Math.floor(t / WARPGROUP), yes, no };
    }
    this.#memo.set(cond, found);
    return found ?? undefined;
  }

  /** `e` for the current thread (bools as 0n / 1n), or undefined when unknown. */
  #eval(e: Expr, depth: number): bigint | undefined {
    if (depth > 64 || isFloat(e.dtype)) return undefined;
    const d = depth + 1;
    switch (e.kind) {
      case "IntImm":
        return BigInt(e.value);
      case "Special": {
        const axis = "xyz".indexOf(e.name.slice(-1));
        if (e.name.startsWith("tid.")) return this.#tid[axis];
        if (e.name.startsWith("ntid.")) return BigInt(this.#block[axis]!);
        return undefined;
      }
      case "Var": {
        const v = this.#lets.get(e.id);
        return v === undefined ? undefined : this.#eval(v, d);
      }
      case "Binary": {
        const a = this.#eval(e.a, d);
        const b = a === undefined ? undefined : this.#eval(e.b, d);
        return b === undefined ? undefined : foldInt(e.op, a!, b, e.dtype);
      }
      case "Compare": {
        const a = this.#eval(e.a, d);
        const b = a === undefined ? undefined : this.#eval(e.b, d);
        if (b === undefined || isFloat(e.a.dtype)) return undefined;
        const w = (v: bigint): bigint => wrap(v, e.a.dtype);
        const [x, y] = [w(a!), w(b)];
        const r = { eq: x === y, ne: x !== y, lt: x < y, le: x <= y, gt: x > y, ge: x >= y }[e.op];
        return r ? 1n : 0n;
      }
      case "Logical": {
        const a = this.#eval(e.a, d);
        const b = a === undefined ? undefined : this.#eval(e.b, d);
        if (b === undefined) return undefined;
        const r = e.op === "and" ? a !== 0n && b !== 0n : a !== 0n || b !== 0n;
        return r ? 1n : 0n;
      }
      case "Not": {
        const a = this.#eval(e.a, d);
        return a === undefined ? undefined : a === 0n ? 1n : 0n;
      }
      case "Cast": {
        const v = this.#eval(e.value, d);
        if (v === undefined || isFloat(e.value.dtype)) return undefined;
        if (e.dtype === "bool") return v !== 0n ? 1n : 0n;
        return wrap(v, e.dtype);
      }
      case "IfThenElse": {
        const c = this.#eval(e.cond, d);
        if (c === undefined) return undefined;
        return this.#eval(c !== 0n ? e.t : e.f, d);
      }
      default:
        return undefined;
    }
  }
}

/** `v` wrapped to integer dtype `dt` (bool: 0 or 1). */
function wrap(v: bigint, dt: Expr["dtype"]): bigint {
  if (dt === "bool") return v !== 0n ? 1n : 0n;
  const bits = dtypeBits(dt);
  return dtypeKind(dt) === "int" ? BigInt.asIntN(bits, v) : BigInt.asUintN(bits, v);
}
