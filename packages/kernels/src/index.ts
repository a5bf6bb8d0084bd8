export { makeFlashAttention, type FlashAttentionSizes } from "./attention/forward.js";
export { makeFlashAttentionBackward, type FlashAttentionBackward } from "./attention/backward.js";
export {
  attention,
  pickAttentionConfig,
  ATTENTION_CONFIGS,
  SIM_ARCH,
  type AttentionOptions,
  type AttentionResult,
  type AttentionConfig,
  type AttentionPass,
  type AttentionTuning,
} from "./attention/attention.js";
