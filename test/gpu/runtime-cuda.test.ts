import { describe, expect, it } from "vitest";
import { mkBuffer, type DType, type LaunchConfig, type Param } from "@tirx-ts/core";
import {
  CudaError,
  CudaTensor,
  cuda,
  cudaAvailable,
  cudaEmpty,
  cudaTensor,
  cudaZeros,
  loadModule,
  timeLaunches,
} from "@tirx-ts/runtime-cuda";

// Real-GPU tests of the CUDA driver binding; skipped (with the reason printed) where there is no driver.
const available = cudaAvailable();
if (!available.ok) console.log(`test/gpu/runtime-cuda: skipped, ${available.reason}`);

let nextId = 5000;
const tensorParam = (name: string, dtype: DType, shape: number[]): Param => ({
  kind: "buffer",
  name,
  buffer: mkBuffer(name, shape, dtype, "global"),
});
const scalar = (name: string, dtype: DType): Param => ({
  kind: "scalar",
  name,
  var: { kind: "Var", name, id: nextId++, dtype },
});
const values = (t: CudaTensor): unknown[] => Array.from(t.toArray() as ArrayLike<unknown>);
const launch1d = (grid: number, block: number, dynamicSharedBytes = 0): LaunchConfig => ({
  grid: [grid, 1, 1],
  block: [block, 1, 1],
  dynamicSharedBytes,
});

// a[i] += 1 for i < n. Checked with ptxas -arch=sm_80 and sm_90.
const ADD_ONE = `.version 7.0
.target sm_75
.address_size 64

.visible .entry add_one(
	.param .u64 add_one_param_0,
	.param .u32 add_one_param_1
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<8>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [add_one_param_0];
	ld.param.u32 	%r1, [add_one_param_1];
	mov.u32 	%r2, %ctaid.x;
	mov.u32 	%r3, %ntid.x;
	mov.u32 	%r4, %tid.x;
	mad.lo.s32 	%r5, %r2, %r3, %r4;
	setp.ge.u32 	%p1, %r5, %r1;
	@%p1 bra 	$L_done;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.u32 	%rd3, %r5, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.u32 	%r6, [%rd4];
	add.s32 	%r7, %r6, 1;
	st.global.u32 	[%rd4], %r7;
$L_done:
	ret;
}
`;

// Stores each scalar parameter's bytes into out (uint8[32]): u8 @0, s32 @4, u64 @8, f32 @16, b16 @20, f64 @24.
const ECHO_SCALARS = `.version 7.0
.target sm_75
.address_size 64

.visible .entry echo_scalars(
	.param .u64 p_out,
	.param .u8 p_b,
	.param .s32 p_i,
	.param .u64 p_u,
	.param .f32 p_f,
	.param .b16 p_h,
	.param .f64 p_d
)
{
	.reg .b16 	%rs<3>;
	.reg .b32 	%r<2>;
	.reg .f32 	%f<2>;
	.reg .b64 	%rd<4>;
	.reg .f64 	%fd<2>;

	ld.param.u64 	%rd1, [p_out];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.param.u8 	%rs1, [p_b];
	st.global.u8 	[%rd2], %rs1;
	ld.param.s32 	%r1, [p_i];
	st.global.u32 	[%rd2+4], %r1;
	ld.param.u64 	%rd3, [p_u];
	st.global.u64 	[%rd2+8], %rd3;
	ld.param.f32 	%f1, [p_f];
	st.global.f32 	[%rd2+16], %f1;
	ld.param.b16 	%rs2, [p_h];
	st.global.b16 	[%rd2+20], %rs2;
	ld.param.f64 	%fd1, [p_d];
	st.global.f64 	[%rd2+24], %fd1;
	ret;
}
`;

// Writes 12345 to dynamic shared memory at byte p_off, reads it back into out[0].
const DYN_SHARED = `.version 7.0
.target sm_80
.address_size 64

.extern .shared .align 16 .b8 dyn_smem[];

.visible .entry dyn_shared(
	.param .u64 p_out,
	.param .u32 p_off
)
{
	.reg .b32 	%r<5>;
	.reg .b64 	%rd<3>;

	ld.param.u64 	%rd1, [p_out];
	cvta.to.global.u64 	%rd2, %rd1;
	ld.param.u32 	%r1, [p_off];
	mov.u32 	%r2, dyn_smem;
	add.u32 	%r3, %r2, %r1;
	mov.u32 	%r4, 12345;
	st.shared.u32 	[%r3], %r4;
	bar.sync 	0;
	ld.shared.u32 	%r4, [%r3];
	st.global.u32 	[%rd2], %r4;
	ret;
}
`;

describe.skipIf(!available.ok)("runtime-cuda on a real GPU", () => {
  it("opens device 0 with its name, compute capability and shared-memory limit", () => {
    const dev = cuda(0);
    expect(dev.kind).toBe("cuda");
    expect(dev.name.length).toBeGreaterThan(0);
    expect(dev.computeCapability[0]).toBeGreaterThanOrEqual(7);
    expect(dev.computeCapability[1]).toBeGreaterThanOrEqual(0);
    expect(dev.arch).toMatch(/^sm_\d+$/);
    expect(dev.maxSharedOptin).toBeGreaterThanOrEqual(48 * 1024);
    expect(cuda(0)).toBe(dev);
    dev.synchronize();
    console.log(`test/gpu/runtime-cuda: ${dev.toString()}, opt-in shared ${dev.maxSharedOptin} B`);
  });

  it("round-trips float16, bfloat16, int64 and bool through device memory", () => {
    const f16 = cudaTensor([0, 1, -2.5, 65504, 2 ** -14], { shape: [5], dtype: "float16" });
    expect(values(f16)).toEqual([0, 1, -2.5, 65504, 2 ** -14]);
    expect(f16.nbytes).toBe(10);
    const bf16 = cudaTensor([1, -3, 0.5, 256], { shape: [2, 2], dtype: "bfloat16" });
    expect(values(bf16)).toEqual([1, -3, 0.5, 256]);
    expect(Array.from(bf16.toBytes())).toEqual([0x80, 0x3f, 0x40, 0xc0, 0x00, 0x3f, 0x80, 0x43]);
    const i64 = cudaTensor([-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n], { shape: [4], dtype: "int64" });
    expect(values(i64)).toEqual([-(2n ** 63n), 2n ** 63n - 1n, 0n, -1n]);
    const b = cudaTensor([true, false, true], { shape: [3], dtype: "bool" });
    expect(values(b)).toEqual([1, 0, 1]);
    expect(values(cudaZeros([3], "bool"))).toEqual([0, 0, 0]);
    const e = cudaEmpty([4], "float32");
    e.copyFrom([1, 2, 3, 4]);
    expect(values(e)).toEqual([1, 2, 3, 4]);
    for (const t of [f16, bf16, i64, b, e]) t.dispose();
    expect(() => e.toArray()).toThrow(/after dispose/);
    expect(cudaEmpty([0], "float32").toBytes().length).toBe(0);
  });

  it("JIT-loads a hand-written PTX kernel and launches it", () => {
    const dev = cuda(0);
    const n = 1000;
    const host = Int32Array.from({ length: n }, (_, i) => i * 3 - 500);
    const a = cudaTensor(host, { shape: [n], dtype: "int32" });
    const mod = loadModule(dev, ADD_ONE);
    expect(loadModule(dev, ADD_ONE)).toBe(mod);
    const k = mod.getKernel("add_one");
    const params = [tensorParam("a", "int32", [n]), scalar("n", "uint32")];
    k.launch(params, [a, n], launch1d(Math.ceil(n / 128), 128));
    k.launch(params, [a, n], launch1d(Math.ceil(n / 128), 128));
    dev.synchronize();
    expect(values(a)).toEqual(Array.from(host, (x) => x + 2));
    a.dispose();
  });

  it("passes every scalar parameter type with its PTX width", () => {
    const dev = cuda(0);
    const out = cudaZeros([32], "uint8");
    const k = loadModule(dev, ECHO_SCALARS).getKernel("echo_scalars");
    const params = [
      tensorParam("out", "uint8", [32]),
      scalar("b", "bool"),
      scalar("i", "int32"),
      scalar("u", "uint64"),
      scalar("f", "float32"),
      scalar("h", "float16"),
      scalar("d", "float64"),
    ];
    k.launch(
      params,
      [out, true, -123456, 0xfedc_ba98_7654_3210n, 3.25, 1.5, -0.125],
      launch1d(1, 1),
    );
    dev.synchronize();
    const v = new DataView(out.toBytes().buffer);
    expect(v.getUint8(0)).toBe(1);
    expect(v.getInt32(4, true)).toBe(-123456);
    expect(v.getBigUint64(8, true)).toBe(0xfedc_ba98_7654_3210n);
    expect(v.getFloat32(16, true)).toBe(3.25);
    expect(v.getUint16(20, true)).toBe(0x3e00); // float16 1.5
    expect(v.getFloat64(24, true)).toBe(-0.125);
    out.dispose();
  });

  it("opts in to more than 48 KiB of dynamic shared memory", () => {
    const dev = cuda(0);
    const bytes = Math.min(96 * 1024, dev.maxSharedOptin);
    const out = cudaZeros([1], "uint32");
    const k = loadModule(dev, DYN_SHARED).getKernel("dyn_shared");
    const params = [tensorParam("out", "uint32", [1]), scalar("off", "uint32")];
    k.launch(params, [out, bytes - 4], launch1d(1, 32, bytes));
    dev.synchronize();
    expect(values(out)).toEqual([12345]);
    out.dispose();
  });

  it("puts the JIT error log of invalid PTX into the CudaError", () => {
    const bad = ADD_ONE.replace("add.s32 \t%r7, %r6, 1;", "frobnicate.s32 %r7, %r6;");
    expect(bad).not.toBe(ADD_ONE);
    let err: unknown;
    try {
      loadModule(cuda(0), bad);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CudaError);
    const e = err as CudaError;
    expect(e.call).toBe("cuModuleLoadDataEx");
    expect(e.errorName).toBe("CUDA_ERROR_INVALID_PTX");
    expect(e.code).toBe(218);
    expect(e.log).toMatch(/frobnicate/);
    expect(e.message).toContain(e.log!);
  });

  it("names a missing entry with CUDA_ERROR_NOT_FOUND", () => {
    expect(() => loadModule(cuda(0), ADD_ONE).getKernel("no_such_kernel")).toThrow(
      /CUDA_ERROR_NOT_FOUND/,
    );
  });

  it("times launches with events", () => {
    const dev = cuda(0);
    const n = 1 << 20;
    const a = cudaZeros([n], "int32");
    const k = loadModule(dev, ADD_ONE).getKernel("add_one");
    const params = [tensorParam("a", "int32", [n]), scalar("n", "uint32")];
    const t = timeLaunches(() => k.launch(params, [a, n], launch1d(n / 256, 256)), {
      warmup: 2,
      iters: 9,
    });
    expect(t.samplesUs).toHaveLength(9);
    for (const s of t.samplesUs) expect(s).toBeGreaterThan(0);
    expect(t.minUs).toBeGreaterThan(0);
    expect(t.medianUs).toBeGreaterThanOrEqual(t.minUs);
    expect(a.toArray()[0]).toBe(11);
    console.log(
      `test/gpu/runtime-cuda: add_one over ${n} int32: median ${t.medianUs.toFixed(1)} µs`,
    );
    a.dispose();
  });

  it("is a CudaTensor implementing DeviceTensor", () => {
    const t = cudaZeros([2, 3], "float32");
    expect(t).toBeInstanceOf(CudaTensor);
    expect(t.shape).toEqual([2, 3]);
    expect(t.device).toBe(cuda(0));
    t.dispose();
    t.dispose();
  });
});
