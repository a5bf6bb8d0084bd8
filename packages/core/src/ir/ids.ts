/**
 * Identity counters of variables and buffers. They live on `globalThis` under a registered symbol
 * so that two loaded copies of this package (a CLI running from `dist` loading a kernel file whose
 * imports resolve to `src`, say) never hand out the same id twice: ids are compared across every
 * IR a process builds and transforms.
 */
const KEY = Symbol.for("tirx-ts.ir.ids");

interface Counters {
  vars: number;
  buffers: number;
}

function counters(): Counters {
  const g = globalThis as { [KEY]?: Counters };
  return (g[KEY] ??= { vars: 1, buffers: 1 });
}

/** A fresh variable id, unique in the process. */
export function freshVarId(): number {
  return counters().vars++;
}

/** A fresh buffer id, unique in the process. */
export function freshBufferId(): number {
  return counters().buffers++;
}
