import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { lineOf, simCollect } from "./helpers.js";

const here = import.meta.url;
const SENTINEL = 0xab;
const rows = (n: number) =>
  simTensor(
    Uint8Array.from({ length: n * 16 }, (_, i) => 1 + (i % 200)),
    { shape: [n, 16], dtype: "uint8" },
  );

/**
 * 8 threads; thread t fills its 16-byte shared row with SENTINEL, issues one cp.async of row t
 * with the operands `params(tid)` gives, waits, syncs and writes the shared tile to B.
 */
function zeroFillKernel(
  params: (tid: ReturnType<typeof T.cuda.thread_idx>) => Record<string, unknown>,
) {
  return T.function(
    "fill",
    { A: T.Tensor([8, 16], "uint8"), B: T.Tensor([8, 16], "uint8") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 8 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([8, 16], "uint8");
      for (const j of T.range(16)) s.set([tid, j], T.uint8(SENTINEL));
      T.cuda.tile.apply(
        T.ptx["cp.async.cg.shared.global.L2::128B"]!,
        s.sub(tid, ":"),
        A.sub(tid, ":"),
        { chunk_bytes: 16, ...params(tid) },
      );
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const j of T.range(16)) B.set([tid, j], s.get([tid, j]));
    },
  );
}

function runFill(params: Parameters<typeof zeroFillKernel>[0]): number[][] {
  const a = rows(8);
  const b = simZeros([8, 16], "uint8");
  expect(simCollect(zeroFillKernel(params), [a, b])).toEqual([]);
  const out = Array.from(b.toArray() as Uint8Array);
  return Array.from({ length: 8 }, (_, r) => out.slice(r * 16, r * 16 + 16));
}

const src = Array.from({ length: 8 }, (_, r) =>
  Array.from({ length: 16 }, (_, j) => 1 + ((r * 16 + j) % 200)),
);

describe("cp.async operands (seed: 'Predication is different from zero fill')", () => {
  it("src_size copies that prefix and zero-fills the rest (the seed's partial-rows example)", () => {
    const got = runFill((tid) => ({
      src_size: T.if_then_else(tid.lt(5), T.uint32(16), T.uint32(0)),
    }));
    got.forEach((row, r) => expect(row).toEqual(r < 5 ? src[r] : new Array(16).fill(0)));
  });

  it("src_size of 2·tid bytes", () => {
    const got = runFill((tid) => ({ src_size: tid.mul(2).cast("uint32") }));
    got.forEach((row, r) => expect(row).toEqual(src[r]!.map((v, j) => (j < 2 * r ? v : 0))));
  });

  it("a runtime src_size above chunk_bytes is reported (TX6010), as PTX leaves it undefined", () => {
    const a = rows(8);
    const b = simZeros([8, 16], "uint8");
    const reports = simCollect(
      zeroFillKernel((tid) => ({ src_size: tid.add(12).cast("uint32") })),
      [a, b],
    );
    expect(reports.map((r) => r.code)).toEqual(["TX6010"]);
    expect(reports[0]!.message).toContain("src_size 17, larger than chunk_bytes 16");
  });

  it("ignore_src true zero-fills the whole chunk", () => {
    const got = runFill((tid) => ({ ignore_src: tid.floormod(2).eq(0) }));
    got.forEach((row, r) => expect(row).toEqual(r % 2 === 0 ? new Array(16).fill(0) : src[r]));
  });

  it("pred false issues nothing: the sentinel stays, and no zeros are written", () => {
    const got = runFill((tid) => ({ pred: tid.lt(3) }));
    got.forEach((row, r) => expect(row).toEqual(r < 3 ? src[r] : new Array(16).fill(SENTINEL)));
  });
});

describe("commit groups and wait_group N (PTX ISA cp.async.wait_group)", () => {
  /**
   * One thread copies three 16-byte chunks in three groups (g0, g1, g2), then waits with `wait`
   * and reads chunk `read`.
   */
  function groups(wait: number, read: number, emptyLast = false) {
    return T.function(
      "groups",
      { A: T.Tensor([3, 4], "float32"), B: T.Tensor([4], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const s = T.alloc_shared([3, 4], "float32");
        for (let g = 0; g < 3; g++) {
          T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, s.sub(g, ":"), A.sub(g, ":"), {
            chunk_bytes: 16,
          });
          T.ptx.cp.async_.commit_group();
        }
        if (emptyLast) T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(wait);
        for (const j of T.range(4)) B.set([j], s.get([read, j])); // @read
        T.ptx.cp.async_.wait_all(); // nothing may be left pending at exit (TX6017)
      },
    );
  }
  const a = () =>
    simTensor(
      Float32Array.from({ length: 12 }, (_, i) => i + 0.5),
      { shape: [3, 4], dtype: "float32" },
    );

  it("wait_group N completes all but the N most recent groups", () => {
    for (const [wait, done] of [
      [2, 1],
      [1, 2],
      [0, 3],
    ] as const) {
      for (let read = 0; read < 3; read++) {
        const b = simZeros([4], "float32");
        const reports = simCollect(groups(wait, read), [a(), b]);
        if (read < done) {
          expect(reports).toEqual([]);
          expect(Array.from(b.toArray() as Float32Array)).toEqual(
            [0, 1, 2, 3].map((j) => read * 4 + j + 0.5),
          );
        } else {
          expect(reports.map((r) => [r.code, r.span?.line])).toEqual([
            ["TX6001", lineOf(here, "// @read")],
          ]);
        }
      }
    }
  });

  it("an empty group counts as a group and completes at once", () => {
    // g0 g1 g2 {} : wait_group 1 leaves only the empty group outstanding, so g2 is complete.
    expect(simCollect(groups(1, 2, true), [a(), simZeros([4], "float32")])).toEqual([]);
  });

  it("uncommitted copies are not completed by wait_group, but wait_all commits them", () => {
    const k = (all: boolean) =>
      T.function(
        "uncommitted",
        { A: T.Tensor([4], "float32"), B: T.Tensor([4], "float32") },
        ({ A, B }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
          const s = T.alloc_shared([4], "float32");
          T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, s, A, { chunk_bytes: 16 });
          if (all) T.ptx.cp.async_.wait_all();
          else T.ptx.cp.async_.wait_group(0);
          for (const j of T.range(4)) B.set([j], s.get([j]));
        },
      );
    const a4 = () => simTensor([1, 2, 3, 4], { shape: [4], dtype: "float32" });
    // The uncommitted copy is still pending when the CTA exits: TX6017 as well.
    expect(simCollect(k(false), [a4(), simZeros([4], "float32")]).map((r) => r.code)).toEqual([
      "TX6001",
      "TX6017",
    ]);
    const b = simZeros([4], "float32");
    expect(runSim(verify(k(true)), [a4(), b]).reports).toEqual([]);
    expect(Array.from(b.toArray() as Float32Array)).toEqual([1, 2, 3, 4]);
  });

  it("a double-buffered pipeline (prefetch the next tile while reading this one) runs clean", () => {
    const tiles = 6;
    const k = T.function(
      "pipeline",
      { A: T.Tensor([tiles, 32, 4], "float32"), B: T.Tensor([tiles, 32, 4], "float32") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([2, 32, 4], "float32");
        const op = T.ptx["cp.async.cg.shared.global"]!;
        T.cuda.tile.apply(op, s.sub(0, tid, ":"), A.sub(0, tid, ":"), { chunk_bytes: 16 });
        T.ptx.cp.async_.commit_group();
        for (const i of T.range(tiles)) {
          const next = i.add(1);
          T.if_(next.lt(tiles), () => {
            // floormod keeps the source provably in bounds for the verifier; the guard skips the last one.
            T.cuda.tile.apply(
              op,
              s.sub(next.floormod(2), tid, ":"),
              A.sub(next.floormod(tiles), tid, ":"),
              { chunk_bytes: 16 },
            );
          });
          T.ptx.cp.async_.commit_group();
          T.ptx.cp.async_.wait_group(1);
          T.cuda.cta_sync();
          for (const j of T.range(4)) B.set([i, tid, j], s.get([i.floormod(2), T.sub(31, tid), j]));
          T.cuda.cta_sync();
        }
      },
    );
    const data = Float32Array.from({ length: tiles * 128 }, (_, i) => i);
    const b = simZeros([tiles, 32, 4], "float32");
    expect(
      runSim(verify(k), [simTensor(data, { shape: [tiles, 32, 4], dtype: "float32" }), b], {
        hazards: "collect",
      }).reports,
    ).toEqual([]);
    const out = b.toArray();
    for (let i = 0; i < tiles; i++)
      for (let t = 0; t < 32; t++)
        for (let j = 0; j < 4; j++) {
          expect(out[i * 128 + t * 4 + j]).toBe(data[i * 128 + (31 - t) * 4 + j]);
        }
  });
});

describe("a cp.async that was never committed to a group", () => {
  // commit_group forgotten: wait_group(0) waits for committed groups only.
  const k = (commit: boolean, read: boolean) =>
    T.function(
      "no_commit",
      { A: T.Tensor([64, 8], "float16"), O: T.Tensor([64], "float16") },
      ({ A, O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
        const tid = T.cuda.thread_idx("x");
        const S = T.alloc_shared([64, 8], "float16", { name: "S" });
        const cp = T.ptx["cp.async.cg.shared.global"]!;
        T.cuda.tile.apply(cp, S.sub(tid), A.sub(tid), { chunk_bytes: 16 }); // @nc-copy
        if (commit) T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.cuda.cta_sync();
        if (read) O.set([tid], S.get([tid.add(1).floormod(64), 0])); // @nc-read
      },
    );
  const args = () => [
    simTensor(
      Float32Array.from({ length: 512 }, (_, i) => i % 50),
      { shape: [64, 8], dtype: "float16" },
    ),
    simZeros([64], "float16"),
  ];

  it("a read of its bytes is TX6001 saying it was never committed, not that it was not waited for", () => {
    const [r] = runSim(verify(k(false, true)), args(), { hazards: "collect" }).reports;
    expect([r?.code, r?.span?.line, r?.notes[0]?.span?.line]).toEqual([
      "TX6001",
      lineOf(here, "// @nc-read"),
      lineOf(here, "// @nc-copy"),
    ]);
    expect(r?.message).toMatch(/was never committed to a group \(cp\.async\.commit_group\)/);
  });

  it("at the CTA's exit it is TX6017 saying so; with the commit, nothing is reported", () => {
    const [r] = runSim(verify(k(false, false)), args(), { hazards: "collect" }).reports;
    expect([r?.code, r?.span?.line]).toEqual(["TX6017", lineOf(here, "// @nc-copy")]);
    expect(r?.message).toMatch(/never committed to a group \(cp\.async\.commit_group\)/);
    expect(runSim(verify(k(true, true)), args(), { hazards: "collect" }).reports).toEqual([]);
  });
});
