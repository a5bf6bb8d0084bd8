// The seed's copy_async kernel: 128 threads each issue four 16-byte cp.async copies of a
// (128, 32) float16 tile from global to shared memory, wait, sync, and write the tile back out.
// Run: npx tsx examples/copy_async.ts        Build only: npx tirx build examples/copy_async.ts
import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  T,
  checkOutput,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
  type PrimFunc,
} from "tirx-ts";

export const copy_async = T.function(
  "copy_async",
  { A: T.Tensor([128, 32], "float16"), B: T.Tensor([128, 32], "float16") },
  ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = T.cuda.thread_idx("x");
    const shared = T.alloc_shared([128, 32], "float16", { layout: "default", name: "shared" });
    const src = A.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    const dst = shared.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"], dst, src, {
      chunk_bytes: 16,
      scope: "cta",
    });
    T.ptx.cp.async_.commit_group();
    T.ptx.cp.async_.wait_group(0);
    T.cuda.cta_sync();
    for (const j of T.range(32)) B.set([tid, j], shared.get([tid, j]));
  },
);

/** Assemble `ptx` with ptxas when it is installed; returns what happened, in words. */
function assemble(ptx: string, arch: string): string {
  const dir = mkdtempSync(join(tmpdir(), "tirx-"));
  const file = join(dir, "copy_async.ptx");
  writeFileSync(file, ptx);
  try {
    execFileSync("ptxas", [`-arch=${arch}`, file, "-o", join(dir, "copy_async.cubin")], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    return `ptxas -arch=${arch}: assembled`;
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: Buffer };
    if (err.code === "ENOENT") return "ptxas not installed: not assembled";
    throw new Error(`ptxas -arch=${arch} failed:\n${err.stderr?.toString() ?? err.message}`);
  }
}

/**
 * Run the kernel on `dev` and check `b == x` for x = arange(4096) % 97 as float16.
 * Returns the output bytes too, so tests can compare devices bit for bit.
 * `kernel` (default: this file's) is what runs; examples/script/copy_async.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  kernel: PrimFunc = copy_async,
): ExampleResult {
  const run = compile(kernel, { target: "cuda" });
  const x = Float32Array.from({ length: 4096 }, (_, i) => i % 97);
  const a = tensor(x, { shape: [128, 32], dtype: "float16", device: dev });
  const b = tensor.zeros([128, 32], "float16", dev);
  run(a, b);
  return checkOutput(b, x, [a]);
}

/** Print the cp.async lines of the PTX and whether ptxas assembles it. */
function showPtx(): void {
  const run = compile(copy_async, { target: "cuda" });
  console.log("cp.async lines of the generated PTX:");
  for (const line of run.ptx.split("\n")) if (line.includes("cp.async")) console.log(line);
  for (const arch of ["sm_80", "sm_90"]) console.log(assemble(run.ptx, arch));
}

if (isMain(import.meta.url)) {
  showPtx();
  runAsMain("copy_async", runExample);
}
