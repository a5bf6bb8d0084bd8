import { describe, expect, it } from "vitest";
import {
  findOp,
  i32,
  isTirxError,
  mkVar,
  rearrange,
  subView,
  viewOf,
  verify,
  type Span,
  type Stmt,
} from "@tirx-ts/core";
import { ARCHS, FEATURES, compileToPtx, emitPtx } from "@tirx-ts/codegen-ptx";
import { build } from "./util/assemble.js";
import {
  alloc,
  allocStmt,
  apply,
  call,
  kernel,
  launch,
  load,
  store,
  tensor,
  tidx,
} from "./util/build.js";
import { seedKernel } from "./util/seed.js";

function thrown(f: () => unknown): { code: string; text: string; span?: Span } {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return { code: e.code, text: e.text, ...(e.span ? { span: e.span } : {}) };
    throw e;
  }
  throw new Error("expected a TirxError");
}

/** A kernel with no cp.async: B[tid] = A[tid]. */
function plainCopy() {
  const A = tensor("A", [128], "float32");
  const B = tensor("B", [128], "float32");
  return kernel("plain", [A, B], launch(128), [store(B, [tidx], load(A, [tidx]))]);
}

/** The seed's tile.apply with a span on it, after a statement that uses no feature. */
function spannedSeed(span: Span) {
  const A = tensor("A", [128, 32], "float16");
  const S = alloc("shared", [128, 32], "float16");
  const sizes = { w: 4, t: 32, v: 8 };
  const pattern = "(w t) (r v) -> w t r v";
  const tile: Stmt = {
    ...apply(
      "cp.async.cg.shared.global",
      rearrange(viewOf(S), pattern, sizes),
      rearrange(viewOf(A), pattern, sizes),
      {
        chunk_bytes: 16,
        scope: "cta",
      },
    ),
    span,
  };
  return kernel("spanned", [A], launch(128), [
    allocStmt(S),
    call("bar.sync", i32(0)),
    tile,
    { ...call("cp.async.commit_group"), span: { ...span, line: span.line + 1 } },
  ]);
}

describe("targets and .version", () => {
  it("defaults to sm_80 and the lowest version covering target and features", () => {
    const expected: Record<string, string> = {
      sm_80: "7.0",
      sm_86: "7.1",
      sm_87: "7.4",
      sm_89: "7.8",
      sm_90: "7.8",
      sm_90a: "8.0",
    };
    expect(ARCHS.map((a) => a.name)).toEqual(Object.keys(expected));
    expect(build(seedKernel()).target).toBe("sm_80");
    for (const [arch, version] of Object.entries(expected)) {
      const mod = build(seedKernel(), { arch });
      expect(mod.target).toBe(arch);
      expect(mod.version).toBe(version);
      expect(mod.text).toContain(`.version ${version}\n.target ${arch}\n.address_size 64\n`);
    }
  });

  it("a feature newer than the target's floor raises the version", () => {
    const A = tensor("A", [128, 16], "uint8");
    const S = alloc("rows", [128, 16], "uint8");
    const row = (v: ReturnType<typeof viewOf>) => subView(v, [tidx, ":"]);
    const f = kernel("ignore", [A], launch(128), [
      allocStmt(S),
      apply("cp.async.cg.shared.global", row(viewOf(S)), row(viewOf(A)), {
        chunk_bytes: 16,
        ignore_src: false,
      }),
    ]);
    expect(build(f, { arch: "sm_86" }).version).toBe("7.5");
    expect(build(f, { arch: "sm_87" }).version).toBe("7.5");
    expect(build(f, { arch: "sm_89" }).version).toBe("7.8");
  });

  it("emitPtx takes an already verified function", () => {
    const vf = verify(seedKernel());
    expect(emitPtx(vf).text).toBe(compileToPtx(seedKernel()).text);
  });
});

describe("target errors", () => {
  it("refuses unknown and unsupported archs with TX5006, naming the accepted ones", () => {
    for (const arch of ["sm_100", "sm_75", "compute_80", "sm80", "", "sm_90b"]) {
      const e = thrown(() => compileToPtx(plainCopy(), { arch }));
      expect(e.code).toBe("TX5006");
      expect(e.text).toContain("sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a");
    }
  });

  it("cp.async below sm_80 is TX3023, naming instruction, target and the first offending statement", () => {
    const span: Span = { file: "kernel.ts", line: 12, col: 5 };
    const e = thrown(() => compileToPtx(spannedSeed(span), { arch: "sm_75" }));
    expect(e.code).toBe("TX3023");
    expect(e.text).toBe("cp.async.cg.shared.global needs sm_80 or newer, but the target is sm_75");
    expect(e.span).toEqual(span);
    expect(thrown(() => compileToPtx(seedKernel(), { arch: "sm_70" })).code).toBe("TX3023");
  });

  it("an intrinsic call also names itself", () => {
    const f = kernel("commit_only", [], launch(32), [call("cp.async.commit_group")]);
    const e = thrown(() => compileToPtx(f, { arch: "sm_75" }));
    expect(e.code).toBe("TX3023");
    expect(e.text).toContain("cp.async.commit_group needs sm_80");
    expect(build(f).text).toContain("cp.async.commit_group;");
  });

  it("the feature table gives sm_90 features TX4007", () => {
    const byName = Object.fromEntries(FEATURES.map((f) => [f.name, f]));
    expect(byName["cp.async"]).toMatchObject({ minSm: 80, code: "TX3023" });
    expect(byName["cp.async.bulk"]).toMatchObject({ minSm: 90, code: "TX4007" });
    const first = (op: string) => FEATURES.find((f) => f.matches(op));
    expect(first("cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes")?.code).toBe(
      "TX4007",
    );
    expect(first("cp.async.ca.shared.global")?.code).toBe("TX3023");
    // Ops carry their target in the op table.
    expect(findOp("cp.async.bulk.commit_group")).toMatchObject({ sm: 90, archCode: "TX4007" });
    expect(findOp("fence.proxy.async.shared::cta")).toMatchObject({ sm: 90, archCode: "TX4007" });
    expect(findOp("cp.async.commit_group")).toMatchObject({ sm: 80, archCode: "TX3023" });
    expect(findOp("bar.sync")?.archCode).toBeUndefined();
  });

  it("a kernel without cp.async still needs an accepted arch", () => {
    const n = mkVar("n", "int32");
    const A = tensor("A", [4], "int32");
    const f = kernel("k", [A, n], launch(4), [store(A, [tidx], n)]);
    expect(thrown(() => compileToPtx(f, { arch: "sm_75" })).code).toBe("TX5006");
    expect(build(f).version).toBe("7.0");
  });
});
