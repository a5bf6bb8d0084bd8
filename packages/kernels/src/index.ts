export {
  FLASH_ATTENTION_BLOCK_N,
  makeFlashAttention,
  type FlashAttentionSizes,
} from "./attention/forward.js";
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
export { launchScale } from "./attention/options.js";
export {
  makeGemm,
  checkGemmSizes,
  blockScaleShapes,
  blockScaleShapeMN,
  tmaScalesAsGiven,
  SCALE_BLOCK,
  type GemmSizes,
  type CheckedGemmConfig,
  type GemmKernels,
  type GemmInput,
} from "./gemm/kernel.js";
export {
  GEMM_CONFIGS,
  GEMM_TUNE_EXTRA,
  GEMM_TUNED_DEFAULTS,
  gemmRowsBucket,
  gemmTuneKey,
  type GemmKeySizes,
  gemmTiles,
  pickGemmConfig,
  type GemmConfig,
  type GemmScaleLoad,
  type GemmConfigEntry,
  type GemmShape,
} from "./gemm/config.js";
export {
  MAX_GEMM_SHARED,
  gemmScaleTileBytes,
  gemmSharedBytes,
  gemmTileRegisterBudget,
  gemmTileRegisters,
  gemmStageBytes,
  scalesByTma,
} from "./gemm/tile.js";
export {
  scaleMode,
  type GemmActivation,
  type GemmEpilogue,
  type GemmFloat,
} from "./gemm/epilogue.js";
export {
  gemm,
  gemmBuildStats,
  gemmChoice,
  gemmTuneCandidates,
  type GemmChoice,
  type GemmOptions,
  type GemmTuneOptions,
} from "./gemm/gemm.js";
export { makePadRows, paddedPitch } from "./gemm/pad.js";
export { makeScaleTransposeA } from "./gemm/scales.js";
export { memoryRelation, refuseAliasing } from "./memory.js";
