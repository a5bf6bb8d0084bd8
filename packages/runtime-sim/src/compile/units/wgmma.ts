import {
  bufferName,
  decodeMatrixDescriptor,
  dtypeBytes,
  fragmentCoord,
  operandDtypeConflict,
  operandLayoutHint,
  operandOffset,
  operandTileMismatch,
  swizzleByte,
  TirxError,
  type Span,
} from "@tirx-ts/core";
import { codecOf } from "../../numeric/codec.js";
import { checkAsyncProxyRead } from "../../exec/hazards.js";
import { UNIFORM_MIN } from "../../exec/shared-bytes.js";
import type { Machine } from "../../exec/machine.js";
import type { Placed } from "../../exec/memory.js";
import { setAccess, accessRecord } from "../../exec/context.js";
import { THREAD_BITS, THREAD_MASK } from "../../exec/packed.js";
import { reportUnwrittenLocal } from "../../exec/reports.js";
import { placementOf, type NumFn } from "../access.js";
import type { ActionOf, Exec, UnitAction, UnitCall, UnitCompiler } from "../compiled.js";

type WgmmaAction = UnitAction<"wgmma">;

/** The warps of a lane list, each with the number of its lanes present. */
function warpsOf(lanes: Int32Array, n: number, count: Int32Array): void {
  count.fill(0);
  for (let i = 0; i < n; i++) count[lanes[i]! >> 5]!++;
}

/**
 * The `.sync.aligned` warpgroup rule (PTX ISA, wgmma and setmaxnreg: every thread of the
 * warpgroup executes the same instruction) for the op at `site`: the returned function runs
 * `f(warp)` for each warp of a lane list whose 32 lanes are all present, after that warp arrives
 * at its warpgroup's round (exec/warpgroup-aligned.ts: the other warps of the warpgroup must
 * execute the same op at that point of their sequence); a warp with only some lanes present is
 * TX6011 at once and skipped.
 */
function alignedWarps(
  m: Machine,
  surface: string,
  site: number,
): (lanes: Int32Array, n: number, f?: (warp: number) => void) => void {
  const aligned = m.wgmma.aligned;
  const opId = aligned.newOp();
  const count = new Int32Array(Math.ceil(m.threads / 32));
  return (lanes, n, f) => {
    warpsOf(lanes, n, count);
    for (let w = 0; w < count.length; w++) {
      const c = count[w]!;
      if (c === 0) continue;
      aligned.arrive(m, w, opId, site, surface);
      if (c !== 32) {
        aligned.breakGroupOf(w);
        m.hazard(
          "TX6011",
          `${surface} in warp ${w} of CTA ${m.cta()}: ${c} of the warp's lanes execute it; .sync.aligned needs every thread of the warpgroup to execute the same instruction`,
          site,
        );
        continue;
      }
      f?.(w);
    }
  };
}

/**
 * setmaxnreg on the simulated machine: no register budget is kept, but whole warpgroups must
 * execute it (alignedWarps; PTX ISA, setmaxnreg "must be executed by all warps in a warpgroup").
 */
function compileWarpgroupAligned(m: Machine, surface: string, span?: Span): Exec {
  const each = alignedWarps(m, surface, m.site(span));
  return (lanes, n) => each(lanes, n);
}

/**
 * A wgmma op at its site: the machine, the wgmma unit's state (exec/wgmma.ts, WgmmaUnit), and
 * the warpgroup-aligned runner of the op (alignedWarps).
 */
function warpgroupOp(c: UnitCall<WgmmaAction>): {
  m: Machine;
  site: number;
  unit: Machine["wgmma"];
  eachWarp: ReturnType<typeof alignedWarps>;
} {
  const m = c.ec.m;
  const site = m.site(c.span);
  return { m, site, unit: m.wgmma, eachWarp: alignedWarps(m, c.op.surface, site) };
}

/** mathTables' tables by N. */
const MATH_TABLES = new Map<number, { dAt: Int32Array; aAt16: Int32Array }>();

/**
 * The fragment coordinates of the math loop of an m64nNk16 (or k32) wgmma, by lane (made once
 * per N): accumulator i of lane l (N / 2 per lane) is element `dAt[(N / 2)·l + i]` (r · N + n)
 * of the warp's 16 × N sums (slot i % 4 of a group of 4 in the 8-column block ⌊i / 4⌋,
 * c.m16n8); A register i of lane l is element `aAt16[8l + i]` (r · 16 + k) of A (a.m16n8k16).
 */
function mathTables(N: number): { dAt: Int32Array; aAt16: Int32Array } {
  let tabs = MATH_TABLES.get(N);
  if (tabs) return tabs;
  const accCount = N / 2;
  const dAt = new Int32Array(32 * accCount);
  const aAt16 = new Int32Array(32 * 8);
  for (let l = 0; l < 32; l++) {
    for (let j = 0; j < 4; j++) {
      const [r, c] = fragmentCoord("c.m16n8", l, j);
      for (let i = j; i < accCount; i += 4) dAt[accCount * l + i] = r * N + 8 * (i >> 2) + c;
    }
    for (let i = 0; i < 8; i++) {
      const [r, k] = fragmentCoord("a.m16n8k16", l, i);
      aAt16[8 * l + i] = r * 16 + k;
    }
  }
  tabs = { dAt, aAt16 };
  MATH_TABLES.set(N, tabs);
  return tabs;
}

/**
 * `D[o + c] = s + Σ_{k < 16} A[a + k]·B[c·K + k0 + k]` for each column c < n, the products
 * added one by one in k order to s = `D[o + c]` (`add`) or 0 (float64 Arrays; K the elements
 * of a row of B). The row of A is held in locals: the hot loop of wgmma.mma_async's math.
 */
function dot16(
  A: Float64Array,
  a: number,
  B: Float64Array,
  K: number,
  k0: number,
  n: number,
  D: Float64Array,
  o: number,
  add: boolean,
): void {
  const a0 = A[a]!;
  const a1 = A[a + 1]!;
  const a2 = A[a + 2]!;
  const a3 = A[a + 3]!;
  const a4 = A[a + 4]!;
  const a5 = A[a + 5]!;
  const a6 = A[a + 6]!;
  const a7 = A[a + 7]!;
  const a8 = A[a + 8]!;
  const a9 = A[a + 9]!;
  const a10 = A[a + 10]!;
  const a11 = A[a + 11]!;
  const a12 = A[a + 12]!;
  const a13 = A[a + 13]!;
  const a14 = A[a + 14]!;
  const a15 = A[a + 15]!;
  for (let c = 0; c < n; c++) {
    const b = c * K + k0;
    let s = add ? D[o + c]! : 0;
    s += a0 * B[b]!;
    s += a1 * B[b + 1]!;
    s += a2 * B[b + 2]!;
    s += a3 * B[b + 3]!;
    s += a4 * B[b + 4]!;
    s += a5 * B[b + 5]!;
    s += a6 * B[b + 6]!;
    s += a7 * B[b + 7]!;
    s += a8 * B[b + 8]!;
    s += a9 * B[b + 9]!;
    s += a10 * B[b + 10]!;
    s += a11 * B[b + 11]!;
    s += a12 * B[b + 12]!;
    s += a13 * B[b + 13]!;
    s += a14 * B[b + 14]!;
    s += a15 * B[b + 15]!;
    D[o + c] = s;
  }
}

/**
 * wgmma.mma_async on the simulated machine (see WgmmaUnit). The math of `m64nNk16`, per warp q = warp % 4 of the warpgroup (its 16 rows of D):
 * `D[r][n] = scale_d·D[r][n] + Σ_k (scale_a·A[r][k])·(scale_b·B[n][k])`, exact products summed in
 * float64 in k order and rounded once to float32. A (rows 16q..16q+15) and B (N rows) are read
 * through their descriptors in the canonical layouts of the PTX ISA ("Shared Memory Matrix
 * Layout"; CUTLASS `make_gmma_desc`), for a 2-byte type, W = 16·2^mode the bytes of a swizzle
 * row and E = W / 2 its elements:
 * - K-major (trans 0): element (r, k) at `start + (r >> 3)·SBO + (r & 7)·W + 2k` when swizzled,
 *   `start + (r >> 3)·SBO + (k >> 3)·LBO + (r & 7)·16 + 2(k & 7)` without swizzle;
 * - MN-major (trans 1): `start + ⌊r / E⌋·LBO + (k >> 3)·SBO + (k & 7)·W + 2(r % E)` when
 *   swizzled (LBO steps whole swizzle atoms along M/N, SBO the 8-deep k groups),
 *   `start + (r >> 3)·SBO + (k >> 3)·LBO + (k & 7)·16 + 2(r & 7)` without swizzle.
 * A swizzled address then has bits 4.. XORed with bits 7.. (CuTe Swizzle<mode, 4, 3>). float8
 * operands (`m64nNk32`, K-major only) are the same bytes with K = 32 one-byte elements
 * (`operandOffset` with eb = 1); A and B may be of the two float8 types; a float16 accumulator
 * (`.f16` D) holds the once-rounded sum as float16, two per 32-bit register. Every byte read is hazard-checked like an ordinary read by
 * the warp's lane 0 (pending async copies, never-written bytes, an unordered earlier write), but
 * the read lasts until a wgmma.wait_group retires the instruction: WgmmaReads checks later writes
 * (TX6024). The async proxy's reads need a fence.proxy.async after generic-proxy writes (TX6015).
 * Register operands its thread never wrote in the CTA are TX6028 (exec/local-written.ts): A from
 * registers, and the accumulator when the instruction accumulates (scale-d nonzero); every
 * mma_async writes its whole accumulator.
 */
function compileMma(c: UnitCall<ActionOf<WgmmaAction, "mma">>): Exec {
  const { ec, op, fx: mma, args: exprs, span } = c;
  const { m, site, unit, eachWarp } = warpgroupOp(c);
  const N = mma.n;
  const aRegs = mma.aRegs;
  const dArg = exprs[0]!;
  if (dArg.kind !== "BufferPtr") {
    throw new TirxError("TX7001", `d of ${op.surface} must be acc.ptr([i])`, span);
  }
  const dPlaced = placementOf(ec.layout, dArg.buffer, span).placed;
  const dOff = ec.index(dArg.offset, span);
  let aOff: NumFn | undefined;
  let aPlaced: Placed | undefined;
  let aDesc: ((t: number) => bigint) | undefined;
  const aArg = exprs[1]!;
  if (aRegs) {
    if (aArg.kind !== "BufferPtr") {
      throw new TirxError("TX7001", `a of ${op.surface} must be frag.ptr([i])`, span);
    }
    aPlaced = placementOf(ec.layout, aArg.buffer, span).placed;
    aOff = ec.index(aArg.offset, span);
  } else {
    aDesc = ec.big(aArg, span);
  }
  const bDesc = ec.big(exprs[2]!, span);
  const scaleD = ec.num(exprs[3]!, span);
  const imm = (i: number): number => {
    const e = exprs[i];
    return e?.kind === "IntImm" ? Number(e.value) : 0; // float8 variants have no trans operands
  };
  const sa = imm(4);
  const sb = imm(5);
  const transA = aRegs ? 0 : imm(6);
  const transB = imm(aRegs ? 6 : 7);
  const aType = mma.ab;
  const bType = mma.b ?? mma.ab;
  const eb = dtypeBytes(aType);
  /** K of one instruction: 32 bytes of a row (k16 of a 2-byte type, k32 of float8). */
  const K = 32 / eb;
  const loadA = codecOf(aType).load as (dv: DataView, a: number) => number;
  const loadB = codecOf(bType).load as (dv: DataView, a: number) => number;
  const accType = mma.acc ?? "float32";
  const accEb = dtypeBytes(accType);
  const accCodec = codecOf(accType);
  const ldAcc = accCodec.load as (dv: DataView, a: number) => number;
  const stAcc = accCodec.store as (dv: DataView, a: number, v: number) => void;
  const ldv = m.ldv;
  const sdv = m.sdv;
  const stride = m.localStride;
  const shared = [...ec.layout.shared.values()];
  const placedAt = (a: number): Placed | undefined =>
    shared.find((p) => a >= p.base && a < p.base + p.size);
  const accCount = N / 2;

  /** The physical shared byte of element (r, k) of an operand described by `d`. */
  const addressOf = (
    d: ReturnType<typeof decodeMatrixDescriptor>,
    mn: boolean,
    r: number,
    k: number,
  ): number => swizzleByte(d.addr + operandOffset(d, mn, r, k, eb), d.swizzle);
  /** Per descriptor layout (LBO, SBO, mode, major-ness, tile row): the disagreement, if any. */
  const layoutCache = new Map<string, string | undefined>();

  /**
   * The descriptor against the tile its start lies in (PTX ISA, wgmma: Matrix Descriptor Format,
   * Shared Memory Matrix Layout): the tile's dtype, LBO/SBO for a tile of 2+ dims (row-major,
   * `operandTileMismatch`), and a swizzled start in row 0 of a swizzle atom (the descriptor's
   * base offset is 0, so the hardware starts the XOR pattern there). TX6026 when not.
   */
  const agrees = (
    d: ReturnType<typeof decodeMatrixDescriptor>,
    p: Placed,
    mn: boolean,
    opRows: number,
    t: number,
    what: string,
  ): boolean => {
    const ab = what === "A" ? aType : bType;
    const where = `${op.surface} in warp ${t >> 5} of CTA ${m.cta()}`;
    if (p.dtype !== undefined && operandDtypeConflict(p.dtype, ab)) {
      m.hazard(
        "TX6026",
        `${where} reads ${what} as ${ab}, but its descriptor points into shared ${bufferName(p)} of ${p.dtype}`,
        site,
        p.span ? [{ message: `${bufferName(p)} is allocated here`, span: p.span }] : [],
      );
      return false;
    }
    if (d.swizzle !== 0) {
      const W = 16 << d.swizzle;
      const inAtom = (d.addr - p.base) % (8 * W);
      if (inAtom >= W) {
        m.hazard(
          "TX6026",
          `${where}: the descriptor of ${what} starts ${inAtom} bytes into a ${8 * W}-byte swizzle atom of ${bufferName(p)} (row ${Math.floor(inAtom / W)}); with base offset 0 the start must lie in the atom's row 0 (a multiple of 8 rows, plus a K offset within the row)`,
          site,
        );
        return false;
      }
    }
    const shape = p.shape;
    if (shape && shape.length >= 2 && p.dtype === ab) {
      const cols = shape[shape.length - 1]!;
      const key = `${d.ldo},${d.sdo},${d.swizzle},${mn},${cols},${opRows}`;
      let msg = layoutCache.get(key);
      if (!layoutCache.has(key)) {
        const bad = operandTileMismatch(d, mn, opRows, cols, eb);
        msg = bad
          ? `reads element (${bad.r}, ${bad.k}) at byte ${bad.got} from the start, where the tile holds it at byte ${bad.want}; ${operandLayoutHint(d.swizzle, mn, cols, eb)}`
          : undefined;
        layoutCache.set(key, msg);
      }
      if (msg !== undefined) {
        m.hazard(
          "TX6026",
          `${where}: the descriptor of ${what} (LBO ${d.ldo}, SBO ${d.sdo}, ${mn ? "MN" : "K"}-major) does not describe the layout of ${bufferName(p)}: it ${msg}`,
          site,
        );
        return false;
      }
    }
    return true;
  };

  /**
   * True when shared bytes [c, c + 16) have nothing checkAsyncProxyRead or the TX6015 check
   * would report for thread `t`. The shadow's queries over 16 bytes (under UNIFORM_MIN, so byte
   * by byte) find nothing exactly when none finds anything on any part of them: a chunk found
   * ready needs no check of its elements, and one that is not is checked element by element, as
   * every element was before.
   */
  const chunkReady = (c: number, t: number): boolean => {
    const sh = m.shadow;
    return (
      16 < UNIFORM_MIN &&
      sh.firstUnready(c, 16, t, m.bulk) < 0 &&
      (m.speculative > 0 || sh.writeHit(t, c, 16) === undefined) &&
      sh.unfenced(c, 16, t) < 0
    );
  };
  /** The record of the operand reads' checks (buffer, address and thread set per element). */
  const operand = accessRecord<Placed>(m, undefined, eb, site, "reads");

  /**
   * What an operand's rows [r0, r0 + rows) × K read through a descriptor are, apart from the
   * bytes there: the shared buffer its start lies in (undefined: none, TX6018), each element's
   * CTA-local shared byte in (r, k) order (addressOf), the first element leaving the buffer (-1:
   * none) and, when none does, the distinct 16-byte chunks of the elements (CTA-local, in the
   * order the elements first reach them) and whether each chunk lies whole in the buffer.
   */
  interface OperandTable {
    readonly d: ReturnType<typeof decodeMatrixDescriptor>;
    readonly p: Placed | undefined;
    readonly local: Int32Array;
    readonly bad: number;
    readonly chunks: Int32Array;
    readonly whole: boolean;
  }
  const tableOf = (desc: bigint, mn: boolean, r0: number, rows: number): OperandTable => {
    const d = decodeMatrixDescriptor(desc);
    const p = placedAt(d.addr);
    const local = new Int32Array(rows * K);
    let bad = -1;
    const chunks: number[] = [];
    let whole = true;
    if (p) {
      const seen = new Set<number>();
      for (let i = 0; i < rows * K; i++) {
        const at = addressOf(d, mn, r0 + Math.floor(i / K), i % K);
        local[i] = at;
        if (bad >= 0) continue;
        if (at < p.base || at + eb > p.base + p.size) {
          bad = i;
          continue;
        }
        const c = at & ~15;
        if (seen.has(c)) continue;
        seen.add(c);
        chunks.push(c);
        if (c < p.base || c + 16 > p.base + p.size) whole = false;
      }
    }
    return { d, p, local, bad, chunks: Int32Array.from(chunks), whole };
  };
  /**
   * The tables of B by descriptor, and of A by descriptor and the warp's place q in its
   * warpgroup (rows 16q..16q+15); bounded: cleared when full.
   */
  const bTables = new Map<bigint, OperandTable>();
  const aTables = [0, 1, 2, 3].map(() => new Map<bigint, OperandTable>());
  const TABLES = 256;
  const cachedTable = (
    cache: Map<bigint, OperandTable>,
    desc: bigint,
    mn: boolean,
    r0: number,
    rows: number,
  ): OperandTable => {
    let tab = cache.get(desc);
    if (!tab) {
      if (cache.size >= TABLES) cache.clear();
      tab = tableOf(desc, mn, r0, rows);
      cache.set(desc, tab);
    }
    return tab;
  };

  /**
   * Read an operand (its table `tab`: rows [r0, r0 + rows) × K) into `out` as thread `t`, its
   * chunks added to `chunks`; with `fill` false `out` already holds those elements' values (the
   * same bytes) and is left alone. False after a report that ends the warp's wgmma.
   */
  const readOperand = (
    tab: OperandTable,
    mn: boolean,
    r0: number,
    t: number,
    out: Float64Array,
    fill: boolean,
    chunks: number[],
    what: string,
    opRows: number,
  ): boolean => {
    const { d, p, local: at } = tab;
    // Descriptors hold CTA-local addresses: the warp's CTA's shared window.
    const win = m.win[t]!;
    if (!p) {
      m.hazard(
        "TX6018",
        `${op.surface} in warp ${t >> 5} of CTA ${m.cta()}: the descriptor of ${what} starts at shared byte ${d.addr}, outside every shared buffer`,
        site,
      );
      return false;
    }
    if (!agrees(d, p, mn, opRows, t, what)) return false;
    const load = what === "A" ? loadA : loadB;
    const n = at.length;
    if (tab.bad < 0 && (win & 15) === 0) {
      // Every element inside the buffer, and, tracked, every chunk found ready
      // (chunkReady, which nothing else reports in): no element has anything to report.
      let ready = true;
      if (m.opts.track) {
        const cs = tab.chunks;
        if (!tab.whole) ready = false;
        for (let i = 0; i < cs.length && ready; i++) ready = chunkReady(cs[i]! + win, t);
      }
      if (ready) {
        for (const c of tab.chunks) chunks.push(c + win);
        if (fill) for (let i = 0; i < n; i++) out[i] = load(sdv, at[i]! + win);
        return true;
      }
    }
    let last = -1;
    /** The chunk (absolute, 16-byte aligned) whose bytes chunkReady found ready; -1: none. */
    let clean = -1;
    for (let i = 0; i < n; i++) {
      const local = at[i]!;
      if (i === tab.bad) {
        const r = Math.floor(i / K);
        const k = i % K;
        m.hazard(
          "TX6018",
          `${op.surface} in warp ${t >> 5} of CTA ${m.cta()}: ${what} element (${r0 + r}, ${k}) lies at shared byte ${local}, which leaves ${bufferName(p)} (bytes ${p.base}..${p.base + p.size - 1}) that the descriptor starts in (start ${d.addr}, LBO ${d.ldo}, SBO ${d.sdo}); the ${what === "A" ? `64×${K} A` : `${N}×${K} B`} operand must lie inside its buffer`,
          site,
          p.span ? [{ message: `${bufferName(p)} is allocated here`, span: p.span }] : [],
        );
        return false;
      }
      const a = local + win;
      const chunk = a & ~15;
      if (m.opts.track && chunk !== clean) {
        // A K-major row's 16-byte chunk (consecutive k) checked whole at its first element:
        // when none of its bytes has anything to report, neither has any element in it.
        if (!mn && a === chunk && local + 16 <= p.base + p.size && chunkReady(chunk, t)) {
          clean = chunk;
        } else {
          checkAsyncProxyRead(setAccess(operand, p, a, eb, t, site));
          const b = m.shadow.unfenced(a, eb, t);
          if (b >= 0) {
            const w = m.shadow.writerAt(b);
            const u = m.thread(w & THREAD_MASK);
            m.hazard(
              "TX6015",
              `${op.surface} (async proxy) in warp ${t >> 5} of CTA ${m.cta()} reads shared ${bufferName(p)} byte ${m.ctaLocal(b) - p.base}, which thread ${u} wrote through the generic proxy with no fence.proxy.async (T.ptx.fence.proxy_async) between the write and this read (by the writer after it, or by a thread after synchronizing with the writer)`,
              site,
              [{ message: `thread ${u} writes it here`, span: m.sites[w >> THREAD_BITS] }],
            );
          }
        }
      }
      // Elements come in 16-byte runs: a chunk already added is not looked up again.
      if (chunk !== last) chunks.push((last = chunk));
      if (fill) out[i] = load(sdv, a);
    }
    return true;
  };

  /** The warp's operands, times scale-a and scale-b, and its 16 × N sums Σ_k A[r][k]·B[n][k]. */
  const A = new Float64Array(16 * K);
  const B = new Float64Array(N * K);
  const D = new Float64Array(16 * N);
  /**
   * The exec call in progress (a count), and the call, table and shared window of the values in
   * B: the warps of one call see the same shared bytes (the op writes none, and nothing else runs
   * between them), so a warp reading B through the same descriptor in the same window as an
   * earlier warp of the call finds B's values already there (its checks still run).
   */
  let call = 0;
  let bCall = -1;
  let bTab: OperandTable | undefined;
  let bWin = 0;
  const { dAt, aAt16 } = mathTables(N);
  const written = m.localWritten;
  /** The record of the register reads' TX6028 reports (buffer, bytes and thread set per read). */
  const regs = accessRecord<Placed>(m, undefined, 0, site, "reads");
  /**
   * TX6028 when thread `t`'s `n` register bytes of `p` from byte `rel` of its local memory hold a
   * byte it never wrote (tracked launches).
   */
  const checkWritten = (p: Placed, rel: number, n: number, t: number): void => {
    if (!m.opts.track) return;
    const b = written.firstUnwritten(t * stride + rel, n);
    if (b >= 0) reportUnwrittenLocal(setAccess(regs, p, rel, n, t, site), b - t * stride);
  };
  const each = (w: number): void => {
    const base = w << 5;
    const q = (w - m.rank[base]! * (m.ctaThreads >> 5)) & 3; // the warp's place in its CTA's warpgroup
    // The operands' chunks, in the order the elements reach them (one may come more than once).
    const chunks: number[] = [];
    const bd = bDesc(base);
    const ad = aDesc?.(base);
    for (let l = 1; l < 32; l++) {
      if (bDesc(base + l) !== bd || (aDesc && aDesc(base + l) !== ad)) {
        m.hazard(
          "TX6011",
          `${op.surface} in warp ${w} of CTA ${m.cta()}: lane ${l} passes other descriptors than lane 0; the warpgroup must pass one set`,
          site,
        );
        return;
      }
    }
    const accAt = new Int32Array(32);
    for (let l = 0; l < 32; l++)
      accAt[l] = (base + l) * stride + dPlaced.base + dOff(base + l) * accEb;
    const aAt = new Int32Array(32).fill(-1);
    if (aRegs)
      for (let l = 0; l < 32; l++)
        aAt[l] = (base + l) * stride + aPlaced!.base + aOff!(base + l) * 2;
    const regs = [
      {
        start: accAt,
        bytes: accCount * accEb,
        what: "accumulator",
        name: dPlaced.name,
        base: dPlaced.base,
        elem: accEb,
      },
    ];
    if (aRegs) {
      regs.push({
        start: aAt,
        bytes: 16,
        what: "A fragment",
        name: aPlaced!.name,
        base: aPlaced!.base,
        elem: 2,
      });
    }
    if (!unit.checkFence(m, w, regs, site)) return;
    const bt = cachedTable(bTables, bd, transB !== 0, 0, N);
    const win = m.win[base]!;
    const fillB = !(bCall === call && bTab === bt && bWin === win);
    if (fillB) bCall = -1; // B changes below
    if (!readOperand(bt, transB !== 0, 0, base, B, fillB, chunks, "B", N)) return;
    if (fillB) {
      if (sb !== 1) for (let i = 0; i < N * K; i++) B[i] = sb * B[i]!;
      bCall = call;
      bTab = bt;
      bWin = win;
    }
    if (ad !== undefined) {
      const at = cachedTable(aTables[q]!, ad, transA !== 0, 16 * q, 16);
      if (!readOperand(at, transA !== 0, 16 * q, base, A, true, chunks, "A", 64)) return;
    } else {
      for (let l = 0; l < 32; l++) {
        const t = base + l;
        const at = t * stride + aPlaced!.base + aOff!(t) * 2;
        checkWritten(aPlaced!, at - t * stride, 16, t);
        for (let i = 0; i < 8; i++) A[aAt16[8 * l + i]!] = loadA(ldv, at + 2 * i);
      }
    }
    if (sa !== 1) for (let i = 0; i < 16 * K; i++) A[i] = sa * A[i]!;
    // The exact products summed in float64 in k order: (sa·a)·(sb·b) as the scaled operands'
    // product, the same value; K in runs of 16.
    for (let r = 0; r < 16; r++)
      for (let k0 = 0; k0 < K; k0 += 16) dot16(A, r * K + k0, B, K, k0, N, D, r * N, k0 > 0);
    const accStart = new Int32Array(32);
    const aStart = new Int32Array(32).fill(-1);
    if (aRegs) for (let l = 0; l < 32; l++) aStart[l] = aPlaced!.base + aOff!(base + l) * 2;
    for (let l = 0; l < 32; l++) {
      const t = base + l;
      const rel = dPlaced.base + dOff(t) * accEb;
      accStart[l] = rel;
      const at = t * stride + rel;
      const keep = scaleD(t) !== 0;
      if (keep) checkWritten(dPlaced, rel, accCount * accEb, t);
      written.mark(at, accCount * accEb);
      for (let i = 0; i < accCount; i++) {
        let s = D[dAt[accCount * l + i]!]!;
        if (keep) s += ldAcc(ldv, at + accEb * i);
        stAcc(ldv, at + accEb * i, s); // the codec rounds once (RNE) to D's type
      }
    }
    unit.issue({
      site,
      warp: w,
      accStart,
      accBytes: accCount * accEb,
      accName: dPlaced.name,
      accBase: dPlaced.base,
      aStart,
      aBytes: aRegs ? 16 : 0,
      aName: aPlaced?.name ?? "",
      aBase: aPlaced?.base ?? 0,
      chunks: Int32Array.from(chunks),
    });
  };
  return (lanes, n) => {
    call++;
    eachWarp(lanes, n, each);
  };
}

/**
 * The wgmma unit (PTX ISA, wgmma.fence / wgmma.commit_group / wgmma.wait_group /
 * wgmma.mma_async; state in exec/wgmma.ts): every action is `.sync.aligned` over the warpgroup
 * (alignedWarps, TX6011); statement ops only.
 */
export const WGMMA_UNIT = {
  mma: { warpWide: true, stmt: compileMma },
  fence: {
    warpWide: true,
    stmt(c) {
      const { m, unit, eachWarp } = warpgroupOp(c);
      return (lanes, n) => eachWarp(lanes, n, (w) => unit.fence(w, m.threads, m.localStride));
    },
  },
  commit: {
    warpWide: true,
    stmt(c) {
      const { m, unit, eachWarp } = warpgroupOp(c);
      // A commit can let a sibling's wgmma.wait_group complete: progress for the scheduler.
      return (lanes, n) =>
        eachWarp(lanes, n, (w) => {
          unit.commit(w);
          m.bars.progress++;
        });
    },
  },
  wait: {
    warpWide: true,
    syncs: true,
    waitsForWarpgroup: true,
    stmt(c) {
      const { m, site, unit, eachWarp } = warpgroupOp(c);
      const exprs = c.args;
      const keep = Number(exprs[0]!.kind === "IntImm" ? exprs[0]!.value : 0);
      return (lanes, n) => eachWarp(lanes, n, (w) => unit.wait(m, w, keep, site));
    },
  },
} as const satisfies UnitCompiler<WgmmaAction>;

/**
 * The regs unit: setmaxnreg (PTX ISA, setmaxnreg) moves registers between warpgroups; the
 * simulator keeps no register budget, but checks that whole warpgroups execute it
 * (.sync.aligned, TX6011). Statement ops only.
 */
export const REGS_UNIT = {
  setmaxnreg: {
    warpWide: true,
    stmt: ({ ec, op, span }) => compileWarpgroupAligned(ec.m, op.surface, span),
  },
} as const satisfies UnitCompiler<UnitAction<"regs">>;
