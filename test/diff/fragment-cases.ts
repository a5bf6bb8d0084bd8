// The built-in fragment layouts (core/layout/fragments.ts) against the tensor cores, element by
// element: kernels that take every register of every operand from a flat array [thread][slot]
// and store every accumulator register to [thread][slot], so the kernel knows no layout; the
// host fills the A, B and C registers through the layouts under test (register (t, s) of A holds
// A[r][k] where the A layout maps [r, k] to (t, s)) and reads D back through the C/D layout.
// Two input sets per instruction:
// - "identify": A one-hot (a weight 2^(r div K) at column r mod K) and B odd integers per
//   (k, n) (distinct integers for int8), so every element of D is distinct and names its
//   [row, col]: the run checks that the register (t, s) the layout assigns to [row, col] holds
//   exactly that element, and reports the [row, col] the hardware put there when it does not;
// - "distinct": A, B and C of distinct small integers (int8: a permutation repeated), D the exact
//   A·B + C (every partial sum an integer below 2^24, exact in float32 in any order), so the A and
//   B (and the wgmma register A) layouts must hold the right element in every register too.
// mma.sync m16n8k16 (f16, bf16 → f32), m16n8k8 (tf32 → f32), m16n8k32 (s8 → s32), one warp;
// wgmma.mma_async m64nNk16 (f16 → f32) for N = 16 and 64, one warpgroup, B (and A in the SS
// form) in shared memory in the canonical K-major layout without swizzle (PTX ISA, "Shared
// Memory Matrix Layout"), A in registers (the RS form) through the wgmma A layout.
// test/fragment-layouts-sim.test.ts runs them on the simulator, test/gpu/fragment-layouts.test.ts
// on the GPU and the simulator.
import {
  layoutCoordinates,
  layoutSpan,
  mmaSyncOperandLayout,
  mmaSyncOperandShape,
  wgmmaOperandLayout,
  wgmmaOperandShape,
  type DType,
  type LayoutCoord,
  type PrimFunc,
  type TileLayout,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compile, tensor, type DeviceLike } from "tirx-ts";

/** One register array of a fragment case: the layout, its logical shape, the thread axis. */
interface Operand {
  readonly name: string;
  readonly layout: TileLayout;
  readonly rows: number;
  readonly cols: number;
  /** Threads that hold the fragment (32: a warp over laneid; 128: a warpgroup over tid_in_wg). */
  readonly threads: number;
  /** Registers per thread (the layout's span on m). */
  readonly slots: number;
}

/** One fragment case: a kernel, its host inputs, and what every output register must hold. */
export interface FragmentCase {
  readonly id: string;
  readonly fn: PrimFunc;
  /** sm_80 for mma.sync, sm_90a for wgmma. */
  readonly arch: "sm_80" | "sm_90a";
  readonly inputs: readonly { readonly dtype: DType; readonly values: readonly number[] }[];
  readonly out: { readonly dtype: DType; readonly n: number };
  /** The D layout's logical [row, col] of output register (thread, slot), thread-major. */
  readonly d: Operand;
  /** Logical D (rows × cols, row-major), exact. */
  readonly want: readonly number[];
  /** "identify": every D element distinct, so a value names its [row, col]. */
  readonly values: "identify" | "distinct";
}

/** The thread a coordinate names (laneid or tid_in_wg). */
const threadOf = (c: LayoutCoord): number => c.laneid ?? c.tid_in_wg ?? -1;

/**
 * The inverse of an operand's layout: for register (thread, slot), thread-major, the row-major
 * index of the logical element it holds (-1: none). The layout must map every element to one
 * thread in range and one slot, and no two elements to the same register.
 * @throws Error naming the first element that breaks this.
 */
export function registerMap(o: Operand): number[] {
  const inv = new Array<number>(o.threads * o.slots).fill(-1);
  for (let r = 0; r < o.rows; r++) {
    for (let c = 0; c < o.cols; c++) {
      const coords = layoutCoordinates(o.layout, [r, c], [o.rows, o.cols]);
      if (coords.length !== 1) throw new Error(`${o.name}: [${r}, ${c}] is replicated`);
      const t = threadOf(coords[0]!);
      const s = coords[0]!.m ?? 0;
      if (t < 0 || t >= o.threads || s < 0 || s >= o.slots) {
        throw new Error(`${o.name}: [${r}, ${c}] maps to thread ${t} slot ${s}, out of range`);
      }
      const at = t * o.slots + s;
      if (inv[at] !== -1) throw new Error(`${o.name}: thread ${t} slot ${s} holds two elements`);
      inv[at] = r * o.cols + c;
    }
  }
  return inv;
}

const operand = (
  name: string,
  layout: TileLayout,
  [rows, cols]: readonly [number, number],
  threads: number,
): Operand => ({ name, layout, rows, cols, threads, slots: layoutSpan(layout, "m") });

/** The register array [thread][slot] of a logical matrix (row-major) through its layout. */
function registers(o: Operand, logical: readonly number[]): number[] {
  return registerMap(o).map((i) => (i < 0 ? 0 : logical[i]!));
}

/** D = A·B + C, A rows × K, B K × cols, exactly (the inputs keep every sum an exact integer). */
function product(
  A: readonly number[],
  B: readonly number[],
  C: readonly number[],
  rows: number,
  K: number,
  cols: number,
): number[] {
  const D: number[] = [];
  for (let r = 0; r < rows; r++) {
    for (let n = 0; n < cols; n++) {
      let s = C[r * cols + n]!;
      for (let k = 0; k < K; k++) s += A[r * K + k]! * B[k * cols + n]!;
      D.push(s);
    }
  }
  return D;
}

/**
 * Inputs of a value set: A (rows × K), B (K × cols), C (rows × cols), row-major.
 * identify: A[r][r mod K] = 2^(r div K) (1 when K ≥ rows), B[k][n] = 2(k·cols + n) + 1 (odd), or
 * k·cols + n − 64 for int8 (16 rows ≤ K there; B's rows from 16 on are 0), C = 0:
 * D[r][n] = 2^(r div K)·B[r mod K][n], all distinct (the 2-adic valuation names r div K).
 * distinct: ((i·73) mod p) − p/2 over a power of two p ≥ the count (int8: p = 256), for A, B, C.
 */
function inputs(
  values: "identify" | "distinct",
  rows: number,
  K: number,
  cols: number,
  int8: boolean,
): { A: number[]; B: number[]; C: number[] } {
  if (values === "identify") {
    const A = Array.from({ length: rows * K }, (_, i) => {
      const r = Math.floor(i / K);
      return i % K === r % K ? 2 ** Math.floor(r / K) : 0;
    });
    // int8: rows k ≥ 16 of B meet only zeros of A; they stay 0 (i − 64 would leave int8).
    const B = Array.from({ length: K * cols }, (_, i) =>
      int8 ? (i < 16 * cols ? i - 64 : 0) : 2 * i + 1,
    );
    return { A, B, C: new Array<number>(rows * cols).fill(0) };
  }
  const spread = (n: number, mult: number): number[] => {
    let p = 1;
    while (p < n) p *= 2;
    if (int8) p = Math.min(p, 256);
    return Array.from({ length: n }, (_, i) => ((i * mult) % p) - p / 2);
  };
  return { A: spread(rows * K, 73), B: spread(K * cols, 29), C: spread(rows * cols, 13) };
}

// ---- mma.sync ---------------------------------------------------------------------------------

type MmaShape = "m16n8k16" | "m16n8k8" | "m16n8k32";
interface MmaVariant {
  readonly shape: MmaShape;
  readonly ab: DType;
  readonly cd: DType;
  /** PTX type tokens of A/B and C/D. */
  readonly tok: readonly [string, string];
}
const MMA: readonly MmaVariant[] = [
  { shape: "m16n8k16", ab: "float16", cd: "float32", tok: ["fp16", "fp32"] },
  { shape: "m16n8k16", ab: "bfloat16", cd: "float32", tok: ["bf16", "fp32"] },
  { shape: "m16n8k8", ab: "float32", cd: "float32", tok: ["tf32", "fp32"] },
  { shape: "m16n8k32", ab: "int8", cd: "int32", tok: ["s8", "s32"] },
];

function mmaCase(v: MmaVariant, values: "identify" | "distinct"): FragmentCase {
  const a = operand(
    "A",
    mmaSyncOperandLayout("A", v.shape, v.ab),
    mmaSyncOperandShape("A", v.shape),
    32,
  );
  const b = operand(
    "B",
    mmaSyncOperandLayout("B", v.shape, v.ab),
    mmaSyncOperandShape("B", v.shape),
    32,
  );
  const c = operand(
    "C",
    mmaSyncOperandLayout("C", v.shape, v.cd),
    mmaSyncOperandShape("C", v.shape),
    32,
  );
  const K = a.cols;
  const { A, B, C } = inputs(values, 16, K, 8, v.ab === "int8");
  const id = `mma.${v.shape}.${v.tok[0]}.${values}`;
  const fn = T.function(
    `frag_mma_${v.shape}_${v.tok[0]}_${values}`,
    {
      AR: T.Tensor([32 * a.slots], v.ab),
      BR: T.Tensor([32 * b.slots], v.ab),
      CR: T.Tensor([32 * c.slots], v.cd),
      DR: T.Tensor([32 * c.slots], v.cd),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const lane = T.cuda.thread_idx("x");
      const ra = T.alloc_local([a.slots], v.ab, { name: "a" });
      const rb = T.alloc_local([b.slots], v.ab, { name: "b" });
      const rc = T.alloc_local([c.slots], v.cd, { name: "c" });
      for (let i = 0; i < a.slots; i++) ra.set([i], p.AR.get([lane.mul(a.slots).add(i)]));
      for (let i = 0; i < b.slots; i++) rb.set([i], p.BR.get([lane.mul(b.slots).add(i)]));
      for (let i = 0; i < c.slots; i++) rc.set([i], p.CR.get([lane.mul(c.slots).add(i)]));
      T.ptx.mma(v.shape, "row", "col", v.tok[0], v.tok[0], v.tok[1], ra, 0, rb, 0, rc, 0);
      for (let i = 0; i < c.slots; i++) p.DR.set([lane.mul(c.slots).add(i)], rc.get([i]));
    },
  );
  return {
    id,
    fn,
    arch: "sm_80",
    inputs: [
      { dtype: v.ab, values: registers(a, A) },
      { dtype: v.ab, values: registers(b, B) },
      { dtype: v.cd, values: registers(c, C) },
    ],
    out: { dtype: v.cd, n: 32 * c.slots },
    d: c,
    want: product(A, B, C, 16, K, 8),
    values,
  };
}

// ---- wgmma ------------------------------------------------------------------------------------

/**
 * Byte of element (r, k) of an R × 16 K-major float16 tile without swizzle (PTX ISA, "Shared
 * Memory Matrix Layout": core matrices of 8 rows × 16 bytes, LBO 128 between the two k halves,
 * SBO 256 between 8-row groups).
 */
const kMajorByte = (r: number, k: number): number =>
  (r >> 3) * 256 + (k >> 3) * 128 + (r & 7) * 16 + 2 * (k & 7);

function wgmmaCase(n: number, aFrom: "ss" | "rs", values: "identify" | "distinct"): FragmentCase {
  const d = operand("D", wgmmaOperandLayout("D", n, "float32"), wgmmaOperandShape("D", n), 128);
  const a = operand("A", wgmmaOperandLayout("A", n, "float16"), wgmmaOperandShape("A", n), 128);
  const K = 16;
  const { A, B, C } = inputs(values, 64, K, n, false);
  // B (K × n) stored n rows × K (K-major): element e = row·K + k of the n × K array.
  const Bt = Array.from({ length: n * K }, (_, e) => B[(e % K) * n + Math.floor(e / K)]!);
  const perm = (R: number): number[] =>
    Array.from({ length: R * K }, (_, e) => kMajorByte(Math.floor(e / K), e % K) / 2);
  const ss = aFrom === "ss";
  const shape = `m64n${n}k16`;
  const fn = T.function(
    `frag_wgmma_${shape}_${aFrom}_${values}`,
    {
      A: T.Tensor([ss ? 64 * K : 128 * a.slots], "float16"),
      PA: T.Tensor([64 * K], "int32"),
      B: T.Tensor([n * K], "float16"),
      PB: T.Tensor([n * K], "int32"),
      CR: T.Tensor([128 * d.slots], "float32"),
      DR: T.Tensor([128 * d.slots], "float32"),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const sB = T.alloc_shared([n * K], "float16", { name: "sB", align: 1024 });
      for (const i of T.range((n * K) / 128)) {
        const e = tid.add(i.mul(128));
        sB.set([p.PB.get([e])], p.B.get([e]));
      }
      const sA = ss ? T.alloc_shared([64 * K], "float16", { name: "sA", align: 1024 }) : undefined;
      if (sA) {
        for (const i of T.range((64 * K) / 128)) {
          const e = tid.add(i.mul(128));
          sA.set([p.PA.get([e])], p.A.get([e]));
        }
      }
      const ra = ss ? undefined : T.alloc_local([a.slots], "float16", { name: "a" });
      if (ra) {
        for (let i = 0; i < a.slots; i++) ra.set([i], p.A.get([tid.mul(a.slots).add(i)]));
      }
      const acc = T.alloc_local([d.slots], "float32", { name: "acc" });
      for (let i = 0; i < d.slots; i++) acc.set([i], p.CR.get([tid.mul(d.slots).add(i)]));
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      T.ptx.wgmma.fence();
      const dB = T.ptx.wgmma.encode_matrix_descriptor(sB.ptr([0]), 128, 256, 0);
      if (sA) {
        const dA = T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0]), 128, 256, 0);
        T.ptx.wgmma.mma_async(shape, "float16", acc, 0, dA, dB, { scale_d: 1 });
      } else {
        T.ptx.wgmma.mma_async(shape, "float16", acc, 0, ra!, dB, { scale_d: 1, a_offset: 0 });
      }
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
      for (let i = 0; i < d.slots; i++) p.DR.set([tid.mul(d.slots).add(i)], acc.get([i]));
    },
  );
  return {
    id: `wgmma.${shape}.f16.${aFrom}.${values}`,
    fn,
    arch: "sm_90a",
    inputs: [
      { dtype: "float16", values: ss ? A : registers(a, A) },
      { dtype: "int32", values: perm(64) },
      { dtype: "float16", values: Bt },
      { dtype: "int32", values: perm(n) },
      { dtype: "float32", values: registers(d, C) },
    ],
    out: { dtype: "float32", n: 128 * d.slots },
    d,
    want: product(A, B, C, 64, K, n),
    values,
  };
}

/** Every fragment case: 4 mma.sync variants and 4 wgmma forms, each with both value sets. */
export function fragmentCases(): FragmentCase[] {
  const out: FragmentCase[] = [];
  for (const values of ["identify", "distinct"] as const) {
    for (const v of MMA) out.push(mmaCase(v, values));
    for (const n of [16, 64]) {
      for (const aFrom of ["ss", "rs"] as const) out.push(wgmmaCase(n, aFrom, values));
    }
  }
  return out;
}

/** Run `c` on `dev`: its output registers [thread][slot]. */
export function runFragmentCase(c: FragmentCase, dev: DeviceLike): number[] {
  const run = compile(c.fn, { target: "cuda", arch: c.arch });
  const xs = c.inputs.map((x) =>
    tensor(x.values as number[], { shape: [x.values.length], dtype: x.dtype, device: dev }),
  );
  const y = tensor.zeros([c.out.n], c.out.dtype, dev);
  run(...xs, y);
  const out = Array.from(y.toArray() as ArrayLike<number>, Number);
  for (const t of [...xs, y]) t.dispose();
  return out;
}

/**
 * Every output register that does not hold what the D layout says: for register (t, s), the
 * layout's [row, col] and the exact D there; for "identify" cases also the [row, col] whose
 * value the hardware put there. Empty when the layout matches element by element.
 */
export function fragmentMismatches(c: FragmentCase, out: readonly number[]): string[] {
  const inv = registerMap(c.d);
  const where = new Map<number, number>();
  c.want.forEach((v, i) => where.set(v, i));
  const cell = (i: number): string => `[${Math.floor(i / c.d.cols)}, ${i % c.d.cols}]`;
  const bad: string[] = [];
  inv.forEach((i, at) => {
    if (i < 0) return;
    const got = out[at];
    if (got === c.want[i]) return;
    const t = Math.floor(at / c.d.slots);
    const s = at % c.d.slots;
    const from = c.values === "identify" && got !== undefined ? where.get(got) : undefined;
    bad.push(
      `${c.id}: thread ${t} slot ${s}: the layout says D${cell(i)} = ${c.want[i]}, the register holds ${String(got)}` +
        (from !== undefined ? ` (D${cell(from)})` : ""),
    );
  });
  return bad;
}
