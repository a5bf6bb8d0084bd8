// Variants of the seed's copy_async kernel for tests. Each tile.apply line carries a marker
// comment so tests can find the author's line without hard-coding it.
import { T } from "@tirx-ts/dsl";
import type { PrimFunc } from "@tirx-ts/core";

export interface SeedVariant {
  opcode?: string;
  chunk_bytes?: number;
  swap?: boolean;
  pattern?: string;
  sizes?: Record<string, number>;
  block?: number;
}

/** The seed kernel, optionally altered to break one rule. */
export function seedKernel(v: SeedVariant = {}): PrimFunc {
  const pattern = v.pattern ?? "(w t) (r v) -> w t r v";
  const sizes = v.sizes ?? { w: 4, t: 32, v: 8 };
  return T.function(
    "copy_async",
    { A: T.Tensor([128, 32], "float16"), B: T.Tensor([128, 32], "float16") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: v.block ?? 128 }) });
      const tid = T.cuda.thread_idx("x");
      const shared = T.alloc_shared([128, 32], "float16", { layout: "default" });
      const src = A.rearrange(pattern, sizes);
      const dst = shared.rearrange(pattern, sizes);
      const [d, s] = v.swap ? [src, dst] : [dst, src];
      const op = T.ptx[v.opcode ?? "cp.async.cg.shared.global"];
      T.cuda.tile.apply(op, d, s, { chunk_bytes: v.chunk_bytes ?? 16, scope: "cta" }); // APPLY
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const j of T.range(32)) B.set([tid, j], shared.get([tid, j]));
    },
  );
}

/** 1-based line of the first line in `file` containing `marker`. */
export async function lineOf(file: string, marker: string): Promise<number> {
  const { readFileSync } = await import("node:fs");
  const lines = readFileSync(file, "utf8").split("\n");
  const i = lines.findIndex((l) => l.includes(marker));
  if (i < 0) throw new Error(`marker ${marker} not found in ${file}`);
  return i + 1;
}
