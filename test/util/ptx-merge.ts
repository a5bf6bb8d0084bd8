// Assemble many PTX modules for one arch in a few ptxas runs (see conformance/ptxas-pool.ts).
import { assembleAll, type PtxFailure } from "../conformance/ptxas-pool.js";

/** A module to assemble, with a name for messages. */
export interface NamedPtx {
  readonly name: string;
  readonly text: string;
}

/** Assemble `mods` for `arch` in merged batches; resolves with the failures (empty when all pass). */
export function assembleMerged(mods: readonly NamedPtx[], arch: string): Promise<PtxFailure[]> {
  return assembleAll(mods.map((m) => ({ ...m, arch })));
}
