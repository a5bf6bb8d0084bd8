import { bufferName } from "../buffer-name.js";
import { TirxError } from "../diagnostics.js";
import { dtypeBytes } from "../dtype.js";
import { constInt, type Expr } from "../ir/expr.js";
import { knownDivisor, provableAlignment } from "../analysis/bounds.js";
import { checkMbarrierOperand } from "../patterns/mbarrier.js";
import type { Span } from "../span.js";
import { staticArg, stmtOp, valueArg } from "./define.js";
import type { OpDef } from "./op.js";

/** The IR name (and PTX spelling) of the shared::cta → shared::cluster bulk copy. */
export const DSMEM_COPY = "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes";

/**
 * The largest size of one copy: its bytes complete on one mbarrier phase, whose tx-count lies
 * in [0, 2^20 - 1] (PTX ISA, "mbarrier": "Contents of the mbarrier object", tx-count range),
 * rounded down to a multiple of 16.
 */
const MAX_BYTES = 2 ** 20 - 16;

const isShared = (e: Expr): boolean =>
  e.kind === "BufferPtr" && (e.buffer.scope === "shared" || e.buffer.scope === "shared.dyn");

/**
 * The shared address a `dst` or `mbar` operand names when it is visible in the IR: the
 * `buf.ptr([i])` inside `T.ptx.mapa(buf.ptr([i]), rank)` (with the rank), or a plain
 * `buf.ptr([i])` (the executing CTA's own copy); undefined for any other expression.
 */
function sharedTarget(e: Expr): { ptr: Expr; rank: Expr | undefined } | undefined {
  if (e.kind === "CallExpr" && e.op === "mapa.shared::cluster") {
    return e.args[0]?.kind === "BufferPtr" ? { ptr: e.args[0], rank: e.args[1] } : undefined;
  }
  return e.kind === "BufferPtr" ? { ptr: e, rank: undefined } : undefined;
}

/**
 * TX4004 unless the shared element `ptr` (`what`) is provably 16-byte aligned and its buffer is
 * unswizzled or `ptr` is its first element: a bulk copy moves the bytes from the address on
 * linearly (PTX ISA, cp.async.bulk: "size" bytes; addresses 16-byte aligned).
 */
function checkLinear16(ptr: Expr, what: string, span?: Span): void {
  if (ptr.kind !== "BufferPtr") return;
  const b = ptr.buffer;
  const align = provableAlignment(knownDivisor(ptr.offset) * dtypeBytes(b.dtype), b.align);
  if (align % 16 !== 0) {
    throw new TirxError(
      "TX4004",
      `${what} ${bufferName(b)} is only provably ${align}-byte aligned; a bulk copy needs 16-byte aligned addresses`,
      ptr.span ?? span,
    );
  }
  if (b.layout && constInt(ptr.offset) !== 0) {
    throw new TirxError(
      "TX4004",
      `${what} is an element of the swizzled ${bufferName(b)}, whose bytes do not follow its elements; a bulk copy moves bytes linearly from its address (copy from the buffer's start, or from an unswizzled buffer)`,
      ptr.span ?? span,
    );
  }
}

/**
 * The static contract of a DSMEM copy's operands (dst, src, size, mbar): src an element of a
 * shared buffer (TX4005), 16-byte aligned and linear (TX4004), size a multiple of 16 (TX4003);
 * where dst and mbar are visible `mapa` (or plain `ptr`) addresses: dst a 16-byte aligned shared
 * element (TX4005, TX4004), mbar an mbarrier object (TX4011), and both of the same CTA when
 * their ranks are constants (TX4006). Runtime addresses are the simulator's (TX6005, TX6021,
 * TX6030).
 */
function checkDsmemCopy(args: readonly Expr[], span?: Span): void {
  const [dst, src, size, mbar] = args as [Expr, Expr, Expr, Expr];
  if (!isShared(src)) {
    throw new TirxError(
      "TX4005",
      `the source of ${DSMEM_COPY} is an element of a shared buffer of this CTA (buf.ptr([i]) of T.alloc_shared)`,
      src.span ?? span,
    );
  }
  checkLinear16(src, "the source", span);
  const n = constInt(size)!;
  if (n % 16 !== 0) {
    throw new TirxError(
      "TX4003",
      `the size of ${DSMEM_COPY} must be a multiple of 16 bytes, got ${n}`,
      size.span ?? span,
    );
  }
  const d = sharedTarget(dst);
  if (d) {
    if (!isShared(d.ptr)) {
      throw new TirxError(
        "TX4005",
        `the destination of ${DSMEM_COPY} is a shared::cluster address of shared memory (T.ptx.mapa(buf.ptr([i]), rank) of a shared buffer)`,
        dst.span ?? span,
      );
    }
    checkLinear16(d.ptr, "the destination", span);
  }
  const b = sharedTarget(mbar);
  if (b) checkMbarrierOperand(b.ptr, mbar.span ?? span);
  const [rd, rb] = [d?.rank && constInt(d.rank), b?.rank && constInt(b.rank)];
  if (typeof rd === "number" && typeof rb === "number" && rd !== rb) {
    throw new TirxError(
      "TX4006",
      `${DSMEM_COPY} completes on the mbarrier of its destination CTA, but the destination is in the CTA of rank ${rd} and the mbarrier in the CTA of rank ${rb}`,
      mbar.span ?? span,
    );
  }
}

/**
 * The bulk copy from this CTA's shared memory to shared memory of a CTA of its cluster (PTX
 * ISA, cp.async.bulk, "shared::cta -> shared::cluster" form; sm_90, PTX 8.0):
 * `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dstMem], [srcMem],
 * size, [mbar]`. `dst` and `mbar` (uint32) are shared::cluster addresses (T.ptx.mapa) of one
 * CTA: the copy's bytes land in its shared memory and complete `size` transaction bytes on its
 * mbarrier. `src` is `buf.ptr([i])` of this CTA's shared memory, `size` a static multiple of 16
 * bytes; both addresses 16-byte aligned. Needs a cluster launch (TX4030). The simulator's
 * action is the bulk unit's `copy_dsmem`: in flight from issue until every thread is blocked,
 * then it lands in the destination CTA's window as an async-proxy write, completing the
 * transaction bytes (runtime-sim exec/bulk.ts).
 */
export const BULK_DSMEM_OPS: readonly OpDef[] = [
  {
    ...stmtOp({
      name: DSMEM_COPY,
      family: "bulk",
      surface: "T.ptx.cp.async_.bulk.shared_cluster",
      operands: [
        valueArg("dst", ["uint32"]),
        { kind: "address", name: "src" },
        staticArg("size", 16, MAX_BYTES, "TX4003"),
        valueArg("mbar", ["uint32"]),
      ],
      sm: 90,
      ptx: [8, 0],
      source: "PTX ISA, cp.async.bulk (.shared::cluster.shared::cta; sm_90, PTX 8.0)",
      archCode: "TX4007",
      lower: (c, _d, ops) => c.ins(`${DSMEM_COPY} [${ops[0]}], ${ops[1]}, ${ops[2]}, [${ops[3]}]`),
      effect: { unit: "bulk", action: "copy_dsmem" },
      check: checkDsmemCopy,
    }),
    checkLaunch(_args, launch, span) {
      if (launch.cluster) return;
      throw new TirxError(
        "TX4030",
        `${DSMEM_COPY} writes shared memory of a CTA of the cluster: the kernel needs a cluster launch (T.cuda.LaunchConfig({ ..., cluster: [x, y, z] }))`,
        span,
      );
    },
  },
];
