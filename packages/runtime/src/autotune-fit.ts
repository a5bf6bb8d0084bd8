import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * 32-bit registers one thread block may hold: 64 K on compute capability 5.0 through 9.0 (CUDA
 * C++ Programming Guide, "Features and Technical Specifications", "Maximum number of 32-bit
 * registers per thread block").
 */
export const REGISTERS_PER_BLOCK = 65536;

/**
 * Registers are allocated to a warp in units of 256 (CUDA Occupancy Calculator, "Register
 * allocation unit size", compute capability 5.0 through 9.0).
 */
const REGISTER_UNIT = 256;

/** What `ptxas -v` reports of one kernel entry. */
export interface PtxasUsage {
  /** 32-bit registers per thread ("Used N registers"). */
  readonly registers: number;
  /** Bytes of local-memory spill stores and loads ("N bytes spill stores, M bytes spill loads"). */
  readonly spillStores: number;
  readonly spillLoads: number;
}

/**
 * The register and spill figures of `ptxas -v`'s report (its stderr, e.g. "ptxas info : Used 10
 * registers, used 0 barriers, 512 bytes smem, 360 bytes cmem[0]" and "0 bytes stack frame, 0
 * bytes spill stores, 0 bytes spill loads"), for a module of one entry: undefined when the text
 * has no "Used N registers" line.
 * @example parsePtxasUsage("ptxas info    : Used 10 registers, used 0 barriers"); // { registers: 10, spillStores: 0, spillLoads: 0 }
 */
export function parsePtxasUsage(text: string): PtxasUsage | undefined {
  const regs = /Used (\d+) registers/.exec(text);
  if (!regs) return undefined;
  const spills = /(\d+) bytes spill stores, (\d+) bytes spill loads/.exec(text);
  return {
    registers: Number(regs[1]),
    spillStores: spills ? Number(spills[1]) : 0,
    spillLoads: spills ? Number(spills[2]) : 0,
  };
}

/**
 * Assemble `ptx` with `ptxas -v -arch=<arch>` (the toolkit's ptxas at `ptxas`, as runtime-cuda's
 * `findPtxas` finds it; no GPU needed) and read its report (`parsePtxasUsage`); once per
 * process for each ptxas, arch and PTX text.
 * @returns undefined when ptxas refuses the module or prints no usage line: the candidate then
 *   goes unchecked for registers here (the driver's load or launch reports what does not fit).
 */
export function ptxasUsage(ptxas: string, ptx: string, arch: string): PtxasUsage | undefined {
  const key = `${ptxas}|${arch}|${createHash("sha256").update(ptx).digest("hex")}`;
  if (USAGE.has(key)) return USAGE.get(key);
  const usage = runPtxas(ptxas, ptx, arch);
  USAGE.set(key, usage);
  return usage;
}

/** `ptxasUsage`'s answers in this process, by ptxas, arch and PTX hash. */
const USAGE = new Map<string, PtxasUsage | undefined>();

function runPtxas(ptxas: string, ptx: string, arch: string): PtxasUsage | undefined {
  const dir = mkdtempSync(join(tmpdir(), "tirx-autotune-"));
  try {
    const src = join(dir, "k.ptx");
    writeFileSync(src, ptx);
    const r = spawnSync(ptxas, ["-v", `-arch=${arch}`, "-o", join(dir, "k.cubin"), src], {
      encoding: "utf8",
    });
    if (r.status !== 0) return undefined;
    return parsePtxasUsage(`${r.stderr ?? ""}\n${r.stdout ?? ""}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Registers a thread block of `threads` threads at `registers` registers per thread takes from
 * the SM's register file: each warp (threads rounded up to whole warps of 32) gets
 * `registers × 32` rounded up to the allocation unit of 256 (CUDA Occupancy Calculator). Compare
 * with {@link REGISTERS_PER_BLOCK}.
 * @example registersPerBlock(10, 128); // 4 warps × 512 = 2048
 */
export function registersPerBlock(registers: number, threads: number): number {
  const warps = Math.ceil(threads / 32);
  return warps * Math.ceil((registers * 32) / REGISTER_UNIT) * REGISTER_UNIT;
}
