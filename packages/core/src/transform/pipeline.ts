import { axisChecksPass } from "./axis-checks.js";
import { lowerTilePass } from "./lower-tile.js";
import type { Pass } from "./pass.js";
import { simplifyPass } from "./simplify.js";
import { swizzlePass } from "./swizzle.js";
import { tileStoragePass } from "./tile-storage.js";
import { unrollPass } from "./unroll.js";
import { upcastHalfPass } from "./upcast-half.js";

/**
 * The passes every code generator runs after `verify`, in order: lower-tile → axis-checks →
 * tile-storage → unroll → simplify → swizzle → upcast-half. Targets append their own stages
 * (codegen-ptx: storage planning). lower-tile comes first (the verifier's plans are keyed by
 * its nodes), axis-checks next: it proves indices in the verifier's scope, before unrolling and
 * simplification change the IR.
 */
export const DEFAULT_PASSES: readonly Pass[] = [
  lowerTilePass,
  axisChecksPass,
  tileStoragePass,
  unrollPass,
  simplifyPass,
  swizzlePass,
  upcastHalfPass,
];
