// Differential cases of wgmma.mma_async (m64nNk16, float32 accumulators, float16/bfloat16
// inputs): one warpgroup per CTA, 6 CTAs per case, each CTA a class of inputs (random, exact
// multiples of 1/8, wide exponents, exact cancellation, zeros/subnormals/largest finite,
// infinities and NaN). A comes from a shared descriptor or from registers; the shared tiles are
// laid out here, on the host, in the canonical K-major or MN-major layouts with each swizzle
// (written out below from the PTX ISA's "Shared Memory Matrix Layout" and CUTLASS's GMMA
// canonical layouts, not imported from the simulator); several wgmma k16 steps are issued before
// one commit/wait. The reference is the exact D = scale_d·C + Σ (scale_a·a)·(scale_b·b) (BigInt
// arithmetic) rounded once to float32. The PTX ISA does not specify the accumulation order or
// internal precision, so outputs are judged within MMA_F32_BOUND summed over the chained k16
// instructions (mmaF32Bound of each, with c the exact running sum before it); the count equal to the once-rounded exact
// value is reported. CTA 1 (multiples of 1/8, every partial sum exact) must be bit-exact.
import { mmaF32Bound, type DType, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compile, tensor, type DeviceLike } from "tirx-ts";
import { decode, encode, prng, type Value } from "./values.js";
import { roundDyadic, roundTo, toDyadic } from "./reference.js";

type AB = "float16" | "bfloat16";
/** TMA-numbered swizzle (T.swizzle_mode): 0 none, 1 32B, 2 64B, 3 128B. */
type Mode = 0 | 1 | 2 | 3;

/** CTAs per case, one input class each (see `operand`). */
export const WGMMA_CTAS = 6;
/** The input class whose sums are exact in any order: its outputs must equal the reference. */
export const EXACT_CTA = 1;

/** One wgmma configuration. */
export interface WgmmaSpec {
  readonly n: 8 | 16 | 24 | 64 | 128 | 256;
  readonly ab: AB;
  /** A from a shared descriptor (`ss`) or 8 registers per thread (`rs`). */
  readonly a: "ss" | "rs";
  /** Swizzle of A's tile (ss only) and of B's. */
  readonly swA: Mode;
  readonly swB: Mode;
  /** MN-major (transposed) tiles: imm-trans-a / imm-trans-b = 1. */
  readonly tA: boolean;
  readonly tB: boolean;
  /**
   * scale-d of the first k16 step (the rest accumulate): 0 ignores C; "odd" is the runtime
   * predicate `ctaid.x % 2 != 0` (odd CTAs accumulate into C, even ones ignore it).
   */
  readonly scaleD: 0 | 1 | "odd";
  /** imm-scale-a / imm-scale-b: -1 negates the operand. */
  readonly sa: 1 | -1;
  readonly sb: 1 | -1;
  /** k16 wgmma instructions before one commit_group/wait_group: K = 16·steps. */
  readonly steps: number;
}

/** A tile of R rows (along M or N) × K of a 2-byte type in a canonical wgmma layout. */
interface Tile {
  /** Bytes of the tile. */
  readonly bytes: number;
  /** Logical (unswizzled; the buffer's T.swizzle_mode swizzles on access) byte of (r, k). */
  byte(r: number, k: number): number;
  readonly ldo: number;
  readonly sdo: number;
  /** Descriptor start byte of k16 step kk. */
  start(kk: number): number;
}

/**
 * Canonical layouts (PTX ISA "Shared Memory Matrix Layout"; CUTLASS `make_gmma_desc`), W the
 * bytes of a swizzle row (16·2^mode), E = W/2 its elements, core matrices of 8 × 16 bytes:
 * - K-major, no swizzle: core matrix (r/8, k/8) at (r/8)·SBO + (k/8)·LBO, rows of 16 bytes;
 * - K-major, swizzled: 8-row atoms of W-byte rows, k contiguous; 8-row groups at SBO = 8W; a
 *   K beyond E continues in a further column of atoms (the descriptor starts there);
 * - MN-major, no swizzle: core matrix of 8 k-rows × 8 elements along M/N, k groups at LBO, 8-wide
 *   M/N groups at SBO (here SBO = 128 and LBO = (R/8)·128: M/N groups adjacent);
 * - MN-major, swizzled: atoms of 8 k-rows × W bytes (E elements along M/N), atoms along M/N at
 *   LBO = 8W, 8-deep k groups at SBO (R padded up to a whole atom).
 */
function tile(R: number, K: number, mode: Mode, mn: boolean): Tile {
  const W = 16 << mode;
  const E = W / 2;
  if (!mn && mode === 0) {
    const LBO = 128;
    const SBO = (K / 8) * 128;
    return {
      bytes: R * K * 2,
      byte: (r, k) => (r >> 3) * SBO + (k >> 3) * LBO + (r & 7) * 16 + 2 * (k & 7),
      ldo: LBO,
      sdo: SBO,
      start: (kk) => 2 * kk * LBO,
    };
  }
  if (!mn) {
    const SBO = 8 * W;
    const col = R * W; // one column of atoms: all R rows, E elements of k
    return {
      bytes: Math.ceil(K / E) * col,
      byte: (r, k) => Math.floor(k / E) * col + (r >> 3) * SBO + (r & 7) * W + 2 * (k % E),
      ldo: 16,
      sdo: SBO,
      start: (kk) => Math.floor((16 * kk) / E) * col + 2 * ((16 * kk) % E),
    };
  }
  if (mode === 0) {
    const SBO = 128;
    const LBO = (R / 8) * 128;
    return {
      bytes: R * K * 2,
      byte: (r, k) => (k >> 3) * LBO + (r >> 3) * SBO + (k & 7) * 16 + 2 * (r & 7),
      ldo: LBO,
      sdo: SBO,
      start: (kk) => 2 * kk * LBO,
    };
  }
  const LBO = 8 * W;
  const SBO = Math.ceil(R / E) * 8 * W;
  return {
    bytes: (K / 8) * SBO,
    byte: (r, k) => (k >> 3) * SBO + Math.floor(r / E) * LBO + (k & 7) * W + 2 * (r % E),
    ldo: LBO,
    sdo: SBO,
    start: (kk) => 2 * kk * SBO,
  };
}

const MODE_NAME = ["none", "32B", "64B", "128B"] as const;

/** The id of a spec, e.g. `m64n64k16.f16.ss.A-mn128B.B-k64B.sd1.neg-a.x2`. */
export function wgmmaId(s: WgmmaSpec): string {
  const op = (t: boolean, m: Mode): string => `${t ? "mn" : "k"}${MODE_NAME[m]}`;
  const neg = [s.sa < 0 ? "a" : "", s.sb < 0 ? "b" : ""].join("");
  return [
    `m64n${s.n}k16`,
    s.ab === "float16" ? "f16" : "bf16",
    s.a,
    s.a === "ss" ? `A-${op(s.tA, s.swA)}` : "A-regs",
    `B-${op(s.tB, s.swB)}`,
    `sd${s.scaleD}`,
    ...(neg ? [`neg-${neg}`] : []),
    `x${s.steps}`,
  ].join(".");
}

/**
 * Operand values of CTA `c`: 0 uniform in [-1, 1]; 1 multiples of 1/8 in [-1, 1] (every partial
 * sum exact in float32, so any order gives the exact value); 2 exponents spread over the format;
 * 3 exact cancellation (filled in pairs by the caller: Σ a·b = 0); 4 zeros, signed zeros,
 * subnormals (float16) or tiny values (bfloat16: 2^-60) and the largest finite float16 (2^60 for
 * bfloat16, so that sums stay finite); 5 infinities and NaN among random values.
 */
function operand(ab: AB, c: number, role: "a" | "b" | "c", i: number, rnd: () => number): number {
  const fmt: DType = role === "c" ? "float32" : ab;
  const conv = (x: number): number => (role === "c" ? Math.fround(x) : roundTo(x, ab));
  const maxExp = fmt === "float16" ? 15 : ab === "float16" ? 30 : 60;
  const minExp = fmt === "float16" ? -24 : -60;
  switch (c) {
    case 1:
      return (Math.floor(rnd() * 17) - 8) / 8;
    case 2: {
      const e = Math.floor(minExp / 2 + rnd() * (maxExp - minExp / 2));
      return conv((rnd() < 0.5 ? -1 : 1) * (1 + rnd()) * 2 ** Math.min(e, maxExp - 1));
    }
    case 4: {
      const big = fmt === "float16" ? 65504 : 2 ** 60;
      const tiny = fmt === "float16" ? 2 ** -24 : 2 ** -60;
      const pick = [0, -0, tiny, -tiny, 3 * tiny, big, -big, 1, -1][Math.floor(rnd() * 9)]!;
      return conv(role === "c" && Math.abs(pick) === big ? pick * 4 : pick);
    }
    case 5: {
      const pick = [Infinity, -Infinity, NaN, 1, -2, 0][Math.floor(rnd() * 6)]!;
      return conv(i % 7 === 0 ? pick : rnd() * 2 - 1);
    }
    default:
      return conv(rnd() * 2 - 1);
  }
}

type Dyadic = { m: bigint; e: number };

/**
 * Exact Σ a·b (+ c) rounded once to float32, the terms `as[ao + k]·bs[bo + k]` for k < K;
 * NaN and infinities as IEEE arithmetic gives them. `dy` gives the exact m·2^e of an operand
 * (cached by the caller), for sums that float64 does not hold exactly.
 */
function exactDot(
  as: Float64Array,
  ao: number,
  bs: Float64Array,
  bo: number,
  K: number,
  c: number | undefined,
  dyA: (i: number) => Dyadic,
  dyB: (i: number) => Dyadic,
): number {
  let inf = 0;
  let nan = false;
  const add = (x: number): void => {
    if (x !== x) nan = true;
    else if (!Number.isFinite(x)) {
      if (inf !== 0 && Math.sign(x) !== inf) nan = true;
      inf = Math.sign(x);
    }
  };
  // Fast path: when every float64 addition is exact (TwoSum error 0), the float64 sum is the
  // exact sum and Math.fround rounds it once. Products of f16/bf16 values are exact in float64.
  let s = c ?? 0;
  let exactSoFar = true;
  for (let k = 0; k < K; k++) {
    const x = as[ao + k]! * bs[bo + k]!;
    if (!Number.isFinite(x)) add(x);
    const t = s + x;
    const bv = t - s;
    if (exactSoFar) exactSoFar = s - (t - bv) + (x - bv) === 0;
    s = t;
  }
  if (c !== undefined) add(c);
  if (nan) return NaN;
  if (inf !== 0) return inf * Infinity;
  if (exactSoFar) return Math.fround(s);
  const parts: Dyadic[] = [];
  for (let k = 0; k < K; k++) {
    const x = dyA(ao + k);
    const y = dyB(bo + k);
    if (x.m !== 0n && y.m !== 0n) parts.push({ m: x.m * y.m, e: x.e + y.e });
  }
  if (c !== undefined && c !== 0) parts.push(toDyadic(c));
  if (parts.length === 0) return 0;
  const e = Math.min(...parts.map((p) => p.e));
  const m = parts.reduce((t, p) => t + (p.m << BigInt(p.e - e)), 0n);
  return roundDyadic(m, e, "float32");
}

/** How a run compares with the reference. */
export interface WgmmaVerdict {
  readonly checked: number;
  /** Outputs equal to the once-rounded exact value (either zero sign accepted, any NaN). */
  readonly exact: number;
  /** Largest |got − exact| / bound (bound: steps · 2^-21 · (scale_d·|c| + Σ|a·b|)). */
  readonly worst: number;
  /** CTAs (input classes) with an output that is not the once-rounded exact value. */
  readonly inexactCtas: readonly number[];
  readonly bad: readonly string[];
}

/** One case: its spec, kernel, inputs and a judge of its output D. */
export interface WgmmaCase {
  readonly id: string;
  readonly spec: WgmmaSpec;
  readonly fn: PrimFunc;
  readonly inputs: readonly { readonly dtype: DType; readonly values: readonly Value[] }[];
  readonly outCount: number;
  judge(out: readonly Value[]): WgmmaVerdict;
}

/** The case of `s` (inputs seeded by `seed`). */
export function wgmmaCase(s: WgmmaSpec, seed: number): WgmmaCase {
  const rnd = prng(seed);
  const { n: N, ab } = s;
  const K = 16 * s.steps;
  const G = WGMMA_CTAS;
  const A: number[] = [];
  const B: number[] = [];
  const C: number[] = [];
  for (let c = 0; c < G; c++) {
    for (let q = 0; q < 64 * K; q++) A.push(operand(ab, c, "a", q, rnd));
    for (let q = 0; q < N * K; q++) B.push(operand(ab, c, "b", q, rnd));
    for (let q = 0; q < 64 * N; q++) C.push(operand(ab, c, "c", q, rnd));
    if (c === 3) {
      // Cancellation: A[r][2j] = x, A[r][2j+1] = -x, B[n][2j+1] = B[n][2j].
      for (let r = 0; r < 64; r++) {
        for (let j = 0; j < K / 2; j++) {
          const x = roundTo((rnd() * 2 - 1) * 2 ** Math.floor(rnd() * 8), ab);
          A[c * 64 * K + r * K + 2 * j] = x;
          A[c * 64 * K + r * K + 2 * j + 1] = -x;
        }
      }
      for (let nn = 0; nn < N; nn++) {
        for (let j = 0; j < K / 2; j++) {
          B[c * N * K + nn * K + 2 * j + 1] = B[c * N * K + nn * K + 2 * j]!;
        }
      }
    }
  }
  const tA = tile(64, K, s.swA, s.tA);
  const tB = tile(N, K, s.swB, s.tB);
  // Where each logical element (row-major r·K + k) goes in the tile (element index).
  const perm = (t: Tile, R: number): number[] =>
    Array.from({ length: R * K }, (_, e) => t.byte(Math.floor(e / K), e % K) / 2);
  const ss = s.a === "ss";
  const id = wgmmaId(s);
  const shape = `m64n${N}k16`;
  const fn = T.function(
    `diff_wgmma_${id.replace(/[.-]/g, "_")}`,
    {
      A: T.Tensor([A.length], ab),
      B: T.Tensor([B.length], ab),
      Cin: T.Tensor([C.length], "float32"),
      PA: T.Tensor([64 * K], "int32"),
      PB: T.Tensor([N * K], "int32"),
      D: T.Tensor([C.length], "float32"),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: G, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const warp = T.let_("warp", tid.floordiv(32));
      const g = T.let_("g", tid.mod(32).floordiv(4));
      const t4 = T.let_("t4", tid.mod(32).mod(4));
      const smem = (name: string, t: Tile, mode: Mode) =>
        T.alloc_shared([t.bytes / 2], ab, {
          name,
          align: 1024,
          ...(mode === 0 ? {} : { layout: T.swizzle_mode(mode) }),
        });
      const sB = smem("sB", tB, s.swB);
      for (const i of T.range((N * K) / 128)) {
        const e = tid.add(i.mul(128));
        sB.set([p.PB.get([e])], p.B.get([cta.mul(N * K).add(e)]));
      }
      const sA = ss ? smem("sA", tA, s.swA) : undefined;
      if (sA) {
        for (const i of T.range((64 * K) / 128)) {
          const e = tid.add(i.mul(128));
          sA.set([p.PA.get([e])], p.A.get([cta.mul(64 * K).add(e)]));
        }
      }
      // A in registers: the PTX ISA's wgmma A fragment (that of mma.m16n8k16) for the warp's
      // 16 rows: a_i at row g + 8·(i/2 % 2), column 2·t4 + i % 2 + 8·(i / 4).
      const a = ss ? undefined : T.alloc_local([8 * s.steps], ab, { name: "a" });
      if (a) {
        for (let kk = 0; kk < s.steps; kk++) {
          for (let i = 0; i < 8; i++) {
            const row = warp
              .mul(16)
              .add(g)
              .add(8 * ((i >> 1) & 1));
            const col = t4.mul(2).add(16 * kk + (i & 1) + 8 * (i >> 2));
            a.set(
              [kk * 8 + i],
              p.A.get([
                cta
                  .mul(64 * K)
                  .add(row.mul(K))
                  .add(col),
              ]),
            );
          }
        }
      }
      // The PTX ISA's m64nN D fragment: d_i at row 16·warp + g + 8·(i/2 % 2), column
      // 8·(i / 4) + 2·t4 + i % 2.
      const at = (i: number) =>
        cta
          .mul(64 * N)
          .add(
            warp
              .mul(16)
              .add(g)
              .add(8 * ((i >> 1) & 1))
              .mul(N),
          )
          .add(t4.mul(2).add(8 * (i >> 2) + (i & 1)));
      const acc = T.alloc_local([N / 2], "float32", { name: "acc" });
      for (let i = 0; i < N / 2; i++) acc.set([i], p.Cin.get([at(i)]));
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      T.ptx.wgmma.fence();
      for (let kk = 0; kk < s.steps; kk++) {
        const dB = T.ptx.wgmma.encode_matrix_descriptor(
          sB.ptr([tB.start(kk) / 2]),
          tB.ldo,
          tB.sdo,
          s.swB,
        );
        const opts = {
          scale_d: kk > 0 ? 1 : s.scaleD === "odd" ? cta.mod(2) : s.scaleD,
          scale_a: s.sa,
          scale_b: s.sb,
          trans_b: s.tB ? 1 : 0,
        };
        if (sA) {
          const dA = T.ptx.wgmma.encode_matrix_descriptor(
            sA.ptr([tA.start(kk) / 2]),
            tA.ldo,
            tA.sdo,
            s.swA,
          );
          T.ptx.wgmma.mma_async(shape, ab, acc, 0, dA, dB, { ...opts, trans_a: s.tA ? 1 : 0 });
        } else {
          T.ptx.wgmma.mma_async(shape, ab, acc, 0, a!, dB, { ...opts, a_offset: kk * 8 });
        }
      }
      T.ptx.wgmma.commit_group();
      T.ptx.wgmma.wait_group(0);
      for (let i = 0; i < N / 2; i++) p.D.set([at(i)], acc.get([i]));
    },
  );
  return {
    id,
    spec: s,
    fn,
    inputs: [
      { dtype: ab, values: A },
      { dtype: ab, values: B },
      { dtype: "float32", values: C },
      { dtype: "int32", values: perm(tA, 64) },
      { dtype: "int32", values: perm(tB, N) },
    ],
    outCount: C.length,
    judge: (out) => {
      const bad: string[] = [];
      let exact = 0;
      let worst = 0;
      let checked = 0;
      const inexact = new Set<number>();
      // The operands with their immediate scales applied (negation is exact).
      const as = Float64Array.from(A, (x) => s.sa * x);
      const bs = Float64Array.from(B, (x) => s.sb * x);
      const cache = (v: Float64Array): ((i: number) => Dyadic) => {
        const d: Dyadic[] = [];
        return (i) => (d[i] ??= toDyadic(v[i]!));
      };
      const dyA = cache(as);
      const dyB = cache(bs);
      for (let c = 0; c < G; c++) {
        for (let r = 0; r < 64; r++) {
          const ao = c * 64 * K + r * K;
          for (let nn = 0; nn < N; nn++) {
            const i = c * 64 * N + r * N + nn;
            const bo = c * N * K + nn * K;
            const keep = s.scaleD === "odd" ? c % 2 === 1 : s.scaleD === 1;
            const cv = keep ? C[i]! : undefined;
            const want = exactDot(as, ao, bs, bo, K, cv, dyA, dyB);
            const got = Number(out[i]);
            checked++;
            if (
              Object.is(got, want) ||
              (got === want && got === 0) ||
              (got !== got && want !== want)
            ) {
              exact++;
              continue;
            }
            inexact.add(c);
            let bound = 0;
            let run = cv ?? 0;
            const products = new Float64Array(16);
            for (let k0 = 0; k0 < K; k0 += 16) {
              for (let k = 0; k < 16; k++) products[k] = as[ao + k0 + k]! * bs[bo + k0 + k]!;
              bound += mmaF32Bound(run, products);
              for (let k = 0; k < 16; k++) run += products[k]!;
            }
            const err = Math.abs(got - want) / bound;
            if (err === err) worst = Math.max(worst, err);
            if (!(err <= 1) && bad.length < 5) {
              bad.push(
                `D[${i}] (CTA ${c}, row ${r}, col ${nn}) = ${got}, exact ${want}, ${err.toFixed(2)} of the bound`,
              );
            }
          }
        }
      }
      return { checked, exact, worst, inexactCtas: [...inexact].sort(), bad };
    },
  };
}

/** Run `c` on `dev` (compiled for sm_90a); D's values. */
export function runWgmmaCase(c: WgmmaCase, dev: DeviceLike): Value[] {
  const run = compile(c.fn, { target: "cuda", arch: "sm_90a" });
  const xs = c.inputs.map((x) =>
    tensor(x.dtype === "int32" ? (x.values as number[]) : encode(x.values, x.dtype), {
      shape: [x.values.length],
      dtype: x.dtype,
      device: dev,
    }),
  );
  const d = tensor(new Uint8Array(c.outCount * 4), {
    shape: [c.outCount],
    dtype: "float32",
    device: dev,
  });
  run(...xs, d);
  const out = decode(d.toBytes(), "float32");
  for (const t of [...xs, d]) t.dispose();
  return out;
}

const spec = (
  n: WgmmaSpec["n"],
  ab: AB,
  a: "ss" | "rs",
  A: string,
  B: string,
  rest: Partial<Pick<WgmmaSpec, "scaleD" | "sa" | "sb" | "steps">> = {},
): WgmmaSpec => {
  // "k3" = K-major 128B, "mn0" = MN-major unswizzled, ...
  const parse = (x: string): [boolean, Mode] => [x.startsWith("mn"), Number(x.at(-1)) as Mode];
  const [tA, swA] = parse(A);
  const [tB, swB] = parse(B);
  return { n, ab, a, tA, swA, tB, swB, scaleD: 1, sa: 1, sb: 1, steps: 1, ...rest };
};

/**
 * The cases: N 8/24/64/128/256, float16 and bfloat16, A from shared and from registers, every
 * swizzle for K-major and MN-major tiles (MN-major B narrower than one swizzle atom included),
 * scale-d 0, 1 and a runtime predicate, the negate immediates, and 1–4 chained k16 steps.
 */
export const WGMMA_SPECS: readonly WgmmaSpec[] = [
  // K-major
  spec(8, "float16", "ss", "k0", "k0"),
  spec(64, "bfloat16", "ss", "k3", "k3"),
  spec(128, "float16", "ss", "k3", "k3", { steps: 4 }),
  spec(256, "float16", "ss", "k3", "k3", { steps: 2, scaleD: 0 }),
  spec(256, "bfloat16", "rs", "k0", "k3", { steps: 2 }),
  spec(64, "float16", "rs", "k0", "k1", { scaleD: 0 }),
  spec(64, "bfloat16", "ss", "k3", "k2", { steps: 2, scaleD: "odd" }),
  spec(128, "bfloat16", "ss", "k2", "k2", { steps: 2, sa: -1 }),
  spec(8, "bfloat16", "ss", "k1", "k1", { steps: 3, sb: -1 }),
  spec(64, "float16", "ss", "k1", "k2", { sa: -1, sb: -1 }),
  spec(24, "float16", "ss", "k0", "k3", { steps: 2 }),
  spec(16, "bfloat16", "ss", "k2", "k0", { steps: 4, scaleD: 0 }),
  // MN-major (transposed) operands
  spec(64, "float16", "ss", "mn3", "mn3", { steps: 2 }),
  spec(128, "bfloat16", "ss", "mn2", "mn2", { scaleD: 0 }),
  spec(256, "float16", "ss", "k3", "mn3"),
  spec(8, "bfloat16", "ss", "mn1", "mn0", { steps: 2 }),
  spec(64, "float16", "rs", "k0", "mn1", { steps: 2 }),
  spec(128, "float16", "ss", "mn0", "mn1", { sa: -1 }),
  spec(256, "bfloat16", "ss", "mn3", "mn2", { steps: 2, sb: -1, scaleD: 0 }),
  spec(8, "float16", "ss", "mn2", "mn3"),
  spec(64, "bfloat16", "ss", "mn0", "k0", { steps: 4 }),
  spec(24, "float16", "ss", "mn1", "mn2", { steps: 3 }),
  spec(128, "float16", "rs", "k0", "mn3", { scaleD: "odd", sa: -1 }),
];

/** Every wgmma differential case. */
export function wgmmaCases(): WgmmaCase[] {
  return WGMMA_SPECS.map((s, i) => wgmmaCase(s, 1300 + i));
}
