import { builderT } from "./builder-t.js";
import { prim_func } from "./script/prim-func.js";

/**
 * The `T` namespace: TIRx script names in TypeScript. Statements are recorded while a
 * `T.function` body runs, and `T.prim_func` defines a kernel in script mode; see the README for
 * a complete kernel.
 */
export const T = { ...builderT, prim_func };
