/**
 * @tirx-ts/codegen-ptx: verified tirx-ts functions to PTX module text.
 *
 * Layout: `ops.ts` maps IR operators to PTX templates and `intrinsics.ts` intrinsics to theirs;
 * `lower/` holds small passes (16-bit float promotion, storage layout); `emit/` turns statements
 * and expressions into instructions; `patterns/` holds one emitter per tile pattern (cp.async,
 * cp.async.bulk); `render.ts` assembles the module text.
 */
export { emitPtx, compileToPtx, PTX_PASSES, type PtxModule, type PtxOptions } from "./module.js";
export { storagePass } from "./lower/storage-pass.js";
export { FEATURES, resolveArch, requiredArch, defaultArch, type Feature } from "./target.js";
/** The target table and PTX versions are core's (`core/src/target.ts`), re-exported here. */
export {
  ARCHS,
  DEFAULT_ARCH,
  maxVersion,
  formatVersion,
  type Arch,
  type PtxVersion,
} from "@tirx-ts/core";
export { upcastHalf } from "./lower/upcast-half.js";
export { INDEX32_MAX_BYTES, indexBits, widenIndex } from "./emit/index-width.js";
export { OOB_RECORD, OOB_RECORD_BYTES, type BoundsSite } from "./emit/bounds-check.js";
export type { AxisSite } from "./emit/bounds-site.js";
