import { stmtExprs, walkExpr, type Buffer, type Stmt } from "@tirx-ts/core";
import type { Machine } from "../exec/machine.js";
import type { Layout } from "./layout.js";
import type { Exec } from "./compiled.js";

/**
 * Batched statements: a Store or Let whose element accesses (its store, its loads) are all of
 * shared memory or tensors, each of a different buffer (shared buffers disjoint), in an
 * expression of plain arithmetic (no op call, no select: nothing else a lane does waits, orders
 * or runs speculatively). Such a statement runs its lanes with hazard checks deferred and checks
 * them at its end as runs of consecutive threads at consecutive elements (exec/access-batch.ts),
 * a warp's `B[row, tid] = s[tid]` as two ranges instead of 64 elements.
 */
export function batchable(layout: Layout, s: Stmt): boolean {
  if (s.kind !== "Store" && s.kind !== "Let") return false;
  const buffers: Buffer[] = [];
  if (s.kind === "Store") buffers.push(s.buffer);
  let plain = true;
  for (const e of stmtExprs(s)) {
    walkExpr(e, (x) => {
      if (x.kind === "BufferLoad") buffers.push(x.buffer);
      else if (x.kind === "CallExpr" || x.kind === "IfThenElse" || x.kind === "BufferPtr")
        plain = false;
    });
  }
  if (!plain || buffers.length === 0) return false;
  const spans: [number, number][] = [];
  const ids = new Set<number>();
  for (const b of buffers) {
    if (ids.has(b.id)) return false;
    ids.add(b.id);
    if (layout.params.has(b.id)) continue;
    const p = layout.shared.get(b.id);
    if (!p) return false; // local memory: checked at once
    for (const [lo, hi] of spans) if (p.base < hi && lo < p.base + p.size) return false;
    spans.push([p.base, p.base + p.size]);
  }
  return true;
}

/**
 * `exec` with the Machine's batch deferring its hazard checks (tracked launches only); they are
 * checked when it returns, or before its exception goes on (an earlier lane's report first). A
 * statement whose accesses did not form runs (strided or scattered elements) runs its next
 * executions with checks made at once, 1, 2, 4, ... up to 64 of them before it defers again,
 * since queueing them costs more than it saves there; either way the reports are the same.
 */
export function deferred(m: Machine, exec: Exec): Exec {
  const batch = m.batch;
  let skip = 0;
  let backoff = 1;
  return (lanes, n) => {
    if (!m.opts.track || !m.opts.rangeChecks) return exec(lanes, n);
    if (skip > 0) {
      skip--;
      return exec(lanes, n);
    }
    batch.deferring = true;
    try {
      exec(lanes, n);
    } catch (e) {
      batch.deferring = false;
      batch.flush();
      throw e;
    }
    batch.deferring = false;
    if (batch.flush()) backoff = 1;
    else {
      skip = backoff;
      backoff = Math.min(backoff * 2, 64);
    }
  };
}
