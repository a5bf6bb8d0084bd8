import { bufferName } from "../../buffer-name.js";
import { TirxError } from "../../diagnostics.js";
import { constInt, type Expr } from "../../ir/expr.js";
import { swizzleModeOf, type SwizzleModeNumber } from "../../layout/swizzle.js";
import type { Span } from "../../span.js";
import { staticArg, valueArg } from "../define.js";
import type { OpDef } from "../op.js";

/**
 * The fields of a wgmma shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format" of
 * the asynchronous warpgroup-level matrix instructions): a 64-bit value with the start address
 * >> 4 in bits 0–13, the leading-dimension byte offset >> 4 in bits 16–29, the stride-dimension
 * byte offset >> 4 in bits 32–45, the matrix base offset in bits 49–51 (0 here: tiles start on
 * their swizzle period) and the swizzle in bits 62–63 (0 none, 1 128B, 2 64B, 3 32B).
 * `swizzle` here uses TMA's numbering (`SwizzleModeNumber`: 0 none, 1 32B, 2 64B, 3 128B), the
 * numbering of `T.swizzle_mode` and of tensor maps, and is converted to the descriptor's.
 */
export interface MatrixDescriptor {
  /** Shared-window byte address of the matrix's first core matrix (multiple of 16, < 2^18). */
  readonly addr: number;
  /** Leading-dimension byte offset (multiple of 16, < 2^18): between core matrices along K for
   * no-swizzle layouts (K- or MN-major); unused (conventionally 16) for swizzled K-major layouts;
   * between swizzle atoms along M/N for swizzled MN-major layouts. */
  readonly ldo: number;
  /** Stride-dimension byte offset (multiple of 16, < 2^18): between 8-row groups along M/N for
   * K-major and no-swizzle layouts; between 8-deep k groups for swizzled MN-major layouts. */
  readonly sdo: number;
  readonly swizzle: SwizzleModeNumber;
}

/** Descriptor bits 62–63 for a TMA-numbered swizzle mode, and back (both involutions of 1↔3). */
const DESC_SWIZZLE = [0, 3, 2, 1] as const;

/** The 64-bit descriptor of `d` (fields masked to their widths, as the hardware reads them). */
export function encodeMatrixDescriptor(d: MatrixDescriptor): bigint {
  return (
    BigInt((d.addr & 0x3ffff) >>> 4) |
    (BigInt((d.ldo & 0x3ffff) >>> 4) << 16n) |
    (BigInt((d.sdo & 0x3ffff) >>> 4) << 32n) |
    (BigInt(DESC_SWIZZLE[d.swizzle]) << 62n)
  );
}

/** The fields of a 64-bit descriptor (the inverse of {@link encodeMatrixDescriptor}). */
export function decodeMatrixDescriptor(desc: bigint): MatrixDescriptor {
  const f = (shift: bigint): number => Number((desc >> shift) & 0x3fffn) << 4;
  return {
    addr: f(0n),
    ldo: f(16n),
    sdo: f(32n),
    swizzle: DESC_SWIZZLE[Number((desc >> 62n) & 3n)]!,
  };
}

/** The constant high part of a descriptor (everything but the start address). */
export function descriptorConstBits(ldo: number, sdo: number, swizzle: SwizzleModeNumber): bigint {
  return encodeMatrixDescriptor({ addr: 0, ldo, sdo, swizzle });
}

const MAX_OFFSET = 0x3fff0;

function checkDescriptor(args: readonly Expr[], span?: Span): void {
  const [, ldo, sdo, sw] = args.map((a) => constInt(a));
  const a0 = args[0]!;
  for (const [name, v] of [
    ["ldo", ldo],
    ["sdo", sdo],
  ] as const) {
    if (v === undefined || v % 16 !== 0) {
      throw new TirxError(
        "TX7007",
        `${name} of T.ptx.wgmma.encode_matrix_descriptor must be a static byte offset, a multiple of 16 in 0..${MAX_OFFSET}; got ${v ?? "a runtime value"}`,
        span,
      );
    }
  }
  if (
    a0.kind !== "BufferPtr" ||
    (a0.buffer.scope !== "shared" && a0.buffer.scope !== "shared.dyn")
  ) {
    throw new TirxError(
      "TX7007",
      `the address of T.ptx.wgmma.encode_matrix_descriptor must be an element of a shared buffer (smem.ptr([i]))`,
      a0.span ?? span,
    );
  }
  const b = a0.buffer;
  const want = b.layout ? swizzleModeOf(b.layout) : 0;
  if (want === undefined) {
    throw new TirxError(
      "TX7007",
      `${bufferName(b)} has a swizzle layout that is none of wgmma's (T.swizzle_mode("32B" | "64B" | "128B")); a descriptor cannot describe it`,
      a0.span ?? span,
    );
  }
  if (want !== sw) {
    const name = (m: number): string => (m === 0 ? "none" : `${16 << m}B`);
    throw new TirxError(
      "TX7007",
      `the descriptor's swizzle (${sw}: ${name(sw!)}) disagrees with the layout of ${bufferName(b)} (${want}: ${name(want)}); wgmma would read other bytes than the ones the buffer's accesses write`,
      a0.span ?? span,
      b.span ? [{ message: `${bufferName(b)} is allocated here`, span: b.span }] : [],
    );
  }
  const period = want === 0 ? 16 : 128 << want;
  if (b.align < period) {
    throw new TirxError(
      "TX7007",
      `${bufferName(b)} is aligned to ${b.align} bytes; a ${want === 0 ? "wgmma operand" : "swizzled wgmma operand"} needs ${period}`,
      a0.span ?? span,
    );
  }
}

/**
 * `T.ptx.wgmma.encode_matrix_descriptor(addr, ldo, sdo, swizzle)` → uint64 (TIRx
 * `wgmma_encode_matrix_descriptor`): `addr` is `smem.ptr([i])` (uint32 shared address), `ldo`
 * and `sdo` static byte offsets, `swizzle` the static TMA-numbered mode, which must equal the
 * shared buffer's layout (`T.swizzle_mode`, or 0 for an unswizzled buffer).
 * Lowering: `and`/`shr` the address into bits 0–13, `cvt.u64.u32`, `or.b64` the constant fields.
 * @throws TirxError TX7007 (offsets, address, swizzle disagreeing with the layout, alignment).
 */
export const WGMMA_DESCRIPTOR_OP: OpDef = {
  name: "wgmma.encode_matrix_descriptor",
  family: "wgmma",
  surface: "T.ptx.wgmma.encode_matrix_descriptor",
  form: "value",
  operands: [
    valueArg("addr", ["uint32"]),
    staticArg("ldo", 0, MAX_OFFSET, "TX7007"),
    staticArg("sdo", 0, MAX_OFFSET, "TX7007"),
    staticArg("swizzle", 0, 3, "TX7007"),
  ],
  result: () => "uint64",
  // Not a pure function of plain values (its first operand is an address): no generic cases.
  signatures: [],
  sm: 90,
  ptx: [8, 0],
  source: "PTX ISA, wgmma: Matrix Descriptor Format",
  archCode: "TX7006",
  check: checkDescriptor,
  lower: (c, d, ops) => {
    const [addr, ldo, sdo, sw] = ops;
    const hi = descriptorConstBits(Number(ldo), Number(sdo), Number(sw) as SwizzleModeNumber);
    const t = c.tmp("uint32");
    c.ins(`and.b32 ${t}, ${c.toReg(addr!, "uint32")}, 262143`);
    c.ins(`shr.u32 ${t}, ${t}, 4`);
    c.ins(`cvt.u64.u32 ${d}, ${t}`);
    if (hi !== 0n) c.ins(`or.b64 ${d}, ${d}, 0x${hi.toString(16).padStart(16, "0")}`);
  },
  sim: {
    kind: "thread",
    make: () => (addr, ldo, sdo, sw) =>
      encodeMatrixDescriptor({
        addr: Number(addr),
        ldo: Number(ldo),
        sdo: Number(sdo),
        swizzle: Number(sw) as SwizzleModeNumber,
      }),
  },
};

/**
 * `T.ptx.wgmma.advance_descriptor(desc, n)` → uint64: the descriptor `desc` (uint64, as from
 * {@link WGMMA_DESCRIPTOR_OP}) with `n` (uint32, in 16-byte units) added to its low 32 bits and
 * its high 32 bits unchanged: `{lo + n (mod 2^32), hi}`. While the start address field (bits
 * 0–13, address >> 4) does not overflow, which holds for any start inside one shared buffer (a
 * `.shared::cta` address is below 2^18), that is the descriptor of the matrix `16 · n` bytes
 * further on with the same offsets and swizzle (PTX ISA, wgmma: Matrix Descriptor Format; the
 * way CUTLASS's GmmaDescriptor iterator advances, on the low word).
 * Lowering: `mov.b64 {lo, hi}, desc`, `add.u32 lo, lo, n`, `mov.b64 d, {lo, hi}`. ptxas keeps
 * that one 32-bit add, where an `add.u64` costs a 64-bit add with its carry and the register
 * moves of the pair (per wgmma of the FlashAttention forward: IADD3, IMAD.X and two IMAD.MOV
 * before the R2UR).
 * @throws TirxError TX2005 for operands other than (uint64, uint32); TX7006 below sm_90.
 */
export const WGMMA_ADVANCE_DESCRIPTOR_OP: OpDef = {
  name: "wgmma.advance_descriptor",
  family: "wgmma",
  surface: "T.ptx.wgmma.advance_descriptor",
  form: "value",
  operands: [valueArg("desc", ["uint64"]), valueArg("n", ["uint32"])],
  result: () => "uint64",
  signatures: [["uint64", "uint32"]],
  sm: 90,
  ptx: [8, 0],
  source: "PTX ISA, wgmma: Matrix Descriptor Format (start address in bits 0–13); mov (b64 pairs)",
  archCode: "TX7006",
  lower: (c, d, ops) => {
    const lo = c.tmp("uint32");
    const hi = c.tmp("uint32");
    c.ins(`mov.b64 {${lo}, ${hi}}, ${c.toReg(ops[0]!, "uint64")}`);
    c.ins(`add.u32 ${lo}, ${lo}, ${ops[1]!}`);
    c.ins(`mov.b64 ${d}, {${lo}, ${hi}}`);
  },
  sim: {
    kind: "thread",
    make: () => (desc, n) => advanceDescriptor(BigInt(desc), Number(n)),
  },
};

/** `desc` with `n` added to its low 32 bits (mod 2^32), the high 32 bits kept. */
export function advanceDescriptor(desc: bigint, n: number): bigint {
  const LOW = 0xffffffffn;
  return (desc & ~LOW & 0xffffffffffffffffn) | ((desc + BigInt(n >>> 0)) & LOW);
}
