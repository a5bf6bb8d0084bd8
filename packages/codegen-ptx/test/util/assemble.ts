// Every module a test produces goes through ptxas: for its own target, and for sm_80 and sm_90
// where the target allows (a module for sm_86 cannot be assembled for sm_80; sm_90a only for itself).
import { parseArch, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx, type PtxModule, type PtxOptions } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "../../../../test/util/ptxas-deferred.js";

const smOf = (arch: string): number => parseArch(arch)!.sm;

/** The -arch values a module for `target` must assemble for. */
export function archsFor(target: string): string[] {
  if (parseArch(target)!.archSpecific) return [target];
  const out = new Set<string>();
  if (smOf(target) <= 80) out.add("sm_80");
  out.add(target);
  if (smOf(target) <= 90) out.add("sm_90");
  return [...out];
}

/**
 * Queue `mod` for ptxas for every arch of {@link archsFor}; the test file fails with ptxas's
 * message if any is refused (assembled in merged batches after the file's tests: see
 * test/util/ptxas-deferred.ts).
 */
export function assemble(mod: PtxModule): PtxModule {
  for (const arch of archsFor(mod.target)) assembleLater(mod.text, arch, mod.entry);
  return mod;
}

/** `compileToPtx` then {@link assemble}. */
export function build(fn: PrimFunc, opts?: PtxOptions): PtxModule {
  return assemble(compileToPtx(fn, opts));
}

/** Number of lines of `text` whose instruction (after an optional guard) starts with `prefix`. */
export function count(text: string, prefix: string): number {
  return text
    .split("\n")
    .map((l) => l.trim().replace(/^@!?%p\d+\s+/, ""))
    .filter((l) => l.startsWith(prefix)).length;
}
