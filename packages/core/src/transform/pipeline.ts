import { lowerTilePass } from "./lower-tile.js";
import type { Pass } from "./pass.js";
import { simplifyPass } from "./simplify.js";
import { swizzlePass } from "./swizzle.js";
import { tileStoragePass } from "./tile-storage.js";
import { unrollPass } from "./unroll.js";
import { upcastHalfPass } from "./upcast-half.js";

/**
 * The passes every code generator runs after `verify`, in order: lower-tile → tile-storage →
 * unroll → simplify → swizzle → upcast-half. Targets append their own stages (codegen-ptx: storage planning).
 */
export const DEFAULT_PASSES: readonly Pass[] = [
  lowerTilePass,
  tileStoragePass,
  unrollPass,
  simplifyPass,
  swizzlePass,
  upcastHalfPass,
];
