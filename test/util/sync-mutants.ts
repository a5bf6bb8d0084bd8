// The kernels of the mutation test (test/mutation.test.ts) and their synchronization
// statements: every correct kernel the simulator's hazard analysis is checked on, and for each
// the mutants with one synchronization removed.
import {
  dtypeBytes,
  findOp,
  mapStmt,
  seq,
  stmtChildren,
  walkExpr,
  type KernelArg,
  type PrimFunc,
  type Stmt,
} from "@tirx-ts/core";
import { simTensor } from "@tirx-ts/runtime-sim";
import { copy_async } from "../../examples/copy_async.js";
import { bulk_copy } from "../../examples/bulk_copy.js";
import { makeBulkPipeline } from "../../examples/bulk_pipeline.js";
import { makeGemm } from "../../examples/gemm_simt.js";
import { makeReduceRows } from "../../examples/reduce_rows.js";
import { vector_add } from "../../examples/vector_add.js";
import { zero_fill_rows } from "../../examples/zero_fill_rows.js";
import { rowCopyKernel, seedKernel } from "../../packages/runtime-sim/test/kernels.js";
import { initArrive } from "../../packages/codegen-ptx/test/util/bulk-kernels.js";
import { globalThenBulk } from "../kernels/proxy.js";

export interface Case {
  readonly fn: PrimFunc;
  /** Values of scalar parameters and of symbolic dims, by name. */
  readonly scalars?: Record<string, number>;
}

export const CASES: readonly Case[] = [
  { fn: copy_async },
  { fn: bulk_copy },
  { fn: makeBulkPipeline({ elements: 4096, tileBytes: 1024, stages: 2, grid: 2 }) },
  { fn: makeBulkPipeline({ elements: 6144, tileBytes: 512, stages: 3, grid: 1 }) },
  // Three K-tiles, so a prefetch refills a stage other warps read one iteration before.
  { fn: makeGemm(64, 64, 96) },
  { fn: makeReduceRows(8, 512) },
  { fn: vector_add, scalars: { n: 77 } },
  { fn: zero_fill_rows, scalars: { valid_rows: 5 } },
  { fn: seedKernel },
  { fn: rowCopyKernel(256, 64) },
  // Not here: codegen's oneTile (threads 1..31 wait on an mbarrier thread 0 initialised with no
  // cta_sync after the init: TX6003, a real race kept for its PTX snapshots), mbarrierOps and
  // storeOnly (instruction coverage only; they read uninitialised shared memory).
  { fn: initArrive() },
  { fn: globalThenBulk },
];

/** The encoded contents of each tensor parameter of a case, made once (see argsOf). */
const contents = new WeakMap<Case, (Uint8Array | number[] | undefined)[]>();

export /**
 * Deterministic contents for every tensor parameter (fresh tensors each call); scalars and
 * symbolic dims from `c`. The contents are encoded once per case and copied into each call's
 * tensors (tests launch the same case hundreds of times).
 */
function argsOf(c: Case): KernelArg[] {
  const s = c.scalars ?? {};
  let made = contents.get(c);
  if (!made) {
    made = c.fn.params.map((p) => {
      if (p.kind === "scalar") return undefined;
      const shape = p.buffer.shape.map((d) => (typeof d === "number" ? d : s[d.name]!));
      const n = shape.reduce((a, b) => a * b, 1);
      const dt = p.buffer.dtype;
      const int = dt.startsWith("int") || dt.startsWith("uint");
      const data = Array.from({ length: n }, (_, i) => (int ? (i * 7 + 3) % 100 : (i % 61) * 0.5));
      // Raw bytes are taken as they are only for dtypes wider than a byte (simTensor).
      return dtypeBytes(dt) > 1 ? simTensor(data, { shape, dtype: dt }).toBytes() : data;
    });
    contents.set(c, made);
  }
  return c.fn.params.map((p, k) => {
    if (p.kind === "scalar") return s[p.name] ?? 0;
    const shape = p.buffer.shape.map((d) => (typeof d === "number" ? d : s[d.name]!));
    return simTensor(made[k]!, { shape, dtype: p.buffer.dtype });
  });
}

/** The op name of a synchronization statement, or undefined. */
export function syncOf(s: Stmt): string | undefined {
  if (s.kind === "While") {
    let wait: string | undefined;
    walkExpr(s.cond, (x) => {
      if (x.kind !== "CallExpr") return;
      const fx = findOp(x.op)?.sim;
      if (fx?.kind === "machine" && fx.effect.unit === "mbarrier") wait = x.op;
    });
    return wait;
  }
  if (s.kind !== "Call") return undefined;
  const fx = findOp(s.op)?.sim;
  if (fx?.kind === "warp") return s.op;
  if (fx?.kind !== "machine") return undefined;
  const { unit, action } = fx.effect as { unit: string; action: string };
  if (unit === "barrier" || unit === "fence") return s.op;
  if (unit === "cp.async" && action !== "commit") return s.op;
  if (unit === "bulk" && action !== "commit") return s.op;
  if (unit === "mbarrier" && action !== "init") return s.op;
  return undefined;
}

/** The synchronization statements of `body`, in program order. */
export function syncStmts(body: Stmt): Stmt[] {
  const out: Stmt[] = [];
  const walk = (s: Stmt): void => {
    if (syncOf(s)) out.push(s);
    for (const c of stmtChildren(s)) walk(c);
  };
  walk(body);
  return out;
}

/** `fn` with statement `target` removed. */
export function without(fn: PrimFunc, target: Stmt): PrimFunc {
  return { ...fn, body: mapStmt(fn.body, { stmt: (s) => (s === target ? seq([]) : s) }) };
}

/** A mutant of a kernel: `fn` without its synchronization statement `target`, an `op`. */
export interface Mutant {
  /** `kernel/op#k`: the k-th synchronization statement of that op in program order. */
  readonly key: string;
  readonly op: string;
  readonly target: Stmt;
  readonly fn: PrimFunc;
}

/** The mutants of `fn`, one per synchronization statement, in program order. */
export function mutants(fn: PrimFunc): Mutant[] {
  const count = new Map<string, number>();
  return syncStmts(fn.body).map((target) => {
    const op = syncOf(target)!;
    const k = count.get(op) ?? 0;
    count.set(op, k + 1);
    return { key: `${fn.name}/${op}#${k}`, op, target, fn: without(fn, target) };
  });
}
