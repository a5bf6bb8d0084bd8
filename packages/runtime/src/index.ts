export { compile, type Compiled, type CompileOptions, type LaunchResult } from "./compile.js";
export { tensor, type TensorOptions } from "./tensor.js";
export { device, deviceArch } from "./device.js";
