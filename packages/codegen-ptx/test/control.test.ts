import { describe, expect, it } from "vitest";
import {
  binary,
  cast,
  compare,
  i32,
  intImm,
  InternalError,
  isTirxError,
  mkVar,
  seq,
  verify,
  type DType,
  type Expr,
  type Stmt,
} from "@tirx-ts/core";
import { emitPtx } from "@tirx-ts/codegen-ptx";
import { assemble, build, count } from "./util/assemble.js";
import {
  alloc,
  allocStmt,
  call,
  kernel,
  launch,
  load,
  loop,
  special,
  store,
  tensor,
  tidx,
} from "./util/build.js";

const labels = (text: string) => text.split("\n").filter((l) => /^\$L__\w+:$/.test(l));

describe("loops", () => {
  it("a serial loop is a counted loop with a bound check and a back branch", () => {
    const C = tensor("c", [32, 8], "int32");
    const j = mkVar("j", "int32");
    const mod = build(
      kernel("serial", [C], launch(32), [loop(j, i32(8), [store(C, [tidx, j], j)])]),
    );
    expect(labels(mod.text)).toEqual(["$L__loop1:", "$L__loop_end1:"]);
    expect(mod.text).toMatch(
      /mov\.b32 (%r\d+), 0;\n\$L__loop1:\n\tsetp\.ge\.s32 (%p\d+), \1, 8;\n\t@\2 bra \$L__loop_end1;/,
    );
    expect(mod.text).toMatch(/add\.s32 (%r\d+), \1, 1;\n\tbra \$L__loop1;\n\$L__loop_end1:/);
  });

  it("a runtime bound is evaluated once, before the loop", () => {
    const C = tensor("c", [64], "int32");
    const n = mkVar("n", "int32");
    const lo = mkVar("lo", "int32");
    const j = mkVar("j", "int32");
    const body = [store(C, [binary("floormod", j, i32(64))], j)];
    const mod = build(kernel("dyn", [C, n, lo], launch(1), [loop(j, n, body, "serial", lo)]));
    expect(mod.text).toMatch(
      /add\.s32 (%r\d+), %r\d+, %r\d+;\n\$L__loop1:\n\tsetp\.ge\.s32 %p\d+, %r\d+, \1;/,
    );
  });

  it("unroll with a constant extent repeats the body with constant indices", () => {
    const C = tensor("c", [32, 4], "float32");
    const j = mkVar("j", "int32");
    const mod = build(
      kernel("unrolled", [C], launch(32), [
        loop(j, i32(4), [store(C, [tidx, j], cast("float32", j))], "unroll"),
      ]),
    );
    expect(labels(mod.text)).toEqual([]);
    expect(count(mod.text, "bra")).toBe(0);
    expect(count(mod.text, "st.global.f32")).toBe(4);
    // The unroll pass substitutes j = 0..3 and simplify folds each cast: float32 0, 1, 2, 3
    // stored as immediates at byte offsets 0, 4, 8, 12, with no cvt left.
    expect(count(mod.text, "cvt.rn")).toBe(0);
    ["0f00000000", "0f3F800000", "0f40000000", "0f40400000"].forEach((bits, k) =>
      expect(mod.text).toContain(`st.global.f32 [%rd3${k ? `+${4 * k}` : ""}], ${bits};`),
    );
  });

  it("unroll needs a constant trip count (TX2012); a constant empty loop emits nothing", () => {
    const C = tensor("c", [8], "int32");
    const n = mkVar("n", "int32");
    const j = mkVar("j", "int32");
    const k = mkVar("k", "int32");
    expect(() =>
      build(
        kernel("runtime_unroll", [C, n], launch(1), [
          loop(j, n, [store(C, [binary("floormod", j, i32(8))], j)], "unroll"),
        ]),
      ),
    ).toThrow(expect.objectContaining({ code: "TX2012" }));
    const mod = build(
      kernel("fallback", [C, n], launch(1), [
        loop(j, n, [store(C, [binary("floormod", j, i32(8))], j)]),
        loop(k, i32(0), [store(C, [k], k)]),
      ]),
    );
    expect(labels(mod.text)).toEqual(["$L__loop1:", "$L__loop_end1:"]);
  });

  it("nested loops with 64-bit and 8-bit counters", () => {
    const C = tensor("c", [4, 4], "int64");
    const i = mkVar("i", "int64");
    const j = mkVar("j", "int8");
    const idx = (e: Expr) => cast("int32", e);
    const mod = build(
      kernel("nested", [C], launch(1), [
        loop(i, intImm(4, "int64"), [
          loop(j, intImm(4, "int8"), [
            store(C, [idx(i), idx(j)], binary("mul", i, cast("int64", j))),
          ]),
        ]),
      ]),
    );
    expect(mod.text).toContain("setp.ge.s64");
    expect(mod.text).toContain("setp.ge.s16");
    expect(labels(mod.text)).toHaveLength(4);
  });

  it("while loops re-evaluate their condition; a one-element local counter is a register", () => {
    const C = tensor("c", [1], "int32");
    const L = alloc("counter", [1], "int32", "local");
    const body: Stmt[] = [
      allocStmt(L),
      store(L, [0], i32(0)),
      {
        kind: "While",
        cond: compare("lt", load(L, [0]), i32(10)),
        body: store(L, [0], binary("add", load(L, [0]), i32(1))),
      },
      store(C, [0], load(L, [0])),
    ];
    const mod = build(kernel("spin", [C], launch(1), body));
    expect(mod.text).not.toContain(".local");
    expect(mod.text).toMatch(
      /mov\.b32 (%r\d+), 0;\n\$L__while1:\n\tsetp\.lt\.s32 (%p\d+), \1, 10;\n\t@!\2 bra \$L__while_end1;\n\tadd\.s32 \1, \1, 1;\n\tbra \$L__while1;/,
    );
  });
});

describe("branches, lets, parameters", () => {
  it("if/else branches around each arm; a constant condition keeps one arm", () => {
    const C = tensor("c", [32], "int32");
    const flag = mkVar("flag", "bool");
    const mod = build(
      kernel("branches", [C, flag], launch(32), [
        {
          kind: "If",
          cond: compare("lt", tidx, i32(16)),
          then: store(C, [tidx], i32(1)),
          else: store(C, [tidx], i32(2)),
        },
        { kind: "If", cond: flag, then: store(C, [tidx], i32(3)) },
        {
          kind: "If",
          cond: intImm(0, "bool"),
          then: store(C, [tidx], i32(4)),
          else: store(C, [tidx], i32(5)),
        },
      ]),
    );
    expect(labels(mod.text)).toEqual(["$L__else1:", "$L__endif1:", "$L__endif2:"]);
    expect(mod.text).toMatch(/@!%p\d+ bra \$L__else1;[\s\S]*bra \$L__endif1;\n\$L__else1:/);
    expect(mod.text).toMatch(
      /ld\.param\.u8 (%rs\d+), \[branches_param_1\];\n\tsetp\.ne\.u16 (%p\d+), \1, 0;/,
    );
    expect(mod.text).toContain(".param .u8 branches_param_1");
    expect(mod.text).not.toMatch(/\], 4;/);
    expect(mod.text).toMatch(/\], 5;/);
  });

  it("let binds a value once for the statements after it", () => {
    const C = tensor("c", [32], "int32");
    const x = mkVar("x", "int32");
    const mod = build(
      kernel("lets", [C], launch(32), [
        { kind: "Let", var: x, value: binary("mul", tidx, i32(3)) },
        store(C, [tidx], binary("add", x, x)),
      ]),
    );
    expect(count(mod.text, "mul.lo.s32")).toBe(1);
    expect(mod.text).toMatch(/mul\.lo\.s32 (%r\d+), %r\d+, 3;\n\tadd\.s32 %r\d+, \1, \1;/);
  });

  const scalarTypes: [DType, string][] = [
    ["int8", "s8"],
    ["uint16", "u16"],
    ["int32", "s32"],
    ["uint64", "u64"],
    ["float16", "b16"],
    ["bfloat16", "b16"],
    ["float32", "f32"],
    ["float64", "f64"],
    ["bool", "u8"],
  ];
  it.each(scalarTypes)("a %s scalar parameter is .param .%s", (dt, ptx) => {
    const v = mkVar("s", dt);
    const C = tensor("c", [1], dt);
    const mod = build(kernel("scalar", [C, v], launch(1), [store(C, [0], v)]));
    expect(mod.text).toContain(`.param .${ptx} scalar_param_1`);
    expect(mod.text).toContain(`ld.param.${ptx} `);
  });

  it("reads special registers once, in the prologue", () => {
    const C = tensor("c", [8], "int32");
    const sum = [
      special("ctaid.x"),
      special("ntid.x"),
      special("nctaid.y"),
      special("tid.z"),
      special("ctaid.x"),
    ].reduce((a, b) => binary("add", a, b));
    const mod = build(
      kernel("specials", [C], launch([2, 2, 2], [2, 2, 1]), [
        store(C, [binary("floormod", sum, i32(8))], sum),
      ]),
    );
    for (const r of ["ctaid.x", "ntid.x", "nctaid.y", "tid.z"]) {
      expect(mod.text).toMatch(new RegExp(`mov\\.u32 %r\\d+, %${r.replace(".", "\\.")};`));
    }
    expect(mod.text.match(/%ctaid\.x/g)).toHaveLength(1);
  });

  it("buffer pointers are 32-bit in shared memory and 64-bit in global memory", () => {
    const P = tensor("p", [2], "uint32");
    const Q = tensor("q", [1], "uint64");
    const S = alloc("bar", [4], "uint64");
    const mod = build(
      kernel("ptrs", [P, Q], launch(1), [
        allocStmt(S),
        store(P, [0], { kind: "BufferPtr", buffer: S, offset: i32(2), dtype: "uint32" }),
        store(P, [1], { kind: "BufferPtr", buffer: S, offset: i32(0), dtype: "uint32" }),
        store(Q, [0], { kind: "BufferPtr", buffer: P, offset: i32(1), dtype: "uint64" }),
      ]),
    );
    expect(mod.text).toMatch(/mov\.u32 (%r\d+), smem_bar;[\s\S]*add\.s32 %r\d+, \1, 16;/);
    expect(mod.text).toMatch(/add\.s64 %rd\d+, %rd\d+, 4;/);
  });

  it("gives two allocations with one name separate arrays", () => {
    const C = tensor("c", [32], "float32");
    const S1 = alloc("buf", [32], "float32");
    const S2 = alloc("buf", [32], "float32");
    const mod = build(
      kernel("twins", [C], launch(32), [
        allocStmt(S1),
        allocStmt(S2),
        store(S1, [tidx], load(C, [tidx])),
        call("bar.sync", i32(1)),
        store(S2, [tidx], load(S1, [binary("sub", i32(31), tidx)])),
        call("bar.sync", i32(1)),
        store(C, [tidx], load(S2, [tidx])),
      ]),
    );
    expect(mod.text).toContain(".shared .align 16 .b8 smem_buf[128];");
    expect(mod.text).toContain(".shared .align 16 .b8 smem_buf_1[128];");
    expect(count(mod.text, "bar.sync 1")).toBe(2);
    expect(mod.staticSharedBytes).toBe(256);
  });

  it("maps intrinsics one to one and marks statements with the author's span", () => {
    const f = kernel("calls", [], launch(32), [
      { ...call("cp.async.wait_group", i32(3)), span: { file: "/some/dir/k.ts", line: 7, col: 3 } },
      call("cp.async.wait_all"),
      call("bar.sync", i32(15)),
    ]);
    const mod = build(f);
    expect(mod.text).toContain(
      "\t// Call at k.ts:7:3\n\tcp.async.wait_group 3;\n\tcp.async.wait_all;\n\tbar.sync 15;\n\tret;",
    );
  });

  it("an unknown value intrinsic is TX2010 at verification; codegen takes verified IR only", () => {
    const C = tensor("c", [1], "int32");
    const clock = { kind: "CallExpr", op: "clock", args: [], dtype: "int32" } as const;
    let err: unknown;
    try {
      verify(kernel("callexpr", [C], launch(1), [store(C, [0], clock)]));
    } catch (e) {
      err = e;
    }
    expect(isTirxError(err) && err.code).toBe("TX2010");
    // Handed IR the verifier never saw, codegen fails its invariant: no user code from codegen.
    const vf = verify(kernel("callexpr", [C], launch(1), [store(C, [0], i32(0))]));
    const body = seq([store(C, [0], clock)]);
    expect(() => emitPtx({ ...vf, entry: { ...vf.entry, body } })).toThrow(InternalError);
  });
});
