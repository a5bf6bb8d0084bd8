// Replicas never race on writes. A register tile whose TileLayout has a replica R[...] (or leaves
// threads of the scope unnamed) is held whole by several threads; the tile primitives store one
// copy of each element (tile/threads.ts storeOnceConds), so their stores produce no simulator
// report. An author's own element store from every replica (tile.get then buf.set, unguarded)
// writes the same bytes from several threads: no static rule can tell that store from a correct
// one (the threads the author's control flow lets through are runtime facts), so the layer that
// catches it is the simulator, which reports TX6014 (hazard/write-after-write) at the store.
import { describe, expect, it } from "vitest";
import { T, compile, sim, tensor, type PrimFunc } from "tirx-ts";

const dev = sim();

/** 32 floats over the lanes, replicated over the 2 warps of a 64-thread CTA. */
const replicated = () => T.TileLayout(T.S([32], ["1@laneid"]), T.R([2], ["1@warpid"]));

function reportsOf(fn: PrimFunc, n: number): { codes: string[]; out: number[]; x: number[] } {
  const x = Float32Array.from({ length: n }, (_, i) => 3 * i - 17);
  const X = tensor(x, { shape: [n], dtype: "float32", device: dev });
  const Y = tensor.zeros([n], "float32", dev);
  const r = compile(fn, { target: "cuda", hazards: "collect" })(X, Y);
  const out = Array.from(Y.toArray() as Float32Array);
  X.dispose();
  Y.dispose();
  return { codes: r.reports.map((e) => e.code), out, x: Array.from(x) };
}

describe("stores from a replicated register tile", () => {
  it("the tile primitives store one replica (copy, memset, permute_layout): explicit and implicit replicas, zero reports", () => {
    const fn = T.function(
      "replica_prims",
      { X: T.Tensor([32], "float32"), Y: T.Tensor([32], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const t = T.alloc_local([32], "float32", { layout: replicated() });
        // Implicit replicas: a layout over laneid at cta scope leaves the warp unnamed.
        const u = T.alloc_local([32], "float32", {
          layout: T.TileLayout(T.S([32], ["1@laneid"])),
        });
        const s = T.alloc_shared([32], "float32");
        T.tile.cta.copy(t, X);
        T.tile.cta.copy(s, t);
        T.cuda.cta_sync();
        T.tile.cta.copy(u, s);
        T.cuda.cta_sync();
        T.tile.cta.memset(s, 0);
        T.cuda.cta_sync();
        T.tile.cta.copy(s, u);
        T.cuda.cta_sync();
        T.tile.cta.copy(u, s);
        // permute_layout through its shared scratch: src replicas store once there too.
        const v = T.alloc_local([32], "float32", {
          layout: T.TileLayout(T.S([2, 16], ["1@warpid", "1@laneid"])),
        });
        T.tile.cta.permute_layout(v, u);
        T.tile.cta.copy(Y, v);
      },
    );
    const { codes, out, x } = reportsOf(fn, 32);
    expect(codes).toEqual([]);
    expect(out).toEqual(x);
  });

  it("an author's unguarded element store from every replica is TX6014 in the simulator", () => {
    for (const space of ["global", "shared"] as const) {
      const fn = T.function(
        `replica_race_${space}`,
        { X: T.Tensor([32], "float32"), Y: T.Tensor([32], "float32") },
        ({ X, Y }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
          const t = T.alloc_local([32], "float32", { layout: replicated() });
          T.tile.cta.copy(t, X);
          const lane = T.cuda.thread_idx("x").floormod(32);
          if (space === "global") {
            // Both warps hold element `lane` and both store it: the same 4 bytes, twice.
            Y.set([lane], t.get([lane]));
          } else {
            const s = T.alloc_shared([32], "float32");
            s.set([lane], t.get([lane]));
            T.cuda.cta_sync();
            T.if_(T.cuda.thread_idx("x").lt(32), () => Y.set([lane], s.get([lane])));
          }
        },
      );
      const { codes, out, x } = reportsOf(fn, 32);
      expect(codes).toContain("TX6014");
      expect(new Set(codes)).toEqual(new Set(["TX6014"]));
      // The racing writes carry one value, so the data itself is still right.
      expect(out).toEqual(x);
    }
  });

  it("the same store guarded to one replica (warpid 0, as storeOnceConds picks) has zero reports", () => {
    const fn = T.function(
      "replica_guarded",
      { X: T.Tensor([32], "float32"), Y: T.Tensor([32], "float32") },
      ({ X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const t = T.alloc_local([32], "float32", { layout: replicated() });
        T.tile.cta.copy(t, X);
        const lane = T.cuda.thread_idx("x").floormod(32);
        T.if_(T.cuda.thread_idx("x").floordiv(32).eq(0), () => Y.set([lane], t.get([lane])));
      },
    );
    const { codes, out, x } = reportsOf(fn, 32);
    expect(codes).toEqual([]);
    expect(out).toEqual(x);
  });
});
