// Index width: global tensors over 2^31 - 1 bytes get 64-bit element offsets (the whole index
// widened to int64), smaller ones keep 32-bit arithmetic and one mad.wide; tensors with symbolic
// dims are 32-bit unless compiled with wideSymbolic (the runtime's choice at launch). Every
// module is assembled by ptxas in one batch.
import { afterAll, describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";
import { checkArgs, TirxError, verify, type DeviceTensor, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx, indexBits, widenIndex, type PtxModule } from "@tirx-ts/codegen-ptx";
import { simEmpty, simZeros } from "@tirx-ts/runtime-sim";
import { assembleMerged, type NamedPtx } from "./util/ptx-merge.js";

const modules: NamedPtx[] = [];
const ptx = (fn: PrimFunc, opts: { wideSymbolic?: boolean; arch?: string } = {}): PtxModule => {
  const m = compileToPtx(fn, opts);
  modules.push({ name: `${fn.name}${opts.wideSymbolic ? " (wide)" : ""}`, text: m.text });
  return m;
};
/** The body of the entry, without the header and register declarations. */
const body = (m: PtxModule): string =>
  m.text
    .split("\n")
    .filter((l) => /^\t[a-z@]/.test(l) && !l.startsWith("\t.reg"))
    .join("\n");

/** B[i, 1] = A[i, 0] + 1 with i = ctaid.x * 256 + tid.x, over [rows, 2] float32 tensors. */
const pairs = (rows: number | "rows"): PrimFunc =>
  T.function(
    "pairs",
    {
      rows: T.int32,
      A: T.Tensor([rows, 2], "float32"),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 8, block: 256 }) });
      const i = T.cuda.block_idx("x").mul(256).add(T.cuda.thread_idx("x"));
      T.if_(i.lt(p.rows), () => p.A.set([i, 1], p.A.get([i, 0]).add(T.float32(1))));
    },
  );

describe("static shapes", () => {
  test("a tensor of at most 2^31 - 1 bytes keeps 32-bit offsets", () => {
    const m = ptx(pairs(2 ** 28 - 1)); // 2^31 - 8 bytes
    expect(body(m)).toMatchInlineSnapshot(`
      "	ld.param.s32 %r1, [pairs_param_0];
      	ld.param.u64 %rd1, [pairs_param_1];
      	cvta.to.global.u64 %rd2, %rd1;
      	mov.u32 %r2, %ctaid.x;
      	mov.u32 %r3, %tid.x;
      	mul.lo.s32 %r4, %r2, 256;
      	add.s32 %r5, %r4, %r3;
      	setp.lt.s32 %p1, %r5, %r1;
      	@!%p1 bra $L__endif1;
      	mul.lo.s32 %r6, %r2, 512;
      	mul.lo.s32 %r7, %r3, 2;
      	add.s32 %r8, %r6, %r7;
      	mad.wide.s32 %rd3, %r8, 4, %rd2;
      	ld.global.f32 %f1, [%rd3];
      	add.rn.f32 %f2, %f1, 0f3F800000;
      	st.global.f32 [%rd3+4], %f2;
      	ret;"
    `);
  });

  test("a tensor over 2^31 - 1 bytes gets 64-bit offsets, the index widened before it is scaled", () => {
    const m = ptx(pairs(2 ** 28)); // 2^31 bytes
    expect(body(m)).toMatchInlineSnapshot(`
      "	ld.param.s32 %r1, [pairs_param_0];
      	ld.param.u64 %rd1, [pairs_param_1];
      	cvta.to.global.u64 %rd2, %rd1;
      	mov.u32 %r2, %ctaid.x;
      	mov.u32 %r3, %tid.x;
      	mul.lo.s32 %r4, %r2, 256;
      	add.s32 %r5, %r4, %r3;
      	setp.lt.s32 %p1, %r5, %r1;
      	@!%p1 bra $L__endif1;
      	cvt.s64.s32 %rd3, %r2;
      	mul.lo.s64 %rd4, %rd3, 512;
      	cvt.s64.s32 %rd5, %r3;
      	mul.lo.s64 %rd6, %rd5, 2;
      	add.s64 %rd7, %rd4, %rd6;
      	mad.lo.s64 %rd8, %rd7, 4, %rd2;
      	ld.global.f32 %f1, [%rd8];
      	add.rn.f32 %f2, %f1, 0f3F800000;
      	st.global.f32 [%rd8+4], %f2;
      	ret;"
    `);
  });

  test("a constant offset beyond 2^31 bytes is added in 64 bits, not used as a displacement", () => {
    const f = T.function("far", { A: T.Tensor([2 ** 30 + 64], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      A.set([2 ** 30 + 7], A.get([3]));
    });
    const m = ptx(f);
    expect(body(m)).toMatchInlineSnapshot(`
      "	ld.param.u64 %rd1, [far_param_0];
      	cvta.to.global.u64 %rd2, %rd1;
      	ld.global.f32 %f1, [%rd2+12];
      	add.s64 %rd3, %rd2, 4294967324;
      	st.global.f32 [%rd3], %f1;
      	ret;"
    `);
  });

  test("an index whose int32 product would wrap is computed in 64 bits", () => {
    // 65536 x 65536 float16 = 8 GiB: r * 65536 + c exceeds 2^31 for r >= 32768.
    const f = T.function(
      "rows",
      { A: T.Tensor([65536, 65536], "float16"), B: T.Tensor([65536], "float16") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 65536, block: 1 }) });
        const r = T.cuda.block_idx("x");
        B.set([r], A.get([r, r]));
      },
    );
    const m = ptx(f);
    // A's address (r * 65537 after simplification, scaled by 2 bytes) is 64-bit; B's stays 32.
    expect(body(m)).toMatchInlineSnapshot(`
      "	ld.param.u64 %rd1, [rows_param_0];
      	cvta.to.global.u64 %rd2, %rd1;
      	ld.param.u64 %rd3, [rows_param_1];
      	cvta.to.global.u64 %rd4, %rd3;
      	mov.u32 %r1, %ctaid.x;
      	cvt.s64.s32 %rd5, %r1;
      	mad.lo.s64 %rd6, %rd5, 131074, %rd2;
      	ld.global.b16 %h1, [%rd6];
      	mad.wide.s32 %rd7, %r1, 2, %rd4;
      	st.global.b16 [%rd7], %h1;
      	ret;"
    `);
  });

  test("cp.async from a source over 2^31 - 1 bytes computes its byte offset in 64 bits", () => {
    const f = (rows: number): PrimFunc =>
      T.function(
        "cp_big",
        { A: T.Tensor([rows, 64], "float16"), B: T.Tensor([8, 64], "float16") },
        ({ A, B }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 8 }) });
          const tid = T.cuda.thread_idx("x");
          const row = T.cuda.block_idx("x").mul(8).add(tid);
          const S = T.alloc_shared([8, 64], "float16", { name: "S" });
          T.cuda.tile.apply(
            T.ptx["cp.async.cg.shared.global"],
            S.sub(tid).rearrange("(c v) -> c v", { v: 8 }).sub(0),
            A.sub(row).rearrange("(c v) -> c v", { v: 8 }).sub(0),
            { chunk_bytes: 16 },
          );
          T.ptx.cp.async_.commit_group();
          T.ptx.cp.async_.wait_group(0);
          B.set([tid, 0], S.get([tid, 0]));
        },
      );
    const small = body(ptx(f(1024)));
    const big = body(ptx(f(2 ** 24))); // 2^31 bytes
    expect(small).toMatchInlineSnapshot(`
      "	ld.param.u64 %rd1, [cp_big_param_0];
      	cvta.to.global.u64 %rd2, %rd1;
      	ld.param.u64 %rd3, [cp_big_param_1];
      	cvta.to.global.u64 %rd4, %rd3;
      	mov.u32 %r1, %tid.x;
      	mov.u32 %r2, %ctaid.x;
      	mov.u32 %r3, smem_S;
      	mul.lo.s32 %r4, %r1, 128;
      	add.s32 %r5, %r3, %r4;
      	mul.lo.s32 %r6, %r2, 1024;
      	add.s32 %r7, %r6, %r4;
      	cvt.s64.s32 %rd5, %r7;
      	add.s64 %rd6, %rd2, %rd5;
      	cp.async.cg.shared.global [%r5], [%rd6], 16;
      	cp.async.commit_group;
      	cp.async.wait_group 0;
      	mad.lo.s32 %r8, %r1, 128, %r3;
      	ld.shared.b16 %h1, [%r8];
      	mad.wide.s32 %rd7, %r1, 128, %rd4;
      	st.global.b16 [%rd7], %h1;
      	ret;"
    `);
    expect(big).toMatchInlineSnapshot(`
      "	ld.param.u64 %rd1, [cp_big_param_0];
      	cvta.to.global.u64 %rd2, %rd1;
      	ld.param.u64 %rd3, [cp_big_param_1];
      	cvta.to.global.u64 %rd4, %rd3;
      	mov.u32 %r1, %tid.x;
      	mov.u32 %r2, %ctaid.x;
      	mov.u32 %r3, smem_S;
      	mul.lo.s32 %r4, %r1, 128;
      	add.s32 %r5, %r3, %r4;
      	cvt.s64.s32 %rd5, %r2;
      	mul.lo.s64 %rd6, %rd5, 1024;
      	cvt.s64.s32 %rd7, %r1;
      	mul.lo.s64 %rd8, %rd7, 128;
      	add.s64 %rd9, %rd6, %rd8;
      	add.s64 %rd10, %rd2, %rd9;
      	cp.async.cg.shared.global [%r5], [%rd10], 16;
      	cp.async.commit_group;
      	cp.async.wait_group 0;
      	mad.lo.s32 %r6, %r1, 128, %r3;
      	ld.shared.b16 %h1, [%r6];
      	mad.wide.s32 %rd11, %r1, 128, %rd4;
      	st.global.b16 [%rd11], %h1;
      	ret;"
    `);
  });
});

describe("symbolic shapes", () => {
  test("32-bit by default, 64-bit with wideSymbolic", () => {
    const narrow = ptx(pairs("rows"));
    const wide = ptx(pairs("rows"), { wideSymbolic: true });
    expect(narrow.wideSymbolic).toBe(false);
    expect(wide.wideSymbolic).toBe(true);
    expect(body(narrow)).toContain("mad.wide.s32");
    expect(body(narrow)).not.toContain("s64");
    expect(body(wide)).toContain("mad.lo.s64");
    expect(body(wide)).not.toContain("mad.wide.s32");
  });

  test("indexBits: shared arrays are 32-bit, global ones by byte extent or wideSymbolic", () => {
    const vf = verify(pairs("rows"));
    const p = vf.fn.params[1]!;
    if (p.kind !== "buffer") throw new Error("A is a buffer");
    expect(indexBits(p.buffer, false)).toBe(32);
    expect(indexBits(p.buffer, true)).toBe(64);
    const big = verify(pairs(2 ** 28)).fn.params[1]!;
    if (big.kind !== "buffer") throw new Error("A is a buffer");
    expect(indexBits(big.buffer, false)).toBe(64);
  });

  test("widenIndex rebuilds sums and products at int64 and extends leaves", () => {
    const x = { kind: "Var", name: "x", id: 1, dtype: "int32" } as const;
    const e = widenIndex({
      kind: "Binary",
      op: "add",
      a: {
        kind: "Binary",
        op: "mul",
        a: x,
        b: { kind: "IntImm", value: 3, dtype: "int32" },
        dtype: "int32",
      },
      b: { kind: "Binary", op: "shr", a: x, b: x, dtype: "int32" },
      dtype: "int32",
    });
    expect(e).toMatchObject({
      op: "add",
      dtype: "int64",
      a: {
        op: "mul",
        dtype: "int64",
        a: { kind: "Cast", dtype: "int64", value: x },
        b: { value: 3, dtype: "int64" },
      },
      b: { kind: "Cast", dtype: "int64", value: { op: "shr", dtype: "int32" } },
    });
  });
});

describe("limits", () => {
  test("launch arguments over 2^31 - 1 bytes pass the checks; over 2^48 they are refused", () => {
    const f = pairs("rows");
    const fake = (rows: number) =>
      ({
        device: { kind: "cuda", name: "gpu" },
        shape: [rows, 2],
        dtype: "float32",
      }) as unknown as DeviceTensor;
    expect(() => checkArgs(f, [2 ** 28, fake(2 ** 28)])).not.toThrow();
    let err: unknown;
    try {
      checkArgs(f, [
        2 ** 31 - 1,
        { ...fake(2 ** 31 - 1), shape: [2 ** 31 - 1, 2 ** 20] } as unknown as DeviceTensor,
      ]);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(TirxError);
    expect((err as TirxError).code).toBe("TX5003"); // the static dim 2 does not match 2^20
  });

  test("the simulator refuses a tensor over 2^31 - 1 bytes (TX5007) instead of wrapping offsets", () => {
    expect(() => simZeros([2 ** 29], "float32")).toThrow(
      /TX5007.*at most 2147483647 bytes per tensor/,
    );
    expect(() => simEmpty([2 ** 29, 2], "int16")).toThrow(/TX5007/);
    expect(simZeros([4], "float32").shape).toEqual([4]);
  });
});

afterAll(async () => {
  const failures = await assembleMerged(modules, "sm_80");
  expect(failures.map((f) => f.message)).toEqual([]);
}, 60_000);
