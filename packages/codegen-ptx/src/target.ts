import {
  archNamed,
  ARCHS,
  formatVersion,
  maxVersion,
  parseArch,
  TILE_OPS,
  tileOpOf,
  TirxError,
  type Arch,
  type DiagnosticCode,
  type VerifiedFunc,
} from "@tirx-ts/core";

/** The shared memory `vf`'s CTA uses: static buffers and the launch's dynamic bytes. */
export function sharedBytesOf(vf: VerifiedFunc): number {
  return vf.staticSharedBytes + vf.launch.dynamicSharedBytes;
}

/**
 * A tile-op family gated on the sm target, as core's tile-op table (`TILE_OPS`) gives it, with
 * a test of whether an opcode belongs to it (the table's lookup, most specific family first).
 */
export interface Feature {
  readonly name: string;
  readonly minSm: number;
  readonly code: DiagnosticCode;
  /** Where the rule comes from. */
  readonly source: string;
  readonly matches: (instruction: string) => boolean;
}

/**
 * Tile patterns gated on the sm target, from core's tile-op table (`TILE_OPS`), most specific
 * family first: a view of the table for docs and tests. Targets are checked against the
 * requirements the verifier recorded (`VerifiedFunc.requirements`), not against this list.
 */
export const FEATURES: readonly Feature[] = TILE_OPS.map((op) => ({
  name: op.family,
  minSm: op.sm,
  code: op.archCode,
  source: op.source,
  matches: (opcode: string) => tileOpOf(opcode) === op,
}));

/**
 * The note of a too-old-target refusal: compile for {@link requiredArch}`(vf)`, the lowest target
 * covering every requirement of the kernel (with the API option and the command-line flag).
 */
function useTarget(vf: VerifiedFunc): { message: string } {
  const need = requiredArch(vf);
  const only = need.archSpecific ? `; ${need.name} code runs only on sm_${need.sm} devices` : "";
  return {
    message: `compile with { target: "cuda", arch: "${need.name}" } (command line: --arch ${need.name})${only}`,
  };
}

/**
 * Resolve `arch` for `vf` by comparing it with `vf.requirements`: the first instruction (in
 * program order) newer than the target, or needing the architecture-specific target `arch` is
 * not, gets its record's code, naming the instruction, the target and the author's span; then
 * the first qualifier only an architecture-specific target has (TMA multicast: TX4022), when
 * `arch` is not one; otherwise an arch outside {@link ARCHS} is refused, then a launch newer than
 * it (clusters). A refusal for a too-old target has a note naming the target the whole kernel
 * needs ({@link requiredArch}), not just that statement's, so that following it compiles (an
 * sm_80 refusal of a wgmma kernel whose first newer statement is an sm_90 mbarrier suggests
 * sm_90a, not sm_90).
 * @throws TirxError TX3023 (cp.async below sm_80), the code of any later feature, TX5006 (unknown
 *   or unsupported arch, or a function needing a newer sm than asked), TX2008 (more shared memory
 *   than a CTA has on `arch`).
 */
export function resolveArch(arch: string, vf: VerifiedFunc): Arch {
  const accepted = ARCHS.map((a) => a.name).join(", ");
  const target = parseArch(arch);
  if (!target) {
    throw new TirxError("TX5006", `unknown target "${arch}"; accepted targets: ${accepted}`);
  }
  // A feature error says more than "unsupported arch", so it comes first.
  for (const r of vf.requirements) {
    if (r.kind !== "instruction") continue;
    if (r.archSpecific && (target.sm !== r.sm || !target.archSpecific)) {
      throw new TirxError(
        r.code,
        `${r.instr} needs the architecture-specific target sm_${r.sm}a, but the target is ${arch}`,
        r.span ?? vf.fn.span,
        [useTarget(vf)],
      );
    }
    if (target.sm < r.sm) {
      throw new TirxError(
        r.code,
        `${r.instr} needs sm_${r.sm} or newer, but the target is ${arch}`,
        r.span ?? vf.fn.span,
        [useTarget(vf)],
      );
    }
  }
  if (!target.archSpecific) {
    const q = vf.requirements.find((r) => r.kind === "qualifier");
    if (q) {
      throw new TirxError(
        q.code,
        `${q.instr} needs the architecture-specific target sm_${q.sm}a, but the target is ${arch}`,
        q.span ?? vf.fn.span,
        [useTarget(vf)],
      );
    }
  }
  const found = archNamed(arch);
  if (!found) {
    throw new TirxError("TX5006", `unsupported target "${arch}"; accepted targets: ${accepted}`);
  }
  for (const r of vf.requirements) {
    if (r.kind === "launch" && r.sm > found.sm) {
      throw new TirxError(
        r.code,
        `kernel "${vf.fn.name}" needs sm_${r.sm} or newer, but the target is ${arch}`,
        vf.fn.span,
        [useTarget(vf)],
      );
    }
  }
  const shared = sharedBytesOf(vf);
  if (shared > found.sharedPerCta) {
    throw new TirxError(
      "TX2008",
      `the CTA's shared memory is ${shared} bytes, but a CTA on ${arch} has at most ${found.sharedPerCta}`,
      vf.entry.span ?? vf.fn.span,
      [useTarget(vf)],
    );
  }
  return found;
}

/**
 * The lowest target of {@link ARCHS} covering `vf.requirements`: the highest `sm` any
 * requirement names (op records' `sm`, tile ops' `sm`, clusters: sm_90), at least sm_80, and the
 * architecture-specific variant (`sm_90a`) when a requirement exists only there (wgmma,
 * setmaxnreg, TMA multicast). A kernel no target covers (an `a`-only instruction with a newer
 * one) gets the `a` target it names, which {@link resolveArch} then refuses with that error.
 * @example requiredArch(verify(gemmHopper)).name; // "sm_90a"
 */
export function requiredArch(vf: VerifiedFunc): Arch {
  let sm = ARCHS[0]!.sm;
  let specific = -1;
  for (const r of vf.requirements) {
    sm = Math.max(sm, r.sm);
    if (r.archSpecific) specific = r.sm;
  }
  if (specific >= 0) {
    return ARCHS.find((a) => a.sm === specific && a.archSpecific) ?? ARCHS[ARCHS.length - 1]!;
  }
  // The lowest target that also holds the CTA's shared memory (sm_90 past 163 KiB).
  const shared = sharedBytesOf(vf);
  return (
    ARCHS.find((a) => a.sm >= sm && !a.archSpecific && a.sharedPerCta >= shared) ??
    ARCHS[ARCHS.length - 1]!
  );
}

/**
 * The target `vf` compiles for when the caller names none. `base` is the preferred target (a
 * GPU's own, from its compute capability); without it, {@link requiredArch}. A base of the same
 * sm as the kernel's need is raised to it (an sm_90 GPU and a wgmma kernel: sm_90a); a base below
 * the need is kept, so that {@link resolveArch} reports the instruction the GPU lacks.
 */
export function defaultArch(vf: VerifiedFunc, base?: string): string {
  const need = requiredArch(vf);
  if (base === undefined) return need.name;
  const b = archNamed(base);
  if (b && b.sm === need.sm && need.archSpecific) return need.name;
  return base;
}

/**
 * The `.version` of a module: the lowest PTX ISA covering the features used (`vf.ptxVersion`:
 * cp.async 7.0, L2 qualifiers 7.4, ignore-src 7.5, mbarrier `::cta` spellings 7.8, cp.async.bulk
 * 8.0, bulk destination `.shared::cta` 8.6) and the target (sm_86 needs 7.1, ...).
 */
export function ptxVersionFor(vf: VerifiedFunc, arch: Arch): string {
  return formatVersion(maxVersion(vf.ptxVersion, arch.minPtx));
}
