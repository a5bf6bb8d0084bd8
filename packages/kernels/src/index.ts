export { makeFlashAttention, type FlashAttentionSizes } from "./attention/forward.js";
export {
  backwardScratch,
  makeFlashAttentionBackward,
  type FlashAttentionBackward,
  type ScratchTensor,
} from "./attention/backward.js";
export {
  attention,
  attentionBackward,
  pickAttentionConfig,
  ATTENTION_CONFIGS,
  SIM_ARCH,
  type AttentionOptions,
  type AttentionResult,
  type AttentionBackwardOptions,
  type AttentionGradients,
  type AttentionConfig,
  type AttentionPass,
  type AttentionTuning,
} from "./attention/attention.js";
