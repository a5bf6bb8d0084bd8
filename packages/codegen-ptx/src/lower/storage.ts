import {
  numel,
  planRegisterArrays,
  ptxIdent,
  staticShape,
  walkStmt,
  type Buffer,
  type Stmt,
} from "@tirx-ts/core";
import { elemBytes } from "../types.js";

/** Name of the module-scope dynamic shared memory array (`shared.dyn` buffers live in it). */
export const DYN_SMEM = "dyn_smem";

/** Where one allocated buffer lives in the PTX module. */
export type Storage =
  /** `.shared` or `.local` array declared in the entry under `symbol`. */
  | {
      readonly kind: "static";
      readonly space: "shared" | "local";
      readonly symbol: string;
      readonly bytes: number;
      readonly align: number;
      /** For a `.local` array: why it is not kept in registers (a PTX comment says so). */
      readonly why?: string;
    }
  /** A byte range of the extern `dyn_smem` array. */
  | { readonly kind: "dynamic"; readonly offset: number; readonly bytes: number }
  /** A local array every access of which has a constant element index: one register per element. */
  | { readonly kind: "registers"; readonly count: number };

/** The storage plan of a kernel: every `Alloc`'d buffer by id, and the dynamic shared layout. */
export interface StoragePlan {
  readonly buffers: ReadonlyMap<number, Storage>;
  /** Bytes of `dyn_smem` the `shared.dyn` buffers need (0 when none). */
  readonly dynamicBytes: number;
  /** Alignment of `dyn_smem` (at least 16). */
  readonly dynamicAlign: number;
}

/** A PTX identifier from an author's name (core's `ptxIdent`, which the verifier checks). */
export { ptxIdent };

/**
 * Assign storage to every `Alloc` under `body`. Local arrays whose every element index is a
 * constant once unrolled loops are unrolled live in registers (core `planRegisterArrays`); other
 * allocations get their own array even inside a loop (a PTX array is declared once per entry);
 * `shared.dyn` buffers are packed in program order into `dyn_smem`, each aligned to its buffer's
 * alignment.
 */
export function planStorage(body: Stmt): StoragePlan {
  const buffers = new Map<number, Storage>();
  const taken = new Set<string>([DYN_SMEM]);
  let dyn = 0;
  let dynAlign = 16;
  const inRegisters = planRegisterArrays(body);
  const symbolFor = (b: Buffer): string => {
    const base = `${b.scope === "local" ? "lmem" : "smem"}_${ptxIdent(b.name)}`;
    let name = base;
    for (let k = 1; taken.has(name); k++) name = `${base}_${k}`;
    taken.add(name);
    return name;
  };
  walkStmt(body, (s) => {
    if (s.kind !== "Alloc" || buffers.has(s.buffer.id)) return;
    const b = s.buffer;
    const bytes =
      numel(staticShape(b, "a shared or local allocation", s.span)) * elemBytes(b.dtype);
    const align = Math.max(16, b.align);
    if (b.scope === "shared.dyn") {
      dyn = Math.ceil(dyn / b.align) * b.align;
      buffers.set(b.id, { kind: "dynamic", offset: dyn, bytes });
      dyn += bytes;
      dynAlign = Math.max(dynAlign, b.align);
    } else if (b.scope === "local" && inRegisters.get(b.id) === undefined) {
      buffers.set(b.id, {
        kind: "registers",
        count: numel(staticShape(b, "a local array", b.span)),
      });
    } else if (b.scope === "shared" || b.scope === "local") {
      const why = inRegisters.get(b.id);
      const st = { kind: "static", space: b.scope, symbol: symbolFor(b), bytes, align } as const;
      buffers.set(b.id, why === undefined ? st : { ...st, why });
    }
  });
  return { buffers, dynamicBytes: dyn, dynamicAlign: dynAlign };
}
