// The seed's copy_async kernel (seed "Examples"), built with core constructors.
import { i32, intImm, mkVar, rearrange, viewOf, type PrimFunc } from "@tirx-ts/core";
import {
  alloc,
  allocStmt,
  apply,
  call,
  kernel,
  launch,
  load,
  loop,
  store,
  tensor,
  tidx,
} from "./build.js";

export function seedKernel(): PrimFunc {
  const A = tensor("A", [128, 32], "float16");
  const B = tensor("B", [128, 32], "float16");
  const shared = alloc("shared", [128, 32], "float16");
  const sizes = { w: 4, t: 32, v: 8 };
  const src = rearrange(viewOf(A), "(w t) (r v) -> w t r v", sizes);
  const dst = rearrange(viewOf(shared), "(w t) (r v) -> w t r v", sizes);
  const j = mkVar("j", "int32");
  return kernel("copy_async", [A, B], launch(128), [
    allocStmt(shared),
    apply("cp.async.cg.shared.global", dst, src, { chunk_bytes: 16, scope: "cta" }),
    call("cp.async.commit_group"),
    call("cp.async.wait_group", i32(0)),
    call("bar.sync", intImm(0)),
    loop(j, i32(32), [store(B, [tidx, j], load(shared, [tidx, j]))]),
  ]);
}
