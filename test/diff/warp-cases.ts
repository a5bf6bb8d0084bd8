// Differential cases of the warp, atomic and memory families: every shuffle mode × width × dtype,
// warp reductions × width × dtype, votes, activemask, redux.sync × dtype, atomics (atom/red, also
// with a sem and scope) on global memory, and strong loads (ld.relaxed/acquire), each with a
// reference computed here per warp from the PTX ISA's definitions (shfl.sync pseudo-code,
// butterfly reductions, vote, redux.sync) — independent of the simulator's code.
import { allOps, dtypeBytes, isFloat, type DType, type PrimFunc } from "@tirx-ts/core";
import { T, callStmtOp, callValueOp, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import type { PtxModule } from "@tirx-ts/codegen-ptx";
import { compile } from "tirx-ts";
import type { DiffCase } from "./cases.js";
import { decode, encode, prng, random, type Value } from "./values.js";
import { roundTo, wrap } from "./reference.js";

const BLOCK = 128;
const CTAS = 16;
const N = BLOCK * CTAS;
const FULL = 0xffffffff;

function build(
  id: string,
  dts: readonly DType[],
  rt: DType,
  body: (xs: PrimExpr[], out: TileView, i: PrimExpr, views: TileView[]) => void,
): { fn: PrimFunc; module: PtxModule } {
  const params: Record<string, ReturnType<typeof T.Tensor>> = {};
  dts.forEach((dt, j) => (params[`X${j}`] = T.Tensor([N], dt)));
  params["Y"] = T.Tensor([N], rt);
  const fn = T.function(`diff_${id.replace(/[^A-Za-z0-9]/g, "_")}`, params, (p) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: CTAS, block: BLOCK }) });
    const i = T.cuda.block_idx("x").mul(BLOCK).add(T.cuda.thread_idx("x"));
    body(
      dts.map((_, j) => (p[`X${j}`] as TileView).get([i])),
      p["Y"] as TileView,
      i,
      dts.map((_, j) => p[`X${j}`] as TileView),
    );
  });
  // compile's module: runCase's compile of the same kernel then finds it in the compile cache.
  return { fn, module: compile(fn, { target: "cuda", arch: "sm_90" }).module };
}

function makeCase(
  family: string,
  id: string,
  dts: readonly DType[],
  rt: DType,
  inputs: Value[][],
  want: Value[],
  body: (xs: PrimExpr[], out: TileView, i: PrimExpr, views: TileView[]) => void,
): DiffCase {
  const cols = inputs.map((c, j) => decode(encode(c, dts[j]!), dts[j]!));
  const k = build(id, dts, rt, body);
  return {
    id,
    family,
    operands: dts,
    result: rt,
    fn: k.fn,
    module: k.module,
    inputs: cols,
    n: N,
    bytes: cols.map((c, j) => encode(c, dts[j]!)),
    reference: (i) => want[i],
  };
}

/** PTX ISA, shfl.sync: the source lane of `lane` (or the lane itself), for b and packed c. */
function shflSource(mode: string, lane: number, b: number, width: number): number {
  const segmask = 32 - width;
  const cval = mode === "up" ? 0 : 31;
  const bval = b & 31;
  const maxLane = (lane & segmask) | (cval & ~segmask);
  const minLane = lane & segmask;
  let j: number;
  let ok: boolean;
  if (mode === "up") {
    j = lane - bval;
    ok = j >= maxLane;
  } else if (mode === "down") {
    j = lane + bval;
    ok = j <= maxLane;
  } else if (mode === "bfly") {
    j = lane ^ bval;
    ok = j <= maxLane;
  } else {
    j = minLane | (bval & ~segmask);
    ok = j <= maxLane;
  }
  return ok ? j : lane;
}

/** `op` of two values of `dt` as the butterfly combines them (float32 rounds each step). */
function combine(kind: string, dt: DType, a: Value, b: Value): Value {
  if (isFloat(dt)) {
    const x = Number(a);
    const y = Number(b);
    const r =
      kind === "sum"
        ? x + y
        : kind === "max"
          ? x !== x
            ? y
            : y !== y
              ? x
              : Math.max(x, y)
          : x !== x
            ? y
            : y !== y
              ? x
              : Math.min(x, y);
    // Every step rounds to the value's format (add.rn.f32, add.rn.f16, fma.rn.bf16 a, 1, b).
    return dt === "float64" ? r : roundTo(r, dt);
  }
  const x = BigInt(a);
  const y = BigInt(b);
  const r = kind === "sum" ? wrap(x + y, dt) : kind === "max" ? (x > y ? x : y) : x < y ? x : y;
  return dtypeBytes(dt) === 8 ? r : Number(r);
}

/** The identity of an exclusive scan's first lane (the record's documented value). */
function scanIdentity(kind: string, dt: DType): Value {
  if (isFloat(dt)) return kind === "sum" ? 0 : kind === "max" ? -Infinity : Infinity;
  const bits = dtypeBytes(dt) * 8;
  const signed = !dt.startsWith("u");
  const lo = signed ? -(2n ** BigInt(bits - 1)) : 0n;
  const hi = signed ? 2n ** BigInt(bits - 1) - 1n : 2n ** BigInt(bits) - 1n;
  const v = kind === "sum" ? 0n : kind === "max" ? lo : hi;
  return bits === 64 ? v : Number(v);
}

/** Every warp and atomic case. */
export function warpCases(): DiffCase[] {
  const out: DiffCase[] = [];
  let seed = 1000;
  for (const op of allOps()) {
    if (op.sim.kind !== "warp" || op.form !== "value") continue;
    const rnd = prng(seed++);
    if (op.name.startsWith("shfl.sync.")) {
      const mode = op.name.split(".")[2]!;
      for (const sig of op.signatures) {
        const vt = sig[1]!;
        for (const width of [32, 16, 4]) {
          const vals = Array.from({ length: N }, () => random(vt, rnd));
          const lanes = Array.from({ length: N }, () => Math.floor(rnd() * 40));
          const want = vals.map((_, i) => {
            const base = i & ~31;
            return decode(
              encode([vals[base + shflSource(mode, i & 31, lanes[i]!, width)]!], vt),
              vt,
            )[0]!;
          });
          out.push(
            makeCase(
              "warp",
              `${op.name}.${vt}.w${width}`,
              [vt, "int32"],
              vt,
              [vals, lanes],
              want,
              ([v, l], y, i) => y.set([i], callValueOp(op.name, [FULL, v!, l!, width])),
            ),
          );
        }
      }
    } else if (op.name.startsWith("warp_scan_")) {
      // Hillis–Steele in the record's documented order: step d makes lane l's value
      // v[l-d] op v[l] when l is at least d into its group; exclusive shifts by one lane.
      const kind = op.name.slice(10);
      for (const sig of op.signatures) {
        const vt = sig[0]!;
        for (const [width, exclusive] of [
          [32, 0],
          [32, 1],
          [8, 1],
          [4, 0],
        ] as const) {
          const vals = Array.from({ length: N }, () => random(vt, rnd));
          const cols = decode(encode(vals, vt), vt);
          const cur = [...cols];
          for (let d = 1; d < width; d *= 2) {
            const prev = [...cur];
            for (let i = 0; i < N; i++) {
              if ((i & (width - 1)) >= d) cur[i] = combine(kind, vt, prev[i - d]!, prev[i]!);
            }
          }
          const want = exclusive
            ? cur.map((_, i) => ((i & (width - 1)) === 0 ? scanIdentity(kind, vt) : cur[i - 1]!))
            : cur;
          out.push(
            makeCase(
              "warp",
              `${op.name}.${vt}.w${width}${exclusive ? ".excl" : ""}`,
              [vt],
              vt,
              [cols],
              want,
              ([v], y, i) => y.set([i], callValueOp(op.name, [v!, width, exclusive])),
            ),
          );
        }
      }
    } else if (op.name.startsWith("warp_arg")) {
      // The best (value, index) of each group by a linear search: NaN never wins unless all are
      // NaN, equal values tie, ties to the lowest index. Values from a small set (ties, ±0, NaN).
      const max = op.name === "warp_argmax";
      for (const sig of op.signatures) {
        const vt = sig[0]!;
        const pool: Value[] = isFloat(vt)
          ? [0, -0, 1, 2, -3, NaN, Infinity, -Infinity]
          : vt.endsWith("64")
            ? [0n, 1n, 5n, vt === "int64" ? -7n : 2n ** 63n]
            : [0, 1, 5, vt === "int32" ? -7 : 2 ** 31];
        for (const width of [32, 8]) {
          const vals = Array.from({ length: N }, (_, i) =>
            (i >> 5) % 7 === 3 && isFloat(vt) ? NaN : pool[Math.floor(rnd() * pool.length)]!,
          );
          const idx = Array.from({ length: N }, () => Math.floor(rnd() * 64) - 16);
          const want = vals.map((_, i) => {
            const base = i & ~(width - 1);
            let best = -1;
            for (let k = base; k < base + width; k++) {
              const v = vals[k]!;
              if (typeof v === "number" && v !== v) continue;
              if (best < 0) best = k;
              else {
                const b = vals[best]!;
                const better = max ? v > b : v < b;
                // eslint-disable-next-line eqeqeq
                if (better || (v == b && idx[k]! < idx[best]!)) best = k;
              }
            }
            if (best < 0) return Math.min(...idx.slice(base, base + width));
            return idx[best]!;
          });
          out.push(
            makeCase(
              "warp",
              `${op.name}.${vt}.w${width}`,
              [vt, "int32"],
              "int32",
              [vals, idx],
              want,
              ([v, k], y, i) => y.set([i], callValueOp(op.name, [v!, k!, width])),
            ),
          );
        }
      }
    } else if (op.name.startsWith("warp_")) {
      const kind = op.name.slice(5);
      for (const sig of op.signatures) {
        const vt = sig[0]!;
        for (const width of [32, 8, 2]) {
          // Floats: small integers and halves, so sums stay exact whatever the order, plus one
          // random float32 set per width where the butterfly order decides the rounding.
          const vals = Array.from({ length: N }, () => random(vt, rnd));
          const cols = decode(encode(vals, vt), vt);
          const cur = [...cols];
          for (let m = width / 2; m >= 1; m /= 2) {
            const prev = [...cur];
            for (let i = 0; i < N; i++) cur[i] = combine(kind, vt, prev[i]!, prev[i ^ m]!);
          }
          out.push(
            makeCase("warp", `${op.name}.${vt}.w${width}`, [vt], vt, [cols], cur, ([v], y, i) =>
              y.set([i], callValueOp(op.name, [v!, width])),
            ),
          );
        }
      }
    } else if (op.name.startsWith("vote.sync.")) {
      const kind = op.name.split(".")[2]!;
      const rt = op.result(op.signatures[0]!)!;
      for (const density of [0, 0.03, 0.5, 0.97, 1]) {
        const preds = Array.from({ length: N }, () => (rnd() < density ? 1 : 0));
        const want = preds.map((_, i) => {
          const w = preds.slice(i & ~31, (i & ~31) + 32);
          if (kind === "all") return w.every((p) => p) ? 1 : 0;
          if (kind === "any") return w.some((p) => p) ? 1 : 0;
          return w.reduce<number>((acc, p, k) => acc + (p ? 2 ** k : 0), 0);
        });
        out.push(
          makeCase("warp", `${op.name}.p${density}`, ["bool"], rt, [preds], want, ([p], y, i) =>
            y.set([i], callValueOp(op.name, [FULL, p!])),
          ),
        );
      }
    } else if (op.name.startsWith("redux.sync.")) {
      // PTX ISA, redux.sync: every lane gets the reduction over the member lanes (all 32 here);
      // add wraps modulo 2^32, min/max compare as the dtype, and/or/xor are bitwise.
      const kind = op.name.split(".")[2]!;
      for (const sig of op.signatures) {
        const vt = sig[1]!;
        const vals = Array.from({ length: N }, () => random(vt, rnd));
        const cols = decode(encode(vals, vt), vt).map(Number);
        const want = cols.map((_, i) => {
          const w = cols.slice(i & ~31, (i & ~31) + 32);
          const r = w.reduce((a, b) =>
            kind === "add"
              ? a + b
              : kind === "min"
                ? Math.min(a, b)
                : kind === "max"
                  ? Math.max(a, b)
                  : kind === "and"
                    ? a & b
                    : kind === "or"
                      ? a | b
                      : a ^ b,
          );
          return Number(wrap(BigInt(r), vt));
        });
        out.push(
          makeCase("warp", `${op.name}.${vt}`, [vt], vt, [cols], want, ([v], y, i) =>
            y.set([i], callValueOp(op.name, [FULL, v!])),
          ),
        );
      }
    } else if (op.name === "activemask") {
      const rt = op.result([])!;
      out.push(
        makeCase(
          "warp",
          "activemask",
          ["int32"],
          rt,
          [Array(N).fill(0)],
          Array(N).fill(FULL),
          (_, y, i) => y.set([i], callValueOp("activemask", [])),
        ),
      );
    }
  }
  // Atomics on global memory: every thread combines its value into slot i % 64 of Y, which
  // starts at 0 (add) or at the slot's first value (min, max; idempotent). Integer and
  // integral-float values keep every order exact. `atom` returns the old value (unused here);
  // `red` returns nothing.
  // The forms with a sem and scope take them as static operands: acq_rel (red: release) at gpu
  // scope here; the arithmetic is the same, so one dtype each keeps the suite cheap (the
  // simulator tracks release chains per atomic for them).
  for (const op of allOps("atomic")) {
    const fx =
      op.sim.kind === "machine" && op.sim.effect.unit === "atomic" ? op.sim.effect : undefined;
    const action = fx?.action ?? "";
    if (!["add", "min", "max"].includes(action) || fx?.packed) continue;
    const order = fx?.ordered ? [op.form === "value" ? 3 : 2, 2] : [];
    for (const sig of fx?.ordered ? op.signatures.slice(0, 1) : op.signatures) {
      const vt = sig[1]!;
      const rnd = prng(seed++);
      const small = (): Value =>
        vt === "float32"
          ? Math.floor(rnd() * 200) - 100
          : vt === "uint64"
            ? BigInt(Math.floor(rnd() * 1e6))
            : vt === "uint32"
              ? Math.floor(rnd() * 1e6)
              : Math.floor(rnd() * 2e6) - 1e6;
      const vals = Array.from({ length: N }, small);
      const zero: Value = vt === "uint64" ? 0n : 0;
      const initial: Value[] = Array.from({ length: N }, (_, i) =>
        action !== "add" && i < 64 ? vals[i]! : zero,
      );
      const want = [...initial];
      for (let i = 0; i < N; i++) {
        const sl = i % 64;
        want[sl] = combine(action === "add" ? "sum" : action, vt, want[sl]!, vals[i]!);
      }
      const c = makeCase("atomic", `${op.name}.${vt}`, [vt], vt, [vals], want, ([v], y, i) => {
        const ptr = y.ptr([i.floormod(64)]);
        if (op.form === "value") T.let_("old", callValueOp(op.name, [ptr, v!, ...order]));
        else callStmtOp(op.name, [ptr, v!, ...order]);
      });
      out.push({ ...c, initial: encode(initial, vt) });
    }
  }
  // Strong loads (ld.relaxed / ld.acquire with a scope): Y[i] = X[i], the value's bits.
  for (const op of allOps("memory")) {
    if (op.form !== "value") continue;
    for (const sig of op.signatures) {
      const vt = sig[0]!;
      const rnd = prng(seed++);
      const vals = decode(
        encode(
          Array.from({ length: N }, () => random(vt, rnd)),
          vt,
        ),
        vt,
      );
      out.push(
        makeCase("memory", `${op.name}.${vt}`, [vt], vt, [vals], vals, (_, y, i, xs) =>
          y.set([i], callValueOp(op.name, [xs[0]!.ptr([i]), 1, 2])),
        ),
      );
    }
  }
  return out;
}
