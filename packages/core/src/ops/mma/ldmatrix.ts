import { bufferName } from "../../buffer-name.js";
import { showSwizzle, swizzleAtomBytes } from "../../layout/swizzle.js";
import { TirxError } from "../../diagnostics.js";
import { dtypeBytes, type DType } from "../../dtype.js";
import { constInt, type Expr } from "../../ir/expr.js";
import type { Span } from "../../span.js";
import type { FragmentCall, OpDef, OperandSpec } from "../op.js";

/** Element dtypes of an ldmatrix/stmatrix fragment: any 16-bit type (the instruction moves `.b16`). */
export const B16_DTYPES: readonly DType[] = ["float16", "bfloat16", "int16", "uint16"];

/** Matrix counts of `.num`. */
export type MatrixCount = 1 | 2 | 4;

/** IR name of `ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16`. */
export const ldmatrixName = (num: MatrixCount, trans: boolean): string =>
  `ldmatrix.sync.aligned.m8n8.x${num}${trans ? ".trans" : ""}.shared.b16`;

/** IR name of `stmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16`. */
export const stmatrixName = (num: MatrixCount, trans: boolean): string =>
  `stmatrix.sync.aligned.m8n8.x${num}${trans ? ".trans" : ""}.shared.b16`;

/**
 * TX7002 unless `e` is the address of a shared element whose constant part keeps the 16-byte
 * alignment of a matrix row (the shared allocation is 16-byte aligned; a runtime offset is
 * checked per lane by the simulator, TX6018).
 */
export function checkMatrixAddress(surface: string, e: Expr, span?: Span): void {
  const at = e.span ?? span;
  if (e.kind !== "BufferPtr" || (e.buffer.scope !== "shared" && e.buffer.scope !== "shared.dyn")) {
    throw new TirxError(
      "TX7002",
      `the row address of ${surface} must be the address of a shared element (buf.ptr([...]) of T.alloc_shared)`,
      at,
    );
  }
  const l = e.buffer.layout;
  if (l && l.swizzleLen > 0 && swizzleAtomBytes(l) < 16) {
    throw new TirxError(
      "TX7005",
      `a row of ${surface} is 16 bytes, but ${bufferName(e.buffer)}'s ${showSwizzle(l)} keeps only ${swizzleAtomBytes(l)} bytes together, so the row would be split`,
      at,
    );
  }
  const eb = dtypeBytes(e.buffer.dtype);
  const i = constInt(e.offset);
  if (e.buffer.align % 16 !== 0 || (i !== undefined && (i * eb) % 16 !== 0)) {
    throw new TirxError(
      "TX7002",
      `the row address of ${surface} must be 16-byte aligned; ${bufferName(e.buffer)}${i !== undefined ? ` element ${i} is at byte ${i * eb}` : ` is ${e.buffer.align}-byte aligned`}`,
      at,
    );
  }
}

/**
 * The byte of an 8 × 8 b16 matrix that byte `k` (0..3) of register `j` of `lane` holds, as
 * `[row, byteInRow]` (PTX ISA, ldmatrix: "each thread receives ... a row fragment"; `.trans`
 * delivers the matrix transposed: lane holds element `[2·(lane % 4) + h][lane >> 2]` in half h).
 */
export function matrixByte(lane: number, k: number, trans: boolean): [number, number] {
  if (!trans) return [lane >> 2, 4 * (lane & 3) + k];
  return [2 * (lane & 3) + (k >> 1), 2 * (lane >> 2) + (k & 1)];
}

function matrixOp(kind: "ldmatrix" | "stmatrix", num: MatrixCount, trans: boolean): OpDef {
  const name = kind === "ldmatrix" ? ldmatrixName(num, trans) : stmatrixName(num, trans);
  const surface = `T.ptx.${kind}`;
  const frag: OperandSpec = {
    kind: "fragment",
    name: kind === "ldmatrix" ? "dst" : "src",
    count: 2 * num,
    dtypes: B16_DTYPES,
    access: kind === "ldmatrix" ? "write" : "read",
  };
  const load = kind === "ldmatrix";
  return {
    name,
    family: "mma",
    surface,
    form: "stmt",
    operands: [frag, { kind: "address", name: "smem" }],
    result: () => undefined,
    signatures: B16_DTYPES.map((d) => [d, d]),
    sm: load ? 75 : 90,
    ptx: load ? [6, 5] : [7, 8],
    source: `PTX ISA, ${kind}`,
    archCode: "TX7003",
    effects: true,
    check(args, span) {
      checkMatrixAddress(surface, args[1]!, span);
    },
    lower: (c, _d, ops) =>
      c.ins(load ? `${name} ${ops[0]}, ${ops[1]}` : `${name} ${ops[1]}, ${ops[0]}`),
    sim: {
      kind: "fragment",
      make: () => (w: FragmentCall) => {
        // Matrix m's row r lives at the address of lane 8m + r (x1: lanes 0-7, x2: 0-15, x4: all).
        const rows: (Uint8Array | undefined)[] = [];
        const regs: Uint8Array[] = [];
        for (let lane = 0; lane < 32; lane++) {
          regs.push(load ? new Uint8Array(4 * num) : w.bytes(0, lane));
        }
        if (load) {
          for (let r = 0; r < 8 * num; r++) rows.push(w.loadShared(1, r, 16));
          if (rows.some((r) => r === undefined)) return;
        } else {
          for (let r = 0; r < 8 * num; r++) rows.push(new Uint8Array(16));
        }
        for (let lane = 0; lane < 32; lane++) {
          for (let m = 0; m < num; m++) {
            for (let k = 0; k < 4; k++) {
              const [row, col] = matrixByte(lane, k, trans);
              const src = rows[8 * m + row]!;
              if (load) regs[lane]![4 * m + k] = src[col]!;
              else src[col] = regs[lane]![4 * m + k]!;
            }
          }
        }
        if (load) for (let lane = 0; lane < 32; lane++) w.setBytes(0, lane, regs[lane]!);
        else for (let r = 0; r < 8 * num; r++) w.storeShared(1, r, rows[r]!);
      },
    },
  };
}

/** ldmatrix (sm_75, PTX 6.5) and stmatrix (sm_90, PTX 7.8): `.m8n8.{x1,x2,x4}{.trans}.shared.b16`. */
export const MATRIX_MOVE_OPS: readonly OpDef[] = (["ldmatrix", "stmatrix"] as const).flatMap(
  (kind) =>
    ([1, 2, 4] as const).flatMap((num) => [false, true].map((tr) => matrixOp(kind, num, tr))),
);
