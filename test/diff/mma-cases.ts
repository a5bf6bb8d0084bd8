// Differential cases of the tensor-core family: ldmatrix (x1/x2/x4, .trans) from a 128B-swizzled
// tile filled by cp.async, stmatrix (x4, .trans), and mma.sync (m16n8k16 f16/bf16, m16n8k8 tf32,
// m16n8k32 s8), on random and edge inputs, 8 warps per case. References are computed here from
// the PTX ISA's fragment figures (written out below, not imported): moves must be bit-exact;
// integer mma exact; float mma is compared with the exact D = A·B + C rounded once to float32
// (BigInt arithmetic), within MMA_F32_BOUND (mmaF32Bound: 2^-21 of |c| + Σ|a·b| plus (K+1)·2^-22 of the largest addend), and the number of elements
// that equal the once-rounded exact value is reported.
import { dtypeBytes, mmaF32Bound, type DType, type PrimFunc } from "@tirx-ts/core";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { compile, tensor, type DeviceLike } from "tirx-ts";
import { decode, encode, prng, type Value } from "./values.js";
import { roundDyadic, roundTo, toDyadic } from "./reference.js";

const WARPS = 8;

type Coord = (lane: number, i: number) => [number, number];
interface Frag {
  readonly rows: number;
  readonly cols: number;
  readonly n: number;
  readonly coord: Coord;
}
const g4 = (l: number): number => Math.floor(l / 4);
/** PTX ISA, "Matrix Fragments for mma.m16n8k{16,8,32}" (groupID = l/4, threadID_in_group = l%4). */
const ISA: Record<string, Frag> = {
  A16: {
    rows: 16,
    cols: 16,
    n: 8,
    coord: (l, i) => [
      g4(l) + ([2, 3, 6, 7].includes(i) ? 8 : 0),
      (l % 4) * 2 + (i % 2) + (i >= 4 ? 8 : 0),
    ],
  },
  B16: {
    rows: 16,
    cols: 8,
    n: 4,
    coord: (l, i) => [(l % 4) * 2 + (i % 2) + (i >= 2 ? 8 : 0), g4(l)],
  },
  C: {
    rows: 16,
    cols: 8,
    n: 4,
    coord: (l, i) => [g4(l) + (i >= 2 ? 8 : 0), (l % 4) * 2 + (i % 2)],
  },
  A8: {
    rows: 16,
    cols: 8,
    n: 4,
    coord: (l, i) => [g4(l) + (i === 1 || i === 3 ? 8 : 0), (l % 4) + (i >= 2 ? 4 : 0)],
  },
  B8: { rows: 8, cols: 8, n: 2, coord: (l, i) => [(l % 4) + 4 * i, g4(l)] },
  A32: {
    rows: 16,
    cols: 32,
    n: 16,
    coord: (l, i) => [
      g4(l) + ((i >= 4 && i < 8) || i >= 12 ? 8 : 0),
      (l % 4) * 4 + (i % 4) + (i >= 8 ? 16 : 0),
    ],
  },
  B32: {
    rows: 32,
    cols: 8,
    n: 8,
    coord: (l, i) => [(l % 4) * 4 + (i % 4) + (i >= 4 ? 16 : 0), g4(l)],
  },
};

/** One tensor-core case: a kernel, its inputs, and a judge of its single output. */
export interface MmaCase {
  readonly id: string;
  readonly fn: PrimFunc;
  readonly inputs: readonly { readonly dtype: DType; readonly values: readonly Value[] }[];
  readonly out: { readonly dtype: DType; readonly n: number };
  /** "bit-exact" or "bound": moves and integer mma must equal the reference bit for bit. */
  readonly exactness: "bit-exact" | "bound";
  judge(out: readonly Value[]): Verdict;
}

/** How a run compares with the reference. */
export interface Verdict {
  readonly checked: number;
  /** Elements equal to the reference (bit for bit; for float mma: to the once-rounded exact value). */
  readonly exact: number;
  /** Largest |got − exact| / bound over the float mma elements (0 elsewhere). */
  readonly worst: number;
  /** Warps with an element that is not the reference bit for bit. */
  readonly inexactWarps: readonly number[];
  readonly bad: readonly string[];
}

/** Run `c` on `dev`: its output values (the output starts as zeros). */
export function runMmaCase(c: MmaCase, dev: DeviceLike): Value[] {
  const run = compile(c.fn, { target: "cuda", arch: "sm_90" });
  const xs = c.inputs.map((x) => {
    const bytes = encode(x.values, x.dtype);
    return tensor(x.dtype === "int8" ? Array.from(x.values as number[]) : bytes, {
      shape: [x.values.length],
      dtype: x.dtype,
      device: dev,
    });
  });
  const y = tensor(new Uint8Array(c.out.n * dtypeBytes(c.out.dtype)), {
    shape: [c.out.n],
    dtype: c.out.dtype,
    device: dev,
  });
  run(...xs, y);
  const out = decode(y.toBytes(), c.out.dtype);
  for (const t of [...xs, y]) t.dispose();
  return out;
}

// ---- ldmatrix / stmatrix -------------------------------------------------------------------

/** Row-major element of warp w's 32 × 64 tile that matrix m's (row, col) is, at column chunk w. */
const tileIndex = (w: number, m: number, row: number, col: number): number =>
  w * 2048 + (8 * m + row) * 64 + 8 * (w % 8) + col;

function moveCase(kind: "ldmatrix" | "stmatrix", num: 1 | 2 | 4, trans: boolean): MmaCase {
  const rnd = prng(500 + num * 2 + (trans ? 1 : 0) + (kind === "stmatrix" ? 10 : 0));
  const n = kind === "ldmatrix" ? WARPS * 2048 : WARPS * 256;
  // Random 16-bit patterns plus the edges (0, 0xffff, NaN/inf halves as raw bits).
  const edge = [0, 0xffff, 0x7c00, 0xfc00, 0x7e01, 0x8000, 0x0001, 0x3c00];
  const x: number[] = Array.from({ length: n }, (_, i) =>
    i < edge.length * 8 ? edge[i % edge.length]! : Math.floor(rnd() * 65536),
  );
  const fn = T.function(
    `diff_${kind}_x${num}${trans ? "_trans" : ""}`,
    { X: T.Tensor([n], "uint16"), Y: T.Tensor([WARPS * 2048], "uint16") },
    ({ X, Y }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 * WARPS }) });
      const tid = T.cuda.thread_idx("x");
      const lane = T.let_("lane", tid.floormod(32));
      const w = T.let_("w", tid.floordiv(32));
      const S = T.alloc_shared([WARPS, 32, 64], "uint16", { layout: T.swizzle_mode("128B") });
      const f = T.alloc_local([8], "uint16", { name: "f" });
      const rowPtr = S.ptr([w, lane, w.floormod(8).mul(8)]);
      if (kind === "ldmatrix") {
        // Each thread copies its 64 elements (8 chunks) of the warp's tile by cp.async.
        for (const j of T.unroll(8)) {
          T.cuda.tile.apply(
            T.ptx["cp.async.cg.shared.global"],
            S.sub(w, lane).rearrange("(c v) -> c v", { v: 8 }).sub(j),
            X.rearrange("(q v) -> q v", { v: 8 }).sub(w.mul(256).add(lane.mul(8)).add(j)),
            { chunk_bytes: 16 },
          );
        }
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.cuda.cta_sync();
        T.ptx.ldmatrix(trans, num, ".b16", f, 0, rowPtr);
        for (let j = 0; j < 2 * num; j++) Y.set([w.mul(256).add(lane.mul(8)).add(j)], f.get([j]));
      } else {
        for (let j = 0; j < 8; j++) f.set([j], X.get([w.mul(256).add(lane.mul(8)).add(j)]));
        T.ptx.stmatrix(trans, num, ".b16", f, 0, rowPtr);
        T.cuda.cta_sync();
        for (let j = 0; j < 8; j++) {
          Y.set(
            [w.mul(2048).add(lane.mul(64)).add(w.floormod(8).mul(8)).add(j)],
            S.get([w, lane, w.floormod(8).mul(8).add(j)]),
          );
        }
      }
    },
  );
  // The reference: lane l's element (m, h) is matrix m's [l/4][2(l%4)+h], transposed with .trans.
  const want = new Map<number, number>();
  for (let w = 0; w < WARPS; w++) {
    for (let l = 0; l < 32; l++) {
      for (let m = 0; m < num; m++) {
        for (let h = 0; h < 2; h++) {
          const [r, c] = trans ? [2 * (l % 4) + h, g4(l)] : [g4(l), 2 * (l % 4) + h];
          const reg = w * 256 + l * 8 + 2 * m + h;
          if (kind === "ldmatrix") {
            // X's element e = w·2048 + row·64 + col of the warp's tile (each thread copied a row).
            want.set(reg, x[tileIndex(w, m, r, c)]!);
          } else {
            want.set(tileIndex(w, m, r, c), x[reg]!);
          }
        }
      }
    }
  }
  return {
    id: `${kind}.x${num}${trans ? ".trans" : ""}`,
    fn,
    inputs: [{ dtype: "uint16", values: x }],
    out: { dtype: "uint16", n: WARPS * 2048 },
    exactness: "bit-exact",
    judge: (out) => {
      const bad: string[] = [];
      for (const [i, v] of want) {
        if (out[i] !== v && bad.length < 5) bad.push(`Y[${i}] = ${String(out[i])}, want ${v}`);
      }
      let exact = 0;
      const inexact = new Set<number>();
      for (const [i, v] of want) {
        if (out[i] === v) exact++;
        else inexact.add(Math.floor(i / (kind === "ldmatrix" ? 256 : 2048)));
      }
      return { checked: want.size, exact, worst: 0, inexactWarps: [...inexact], bad };
    },
  };
}

// ---- mma.sync -------------------------------------------------------------------------------

interface Variant {
  readonly shape: "m16n8k16" | "m16n8k8" | "m16n8k32";
  readonly ab: DType;
  readonly cd: DType;
  readonly tok: [string, string];
  readonly a: Frag;
  readonly b: Frag;
}
const VARIANTS: readonly Variant[] = [
  {
    shape: "m16n8k16",
    ab: "float16",
    cd: "float32",
    tok: ["fp16", "fp32"],
    a: ISA.A16!,
    b: ISA.B16!,
  },
  {
    shape: "m16n8k16",
    ab: "bfloat16",
    cd: "float32",
    tok: ["bf16", "fp32"],
    a: ISA.A16!,
    b: ISA.B16!,
  },
  { shape: "m16n8k8", ab: "float32", cd: "float32", tok: ["tf32", "fp32"], a: ISA.A8!, b: ISA.B8! },
  { shape: "m16n8k32", ab: "int8", cd: "int32", tok: ["s8", "s32"], a: ISA.A32!, b: ISA.B32! },
];

/** A value of the input format: float16/bfloat16 exactly, tf32 (10 mantissa bits) in float32. */
function inFormat(v: Variant, x: number): number {
  if (v.ab === "float32") {
    const f = new Float32Array([x]);
    new Uint32Array(f.buffer)[0]! &= 0xffffe000;
    return f[0]!;
  }
  return v.ab === "int8" ? x : roundTo(x, v.ab);
}

/**
 * Operands of warp w: warps 0-3 uniform in [-1, 1]; 4 exponents spread over the format's
 * range (alignment and truncation inside the accumulation); 5 exact cancellation (each row of
 * A pairs x, -x against equal B entries, so Σ a·b = 0 and D = C); 6 zeros, signed zeros,
 * subnormals and the largest finite values; 7 infinities and NaN. Integers: uniform int8, with
 * warps 6-7 at -128/127 and C near ±2^28.
 */
function operand(
  v: Variant,
  w: number,
  role: "a" | "b" | "c",
  i: number,
  rnd: () => number,
): number {
  if (v.ab === "int8") {
    if (role === "c") return Math.floor((rnd() - 0.5) * (w >= 6 ? 2 ** 29 : 2 ** 16));
    if (w >= 6) return rnd() < 0.5 ? -128 : 127;
    return Math.floor(rnd() * 256) - 128;
  }
  const fmt = role === "c" ? "float32" : v.ab;
  const conv = (x: number): number => (role === "c" ? Math.fround(x) : inFormat(v, x));
  const maxExp = fmt === "float16" ? 15 : v.ab === "float16" ? 30 : 60;
  const minExp = fmt === "float16" ? -24 : -60;
  if (w <= 3) return conv(rnd() * 2 - 1);
  if (w === 4) {
    const e = Math.floor(minExp / 2 + rnd() * (maxExp - minExp / 2));
    return conv((rnd() < 0.5 ? -1 : 1) * (1 + rnd()) * 2 ** Math.min(e, maxExp - 1));
  }
  if (w === 5) {
    if (role === "a") return 0; // filled in pairs by the caller
    return conv(rnd() * 2 - 1);
  }
  if (w === 6) {
    const big = fmt === "float16" ? 65504 : fmt === "bfloat16" ? 2 ** 60 : 2 ** 60;
    const tiny = fmt === "float16" ? 2 ** -24 : 2 ** -60;
    const pick = [0, -0, tiny, -tiny, big, -big, 1, -1][Math.floor(rnd() * 8)]!;
    return conv(role === "c" && Math.abs(pick) === big ? pick * 4 : pick);
  }
  const pick = [Infinity, -Infinity, NaN, 1, -2, 0][Math.floor(rnd() * 6)]!;
  return conv(i % 5 === 0 ? pick : rnd() * 2 - 1);
}

/** Exact Σ a·b + c rounded once to float32 (NaN and infinities as IEEE arithmetic gives them). */
function exactDot(as: readonly number[], bs: readonly number[], c: number): number {
  let inf = 0;
  let nan = Number.isNaN(c);
  const add = (x: number): void => {
    if (x !== x) nan = true;
    else if (!Number.isFinite(x)) {
      if (inf !== 0 && Math.sign(x) !== inf) nan = true;
      inf = Math.sign(x);
    }
  };
  as.forEach((a, k) => add(a * bs[k]!));
  add(c);
  if (nan) return NaN;
  if (inf !== 0) return inf * Infinity;
  const terms = [...as.map((a, k) => [a, bs[k]!] as const)];
  let e = 0;
  const parts: { m: bigint; e: number }[] = [];
  for (const [a, b] of terms) {
    const x = toDyadic(a);
    const y = toDyadic(b);
    parts.push({ m: x.m * y.m, e: x.e + y.e });
  }
  parts.push(toDyadic(c));
  e = Math.min(...parts.map((p) => p.e));
  const m = parts.reduce((s, p) => s + (p.m << BigInt(p.e - e)), 0n);
  return roundDyadic(m, e, "float32");
}

function mmaCase(v: Variant): MmaCase {
  const rnd = prng(900 + VARIANTS.indexOf(v));
  const C = ISA.C!;
  const M = 16;
  const N = 8;
  const K = v.a.cols;
  const A: number[] = [];
  const B: number[] = [];
  const Cv: number[] = [];
  for (let w = 0; w < WARPS; w++) {
    for (let q = 0; q < M * K; q++) A.push(operand(v, w, "a", q, rnd));
    for (let q = 0; q < K * N; q++) B.push(operand(v, w, "b", q, rnd));
    for (let q = 0; q < M * N; q++) Cv.push(operand(v, w, "c", q, rnd));
    if (w === 5 && v.ab !== "int8") {
      // Cancellation: A[r][2j] = x, A[r][2j+1] = -x, B[2j][c] = B[2j+1][c].
      for (let r = 0; r < M; r++) {
        for (let j = 0; j < K / 2; j++) {
          const x = inFormat(v, (rnd() * 2 - 1) * 2 ** Math.floor(rnd() * 8));
          A[w * M * K + r * K + 2 * j] = x;
          A[w * M * K + r * K + 2 * j + 1] = -x;
        }
      }
      for (let j = 0; j < K / 2; j++) {
        for (let c = 0; c < N; c++)
          B[w * K * N + (2 * j + 1) * N + c] = B[w * K * N + 2 * j * N + c]!;
      }
    }
  }
  const fn = T.function(
    `diff_mma_${v.shape}_${v.tok[0]}`,
    {
      A: T.Tensor([A.length], v.ab),
      B: T.Tensor([B.length], v.ab),
      Cin: T.Tensor([Cv.length], v.cd),
      D: T.Tensor([Cv.length], v.cd),
    },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 * WARPS }) });
      const tid = T.cuda.thread_idx("x");
      const lane = T.let_("lane", tid.floormod(32));
      const w = T.let_("w", tid.floordiv(32));
      const g = lane.floordiv(4);
      const t = lane.floormod(4);
      // The figures are affine in groupID and threadID_in_group for each element i.
      const at = (L: Frag, i: number): PrimExpr => {
        const [r0, c0] = L.coord(0, i);
        const [r1, c1] = L.coord(4, i);
        const [r2, c2] = L.coord(1, i);
        const row = g
          .mul(r1 - r0)
          .add(t.mul(r2 - r0))
          .add(r0);
        const col = g
          .mul(c1 - c0)
          .add(t.mul(c2 - c0))
          .add(c0);
        return w
          .mul(L.rows * L.cols)
          .add(row.mul(L.cols))
          .add(col);
      };
      const a = T.alloc_local([v.a.n], v.ab, { name: "a" });
      const b = T.alloc_local([v.b.n], v.ab, { name: "b" });
      const c = T.alloc_local([C.n], v.cd, { name: "c" });
      for (let i = 0; i < v.a.n; i++) a.set([i], p.A.get([at(v.a, i)]));
      for (let i = 0; i < v.b.n; i++) b.set([i], p.B.get([at(v.b, i)]));
      for (let i = 0; i < C.n; i++) c.set([i], p.Cin.get([at(C, i)]));
      T.ptx.mma(v.shape, "row", "col", v.tok[0], v.tok[0], v.tok[1], a, 0, b, 0, c, 0);
      for (let i = 0; i < C.n; i++) p.D.set([at(C, i)], c.get([i]));
    },
  );
  return {
    id: `mma.${v.shape}.${v.tok[0]}`,
    fn,
    inputs: [
      { dtype: v.ab, values: A },
      { dtype: v.ab, values: B },
      { dtype: v.cd, values: Cv },
    ],
    out: { dtype: v.cd, n: Cv.length },
    exactness: v.ab === "int8" ? "bit-exact" : "bound",
    judge: (out) => {
      const bad: string[] = [];
      let exact = 0;
      let worst = 0;
      let checked = 0;
      const inexact = new Set<number>();
      for (let w = 0; w < WARPS; w++) {
        for (let r = 0; r < M; r++) {
          for (let n = 0; n < N; n++) {
            const i = w * M * N + r * N + n;
            const as = Array.from({ length: K }, (_, k) => A[w * M * K + r * K + k]!);
            const bs = Array.from({ length: K }, (_, k) => B[w * K * N + k * N + n]!);
            const got = Number(out[i]);
            checked++;
            if (v.ab === "int8") {
              const want = as.reduce((s, x, k) => s + x * bs[k]!, Cv[i]!) | 0;
              if (got === want) exact++;
              else {
                inexact.add(w);
                if (bad.length < 5) bad.push(`D[${i}] = ${got}, want ${want}`);
              }
              continue;
            }
            const want = exactDot(as, bs, Cv[i]!);
            if (
              Object.is(got, want) ||
              (got === want && got === 0) ||
              (got !== got && want !== want)
            ) {
              exact++;
              continue;
            }
            inexact.add(w);
            const bound = mmaF32Bound(
              Cv[i]!,
              as.map((x, k) => x * bs[k]!),
            );
            const err = Math.abs(got - want) / bound;
            if (!(err <= 1) && bad.length < 5)
              bad.push(
                `D[${i}] (warp ${w}) = ${got}, exact ${want}, ${err.toFixed(2)} of the bound`,
              );
            if (err === err) worst = Math.max(worst, err);
            else if (bad.length < 5) bad.push(`D[${i}] (warp ${w}) = ${got}, exact ${want}`);
          }
        }
      }
      return { checked, exact, worst, inexactWarps: [...inexact].sort(), bad };
    },
  };
}

/** Every tensor-core case. */
export function mmaCases(): MmaCase[] {
  const out: MmaCase[] = [];
  for (const num of [1, 2, 4] as const) {
    for (const trans of [false, true]) out.push(moveCase("ldmatrix", num, trans));
  }
  for (const trans of [false, true]) out.push(moveCase("stmatrix", 4, trans));
  for (const v of VARIANTS) out.push(mmaCase(v));
  return out;
}
