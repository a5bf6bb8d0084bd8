import type { Buffer, Expr } from "../ir/expr.js";
import type { Stmt } from "../ir/stmt.js";
import { tileStorage } from "../tile/slots.js";
import { mapStmt } from "./map.js";
import { entryPass } from "./pass.js";

/**
 * Give every laid-out local tile (`Buffer.tileLayout`) its storage: the thread's own slots only
 * ({@link tileStorage}: `[span of m]`, the layout dropped). Accesses already address slots (the
 * dsl maps a logical index through the layout, tile primitives address slots), so only the
 * buffer changes; code generators and the simulator then see a plain local array.
 */
export function lowerTileStorage(body: Stmt): Stmt {
  const memo = new Map<number, Buffer>();
  const store = (b: Buffer): Buffer => {
    if (!b.tileLayout) return b;
    let s = memo.get(b.id);
    if (!s) memo.set(b.id, (s = tileStorage(b)));
    return s;
  };
  return mapStmt(body, {
    expr: (e: Expr): Expr =>
      (e.kind === "BufferLoad" || e.kind === "BufferPtr") && e.buffer.tileLayout
        ? { ...e, buffer: store(e.buffer) }
        : e,
    stmt: (s: Stmt): Stmt =>
      (s.kind === "Alloc" || s.kind === "Store") && s.buffer.tileLayout
        ? { ...s, buffer: store(s.buffer) }
        : s,
  });
}

/** The `tile-storage` pass: {@link lowerTileStorage}. */
export const tileStoragePass = entryPass(
  "tile-storage",
  "laid-out local tiles → plain local arrays of the thread's own slots",
  (body) => lowerTileStorage(body),
);
