// Issue 4, the cp.async operand-form matrix: chunk_bytes {4,8,16} × {.ca,.cg} × {no hint,
// .L2::cache_hint} × {no prefetch, .L2::64B/128B/256B} × {no pred, pred true, pred false} ×
// {no fill, src_size, ignore_src} = 432 cells. Illegal cells (.cg with 4 or 8 bytes) fail with
// TX3007 at the tile.apply line; every legal cell (288) compiles, its PTX assembles with ptxas
// for sm_80 and sm_90, and it runs on the simulated device to bytes computed here.
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, test } from "vitest";
import { compile, sim, TirxError, verify, type Compiled } from "tirx-ts";
import { lineOf } from "../kernels/seed.js";
import {
  allCells,
  buildCell,
  cellName,
  expectedBytes,
  inputBytes,
  isLegal,
  opcodeOf,
  runCell,
  type Cell,
} from "./matrix.js";
import { assembleAll } from "./ptxas-pool.js";

const matrixFile = fileURLToPath(new URL("./matrix.ts", import.meta.url));
const cells = allCells().map((cell, index) => ({ cell, index }));
const legal = cells.filter((c) => isLegal(c.cell));
const illegal = cells.filter((c) => !isLegal(c.cell));

const cpLines = (ptx: string): string[] =>
  ptx
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^(@!?%p\d+ )?cp\.async\.c[ag]\./.test(l));

describe("cp.async matrix: 432 cells", () => {
  test("the matrix has 432 cells: 288 legal, 144 illegal (.cg with 4 or 8 bytes)", () => {
    expect(cells.length).toBe(432);
    expect(legal.length).toBe(288);
    expect(illegal.length).toBe(144);
  });

  test("every illegal cell (.cg with chunk_bytes 4 or 8) fails TX3007 at its tile.apply line", async () => {
    const line = await lineOf(matrixFile, "// MATRIX-APPLY");
    for (const { cell, index } of illegal) {
      let err: unknown;
      try {
        verify(buildCell(cell, index));
      } catch (e) {
        err = e;
      }
      expect(err, cellName(cell)).toBeInstanceOf(TirxError);
      const e = err as TirxError;
      expect(e.code, cellName(cell)).toBe("TX3007");
      expect(e.span?.file).toBe(matrixFile);
      expect(e.span?.line).toBe(line);
    }
  });

  describe("legal cells", () => {
    const compiled = new Map<number, Compiled>();
    beforeAll(() => {
      for (const { cell, index } of legal) compiled.set(index, compile(buildCell(cell, index)));
    });

    test("each emits exactly REPEATS cp.async with the cell's opcode and operands, and the author's commit/wait only", () => {
      for (const { cell, index } of legal) {
        const ptx = compiled.get(index)!.ptx;
        const lines = cpLines(ptx);
        expect(lines.length, cellName(cell)).toBe(2);
        for (const l of lines) {
          expect(l.startsWith(cell.pred === "none" ? "cp.async" : "@%p"), cellName(cell)).toBe(
            true,
          );
          expect(l).toContain(`${opcodeOf(cell)} [`);
          // chunk, then src_size (a register: per-thread) or ignore_src (a predicate), then policy.
          const ops = l.slice(l.lastIndexOf("]") + 1).replace(";", "");
          const want = [
            `${cell.chunk}`,
            ...(cell.fill === "src_size" ? ["%r\\d+"] : []),
            ...(cell.fill === "ignore_src" ? ["%p\\d+"] : []),
            ...(cell.hint ? ["%rd\\d+"] : []),
          ];
          expect(ops, cellName(cell)).toMatch(new RegExp(`^, ${want.join(", ")}$`));
        }
        expect(ptx.match(/cp\.async\.commit_group;/g)?.length).toBe(1);
        expect(ptx.match(/cp\.async\.wait_group 0;/g)?.length).toBe(1);
        expect(ptx).not.toContain("cp.async.wait_all");
        // Two cta_sync in the kernel, two bar.sync in the PTX: nothing inserted.
        expect(ptx.match(/\bbar(\.sync)? 0;/g)?.length).toBe(2);
      }
    });

    test("each assembles with ptxas for sm_80 and sm_90 (576 modules in merged batches)", async () => {
      const jobs = legal.flatMap(({ cell, index }) => {
        const text = compiled.get(index)!.ptx;
        return ["sm_80", "sm_90"].map((arch) => ({ name: cellName(cell), text, arch }));
      });
      const failures = await assembleAll(jobs, 3);
      expect(failures.map((f) => f.message).slice(0, 3)).toEqual([]);
    }, 120_000);

    test("each runs on the simulator to the expected bytes (copied, zero-filled, sentinel where suppressed)", () => {
      let mismatches: string[] = [];
      for (const { cell, index } of legal) {
        const out = runCell(cell, sim(), index, compiled.get(index));
        const want = expectedBytes(cell, inputBytes(cell, index));
        const at = out.findIndex((v, k) => v !== want[k]);
        if (at >= 0 || out.length !== want.length) {
          mismatches.push(`${cellName(cell)}: byte ${at} is ${out[at]}, expected ${want[at]}`);
        }
      }
      mismatches = mismatches.slice(0, 10);
      expect(mismatches).toEqual([]);
    });
  });
});

/** Which cell shapes the spot checks below use. */
const cellOf = (p: Partial<Cell>): Cell => ({
  chunk: 16,
  cache: "ca",
  hint: false,
  pred: "none",
  fill: "none",
  ...p,
});

describe("cp.async matrix: expected-byte spot checks (the oracle itself)", () => {
  test("pred false keeps the sentinel in every byte; ignore_src zeros thread 0 and 3's chunks", () => {
    const input = inputBytes(cellOf({}), 0);
    const off = expectedBytes(cellOf({ pred: "false", fill: "ignore_src" }), input);
    expect(off.every((b) => b === 0xa5)).toBe(true);
    const ign = expectedBytes(cellOf({ fill: "ignore_src" }), input);
    expect([...ign.slice(0, 32)].every((b) => b === 0)).toBe(true);
    expect([...ign.slice(32, 64)]).toEqual([...input.slice(32, 64)]);
    const sized = expectedBytes(
      cellOf({ fill: "src_size", chunk: 4 }),
      inputBytes(cellOf({ chunk: 4 })),
    );
    // Thread 3 copies 3 of 4 bytes per atom.
    expect(sized[3 * 8 + 3]).toBe(0);
    expect(sized[3 * 8 + 2]).not.toBe(0);
  });
});
