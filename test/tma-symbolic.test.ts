// TMA over tensors of symbolic shape (T.Tensor(["m", "n"], ...)): the box stays static, the
// map's dims and strides are the launch's. On the simulator at several runtime sizes, a partial
// edge box included (zeros past the end on a load, nothing written past it on a store), against
// the host copy; the explicit tile.apply with T.tensormap_encode_tiled and the tile layer's
// copy_async (coordinates off a symbolic stride); a stride that is not a multiple of 16 bytes is
// TX4024 at launch; PTX assembled by ptxas (sm_90a).
import { describe, expect, it } from "vitest";
import { T, type PrimFunc } from "tirx-ts";
import { TirxError, verify } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";
import { errorOf } from "./util/error-of.js";
import {
  LOAD2D,
  ramp,
  rawLoad,
  rawLoadExpected,
  tileCopy,
  tileCopyPaddedExpected,
} from "./util/tma-symbolic-kernels.js";

function ptxOf(fn: PrimFunc): string {
  const text = compileToPtx(fn, { arch: "sm_90a" }).text;
  assembleLater(text, "sm_90a", fn.name);
  return text;
}

describe("TMA over a tensor of symbolic shape", () => {
  it("an explicit map of A [m, n]: the box at each runtime size and position, zeros past the end", () => {
    const vf = verify(rawLoad);
    for (const [m, n, r0, c0] of [
      [16, 32, 0, 0],
      [40, 36, 16, 0],
      [40, 36, 32, 20], // the edge box: 8 rows and 16 columns inside
      [7, 4, 0, 0],
    ] as const) {
      const a = ramp(m * n);
      const B = simZeros([16, 32], "float32");
      const r = runSim(vf, [m, n, r0, c0, simTensor(a, { shape: [m, n], dtype: "float32" }), B], {
        hazards: "collect",
      });
      expect(r.reports).toEqual([]);
      expect(Array.from(B.toArray() as ArrayLike<number>)).toEqual(rawLoadExpected(m, n, r0, c0));
    }
    ptxOf(rawLoad);
  });

  it("a row stride that is not a multiple of 16 bytes is TX4024 at launch", () => {
    const e = errorOf(() =>
      runSim(verify(rawLoad), [
        8,
        6,
        0,
        0,
        simTensor(ramp(48), { shape: [8, 6], dtype: "float32" }),
        simZeros([16, 32], "float32"),
      ]),
    );
    expect(e).toBeInstanceOf(TirxError);
    expect(e.code).toBe("TX4024");
    expect(e.message).toContain("axis 0 has a stride of 24 bytes");
  });

  it("a static stride (the dims inside it all static) that is not a multiple of 16 bytes is TX4024 at verify", () => {
    const fn = T.function(
      "tma_symbolic_bad_stride",
      { m: T.int32, A: T.Tensor(["m", 6], "float32"), B: T.Tensor([8, 4], "float32") },
      ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        const s = T.alloc_shared([8, 4], "float32", { name: "s", align: 128 });
        const map = T.tensormap_encode_tiled(A, { box: [8, 4] });
        T.if_(tid.eq(0), () => {
          T.cuda.tile.apply(T.ptx[LOAD2D], s, A, {
            tensor_map: map,
            coords: [0, 0],
            mbar: bar.sub(0),
          });
        });
      },
    );
    const e = errorOf(() => verify(fn));
    expect(e.code).toBe("TX4024");
    expect(e.message).toContain(`axis 0 of "A" has a stride of 24 bytes`);
  });

  it("copy_async of [32, 64] tiles of A [b, s, 64] at two sizes: load, clipped store, zero fill", () => {
    const vf = verify(tileCopy);
    for (const [b, s] of [
      [2, 64],
      [3, 40],
    ] as const) {
      const sp = Math.ceil(s / 32) * 32;
      const a = ramp(b * s * 64);
      const O = simZeros([b, s, 64], "float16");
      const P = simZeros([b, sp, 64], "float16");
      const r = runSim(
        vf,
        [b, s, sp, simTensor(a, { shape: [b, s, 64], dtype: "float16" }), O, P],
        { hazards: "collect" },
      );
      expect(r.reports).toEqual([]);
      expect(Array.from(O.toArray() as ArrayLike<number>)).toEqual(a);
      expect(Array.from(P.toArray() as ArrayLike<number>)).toEqual(
        tileCopyPaddedExpected(b, s, sp),
      );
    }
    const ptx = ptxOf(tileCopy);
    expect(ptx.split("\n").filter((l) => l.includes("cp.async.bulk.tensor")).length).toBe(3);
  });
});
