// A wgmma's shared operands are read until a wgmma.wait_group retires the instruction (PTX ISA,
// wgmma.mma_async: the shared operands must not be modified until the operation completes), and
// the instruction belongs to the whole warpgroup: a wait_group of any of its warps completes it.
// examples/gemm_hopper.ts with K = 256 refills every stage of its ring, so the producer's TMA
// copies overwrite tiles the consumers' wgmmas read:
// - as written (wait_group(0), then one thread per consumer warpgroup arrives on "empty"), no
//   report on several schedules: the arrive hands over the stage after the retirement. The
//   wgmma-group belongs to the warpgroup (PTX ISA, wgmma.commit_group), so the arriving warp's
//   wait_group completes only once the other three warps have issued and committed their parts:
//   on schedules where that warp runs ahead (seeds 1, 6, 12) it waits for them, else the refill
//   would overwrite a stage whose last warps had not issued their wgmmas yet (TX6007 there before
//   the simulator modelled that wait);
// - with the wait_group moved after the arrive (a pipelining bug), TX6024 at the TMA copy, with
//   notes at the wgmma and at the late wait_group — not a generic write-after-read (TX6013).
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { mapStmt, verify, type PrimFunc, type Stmt, type TirxError } from "@tirx-ts/core";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { makeGemmHopper } from "../../examples/gemm_hopper.js";

const EXAMPLE = fileURLToPath(new URL("../../examples/gemm_hopper.ts", import.meta.url));
const SRC = readFileSync(EXAMPLE, "utf8").split("\n");

/** The 1-based line of examples/gemm_hopper.ts that contains `text` (exactly one). */
function lineOf(text: string): number {
  const hits = SRC.flatMap((l, i) => (l.includes(text) ? [i + 1] : []));
  if (hits.length !== 1) throw new Error(`"${text}": ${hits.length} lines`);
  return hits[0]!;
}

const SIZES = { m: 256, n: 256, k: 256, ctas: 1 } as const;

/** `fn` with the consumers' `wgmma.wait_group(0)` moved after the `if` that arrives on "empty". */
function withLateWait(fn: PrimFunc): PrimFunc {
  let moved = 0;
  const isWait = (s: Stmt | undefined): boolean =>
    s?.kind === "Call" && s.op === "wgmma.wait_group.sync.aligned";
  const body = mapStmt(fn.body, {
    stmt: (s) => {
      if (s.kind !== "Seq") return s;
      const i = s.stmts.findIndex(isWait);
      if (i < 0 || s.stmts[i + 1]?.kind !== "If") return s;
      moved++;
      const stmts = [...s.stmts];
      [stmts[i], stmts[i + 1]] = [stmts[i + 1]!, stmts[i]!];
      return { ...s, stmts };
    },
  });
  expect(moved).toBe(1);
  return { ...fn, body };
}

function reports(fn: PrimFunc, seed: number): readonly TirxError[] {
  const { m, n, k } = SIZES;
  const ones = (r: number, c: number) =>
    simTensor(new Array(r * c).fill(1), { shape: [r, c], dtype: "float16" });
  const c = simZeros([m, n], "float16");
  const r = runSim(verify(fn), [ones(m, k), ones(n, k), c], { hazards: "collect", simSeed: seed });
  if (r.reports.length === 0) expect((c.toArray() as Float32Array)[0]).toBe(k);
  return r.reports;
}

const tag = (e: TirxError): string => `${e.code}@${e.span?.line ?? "?"}`;

describe("wgmma shared operands handed back to a TMA producer (simulator)", () => {
  const fn = makeGemmHopper(SIZES);

  it("no report when the wait_group comes before the arrive that frees the stage", () => {
    for (const seed of [0, 1, 2, 5, 6, 12]) expect(reports(fn, seed).map(tag)).toEqual([]);
  });

  it("TX6024 at the TMA refill when the wait_group comes after the arrive", () => {
    for (const seed of [0, 4]) {
      const rs = reports(withLateWait(fn), seed);
      expect(rs.map(tag)).toEqual([
        `TX6024@${lineOf("T.cuda.tile.apply(T.ptx[LOAD_2D], sA.sub(st), A, {")}`,
        `TX6024@${lineOf("T.cuda.tile.apply(T.ptx[LOAD_2D], sB.sub(st), B, {")}`,
      ]);
      const notes = rs[0]!.notes.flatMap((x) => (x.span ? [x.span.line] : []));
      expect(notes).toEqual([
        lineOf("T.ptx.wgmma.mma_async(`m64n${BN}k16`, dt, acc, 0, da, db);"),
        lineOf("T.ptx.wgmma.wait_group(0);"),
      ]);
      expect(rs[0]!.message).toContain(
        'issues a bulk copy to shared "sA" byte 0, which a wgmma.mma_async of warpgroup 1 (warps 4..7) still reads: the wgmma.wait_group that retires it',
      );
    }
  });
});
