import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { makeGemmHopper } from "./examples/gemm_hopper.js";
const f = makeGemmHopper({ m: 4096, n: 4096, k: 4096 });
process.stdout.write(compileToPtx(f, { arch: "sm_90a" }).text);
