import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isTirxError, verify, type KernelArg, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { runSim, type SimOptions } from "@tirx-ts/runtime-sim";

/**
 * 1-based line of the first line of `file` (an import.meta.url) containing `marker`; when that
 * line is only a comment, the line after it (for statements prettier spreads over several lines).
 */
export function lineOf(fileUrl: string, marker: string): number {
  const lines = readFileSync(fileURLToPath(fileUrl), "utf8").split("\n");
  const i = lines.findIndex((l) => l.includes(marker));
  if (i < 0) throw new Error(`marker ${marker} not found`);
  return lines[i]!.trim().startsWith("//") ? i + 2 : i + 1;
}

/** Verify and run `fn`; returns the error it throws (a TirxError), or fails. */
export function simThrows(fn: PrimFunc, args: readonly KernelArg[], opts?: SimOptions): TirxError {
  try {
    runSim(verify(fn), args, opts);
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

/** Verify and run `fn` collecting hazards. */
export function simCollect(fn: PrimFunc, args: readonly KernelArg[]): readonly TirxError[] {
  return runSim(verify(fn), args, { hazards: "collect" }).reports;
}
