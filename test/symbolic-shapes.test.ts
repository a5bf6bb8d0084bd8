// Symbolic shapes: tensor dims and grid extents from scalar parameters, the bounds proofs a tail
// guard gives, stepped and nested loops, and launch-time checks, through the DSL, the verifier,
// the PTX generator (assembled by ptxas) and the simulator.
import { describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";
import {
  checkArgs,
  launchGrid,
  TirxError,
  verify,
  type DeviceTensor,
  type KernelArg,
  type PrimFunc,
} from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assembleAll } from "./conformance/ptxas-pool.js";

function errorOf(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

const vectorAdd = (guard: "lt" | "le" | "none"): PrimFunc =>
  T.function(
    "vector_add",
    {
      n: T.int32,
      A: T.Tensor(["n"], "float32"),
      B: T.Tensor(["n"], "float32"),
      C: T.Tensor(["n"], "float32"),
    },
    ({ n, A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 256)], block: 256 }) });
      const i = T.cuda.block_idx("x").mul(256).add(T.cuda.thread_idx("x"));
      const body = (): void => C.set([i], A.get([i]).add(B.get([i])));
      if (guard === "none") body();
      else T.if_(guard === "lt" ? i.lt(n) : i.le(n), body);
    },
  );

/** B[r, c] = A[r, c] * 2 + r over a [rows, cols] tensor: one CTA per row, a loop over columns. */
const rowKernel = (cols: number | "cols", loopExtra = 0): PrimFunc =>
  T.function(
    "row_scale",
    {
      rows: T.int32,
      cols: T.int32,
      A: T.Tensor(["rows", cols], "float32"),
      B: T.Tensor(["rows", cols], "float32"),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [p.rows], block: 1 }) });
      const r = T.cuda.block_idx("x");
      const extent = typeof cols === "number" ? cols + loopExtra : p.cols.add(loopExtra);
      T.if_(r.lt(p.rows), () => {
        for (const c of T.range(extent)) {
          p.B.set([r, c], p.A.get([r, c]).mul(2).add(T.float32(r)));
        }
      });
    },
  );

/** Grid-stride loop: `for (i = tid; i < n; i += 64)` in one CTA, B[i] = A[i] + 1. */
const strided = (): PrimFunc =>
  T.function(
    "grid_stride",
    { n: T.int32, A: T.Tensor(["n"], "int32"), B: T.Tensor(["n"], "int32") },
    ({ n, A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      for (const i of T.range(T.cuda.thread_idx("x"), n, 64)) {
        T.if_(i.lt(n), () => B.set([i], A.get([i]).add(1)));
      }
    },
  );

/** T.range with a step, T.grid and T.serial over static shapes. */
const loops = (): PrimFunc =>
  T.function(
    "loops",
    { S: T.Tensor([32], "int32"), G: T.Tensor([4, 8], "int32"), R: T.Tensor([6], "int32") },
    ({ S, G, R }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      for (const i of T.range(1, 20, 3)) S.set([i], i.add(100));
      for (const [i, j] of T.grid(4, 8)) G.set([i, j], i.mul(10).add(j));
      for (const k of T.serial(2, 6)) R.set([k], k.mul(k));
    },
  );

/** G[c] = %nctaid.x * 100 + c over a runtime grid of n CTAs; U[u] = u for u in unroll(1, 8, 3). */
const gridDimKernel = (): PrimFunc =>
  T.function(
    "k",
    { n: T.int32, G: T.Tensor(["n"], "int32"), U: T.Tensor([8], "int32") },
    ({ n, G, U }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [n], block: 1 }) });
      const c = T.cuda.block_idx("x");
      T.if_(c.lt(n), () => G.set([c], T.cuda.grid_dim("x").mul(100).add(c)));
      // One CTA writes U: the same element written by two CTAs is a race (TX6014).
      T.if_(c.eq(0), () => {
        for (const u of T.unroll(1, 8, 3)) U.set([u], u);
      });
    },
  );

describe("DSL", () => {
  test("a dim names the int32 scalar parameter, declared before or after the tensor", () => {
    const f = T.function("k", { A: T.Tensor(["n", 4], "float32"), n: T.int32 }, ({ A, n }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      A.set([0, 0], T.float32(n));
    });
    const [a, n] = [f.params[0]!, f.params[1]!]; // two parameters, declared above
    expect(a.kind === "buffer" && n.kind === "scalar" && a.buffer.shape[0] === n.var).toBe(true);
    expect(a.kind === "buffer" && a.buffer.shape[1]).toBe(4);
  });

  test("a dim naming no int32 parameter is refused (TX2003) with the candidates", () => {
    const e = errorOf(() =>
      T.function("k", { m: T.int32, A: T.Tensor(["n"], "float32") }, () => {}),
    );
    expect(e.code).toBe("TX2003");
    expect(e.notes[0]!.message).toContain("m");
    const f = errorOf(() =>
      T.function("k", { n: T.float32, A: T.Tensor(["n"], "float32") }, () => {}),
    );
    expect(f.text).toContain('"n" is float32');
    expect(errorOf(() => T.Tensor(["n m"], "float32")).code).toBe("TX2003");
  });

  test("tile views of a symbolic tensor need its symbolic axes indexed (TX2003)", () => {
    const codes: string[] = [];
    T.function("k", { n: T.int32, A: T.Tensor(["n", 64], "float16") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      codes.push(errorOf(() => A.rearrange("r c -> (r c)")).code);
      codes.push(errorOf(() => A.sub(":", 0)).code);
      codes.push(errorOf(() => A.shape).code);
      const row = A.sub(T.cuda.block_idx("x"), ":");
      expect(row.shape).toEqual([64]);
      expect(row.view.strides).toEqual([1]);
    });
    expect(codes).toEqual(["TX2003", "TX2003", "TX2003"]);
  });

  test("T.ceildiv folds constants and rounds up", () => {
    T.function("k", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      expect(T.ceildiv(1000, 256).expr).toMatchObject({ kind: "IntImm", value: 4 });
      expect(T.ceildiv(1024, 256).expr).toMatchObject({ kind: "IntImm", value: 4 });
      expect(T.ceildiv(1025, 256).expr).toMatchObject({ kind: "IntImm", value: 5 });
      expect(errorOf(() => T.ceildiv(4, 0)).code).toBe("TX1002");
    });
  });

  test("a loop step must be a static positive integer; T.grid needs an extent (TX1002)", () => {
    const codes: string[] = [];
    T.function("k", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      codes.push(errorOf(() => [...T.range(0, 8, 0)]).code);
      codes.push(errorOf(() => [...T.range(0, 8, 1.5)]).code);
      codes.push(errorOf(() => [...T.grid()]).code);
    });
    expect(codes).toEqual(["TX1002", "TX1002", "TX1002"]);
  });
});

describe("verifier", () => {
  test("the tail guard i < n proves the accesses of a vector add", () => {
    expect(() => verify(vectorAdd("lt"))).not.toThrow();
  });

  test("without the guard, or with i <= n, TX2006 says how to guard", () => {
    for (const g of ["none", "le"] as const) {
      const e = errorOf(() => verify(vectorAdd(g)));
      expect(e.code).toBe("TX2006");
      expect(e.text).toContain('"A" (shape [n])');
      expect(e.notes[0]!.message).toContain("T.if_(i.lt(n)");
    }
  });

  test("row kernels: runtime rows with static or runtime columns", () => {
    expect(() => verify(rowKernel(64))).not.toThrow();
    expect(() => verify(rowKernel("cols"))).not.toThrow();
    expect(errorOf(() => verify(rowKernel(64, 1))).code).toBe("TX2006");
    expect(errorOf(() => verify(rowKernel("cols", 1))).code).toBe("TX2006");
  });

  test("v + c < n bounds v itself; a grid-stride loop with its guard verifies", () => {
    const f = T.function("k", { n: T.int32, A: T.Tensor(["n"], "int32") }, ({ n, A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [n], block: 1 }) });
      const i = T.let_("i", T.cuda.block_idx("x"));
      T.if_(i.add(1).lt(n), () => A.set([i], A.get([i.add(1)])));
    });
    expect(() => verify(f)).not.toThrow();
    expect(() => verify(strided())).not.toThrow();
  });

  test("the else-branch of i >= n is a tail guard too; of i > n it is not", () => {
    const f = (guard: "ge" | "gt"): PrimFunc =>
      T.function("k", { n: T.int32, A: T.Tensor(["n"], "int32") }, ({ n, A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 256)], block: 256 }) });
        const i = T.cuda.block_idx("x").mul(256).add(T.cuda.thread_idx("x"));
        T.if_(
          guard === "ge" ? i.ge(n) : i.gt(n),
          () => {},
          () => A.set([i], i),
        );
      });
    expect(() => verify(f("ge"))).not.toThrow();
    expect(errorOf(() => verify(f("gt"))).code).toBe("TX2006");
  });

  test("a runtime grid extent may use only scalar parameters (TX2007)", () => {
    const e = errorOf(() =>
      verify(
        T.function("k", { n: T.int32, A: T.Tensor([1], "int32") }, ({ n, A }) => {
          T.device_entry({
            launch: T.cuda.LaunchConfig({ grid: [n.add(A.get([0]))], block: 1 }),
          });
        }),
      ),
    );
    expect(e.code).toBe("TX2007");
    expect(e.text).toContain("computed on the host");
  });
});

describe("PTX", () => {
  test("vector add reads n as a parameter and guards with it", () => {
    const body = compileToPtx(vectorAdd("lt")).text.split("{\n")[1]!;
    expect(body).toMatchInlineSnapshot(`
      "	.reg .pred %p<2>;
      	.reg .b32 %r<6>;
      	.reg .b64 %rd<10>;
      	.reg .f32 %f<4>;

      	ld.param.s32 %r1, [vector_add_param_0];
      	ld.param.u64 %rd1, [vector_add_param_1];
      	cvta.to.global.u64 %rd2, %rd1;
      	ld.param.u64 %rd3, [vector_add_param_2];
      	cvta.to.global.u64 %rd4, %rd3;
      	ld.param.u64 %rd5, [vector_add_param_3];
      	cvta.to.global.u64 %rd6, %rd5;
      	mov.u32 %r2, %ctaid.x;
      	mov.u32 %r3, %tid.x;
      	// If at symbolic-shapes.test.ts:43:14
      	mul.lo.s32 %r4, %r2, 256;
      	add.s32 %r5, %r4, %r3;
      	setp.lt.s32 %p1, %r5, %r1;
      	@!%p1 bra $L__endif1;
      	// Store at symbolic-shapes.test.ts:41:34
      	mad.wide.s32 %rd7, %r5, 4, %rd2;
      	ld.global.f32 %f1, [%rd7];
      	mad.wide.s32 %rd8, %r5, 4, %rd4;
      	ld.global.f32 %f2, [%rd8];
      	add.rn.f32 %f3, %f1, %f2;
      	mad.wide.s32 %rd9, %r5, 4, %rd6;
      	st.global.f32 [%rd9], %f3;
      $L__endif1:
      	ret;
      }
      "
    `);
  });

  test("runtime strides multiply by the dim parameter", () => {
    const text = compileToPtx(rowKernel("cols")).text;
    expect(text).toMatch(
      /ld\.param\.s32 (%r\d+), \[row_scale_param_1\];[\s\S]*mul\.lo\.s32 %r\d+, %r\d+, \1;/,
    );
  });

  test("ptxas assembles every kernel here for sm_80 and sm_90", async () => {
    const kernels = [
      vectorAdd("lt"),
      rowKernel(64),
      rowKernel("cols"),
      strided(),
      loops(),
      gridDimKernel(),
    ];
    const jobs = kernels.flatMap((k) =>
      ["sm_80", "sm_90"].map((arch) => ({ name: k.name, arch, text: compileToPtx(k).text })),
    );
    expect(await assembleAll(jobs)).toEqual([]);
  });
});

describe("simulator", () => {
  const f32 = (n: number, seed: number): Float32Array =>
    Float32Array.from({ length: n }, (_, i) => ((i * seed) % 1013) / 8 - 40);

  test.each([1, 255, 256, 1000, 1024, 1025])(
    "vector add of %i elements equals the CPU sum",
    (n) => {
      const vf = verify(vectorAdd("lt"));
      const x = f32(n, 37);
      const y = f32(n, 91);
      const c = simZeros([n], "float32");
      runSim(vf, [
        n,
        simTensor(x, { shape: [n], dtype: "float32" }),
        simTensor(y, { shape: [n], dtype: "float32" }),
        c,
      ]);
      expect(Array.from(c.toArray() as Float32Array)).toEqual(
        Array.from(Float32Array.from(x, (v, i) => v + y[i]!)),
      );
    },
  );

  test.each([
    [1, 1],
    [3, 5],
    [7, 64],
  ])("row kernel over [%i, %i] with runtime rows and columns", (rows, cols) => {
    const vf = verify(rowKernel("cols"));
    const x = f32(rows * cols, 53);
    const b = simZeros([rows, cols], "float32");
    runSim(vf, [rows, cols, simTensor(x, { shape: [rows, cols], dtype: "float32" }), b]);
    const want = Float32Array.from(x, (v, k) => v * 2 + Math.floor(k / cols));
    expect(Array.from(b.toArray() as Float32Array)).toEqual(Array.from(want));
  });

  test("grid-stride loop with a runtime stop and a step", () => {
    const n = 200;
    const x = Int32Array.from({ length: n }, (_, i) => i * 3 - 7);
    const b = simZeros([n], "int32");
    runSim(verify(strided()), [n, simTensor(x, { shape: [n], dtype: "int32" }), b]);
    expect(Array.from(b.toArray() as Int32Array)).toEqual(Array.from(x, (v) => v + 1));
  });

  test("T.range with a step, T.grid and T.serial visit what Python's range would", () => {
    const s = simZeros([32], "int32");
    const g = simZeros([4, 8], "int32");
    const r = simZeros([6], "int32");
    runSim(verify(loops()), [s, g, r]);
    const ws = new Array<number>(32).fill(0);
    for (let i = 1; i < 20; i += 3) ws[i] = i + 100;
    const wg: number[] = [];
    for (let i = 0; i < 4; i++) for (let j = 0; j < 8; j++) wg.push(i * 10 + j);
    expect(Array.from(s.toArray() as Int32Array)).toEqual(ws);
    expect(Array.from(g.toArray() as Int32Array)).toEqual(wg);
    expect(Array.from(r.toArray() as Int32Array)).toEqual([0, 0, 4, 9, 16, 25]);
  });
});

describe("launch", () => {
  test("a tensor whose length differs from n is refused (TX5008) with both values", () => {
    const vf = verify(vectorAdd("lt"));
    const t = (k: number) => simZeros([k], "float32");
    const e = errorOf(() => runSim(vf, [1000, t(1000), t(1024), t(1000)]));
    expect(e.code).toBe("TX5008");
    expect(e.text).toContain("1024 elements");
    expect(e.text).toContain('"n" (argument 0) is 1000');
  });

  test("a grid extent below 1 or above the CUDA limit is refused (TX5009) naming the kernel", () => {
    const vf = verify(vectorAdd("lt"));
    const e = errorOf(() =>
      runSim(vf, [0, simZeros([0], "float32"), simZeros([0], "float32"), simZeros([0], "float32")]),
    );
    expect(e.code).toBe("TX5009");
    expect(e.text).toContain('kernel "vector_add"');
    expect(e.text).toContain("evaluates to 0");
    const wide = T.function("wide", { n: T.int32 }, ({ n }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [1, n], block: 1 }) });
    });
    const launch = verify(wide).launch;
    expect(launchGrid(wide, launch, [65535])).toEqual([1, 65535, 1]);
    expect(errorOf(() => launchGrid(wide, launch, [65536])).text).toContain("1..65535");
  });

  test("checkArgs, shared by both runtimes, compares every symbolic dim", () => {
    const f = rowKernel("cols");
    const fake = (shape: number[]): DeviceTensor =>
      ({
        device: { kind: "sim", name: "sim" },
        shape,
        dtype: "float32",
      }) as unknown as DeviceTensor;
    const dev = { kind: "sim", name: "sim" };
    const a = { ...fake([3, 5]), device: dev } as DeviceTensor;
    const b = { ...fake([3, 5]), device: dev } as DeviceTensor;
    expect(() => checkArgs(f, [3, 5, a, b] as KernelArg[])).not.toThrow();
    const e = errorOf(() => checkArgs(f, [3, 4, a, b] as KernelArg[]));
    expect(e.code).toBe("TX5008");
    expect(e.text).toContain("along axis 1");
  });
});

describe("symbolic bounds soundness", () => {
  test("a guard on a loaded value proves nothing: memory may change before the access", () => {
    const f = T.function(
      "k",
      { n: T.int32, I: T.Tensor([1], "int32"), A: T.Tensor(["n"], "int32") },
      ({ n, I, A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        T.if_(I.get([0]).lt(n), () => {
          I.set([0], n);
          A.set([I.get([0])], 1);
        });
      },
    );
    expect(errorOf(() => verify(f)).code).toBe("TX2006");
  });

  test("a guard against another dim proves nothing about this one", () => {
    const f = T.function(
      "k",
      { n: T.int32, m: T.int32, A: T.Tensor(["n"], "int32") },
      ({ m, A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [m], block: 1 }) });
        const i = T.cuda.block_idx("x");
        T.if_(i.lt(m), () => A.set([i], 1));
      },
    );
    expect(errorOf(() => verify(f)).code).toBe("TX2006");
  });
});

describe("static tensors", () => {
  const guarded = (bound: number): PrimFunc =>
    T.function("k", { A: T.Tensor([1000], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 4, block: 256 }) });
      const i = T.cuda.block_idx("x").mul(256).add(T.cuda.thread_idx("x"));
      T.if_(i.lt(bound), () => A.set([i], 0));
    });

  test("a guard on a whole index expression proves a static access", () => {
    expect(() => verify(guarded(1000))).not.toThrow();
  });

  test("a guard too loose is TX2006 with a note on guarding and symbolic dims", () => {
    const e = errorOf(() => verify(guarded(1001)));
    expect(e.code).toBe("TX2006");
    expect(e.text).toContain("elements 0..1023");
    expect(e.notes[0]!.message).toContain('T.Tensor(["n"]');
  });
});

describe("runtime grid on the simulator", () => {
  test("%nctaid reads the launch's grid; T.unroll takes a step too", () => {
    const f = gridDimKernel();
    const vf = verify(f);
    for (const n of [1, 3, 6]) {
      const g = simZeros([n], "int32");
      const u = simZeros([8], "int32");
      runSim(vf, [n, g, u]);
      expect(Array.from(g.toArray() as Int32Array)).toEqual(
        Array.from({ length: n }, (_, c) => n * 100 + c),
      );
      expect(Array.from(u.toArray() as Int32Array)).toEqual([0, 1, 0, 0, 4, 0, 0, 7]);
    }
    expect(compileToPtx(f).text).toContain("%nctaid.x");
  });
});

describe("tensor size limit", () => {
  test("a tensor with symbolic dims above 2^48 bytes is refused at launch (TX2011)", () => {
    const f = T.function("k", { n: T.int32, A: T.Tensor(["n", 65536], "float32") }, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
    });
    const t = (n: number) =>
      ({
        device: { kind: "sim", name: "sim" },
        shape: [n, 65536],
        dtype: "float32",
      }) as unknown as DeviceTensor;
    expect(() => checkArgs(f, [2 ** 30, t(2 ** 30)])).not.toThrow(); // 2^48 bytes
    const e = errorOf(() => checkArgs(f, [2 ** 30 + 1, t(2 ** 30 + 1)]));
    expect(e.code).toBe("TX2011");
    expect(e.text).toContain(`${(2 ** 30 + 1) * 2 ** 18} bytes`);
  });
});
