export { T, PrimExpr, TileView, printFunc, explainTile, type ExprLike } from "@tirx-ts/dsl";
export { script, parseScript, printScript, printScriptModule } from "@tirx-ts/dsl";
export type {
  Tensor,
  Tile,
  ScriptT,
  bool,
  int8,
  int16,
  int32,
  int64,
  uint8,
  uint16,
  uint32,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
} from "@tirx-ts/dsl";
export {
  TirxError,
  isTirxError,
  renderDiagnostic,
  renderDiagnostics,
  verify,
  structuralEqual,
  structuralHash,
  type DType,
  type PrimFunc,
  type DeviceLike,
  type DeviceTensor,
  type KernelArg,
  SYMMETRIC_GRANULARITY,
  symmetricShard,
} from "@tirx-ts/core";
export { emitPtx, compileToPtx, type PtxModule } from "@tirx-ts/codegen-ptx";
export {
  cuda,
  cudaAvailable,
  CudaError,
  CudaUnavailableError,
  CudaStream,
  CudaEvent,
  CudaGraph,
  captureGraph,
  SymmetricTensor,
  symmetricGranularity,
  type PeArg,
} from "@tirx-ts/runtime-cuda";
export { sim } from "@tirx-ts/runtime-sim";
export {
  makeFlashAttention,
  backwardScratch,
  makeFlashAttentionBackward,
  launchScale,
  type FlashAttentionSizes,
  type FlashAttentionBackward,
  attention,
  type AttentionOptions,
  type AttentionResult,
  attentionBackward,
  type AttentionBackwardOptions,
  type AttentionGradients,
  gemm,
  type GemmOptions,
  gemmChoice,
  type GemmChoice,
  blockScaleShapes,
  makeGemm,
  type GemmSizes,
  type GemmConfig,
  GEMM_CONFIGS,
  GEMM_TUNE_EXTRA,
  GEMM_TUNED_DEFAULTS,
  pickGemmConfig,
} from "@tirx-ts/kernels";
export {
  compile,
  tensor,
  device,
  type Compiled,
  type CompileOptions,
  type LaunchResult,
  type TensorOptions,
} from "@tirx-ts/runtime";
export {
  autotune,
  registerTunedDefaults,
  tuneKeyText,
  type AutotuneOptions,
  type AutotuneResult,
  type TuneCandidate,
  type TuneConfig,
  type TuneKey,
  type TunedDefaults,
} from "@tirx-ts/runtime";
export { layoutPictures, siteSvg, type LayoutPicture } from "./layout.js";
export { isMain, checkOutput, runAsMain, type ExampleResult } from "./main.js";
export { installUncaughtHandler } from "./uncaught.js";

import { installUncaughtHandler } from "./uncaught.js";
installUncaughtHandler();
