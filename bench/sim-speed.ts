// Simulator speed: the seed kernel (limit 100 ms) and a 1024 x 1024 float32 row copy through
// shared memory over 1024 CTAs of 256 threads (limit 10 s on a 2-core machine).
// Run: npx tsx -C source bench/sim-speed.ts      Exits 1 when a limit is exceeded.
import { verify, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { rowCopyKernel, seedKernel } from "../packages/runtime-sim/test/kernels.js";

interface Case {
  name: string;
  fn: PrimFunc;
  args: () => KernelArg[];
  check: (args: KernelArg[]) => boolean;
  limitMs: number;
}

const x = Float32Array.from({ length: 4096 }, (_, i) => i % 97);
const n = 1024;
const big = Float32Array.from({ length: n * n }, (_, i) => (i % 4099) * 0.5);
const same = (args: KernelArg[]): boolean => {
  const [a, b] = args as unknown as [{ toBytes(): Uint8Array }, { toBytes(): Uint8Array }];
  return Buffer.from(a.toBytes()).equals(b.toBytes());
};

const cases: Case[] = [
  {
    name: "seed copy_async (128x32 f16, 1 CTA x 128 threads)",
    fn: seedKernel,
    args: () => [
      simTensor(x, { shape: [128, 32], dtype: "float16" }),
      simZeros([128, 32], "float16"),
    ],
    check: same,
    limitMs: 100,
  },
  {
    name: "row copy (1024x1024 f32, 1024 CTAs x 256 threads)",
    fn: rowCopyKernel(n),
    args: () => [simTensor(big, { shape: [n, n], dtype: "float32" }), simZeros([n, n], "float32")],
    check: same,
    limitMs: 10_000,
  },
];

let failed = false;
for (const c of cases) {
  // First launch: verify + compile + run, cold JIT.
  let args = c.args();
  let t0 = performance.now();
  runSim(verify(c.fn), args);
  const cold = performance.now() - t0;
  const okCold = c.check(args);
  const vf = verify(c.fn);
  runSim(vf, c.args());
  args = c.args();
  t0 = performance.now();
  runSim(vf, args);
  const warm = performance.now() - t0;
  const ok = okCold && c.check(args);
  const pass = ok && cold < c.limitMs;
  failed ||= !pass;
  console.log(
    `${pass ? "ok  " : "FAIL"} ${c.name}: first launch ${cold.toFixed(1)} ms, warm ${warm.toFixed(1)} ms (limit ${c.limitMs} ms)${ok ? "" : ", WRONG RESULT"}`,
  );
}
process.exitCode = failed ? 1 : 0;
