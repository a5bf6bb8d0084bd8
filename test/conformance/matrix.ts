// The cp.async operand-form matrix (issue 4): chunk_bytes × cache operator × cache hint ×
// prefetch × pred × zero fill. Each legal cell is a small thread-scope kernel; its expected
// output bytes are computed here, independently of the simulator. Shared by
// test/conformance/cp-async-matrix.test.ts (verifier, ptxas, simulator) and
// test/gpu/cp-async-matrix.test.ts (the same cells on a GPU, bit for bit against the simulator).
import { T, compile, tensor, type DType, type DeviceLike, type PrimFunc } from "tirx-ts";
import { dtypeBytes } from "@tirx-ts/core";

export type Chunk = 4 | 8 | 16;
export type PredForm = "none" | "true" | "false";
export type FillForm = "none" | "src_size" | "ignore_src";

export interface Cell {
  readonly chunk: Chunk;
  readonly cache: "ca" | "cg";
  readonly hint: boolean;
  readonly prefetch?: 64 | 128 | 256;
  readonly pred: PredForm;
  readonly fill: FillForm;
}

/** Threads per CTA and repeats (atoms) per thread of every matrix kernel. */
export const THREADS = 32;
export const REPEATS = 2;
/** The byte shared memory is prefilled with by plain stores before the cp.async. */
export const SENTINEL = 0xa5;
/** CUTLASS's EVICT_LAST L2 cache-policy encoding (a valid createpolicy result). */
export const POLICY = 0x14f0000000000000n;

export const CHUNKS: readonly Chunk[] = [4, 8, 16];
export const PREFETCHES = [undefined, 64, 128, 256] as const;
export const PREDS: readonly PredForm[] = ["none", "true", "false"];
export const FILLS: readonly FillForm[] = ["none", "src_size", "ignore_src"];

/** Every cell of the matrix, legal and illegal: 3 × 2 × 2 × 4 × 3 × 3 = 432. */
export function allCells(): Cell[] {
  const out: Cell[] = [];
  for (const chunk of CHUNKS)
    for (const cache of ["ca", "cg"] as const)
      for (const hint of [false, true])
        for (const prefetch of PREFETCHES)
          for (const pred of PREDS)
            for (const fill of FILLS)
              out.push({ chunk, cache, hint, ...(prefetch ? { prefetch } : {}), pred, fill });
  return out;
}

/** `.cg` copies exactly 16 bytes; everything else in the matrix is legal. */
export const isLegal = (c: Cell): boolean => c.cache === "ca" || c.chunk === 16;

/** The cell's opcode: the cache hint before the prefetch size (either order is legal PTX). */
export function opcodeOf(c: Cell): string {
  return [
    `cp.async.${c.cache}.shared.global`,
    ...(c.hint ? ["L2::cache_hint"] : []),
    ...(c.prefetch ? [`L2::${c.prefetch}B`] : []),
  ].join(".");
}

export function cellName(c: Cell): string {
  return `${opcodeOf(c)} chunk=${c.chunk} pred=${c.pred} fill=${c.fill}`;
}

/**
 * Storage types of the global source and the shared destination: mixed per cell (a byte copy
 * between different equal-size representations). The destination is an integer type so the
 * sentinel's bytes are exact.
 */
export function dtypesOf(c: Cell, index = 0): { src: DType; dst: DType } {
  const srcChoices: Record<Chunk, DType[]> = {
    4: ["uint8", "float16", "float32", "int32"],
    8: ["uint8", "float16", "float64", "uint32"],
    16: ["uint8", "float16", "float32", "int64"],
  };
  const dstChoices: Record<Chunk, DType[]> = {
    4: ["uint8", "uint32", "uint16"],
    8: ["uint8", "uint16", "uint64", "uint32"],
    16: ["uint8", "uint32", "uint16"],
  };
  const s = srcChoices[c.chunk];
  const d = dstChoices[c.chunk];
  return { src: s[index % s.length]!, dst: d[(index >> 1) % d.length]! };
}

const bytesOf = dtypeBytes;

/** Row bytes per thread. */
export const rowBytes = (c: Cell): number => REPEATS * c.chunk;

/**
 * The cell's kernel `(A, B, flag: int32, policy: uint64)`: thread t fills its shared row with
 * SENTINEL by plain stores, cta_sync, then one tile.apply copying REPEATS atoms of A's row t
 * into it (pred = flag != 0; src_size = uint32(t % (chunk + 1)); ignore_src = t % 3 == 0;
 * cache_policy = policy), commit, wait_group 0, cta_sync, and copies its row to B.
 */
export function buildCell(c: Cell, index = 0): PrimFunc {
  const { src, dst } = dtypesOf(c, index);
  const row = rowBytes(c);
  const srcRow = row / bytesOf(src);
  const dstRow = row / bytesOf(dst);
  const sentinel =
    dst === "uint64" ? 0xa5a5a5a5a5a5a5a5n : Number(`0x${"a5".repeat(bytesOf(dst))}`);
  return T.function(
    "matrix_cell",
    {
      A: T.Tensor([THREADS, srcRow], src),
      B: T.Tensor([THREADS, dstRow], dst),
      flag: T.int32,
      policy: T.uint64,
    },
    ({ A, B, flag, policy }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: THREADS }) });
      const tid = T.cuda.thread_idx("x");
      const shared = T.alloc_shared([THREADS, dstRow], dst);
      for (const j of T.range(dstRow)) shared.set([tid, j], T[dst](sentinel));
      T.cuda.cta_sync();
      const params: Record<string, unknown> = { chunk_bytes: c.chunk, scope: "thread" };
      if (c.pred !== "none") params["pred"] = flag.ne(0);
      if (c.fill === "src_size") params["src_size"] = T.uint32(tid.floormod(c.chunk + 1));
      if (c.fill === "ignore_src") params["ignore_src"] = tid.floormod(3).eq(0);
      if (c.hint) params["cache_policy"] = policy;
      // prettier-ignore
      T.cuda.tile.apply(T.ptx[opcodeOf(c)], // MATRIX-APPLY
        shared.sub(tid, ":").rearrange("(r v) -> r v", { v: c.chunk / bytesOf(dst) }),
        A.sub(tid, ":").rearrange("(r v) -> r v", { v: c.chunk / bytesOf(src) }),
        params,
      );
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const j of T.range(dstRow)) B.set([tid, j], shared.get([tid, j]));
    },
  );
}

/** The source bytes: every byte distinct from 0 and SENTINEL, varied per cell. */
export function inputBytes(c: Cell, index = 0): Uint8Array {
  const n = THREADS * rowBytes(c);
  return Uint8Array.from({ length: n }, (_, i) => {
    const v = 1 + ((i * 7 + index * 13) % 250);
    return v === SENTINEL ? 0x11 : v;
  });
}

/** The flag argument: 1 (pred true, or no pred), 0 (pred false). */
export const flagOf = (c: Cell): number => (c.pred === "false" ? 0 : 1);

/** Output bytes, computed from the seed's rules alone (not from the simulator). */
export function expectedBytes(c: Cell, input: Uint8Array): Uint8Array {
  const row = rowBytes(c);
  const out = new Uint8Array(THREADS * row);
  for (let t = 0; t < THREADS; t++) {
    for (let r = 0; r < REPEATS; r++) {
      const base = t * row + r * c.chunk;
      let copied: number;
      if (c.pred === "false") {
        // Predicated off: nothing is written; the sentinel stays.
        out.fill(SENTINEL, base, base + c.chunk);
        continue;
      }
      if (c.fill === "src_size") copied = t % (c.chunk + 1);
      else if (c.fill === "ignore_src") copied = t % 3 === 0 ? 0 : c.chunk;
      else copied = c.chunk;
      for (let b = 0; b < c.chunk; b++) out[base + b] = b < copied ? input[base + b]! : 0;
    }
  }
  return out;
}

/** Launch one cell's compiled kernel on `dev`; returns B's bytes. */
export function runCell(
  c: Cell,
  dev: DeviceLike,
  index = 0,
  run = compile(buildCell(c, index), { target: "cuda" }),
): Uint8Array {
  const { src, dst } = dtypesOf(c, index);
  const row = rowBytes(c);
  const input = inputBytes(c, index);
  const a = tensor(input, { shape: [THREADS, row / bytesOf(src)], dtype: src, device: dev });
  const b = tensor(new Uint8Array(THREADS * row).fill(0x3c), {
    shape: [THREADS, row / bytesOf(dst)],
    dtype: dst,
    device: dev,
  });
  try {
    run(a, b, flagOf(c), POLICY);
    return b.toBytes();
  } finally {
    a.dispose();
    b.dispose();
  }
}
