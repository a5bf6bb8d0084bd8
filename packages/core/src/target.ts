import type { DiagnosticCode } from "./catalog.js";
import { invariant } from "./invariant.js";
import type { Span } from "./span.js";

/**
 * The target contract: PTX ISA versions, the sm targets tirx-ts compiles for, the parse of a
 * target name, and the requirements a verified kernel places on its target. The verifier records
 * the requirements from the op and tile-op records (`VerifiedFunc.requirements`); codegen, the
 * runtimes and the CLI compare targets against them. A leaf module (it imports only types and
 * `invariant`), so that every IR and record module may use it.
 */

/** A PTX ISA version as `[major, minor]`. */
export type PtxVersion = readonly [number, number];

/** The later of two PTX versions. */
export function maxVersion(a: PtxVersion, b: PtxVersion): PtxVersion {
  return a[0] > b[0] || (a[0] === b[0] && a[1] >= b[1]) ? a : b;
}

/** `"7.0"`-style text of a version, as `.version` spells it. */
export function formatVersion(v: PtxVersion): string {
  return `${v[0]}.${v[1]}`;
}

/**
 * A target name taken apart: `sm_90a` is `{ name: "sm_90a", sm: 90, archSpecific: true }`.
 * `archSpecific` is the `a` suffix: the architecture-specific target, whose code runs only on
 * devices of exactly that sm and which alone has some instructions (PTX ISA, "Architecture-specific
 * features": wgmma, setmaxnreg; TMA multicast).
 */
export interface ParsedArch {
  readonly name: string;
  readonly sm: number;
  readonly archSpecific: boolean;
}

/**
 * Parse a target name of the form `sm_<digits>` or `sm_<digits>a` (PTX ISA, `.target`); any other
 * text is undefined. The name need not be one tirx-ts accepts (`sm_75` parses; see {@link ARCHS}).
 * @example parseArch("sm_90a"); // { name: "sm_90a", sm: 90, archSpecific: true }
 */
export function parseArch(name: string): ParsedArch | undefined {
  const m = /^sm_(\d+)(a?)$/.exec(name);
  if (!m) return undefined;
  return { name, sm: Number(m[1]), archSpecific: m[2] === "a" };
}

/**
 * A compilation target: its parsed name, the lowest PTX ISA that names it, and the shared memory
 * a CTA may have there (static and dynamic, bytes).
 */
export interface Arch extends ParsedArch {
  readonly minPtx: PtxVersion;
  readonly sharedPerCta: number;
}

const arch = (name: string, minPtx: PtxVersion, sharedKiB: number): Arch => {
  const parsed = parseArch(name);
  invariant(parsed, `target table entry ${name}`);
  return { ...parsed, minPtx, sharedPerCta: sharedKiB * 1024 };
};

/**
 * Targets tirx-ts compiles for, lowest first, with the lowest `.version` that knows each (PTX ISA
 * "Release notes"; checked with ptxas 13.0) and the maximum shared memory per thread block (CUDA
 * C++ Programming Guide, "Features and Technical Specifications": 163 KB on 8.0 and 8.7, 99 KB on
 * 8.6 and 8.9, 227 KB on 9.0). sm_80 is the floor: everything below lacks cp.async.
 */
export const ARCHS: readonly Arch[] = [
  arch("sm_80", [7, 0], 163),
  arch("sm_86", [7, 1], 99),
  arch("sm_87", [7, 4], 163),
  arch("sm_89", [7, 8], 99),
  arch("sm_90", [7, 8], 227),
  arch("sm_90a", [8, 0], 227),
];

/** The target of {@link ARCHS} named `name`, or undefined. */
export function archNamed(name: string): Arch | undefined {
  return ARCHS.find((a) => a.name === name);
}

/**
 * The oldest target (PTX ISA, cp.async: sm_80), which a kernel of cp.async and plain arithmetic
 * gets by default; kernels with newer instructions default to what they need.
 */
export const DEFAULT_ARCH = "sm_80";

/**
 * The portable (not architecture-specific) target of {@link ARCHS} for a device of compute
 * capability `sm` (major·10 + minor): its own, or for a device no target names, the newest one
 * below it (PTX for an older target is JIT-compiled forward by the driver), at least sm_80.
 */
export function archForSm(sm: number): Arch {
  const exact = ARCHS.find((a) => a.sm === sm && !a.archSpecific);
  if (exact) return exact;
  let best = ARCHS[0]!;
  for (const a of ARCHS) if (!a.archSpecific && a.sm <= sm && a.sm >= best.sm) best = a;
  return best;
}

/**
 * One thing a verified kernel needs of its target, recorded by the verifier from an op record
 * (`OpDef.sm`, `ptx`, `archCode`, `archSpecific`, `registerCap`), a tile-op record (`TileOpDef`,
 * its plan's version and arch-specific qualifiers) or the launch (clusters).
 * - `instruction`: an instruction (op or tile opcode) that needs sm ≥ `sm`, or with
 *   `archSpecific` exactly `sm_{sm}a` (wgmma, setmaxnreg);
 * - `qualifier`: a qualifier of an instruction whose family the target has, which only the
 *   architecture-specific target has (`.multicast::cluster` of TMA: sm_90a);
 * - `launch`: the launch configuration (`.reqnctapercluster` and the cluster registers: sm_90).
 */
export interface Requirement {
  readonly kind: "instruction" | "qualifier" | "launch";
  /** The instruction as PTX spells it (an op's name, a tile opcode); empty for the launch. */
  readonly instr: string;
  /** The lowest sm target. */
  readonly sm: number;
  /** The lowest PTX ISA version. */
  readonly ptx: PtxVersion;
  /** Only the architecture-specific target `sm_{sm}a` has it. */
  readonly archSpecific: boolean;
  /** The code of a target that lacks it (TX3023 cp.async, TX4007 sm_90 features, TX5006, ...). */
  readonly code: DiagnosticCode;
  /** Where the rule comes from. */
  readonly source: string;
  /** The statement (or entry) that needs it. */
  readonly span?: Span;
  /**
   * The kernel entry must declare a register cap (`.maxntid` with `.minnctapersm 1`, as
   * `__launch_bounds__(threads, 1)` gives): setmaxnreg is honoured only under one (ptxas C7508).
   */
  readonly registerCap?: true;
}
