// Build time of the seed kernel in script mode, in-process: the cold build (loading ts-morph,
// parsing this file, lowering) and warm builds (the parse is reused; only lowering runs), next to
// the same kernel in builder mode. Run: npx tsx bench/script-build.ts
import { script, T, type Tensor } from "tirx-ts";

function seedScript() {
  return script.prim_func(function copy_async(
    A: Tensor<[128, 32], "float16">,
    B: Tensor<[128, 32], "float16">,
  ) {
    script.device_entry({ launch: script.cuda.LaunchConfig({ grid: 1, block: 128 }) });
    const tid = script.cuda.thread_idx("x");
    const shared = script.alloc_shared([128, 32], "float16", { layout: "default", name: "shared" });
    const src = A.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    const dst = shared.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
    script.cuda.tile.apply(script.ptx["cp.async.cg.shared.global"], dst, src, {
      chunk_bytes: 16,
      scope: "cta",
    });
    script.ptx.cp.async_.commit_group();
    script.ptx.cp.async_.wait_group(0);
    script.cuda.cta_sync();
    for (let j = 0; j < 32; j++) B[tid]![j] = shared[tid]![j]!;
  });
}

function seedBuilder() {
  return T.function(
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
}

function median(f: () => unknown, n: number): number {
  const times: number[] = [];
  for (let k = 0; k < n; k++) {
    const t = performance.now();
    f();
    times.push(performance.now() - t);
  }
  return times.sort((a, b) => a - b)[n >> 1]!;
}

let t = performance.now();
seedScript();
const cold = performance.now() - t;
t = performance.now();
seedBuilder();
const builderCold = performance.now() - t;
const warm = median(seedScript, 500);
const builderWarm = median(seedBuilder, 500);
console.log(`| mode | cold (ms) | warm median of 500 (ms) |`);
console.log(`|---|---|---|`);
console.log(`| script (T.prim_func) | ${cold.toFixed(1)} | ${warm.toFixed(3)} |`);
console.log(`| builder (T.function) | ${builderCold.toFixed(1)} | ${builderWarm.toFixed(3)} |`);
