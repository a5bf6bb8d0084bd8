export { T } from "./T.js";
export { PrimExpr, type ExprLike } from "./expr.js";
export { TileView, type Index } from "./view.js";
export { PtxOp } from "./ptx.js";
export type { TensorType, ScalarType, DTypeFn } from "./types.js";
export type { ParamType, ParamHandles } from "./function.js";
export { printFunc } from "./printer.js";
export { callerSpan } from "./span.js";
export { show } from "./expr.js";
