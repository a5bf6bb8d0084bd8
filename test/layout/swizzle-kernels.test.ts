// Swizzled shared tiles end to end: the simulator and the PTX generator apply the swizzle to
// cp.async atoms (per atom, in the emitters) and element loads/stores/addresses (the `swizzle`
// pass); the verifier refuses accesses a swizzle would split. The pass's offsets are compared
// with TMA's 128B rule, written out here independently; the round trip shows the two paths agree.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import {
  binary,
  constInt,
  intImm,
  mkBuffer,
  mkVar,
  simplifyExpr,
  substitute,
  swizzledOffset,
  swizzleMode,
  TirxError,
  verify,
  type PrimFunc,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "../util/ptxas-deferred.js";

/** TMA 128B: 16-byte chunk c of 128-byte row r lands at chunk c ^ (r % 8) of the same row. */
const tma128 = (x: number): number => {
  const row = Math.floor(x / 128);
  return row * 128 + (((Math.floor(x / 16) % 8) ^ (row % 8)) * 16 + (x % 16));
};

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof TirxError ? `${e.code}@${e.span?.line ?? "?"}` : String(e);
  }
  return undefined;
};
const SOURCE = readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
/** The line of this file that ends with `marker`. */
const lineOf = (marker: string): number => SOURCE.findIndex((l) => l.endsWith(marker)) + 1;

/** A [32, 64] float16 tile copied in by cp.async (16-byte chunks) and out element-wise. */
function copyThrough(layout: "default" | ReturnType<typeof T.swizzle_mode>): PrimFunc {
  return T.function(
    "swz_copy",
    { A: T.Tensor([32, 64], "float16"), B: T.Tensor([32, 64], "float16") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([32, 64], "float16", { layout, name: "S" });
      for (const i of T.unroll(2)) {
        const c = T.let_("c", tid.add(i.mul(128)));
        T.cuda.tile.apply(
          T.ptx["cp.async.cg.shared.global"],
          S.sub(c.floordiv(8)).rearrange("(c v) -> c v", { v: 8 }).sub(c.floormod(8)),
          A.sub(c.floordiv(8)).rearrange("(c v) -> c v", { v: 8 }).sub(c.floormod(8)),
          { chunk_bytes: 16 },
        );
      }
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const j of T.range(16)) {
        const e = T.let_("e", tid.mul(16).add(j));
        B.set([e.floordiv(64), e.floormod(64)], S.get([e.floordiv(64), e.floormod(64)]));
      }
    },
  );
}

const input = (n: number): number[] => Array.from({ length: n }, (_, i) => i);

/**
 * A [32, 64] float16 tile written by `T.vectorized(lanes)` stores (thread t's lanes at column
 * `lanes · (t mod (64 / lanes)) + v` of row t / (64 / lanes), the column's base through a
 * `T.let_`; `unproven` adds ⌊t / 1024⌋, 0 at run time, but no known multiple of the lanes) and
 * read back element by element, each load swizzled on its own.
 */
function vectorStores(
  layout: ReturnType<typeof T.swizzle_mode>,
  lanes: number,
  unproven: boolean,
): PrimFunc {
  return T.function(
    "swz_vec",
    { A: T.Tensor([32, 64], "float16"), B: T.Tensor([32, 64], "float16") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([32, 64], "float16", { layout, name: "S", align: 1024 });
      const per = 64 / lanes;
      for (const k of T.unroll((32 * 64) / (128 * lanes))) {
        const u = T.let_("u", tid.add(k.mul(128)));
        const row = T.let_("row", u.floordiv(per));
        const col = T.let_(
          "col",
          unproven
            ? u.floormod(per).mul(lanes).add(tid.floordiv(1024))
            : u.floormod(per).mul(lanes),
        );
        for (const v of T.vectorized(lanes)) {
          S.set([row, T.add(col, v)], A.get([row, T.add(col, v)]));
        }
      }
      T.cuda.cta_sync();
      for (const j of T.range(16)) {
        const e = T.let_("e", tid.mul(16).add(j));
        B.set([e.floordiv(64), e.floormod(64)], S.get([e.floordiv(64), e.floormod(64)]));
      }
    },
  );
}

describe("swizzled shared tiles", () => {
  it.each([
    ["128B", 2, false, "st.shared.b32"],
    ["128B", 8, false, "st.shared.v4.b32"],
    ["32B", 4, false, "st.shared.v2.b32"],
    ["128B", 2, true, undefined],
  ] as const)(
    "T.vectorized stores into a %s-swizzled tile, %i lanes (a base not provably aligned: %s): swz(base + v) = swz(base) + v keeps one vector store (%s) where the lanes share a swizzle atom; the element-wise reads find every value",
    (mode, lanes, unproven, vector) => {
      const fn = vectorStores(T.swizzle_mode(mode), lanes, unproven);
      const a = simTensor(input(2048), { shape: [32, 64], dtype: "float16" });
      const b = simZeros([32, 64], "float16");
      const r = runSim(verify(fn), [a, b], { hazards: "collect" });
      expect(r.reports).toEqual([]);
      expect(Array.from(b.toArray() as ArrayLike<number>)).toEqual(input(2048));
      const ptx = compileToPtx(fn, { arch: "sm_90" }).text;
      // A lane base not known to be a multiple of the lanes keeps 16-bit stores.
      if (vector) expect(ptx).toContain(`${vector} [`);
      else expect(ptx).not.toMatch(/st\.shared\.(v\d\.)?b32/);
      assembleLater(ptx, "sm_90");
    },
  );
  it.each([
    ["the 128B swizzle", T.swizzle_mode("128B")],
    ["an outer swizzle (swizzle_inner = false)", T.SwizzleLayout(3, 3, 3, false)],
    ["a 32B swizzle", T.swizzle_mode("32B")],
  ])(
    "a cp.async round trip through a tile with %s is the identity (simulator, PTX)",
    (_, layout) => {
      const fn = copyThrough(layout);
      const a = simTensor(input(2048), { shape: [32, 64], dtype: "float16" });
      const b = simZeros([32, 64], "float16");
      const r = runSim(verify(fn), [a, b], { hazards: "collect" });
      expect(r.reports).toEqual([]);
      expect(Array.from(b.toArray() as ArrayLike<number>)).toEqual(input(2048));
      for (const arch of ["sm_80", "sm_90"]) assembleLater(compileToPtx(fn, { arch }).text, arch);
    },
  );

  it("element offsets land where TMA's 128B swizzle puts them, with a stage step passed through", () => {
    const e = mkVar("e", "int32");
    const buf = mkBuffer("S", [2, 32, 64], "float16", "shared", { layout: swizzleMode("128B") });
    // Offset `stage * 2048 + e`: the stage term is a multiple of the 1024-byte period.
    const stage = mkVar("stage", "int32");
    const off = binary("add", binary("mul", stage, intImm(2048)), e);
    const phys = swizzledOffset(buf.layout!, off, 2, buf);
    for (let st = 0; st < 2; st++) {
      for (let k = 0; k < 2048; k++) {
        const v = simplifyExpr(
          substitute(
            phys,
            new Map([
              [e.id, intImm(k)],
              [stage.id, intImm(st)],
            ]),
          ),
        );
        expect(constInt(v)).toBe(st * 2048 + tma128(2 * k) / 2);
      }
    }
    // The stage term is added after the XOR, so the XOR does not depend on it.
    expect(
      phys.kind === "Binary" && phys.op === "add" && phys.b.kind === "Binary" && phys.b.op,
    ).toBe("bitxor");
  });

  it("cp.async atoms and element loads XOR their offsets in registers", () => {
    const ptx = compileToPtx(copyThrough(T.swizzle_mode("128B")), { arch: "sm_80" }).text;
    const lines = ptx.split("\n").filter((l) => /xor|cp\.async\.cg/.test(l));
    expect(lines.map((l) => l.trim())).toMatchInlineSnapshot(`
      [
        "xor.b32 %r9, %r7, %r8;",
        "cp.async.cg.shared.global [%r10], [%rd6], 16;",
        "xor.b32 %r18, %r16, %r17;",
        "cp.async.cg.shared.global [%r19], [%rd8], 16;",
        "xor.b32 %r29, %r26, %r28;",
      ]
    `);
  });

  it("refuses a 16-byte cp.async chunk into 8-byte swizzle atoms (TX3025)", () => {
    const fn = (): PrimFunc =>
      T.function("bad", { A: T.Tensor([64], "float16") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const S = T.alloc_shared([8, 64], "float16", { layout: T.SwizzleLayout(2, 3, 3) });
        T.cuda.tile.apply(
          // SPLIT-CP
          T.ptx["cp.async.cg.shared.global"],
          S.sub(0, T.slice(0, 8)),
          A.sub(T.slice(0, 8)),
          { chunk_bytes: 16 },
        );
      });
    // The marker sits on its own line, right below the call (prettier's layout).
    expect(code(() => verify(fn()))).toBe(`TX3025@${lineOf("// SPLIT-CP") - 1}`);
  });

  it("refuses ldmatrix on a swizzle with 8-byte atoms (TX7005)", () => {
    const fn = (): PrimFunc =>
      T.function("bad", {}, () => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const lane = T.cuda.thread_idx("x");
        const S = T.alloc_shared([8, 64], "float16", { layout: T.SwizzleLayout(2, 3, 3) });
        const a = T.alloc_local([2], "float16");
        T.ptx.ldmatrix(false, 1, ".b16", a, 0, S.ptr([lane.floormod(8), 0])); // SPLIT-LD
      });
    expect(code(() => verify(fn()))).toBe(`TX7005@${lineOf("// SPLIT-LD")}`);
  });

  it("refuses a bulk copy into a swizzled tile: cp.async.bulk moves bytes linearly (TX3025)", () => {
    const fn = (): PrimFunc =>
      T.function("bad", { A: T.Tensor([8, 64], "float16") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const S = T.alloc_shared([8, 64], "float16", { layout: T.swizzle_mode("128B") });
        const bar = T.alloc_shared([1], "uint64");
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.cuda.tile.apply(
          T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"],
          S,
          A,
          { chunk_bytes: 128, mbar: bar.sub(0) },
        );
      });
    expect(code(() => verify(fn()))).toMatch(/^TX3025@/);
  });
});
