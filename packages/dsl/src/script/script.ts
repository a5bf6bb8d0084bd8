import { T } from "../T.js";
import type { ScriptT } from "./types.js";

/**
 * `T` for script-mode kernels: the same object as the builder's `T`, typed so that a
 * `T.prim_func` body (never run, only parsed) type-checks with plain operators and indexing.
 * @example
 * import { script as T, type Tensor } from "tirx-ts";
 */
export const script: ScriptT = T as unknown as ScriptT;
