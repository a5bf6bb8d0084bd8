// The verifier's TMA and cluster contracts: one kernel per rule, each refused with its code at
// the author's line (this file), and the legal base kernel accepted.
import { describe, expect, it } from "vitest";
import { isTirxError, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { T } from "@tirx-ts/dsl";

const LOAD = "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes";

interface Knobs {
  opcode?: string;
  shape?: [number, number];
  dtype?: "float16" | "float32" | "bool";
  box?: number[];
  tile?: [number, number];
  tileDtype?: "float16" | "float32";
  align?: number;
  swizzle?: "none" | "32B" | "64B" | "128B";
  layout?: "128B" | "64B";
  coords?: unknown[];
  params?: Record<string, unknown>;
  cluster?: [number, number, number];
  grid?: [number, number];
  tileOffset?: number;
  sub?: boolean;
}

/** A one-CTA TMA load with the given mistakes; the tile.apply is on the line `applyLine` records. */
function kernel(k: Knobs = {}): PrimFunc {
  const [r, c] = k.shape ?? [64, 64];
  const dt = k.dtype ?? "float16";
  return T.function("v", { A: T.Tensor([r, c], dt as never) }, ({ A }) => {
    T.device_entry({
      launch: T.cuda.LaunchConfig({
        grid: k.grid ?? 1,
        block: 32,
        ...(k.cluster ? { cluster: k.cluster } : {}),
      }),
    });
    const [tr, tc] = k.tile ?? [32, 32];
    const tile = T.alloc_shared([2 * tr, tc], k.tileDtype ?? (dt === "bool" ? "float16" : dt), {
      name: "tile",
      align: k.align ?? 1024,
      ...(k.layout ? { layout: T.swizzle_mode(k.layout) } : {}),
    });
    const bar = T.alloc_shared([1], "uint64", { name: "bar" });
    const map = T.tensormap_encode_tiled(A, {
      box: k.box ?? [32, 32],
      swizzle: k.swizzle ?? "none",
    });
    const dst = tile.sub(T.slice(k.tileOffset ?? 0, (k.tileOffset ?? 0) + tr));
    T.cuda.tile.apply(T.ptx[k.opcode ?? LOAD], dst, k.sub ? A.sub(T.slice(0, 32)) : A, {
      tensor_map: map,
      coords: k.coords ?? [0, 0],
      mbar: bar.sub(0),
      ...(k.params ?? {}),
    });
  });
}

function codeOf(f: () => unknown): { code: string; line: number | undefined } {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) {
      expect(e.span?.file ?? "").toMatch(/verify\.test\.ts$/);
      return { code: e.code, line: e.span?.line };
    }
    throw e;
  }
  return { code: "none", line: undefined };
}

const compile =
  (k: Knobs, arch = "sm_90a") =>
  () =>
    compileToPtx(kernel(k), { arch });

describe("TMA verifier contracts", () => {
  it("accepts the base kernel", () => {
    expect(codeOf(compile({})).code).toBe("none");
  });

  const cases: [string, Knobs, string, string?][] = [
    [
      "TX4015",
      {
        opcode:
          "cp.async.bulk.tensor.2d.shared::cluster.global.im2col.mbarrier::complete_tx::bytes",
      },
      "im2col mode",
    ],
    [
      "TX4015",
      {
        opcode: "cp.async.bulk.tensor.6d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
      },
      "rank 6",
    ],
    [
      "TX4015",
      {
        opcode:
          "cp.async.bulk.tensor.2d.shared::cta.global.tile.mbarrier::complete_tx::bytes.multicast::cluster",
      },
      "multicast into shared::cta",
    ],
    [
      "TX4016",
      {
        opcode: "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
      },
      "rank differs from the map",
    ],
    ["TX4016", { sub: true }, "global operand is a sub-view"],
    ["TX4017", { box: [32, 300] }, "box extent above 256"],
    ["TX4017", { box: [32, 4] }, "inner box of 8 bytes"],
    [
      "TX4017",
      { box: [32, 128], swizzle: "128B", layout: "128B", tile: [32, 128], shape: [64, 128] },
      "inner box above the swizzle span",
    ],
    ["TX4018", { tile: [32, 16] }, "tile shape differs from the box"],
    ["TX4018", { tileDtype: "float32" }, "tile dtype differs"],
    ["TX4019", { align: 128, tileOffset: 1 }, "tile origin 64-byte aligned"],
    [
      "TX4019",
      { swizzle: "128B", layout: "128B", tileOffset: 8 },
      "128B swizzle: origin 512-byte aligned, 1024 needed",
    ],
    ["TX4020", { swizzle: "128B" }, "map swizzled, buffer not"],
    ["TX4020", { layout: "64B", swizzle: "128B" }, "modes differ"],
    ["TX4021", { params: { cta_mask: T.uint16(3) } }, "cta_mask without multicast"],
    [
      "TX4021",
      { opcode: `${LOAD}.multicast::cluster`, params: { cta_mask: T.uint16(3) } },
      "multicast without a cluster launch",
    ],
    [
      "TX4022",
      {
        opcode: `${LOAD}.multicast::cluster`,
        params: { cta_mask: T.uint16(3) },
        cluster: [2, 1, 1],
        grid: [2, 1],
      },
      "multicast on sm_90",
      "sm_90",
    ],
    ["TX4023", { coords: [0] }, "one coordinate for rank 2"],
    ["TX4023", { coords: [T.uint32(0), 0] }, "a uint32 coordinate"],
    ["TX4024", { shape: [64, 36] }, "row stride of 72 bytes"],
    ["TX4024", { dtype: "bool" }, "bool tensor"],
    ["TX4025", { cluster: [3, 1, 1], grid: [4, 1] }, "grid not a multiple of the cluster"],
    ["TX4025", { cluster: [16, 1, 1], grid: [16, 1] }, "16 CTAs per cluster"],
    ["TX4006", { params: { mbar: undefined } }, "no mbarrier"],
    ["TX4007", {}, "TMA on sm_89", "sm_89"],
  ];
  for (const [code, knobs, what, arch] of cases) {
    it(`${code}: ${what}`, () => {
      const r = codeOf(compile(knobs, arch));
      expect(r.code).toBe(code);
      expect(r.line).toBeGreaterThan(0);
    });
  }

  it("TX4013: a tile at a runtime index that reaches past its buffer", () => {
    const k = T.function("v13", { A: T.Tensor([64, 64], "float16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
      const tiles = T.alloc_shared([2, 32, 32], "float16", { name: "tiles", align: 1024 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [32, 32] });
      T.cuda.tile.apply(T.ptx[LOAD], tiles.sub(T.cuda.block_idx("x").add(1)), A, {
        tensor_map: map,
        coords: [0, 0],
        mbar: bar.sub(0),
      });
    });
    const r = codeOf(() => compileToPtx(k, { arch: "sm_90a" }));
    expect(r.code).toBe("TX4013");
    expect(r.line).toBeGreaterThan(0);
  });
});
