export { makeFlashAttention, type FlashAttentionSizes } from "./attention/forward.js";
