import {
  findOp,
  TILE_OPS,
  tileOpOf,
  TirxError,
  stmtExprs,
  walkExpr,
  walkStmt,
  type DiagnosticCode,
  type Stmt,
  type VerifiedFunc,
} from "@tirx-ts/core";

/** A PTX ISA version as `[major, minor]`. */
export type PtxVersion = readonly [number, number];

/**
 * A compilation target: its `.target` name, sm number, the lowest PTX ISA that names it, and the
 * shared memory a CTA may have there (static and dynamic, bytes).
 */
export interface Arch {
  readonly name: string;
  readonly sm: number;
  readonly minPtx: PtxVersion;
  readonly sharedPerCta: number;
}

/**
 * Targets codegen accepts, with the lowest `.version` that knows each (PTX ISA "Release notes";
 * checked with ptxas 13.0) and the maximum shared memory per thread block (CUDA C++ Programming
 * Guide, "Features and Technical Specifications": 163 KB on 8.0 and 8.7, 99 KB on 8.6 and 8.9,
 * 227 KB on 9.0). sm_80 is the floor: everything below lacks cp.async.
 */
export const ARCHS: readonly Arch[] = [
  { name: "sm_80", sm: 80, minPtx: [7, 0], sharedPerCta: 163 * 1024 },
  { name: "sm_86", sm: 86, minPtx: [7, 1], sharedPerCta: 99 * 1024 },
  { name: "sm_87", sm: 87, minPtx: [7, 4], sharedPerCta: 163 * 1024 },
  { name: "sm_89", sm: 89, minPtx: [7, 8], sharedPerCta: 99 * 1024 },
  { name: "sm_90", sm: 90, minPtx: [7, 8], sharedPerCta: 227 * 1024 },
  { name: "sm_90a", sm: 90, minPtx: [8, 0], sharedPerCta: 227 * 1024 },
];

/** The shared memory `vf`'s CTA uses: static buffers and the launch's dynamic bytes. */
export function sharedBytesOf(vf: VerifiedFunc): number {
  return vf.staticSharedBytes + vf.launch.dynamicSharedBytes;
}

/**
 * The oldest target (PTX ISA, cp.async: sm_80), which a kernel of cp.async and plain arithmetic
 * gets by default; kernels with newer instructions default to what they need (`defaultArch`).
 */
export const DEFAULT_ARCH = "sm_80";

/**
 * A hardware feature gated on the sm target, recognised by the PTX spelling of an instruction
 * (a `tile.apply` opcode, a `Call` op or a value intrinsic's op).
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
 * family first. Ops (intrinsic calls) carry their own target in the op table (`OpDef.sm`,
 * `archCode`).
 */
export const FEATURES: readonly Feature[] = TILE_OPS.map((op) => ({
  name: op.family,
  minSm: op.sm,
  code: op.archCode,
  source: op.source,
  matches: (opcode: string) => tileOpOf(opcode) === op,
}));

/** The target requirement of each instruction a statement uses directly. */
function requirementsOf(
  s: Stmt,
): { instr: string; minSm: number; code: DiagnosticCode; specific?: boolean }[] {
  const out: { instr: string; minSm: number; code: DiagnosticCode; specific?: boolean }[] = [];
  const opcode = s.kind === "TileApply" ? s.opcode : s.kind === "TileOp" ? s.source.opcode : "";
  const f = opcode ? FEATURES.find((x) => x.matches(opcode)) : undefined;
  if (f) out.push({ instr: opcode, minSm: f.minSm, code: f.code });
  const addOp = (name: string): void => {
    const op = findOp(name);
    if (op) {
      out.push({
        instr: name,
        minSm: op.sm,
        code: op.archCode ?? "TX5006",
        ...(op.archSpecific ? { specific: true } : {}),
      });
    }
  };
  if (s.kind === "Call") addOp(s.op);
  for (const e of stmtExprs(s)) {
    walkExpr(e, (x) => {
      if (x.kind === "CallExpr") addOp(x.op);
    });
  }
  return out;
}

const fmt = (v: PtxVersion): string => `${v[0]}.${v[1]}`;

/** The later of two PTX versions. */
export function maxVersion(a: PtxVersion, b: PtxVersion): PtxVersion {
  return a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]) ? a : b;
}

/** `"7.0"`-style text of a version. */
export const formatVersion = fmt;

/**
 * The note of a too-old-target refusal: compile for {@link requiredArch}`(vf)`, the lowest target
 * covering every instruction of the kernel (with the API option and the command-line flag).
 */
function useTarget(vf: VerifiedFunc): { message: string } {
  const need = requiredArch(vf).name;
  const only = need.endsWith("a") ? `; ${need} code runs only on ${need.slice(0, -1)} devices` : "";
  return {
    message: `compile with { target: "cuda", arch: "${need}" } (command line: --arch ${need})${only}`,
  };
}

/**
 * Resolve `arch` for `vf`: the first statement (in program order) using a feature newer than the
 * target gets that feature's error, naming the instruction, the target and the author's span;
 * otherwise an arch outside {@link ARCHS} is refused. A refusal for a too-old target has a note
 * naming the target the whole kernel needs ({@link requiredArch}), not just that statement's, so
 * that following it compiles (an sm_80 refusal of a wgmma kernel whose first newer statement is an
 * sm_90 mbarrier suggests sm_90a, not sm_90).
 * @throws TirxError TX3023 (cp.async below sm_80), the code of any later feature, TX5006 (unknown
 *   or unsupported arch, or a function needing a newer sm than asked), TX2008 (more shared memory
 *   than a CTA has on `arch`).
 */
export function resolveArch(arch: string, vf: VerifiedFunc): Arch {
  const accepted = ARCHS.map((a) => a.name).join(", ");
  const m = /^sm_(\d+)a?$/.exec(arch);
  if (!m) {
    throw new TirxError("TX5006", `unknown target "${arch}"; accepted targets: ${accepted}`);
  }
  const sm = Number(m[1]);
  const specific = arch.endsWith("a");
  // A feature error says more than "unsupported arch", so it comes first.
  walkStmt(vf.entry.body, (s) => {
    for (const f of requirementsOf(s)) {
      const instr = f.instr;
      if (f.specific && (sm !== f.minSm || !specific)) {
        throw new TirxError(
          f.code,
          `${instr} needs the architecture-specific target sm_${f.minSm}a, but the target is ${arch}`,
          s.span ?? vf.fn.span,
          [useTarget(vf)],
        );
      }
      if (sm < f.minSm) {
        throw new TirxError(
          f.code,
          `${instr} needs sm_${f.minSm} or newer, but the target is ${arch}`,
          s.span ?? vf.fn.span,
          [useTarget(vf)],
        );
      }
    }
  });
  if (!arch.endsWith("a")) checkArchSpecific(arch, vf);
  const found = ARCHS.find((a) => a.name === arch);
  if (!found) {
    throw new TirxError("TX5006", `unsupported target "${arch}"; accepted targets: ${accepted}`);
  }
  if (vf.minSm > found.sm) {
    throw new TirxError(
      "TX5006",
      `kernel "${vf.fn.name}" needs sm_${vf.minSm} or newer, but the target is ${arch}`,
      vf.fn.span,
      [useTarget(vf)],
    );
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
 * The lowest target of {@link ARCHS} whose features cover `vf`: the highest `sm` any instruction
 * (op table `OpDef.sm`, tile ops' `sm`) or the launch (clusters: sm_90) needs, at least sm_80,
 * and the architecture-specific variant (`sm_90a`) when an instruction exists only there (wgmma,
 * setmaxnreg, TMA multicast). A kernel no target covers (an `a`-only instruction with a newer
 * one) gets the `a` target it names, which {@link resolveArch} then refuses with that error.
 * @example requiredArch(verify(gemmHopper)).name; // "sm_90a"
 */
export function requiredArch(vf: VerifiedFunc): Arch {
  let sm = Math.max(vf.minSm, ARCHS[0]!.sm);
  let specific = -1;
  walkStmt(vf.entry.body, (s) => {
    for (const f of requirementsOf(s)) {
      sm = Math.max(sm, f.minSm);
      if (f.specific) specific = f.minSm;
    }
    const opcode = s.kind === "TileApply" ? s.opcode : s.kind === "TileOp" ? s.source.opcode : "";
    if (opcode.startsWith("cp.async.bulk.tensor.") && opcode.includes(".multicast::cluster")) {
      specific = 90;
    }
  });
  if (specific >= 0) {
    return ARCHS.find((a) => a.name === `sm_${specific}a`) ?? ARCHS[ARCHS.length - 1]!;
  }
  // The lowest target that also holds the CTA's shared memory (sm_90 past 163 KiB).
  const shared = sharedBytesOf(vf);
  return (
    ARCHS.find((a) => a.sm >= sm && !a.name.endsWith("a") && a.sharedPerCta >= shared) ??
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
  const b = ARCHS.find((a) => a.name === base);
  if (b && b.sm === need.sm && need.name.endsWith("a")) return need.name;
  return base;
}

/**
 * Instructions that only the architecture-specific target (`sm_90a`) has: TMA multicast (CCCL's
 * `cp_async_bulk_tensor_multicast` changelog: "enabled for SM_90a"; PTX ISA: multicast::cluster
 * "optimized for target architecture sm_90a").
 * @throws TirxError TX4022 at the first such statement.
 */
function checkArchSpecific(arch: string, vf: VerifiedFunc): void {
  walkStmt(vf.entry.body, (s) => {
    const opcode = s.kind === "TileApply" ? s.opcode : s.kind === "TileOp" ? s.source.opcode : "";
    if (opcode.startsWith("cp.async.bulk.tensor.") && opcode.includes(".multicast::cluster")) {
      throw new TirxError(
        "TX4022",
        `${opcode} needs the architecture-specific target sm_90a, but the target is ${arch}`,
        s.span ?? vf.fn.span,
        [useTarget(vf)],
      );
    }
  });
}

/**
 * The `.version` of a module: the lowest PTX ISA covering the features used (`vf.ptxVersion`:
 * cp.async 7.0, L2 qualifiers 7.4, ignore-src 7.5, mbarrier `::cta` spellings 7.8, cp.async.bulk
 * 8.0, bulk destination `.shared::cta` 8.6) and the target (sm_86 needs 7.1, ...).
 */
export function ptxVersionFor(vf: VerifiedFunc, arch: Arch): string {
  return fmt(maxVersion(vf.ptxVersion, arch.minPtx));
}
