import { builderT } from "./builder-t.js";
import { prim_func } from "./script/prim-func.js";
import { strictNamespace } from "./strict-namespace.js";

/**
 * The `T` namespace: TIRx script names in TypeScript. Statements are recorded while a
 * `T.function` body runs, and `T.prim_func` defines a kernel in script mode; see the README for
 * a complete kernel. A member it lacks (`T.cuda.thread_id`, or `w.sums` after
 * `const w = T.tile.warp`) throws TirxError TX1024 with the nearest name.
 */
export const T = strictNamespace({ ...builderT, prim_func }, "T");
