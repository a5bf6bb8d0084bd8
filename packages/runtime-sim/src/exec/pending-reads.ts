import type { SimContext } from "./context.js";
import type { GlobalMem } from "./memory.js";

/**
 * Pending async reads of tensors (cp.async and global → shared bulk copies in flight) as a
 * tensor's shadow counts them per byte. Copies count per byte only into tensors that have the
 * counts; they are made at the first thread write to the tensor while copies are in flight (from
 * the copies in flight then), so a launch whose copies read tensors it never writes counts
 * nothing per byte.
 */

/** Materialise `gm`'s pending-read counts when async copies are in flight (before a thread write). */
export function beforeGlobalWrite(m: SimContext, gm: GlobalMem): void {
  const sh = gm.shadow;
  if (!sh.hasPendingReads && (m.async.live > 0 || m.bulk.inflight > 0)) {
    sh.startPendingReads((add) => {
      const each = (tens: number, src: number, len: number): void => {
        if (m.globals[tens]?.shadow === sh) add(src, len);
      };
      m.async.forEachRead(each);
      m.bulk.forEachRead(each);
    });
  }
}

/** The first byte of [a, a + n) of `gm` that a pending async copy reads, or -1 (an interval scan). */
export function firstPendingRead(m: SimContext, gm: GlobalMem, a: number, n: number): number {
  let hit = -1;
  const find = (tens: number, src: number, len: number): void => {
    if (m.globals[tens]?.shadow !== gm.shadow) return;
    const lo = Math.max(a, src);
    if (lo < Math.min(a + n, src + len) && (hit < 0 || lo < hit)) hit = lo;
  };
  m.async.forEachRead(find);
  m.bulk.forEachRead(find);
  return hit;
}
