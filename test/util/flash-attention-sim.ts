// The flash-attention tests' run on the simulator against float64, and ptxas -v on a build's
// PTX, shared by the files that check makeFlashAttention's builds (flash-attention,
// flash-attention-192, flash-attention-persistent; the GEMM's ptxas checks use ptxas -v too).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { parsePtxasUsage, type PtxasUsage } from "@tirx-ts/runtime";
import { sim } from "tirx-ts";
import {
  checkFlashAttention,
  checkFlashAttentionVarlen,
  makeFlashAttention,
  type FlashAttentionSizes,
} from "../../examples/flash_attention.js";
import {
  acceptedKey,
  recordAccepted,
  recordedReport,
  recordReport,
  reportKey,
} from "./ptxas-accepted.js";

/**
 * Runs the kernel of `s` on the simulator against the float64 reference (checkFlashAttention; a
 * varlen `s` with sequence b of `lensQ[b]` queries and `lensK[b]` keys:
 * checkFlashAttentionVarlen), expects its `ok` (within the bound, no reports) and returns its
 * summary.
 */
export function simulated(
  s: FlashAttentionSizes,
  lensQ?: readonly number[],
  lensK?: readonly number[],
): string {
  const f = makeFlashAttention(s);
  const r =
    lensQ === undefined || lensK === undefined
      ? checkFlashAttention(sim(), f, s)
      : checkFlashAttentionVarlen(sim(), f, s, lensQ, lensK);
  expect(r.ok, r.summary).toBe(true);
  return r.summary;
}

/** ptxasVerbose's options, before its output and input files. */
const VERBOSE = ["-v", "-arch=sm_90a"] as const;

/**
 * `ptxas -v -arch=sm_90a` (the binary `ptxas`) on `ptx`, expected to assemble: its report
 * (stderr and stdout), with its warnings (such as C7514, wgmmas serialized). The report of a
 * module this ptxas accepted before is the recorded one (ptxas-accepted.ts: the same ptxas, text
 * and options; a refused module is assembled again every time), and the module counts as
 * accepted for sm_90a.
 */
export function ptxasVerbose(ptxas: string, ptx: string): string {
  const key = reportKey(ptxas, ptx, VERBOSE);
  const recorded = recordedReport(key);
  if (recorded !== undefined) return recorded;
  const dir = mkdtempSync(join(tmpdir(), "fa-ptxas-"));
  try {
    writeFileSync(join(dir, "k.ptx"), ptx);
    const args = [...VERBOSE, "-o", join(dir, "k.cubin"), join(dir, "k.ptx")];
    const r = spawnSync(ptxas, args, { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const report = `${r.stderr}\n${r.stdout}`;
    recordReport(key, report);
    recordAccepted(acceptedKey(ptxas, ptx, "sm_90a"));
    return report;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `ptxas -v -arch=sm_90a` (the binary `ptxas`) on `ptx`: its registers and spills (parsePtxasUsage). */
export function ptxasUsage(ptxas: string, ptx: string): PtxasUsage | undefined {
  return parsePtxasUsage(ptxasVerbose(ptxas, ptx));
}
