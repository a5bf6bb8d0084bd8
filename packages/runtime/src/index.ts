export { compile, type Compiled, type CompileOptions, type LaunchResult } from "./compile.js";
export { tensor, type TensorOptions } from "./tensor.js";
export { device, deviceArch } from "./device.js";
export {
  autotune,
  familyHash,
  registerTunedDefaults,
  tuneDeviceKey,
  tuneKeyText,
  type AutotuneLimits,
  type AutotuneOptions,
  type AutotuneResult,
  type ProgressStream,
  type TuneCandidate,
  type TuneConfig,
  type TuneKey,
  type TuneKeyRecord,
  type TuneValue,
  type TunedDefaults,
} from "./autotune.js";
export {
  autotuneCacheDir,
  autotuneFile,
  canonicalJson,
  readTuneCache,
  writeTuneCache,
  type TuneCacheEntry,
  type TuneCacheRead,
  type CachedCandidate,
} from "./autotune-cache.js";
export {
  parsePtxasUsage,
  registersPerBlock,
  REGISTERS_PER_BLOCK,
  type PtxasUsage,
} from "./autotune-fit.js";
