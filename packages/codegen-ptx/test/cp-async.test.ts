import { describe, expect, it } from "vitest";
import {
  compare,
  i32,
  ifThenElse,
  intImm,
  boolImm,
  mkVar,
  rearrange,
  reinterpret,
  subView,
  viewOf,
  type DType,
  type Stmt,
  type TileParam,
  type Var,
  type View,
} from "@tirx-ts/core";
import { build, count } from "./util/assemble.js";
import { alloc, allocStmt, apply, call, kernel, launch, tensor, tidx } from "./util/build.js";

/**
 * One 16-byte row per thread at thread scope (seed "Predication is different from zero fill"):
 * A and shared are (128, 16) uint8; thread tid copies row tid.
 */
function rowCopy(
  opcode: string,
  params: Record<string, TileParam>,
  extra: Var[] = [],
  dtype: DType = "uint8",
) {
  const eb = dtype === "uint8" ? 1 : 4;
  const chunk = typeof params["chunk_bytes"] === "number" ? params["chunk_bytes"] : 16;
  const A = tensor("A", [128, 16 / eb], dtype);
  const S = alloc("rows", [128, 16 / eb], dtype);
  // Thread tid's row, split into chunk-sized atoms.
  const row = (b: View): View =>
    rearrange(subView(b, [tidx, ":"]), "(r v) -> r v", { v: chunk / eb });
  const body: Stmt[] = [
    allocStmt(S),
    apply(opcode, row(viewOf(S)), row(viewOf(A)), { chunk_bytes: 16, ...params }),
    call("cp.async.commit_group"),
    call("cp.async.wait_all"),
  ];
  return kernel("rows", [A, ...extra], launch(128), body);
}

const cpLines = (text: string): string[] =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^(@!?%p\d+ )?cp\.async\.c[ag]/.test(l));

describe("cp.async operand forms", () => {
  it("seed example 2: src_size from if_then_else is a 32-bit register, .L2::128B needs PTX 7.4", () => {
    const valid = mkVar("valid_rows", "int32");
    const srcSize = ifThenElse(
      compare("lt", tidx, valid),
      intImm(16, "uint32"),
      intImm(0, "uint32"),
    );
    const mod = build(
      rowCopy("cp.async.cg.shared.global.L2::128B", { src_size: srcSize }, [valid]),
    );
    expect(mod.version).toBe("7.4");
    expect(cpLines(mod.text)).toEqual([
      expect.stringMatching(
        /^cp\.async\.cg\.shared\.global\.L2::128B \[%r\d+\], \[%rd\d+\], 16, %r\d+;$/,
      ),
    ]);
    expect(mod.text).toMatch(/selp\.b32 %r\d+, 16, 0, %p\d+;/);
    expect(mod.text).toContain(".param .s32 rows_param_1");
  });

  it("a constant src_size is an immediate", () => {
    for (const srcSize of [intImm(8, "uint32"), 0, 16] as TileParam[]) {
      const mod = build(rowCopy("cp.async.cg.shared.global", { src_size: srcSize }));
      const n = typeof srcSize === "number" ? srcSize : 8;
      expect(cpLines(mod.text)).toEqual([expect.stringMatching(new RegExp(`\\], 16, ${n};$`))]);
      expect(mod.version).toBe("7.0");
    }
  });

  it("ignore_src is a predicate register, never an immediate, and needs PTX 7.5", () => {
    const runtime = build(
      rowCopy("cp.async.cg.shared.global", { ignore_src: compare("ge", tidx, i32(100)) }),
    );
    expect(runtime.version).toBe("7.5");
    expect(cpLines(runtime.text)).toEqual([expect.stringMatching(/\], 16, %p\d+;$/)]);
    const constant = build(rowCopy("cp.async.cg.shared.global", { ignore_src: true }));
    expect(cpLines(constant.text)).toEqual([expect.stringMatching(/\], 16, %p\d+;$/)]);
    expect(constant.text).toMatch(/mov\.pred %p\d+, 1;/);
  });

  it("cache_policy is a 64-bit register after src_size or ignore_src", () => {
    const policy = mkVar("policy", "uint64");
    const plain = build(
      rowCopy("cp.async.cg.shared.global.L2::cache_hint", { cache_policy: policy }, [policy]),
    );
    expect(plain.version).toBe("7.4");
    expect(cpLines(plain.text)).toEqual([expect.stringMatching(/\], 16, %rd\d+;$/)]);
    expect(plain.text).toContain(".param .u64 rows_param_1");
    const sized = build(
      rowCopy("cp.async.cg.shared.global.L2::cache_hint", { cache_policy: policy, src_size: 4 }, [
        policy,
      ]),
    );
    expect(cpLines(sized.text)).toEqual([expect.stringMatching(/\], 16, 4, %rd\d+;$/)]);
    const ignored = build(
      rowCopy(
        "cp.async.cg.shared.global.L2::cache_hint",
        { cache_policy: policy, ignore_src: false },
        [policy],
      ),
    );
    expect(ignored.version).toBe("7.5");
    expect(cpLines(ignored.text)).toEqual([expect.stringMatching(/\], 16, %p\d+, %rd\d+;$/)]);
    // A constant policy still travels in a register.
    const constPolicy = build(
      rowCopy("cp.async.cg.shared.global.L2::cache_hint", { cache_policy: intImm(0n, "uint64") }),
    );
    expect(constPolicy.text).toMatch(/mov\.b64 %rd\d+, 0;/);
    expect(cpLines(constPolicy.text)).toEqual([expect.stringMatching(/\], 16, %rd\d+;$/)]);
  });

  it("keeps the author's qualifier order", () => {
    const policy = mkVar("policy", "uint64");
    for (const opcode of [
      "cp.async.cg.shared.global.L2::cache_hint.L2::256B",
      "cp.async.cg.shared.global.L2::256B.L2::cache_hint",
      "cp.async.ca.shared::cta.global.L2::64B",
      "cp.async.cg.shared::cta.global",
    ]) {
      const hint = opcode.includes("cache_hint");
      const mod = build(
        rowCopy(opcode, hint ? { cache_policy: policy } : {}, hint ? [policy] : []),
      );
      expect(cpLines(mod.text)).toEqual([expect.stringContaining(`${opcode} [`)]);
      expect(mod.version).toBe(opcode.includes("L2") ? "7.4" : "7.0");
    }
  });

  it("pred becomes a guard on every repeat, also when it is constant", () => {
    const mod = build(
      rowCopy(
        "cp.async.ca.shared.global",
        { pred: compare("lt", tidx, i32(64)), chunk_bytes: 4 },
        [],
        "float32",
      ),
    );
    const lines = cpLines(mod.text);
    expect(lines).toHaveLength(4);
    const guard = /^@(%p\d+) /.exec(lines[0]!)![1];
    for (const [r, l] of lines.entries()) {
      expect(l).toMatch(
        new RegExp(
          `^@${guard!.replace("%", "%")} cp\\.async\\.ca\\.shared\\.global \\[%r\\d+(\\+${4 * r})?\\], \\[%rd\\d+(\\+${4 * r})?\\], 4;$`,
        ),
      );
    }
    const always = build(rowCopy("cp.async.cg.shared.global", { pred: boolImm(true) }));
    expect(cpLines(always.text)).toEqual([expect.stringMatching(/^@%p\d+ cp\.async/)]);
  });

  it(".ca copies 4 and 8 bytes", () => {
    for (const chunk of [4, 8]) {
      const mod = build(
        rowCopy("cp.async.ca.shared.global", { chunk_bytes: chunk }, [], "float32"),
      );
      expect(cpLines(mod.text)).toHaveLength(16 / chunk);
      expect(cpLines(mod.text)[0]).toMatch(new RegExp(`, ${chunk};$`));
    }
  });
});

/** The seed's CTA-scope copy with a custom pattern over (128, 64) float16. */
function ctaCopy(
  pattern: string,
  sizes: Record<string, number>,
  opts: { block?: [number, number, number]; dyn?: boolean } = {},
) {
  const A = tensor("A", [128, 64], "float16");
  const S = alloc("tile", [128, 64], "float16", opts.dyn ? "shared.dyn" : "shared");
  const src = rearrange(viewOf(A), pattern, sizes);
  const dst = rearrange(viewOf(S), pattern, sizes);
  return kernel(
    "tile_copy",
    [A],
    launch(opts.block ?? [128, 1, 1], 1, opts.dyn ? 128 * 64 * 2 : 0),
    [allocStmt(S), apply("cp.async.cg.shared.global", dst, src, { chunk_bytes: 16, scope: "cta" })],
  );
}

const offsets = (text: string): number[][] =>
  [...text.matchAll(/cp\.async\.\S+ \[%r\d+(?:\+(-?\d+))?\], \[%rd\d+(?:\+(-?\d+))?\]/g)].map(
    (m) => [Number(m[1] ?? 0), Number(m[2] ?? 0)],
  );

describe("cp.async at CTA scope", () => {
  it("unrolls repeats in row-major order of the repeat axes", () => {
    const mod = build(ctaCopy("(w t) (r1 r2 v) -> w t r2 r1 v", { w: 4, t: 32, r1: 2, v: 8 }));
    expect(offsets(mod.text).map(([d]) => d)).toEqual([0, 64, 16, 80, 32, 96, 48, 112]);
    expect(offsets(mod.text).map(([, s]) => s)).toEqual([0, 64, 16, 80, 32, 96, 48, 112]);
  });

  it("inserts no commit, wait or barrier the author did not write", () => {
    const mod = build(ctaCopy("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 }));
    expect(count(mod.text, "cp.async.cg.shared.global")).toBe(8);
    for (const op of [
      "cp.async.commit_group",
      "cp.async.wait_group",
      "cp.async.wait_all",
      "bar.sync",
      "bar.",
    ]) {
      expect(count(mod.text, op)).toBe(0);
    }
  });

  it("computes warp and lane from the linear thread id of a 3-D block", () => {
    const mod = build(
      ctaCopy("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 }, { block: [32, 2, 2] }),
    );
    expect(mod.text).toMatch(/mov\.u32 (%r\d+), %tid\.y;/);
    expect(mod.text).toMatch(/mad\.lo\.s32 %r\d+, %r\d+, 32, %r\d+;/);
    expect(mod.text).toMatch(/mad\.lo\.s32 %r\d+, %r\d+, 64, %r\d+;/);
    expect(mod.text).toMatch(/shr\.u32 %r\d+, %r\d+, 5;/);
    expect(mod.text).toMatch(/and\.b32 %r\d+, %r\d+, 31;/);
  });

  it("puts shared.dyn buffers in a module-scope extern array", () => {
    const mod = build(ctaCopy("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 }, { dyn: true }));
    expect(mod.text).toContain(".extern .shared .align 16 .b8 dyn_smem[];");
    expect(mod.text.indexOf(".extern")).toBeLessThan(mod.text.indexOf(".entry"));
    expect(mod.text).toMatch(/mov\.u32 %r\d+, dyn_smem;/);
    expect(mod.dynamicSharedBytes).toBe(128 * 64 * 2);
    expect(mod.staticSharedBytes).toBe(0);
  });

  it("copies bytes between views of different storage types", () => {
    const A = tensor("A", [128, 32], "float16");
    const S = alloc("words", [128, 16], "uint32");
    const sizes = { w: 4, t: 32, v: 4 };
    const src = rearrange(reinterpret(viewOf(A), "uint32"), "(w t) (r v) -> w t r v", sizes);
    const dst = rearrange(viewOf(S), "(w t) (r v) -> w t r v", sizes);
    const mod = build(
      kernel("bytes", [A], launch(128), [
        allocStmt(S),
        apply("cp.async.cg.shared.global", dst, src, { chunk_bytes: 16, scope: "cta" }),
      ]),
    );
    expect(count(mod.text, "cp.async.cg.shared.global")).toBe(4);
  });

  it("folds a constant origin into the address displacement", () => {
    const A = tensor("A", [8, 16], "uint8");
    const S = alloc("row", [8, 16], "uint8");
    const v = (x: View) => subView(x, [3, ":"]);
    const mod = build(
      kernel("const_row", [A], launch(32), [
        allocStmt(S),
        apply("cp.async.cg.shared.global", v(viewOf(S)), v(viewOf(A)), { chunk_bytes: 16 }),
      ]),
    );
    expect(cpLines(mod.text)).toEqual([
      expect.stringMatching(/\[%r\d+\+48\], \[%rd\d+\+48\], 16;$/),
    ]);
  });
});
