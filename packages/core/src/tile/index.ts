export * from "./operand.js";
export * from "./primitive.js";
export * from "./threads.js";
export { slotLoop, loadSlot, storeSlot, elementwise } from "./elementwise.js";
export { copy } from "./copy.js";
export type { TileReduceOp } from "./reduce.js";
export * from "./registry.js";
export * from "./slots.js";
export * from "./layout-name.js";
