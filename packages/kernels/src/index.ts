export { makeFlashAttention, type FlashAttentionSizes } from "./attention/forward.js";
export { makeFlashAttentionBackward, type FlashAttentionBackward } from "./attention/backward.js";
