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
export {
  makeGemm,
  checkGemmSizes,
  type GemmSizes,
  type GemmKernels,
  type GemmInput,
} from "./gemm/kernel.js";
export {
  GEMM_CONFIGS,
  MAX_GEMM_SHARED,
  gemmTiles,
  pickGemmConfig,
  type GemmConfig,
  type GemmConfigEntry,
  type GemmShape,
} from "./gemm/config.js";
export { type GemmActivation, type GemmEpilogue, type GemmFloat } from "./gemm/epilogue.js";
export { gemm, type GemmOptions } from "./gemm/gemm.js";
export { makePadRows, paddedPitch } from "./gemm/pad.js";
