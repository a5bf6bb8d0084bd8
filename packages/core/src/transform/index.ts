export * from "./map.js";
export * from "./substitute.js";
export * from "./pass.js";
export * from "./lower-tile.js";
export * from "./unroll.js";
export * from "./simplify.js";
export * from "./upcast-half.js";
export * from "./pipeline.js";
