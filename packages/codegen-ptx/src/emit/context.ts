import {
  evalInt,
  invariant,
  RangeScope,
  type Buffer,
  type BufferLoad,
  type RangeEnv,
  type DType,
  type Expr,
  type SpecialName,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { Registers } from "../regs.js";
import { exprKey } from "./key.js";

/** The key of an access to `buffer` as `dtype` at `offset` (undefined when it reads memory). */
export function laneKey(buffer: Buffer, dtype: DType, offset: Expr): string | undefined {
  const k = exprKey(offset);
  return k === undefined ? undefined : `${buffer.id}:${dtype}:${k}`;
}
import { DYN_SMEM, type StoragePlan } from "../lower/storage.js";
import type { BoundsSite } from "./bounds-site.js";

/** The base address of a buffer: a 64-bit register for global/local, 32-bit for shared. */
export interface BufferBase {
  readonly space: "global" | "shared" | "local";
  readonly reg: string;
}

/** Per-thread CTA coordinates used by CTA-scope tile patterns. */
export interface ThreadIds {
  /** Linear thread id L = tid.x + tid.y*ntid.x + tid.z*ntid.x*ntid.y. */
  readonly linear: string;
  /** L / 32. */
  readonly warp: string;
  /** L % 32. */
  readonly lane: string;
}

/** A region of {@link EmitContext.memo}: its remembered values and the variables bound in it. */
interface Scope {
  readonly values: Map<string, string>;
  readonly transparent: boolean;
  readonly bound: Set<number>;
}

/**
 * The state of emitting one entry: registers, the body lines, and a prologue that computes
 * values every later instruction may use (parameters, special registers, buffer bases). Values
 * are placed in the prologue the first time something asks for them, so that a use inside a
 * branch never reads a register that another path would have set.
 */
export class EmitContext {
  readonly regs = new Registers();
  readonly prologue: string[] = [];
  readonly body: string[] = [];
  /** Operand (register or immediate) of every variable in scope, by `Var.id`. */
  readonly env = new Map<number, string>();
  private readonly bases = new Map<number, BufferBase>();
  private readonly specials = new Map<SpecialName, string>();
  private ids: ThreadIds | undefined;
  private labels = 0;
  /** Values already computed, by key, innermost scope last (see {@link memo}). */
  private readonly scopes: Scope[] = [{ values: new Map(), transparent: false, bound: new Set() }];
  /** The value of every let-bound variable, by `Var.id` (for divisibility proofs). */
  readonly letValues = new Map<number, Expr>();
  /**
   * What is known at the statement being emitted (ranges of the loop and let variables in scope,
   * narrowed under `if` conditions; for lowering choices), kept by `walkScoped` in `StmtEmitter`.
   */
  readonly scope: RangeScope;
  /** Element registers of each register array, by `Buffer.id` (see core `planRegisterArrays`). */
  private readonly regArrays = new Map<number, readonly string[]>();
  /**
   * Registers whose value changes after they are read: register-array elements. An operand
   * taken from one is copied before a variable is bound to it.
   */
  readonly mutable = new Set<string>();

  /**
   * @param wideSymbolic address tensors with symbolic dims with 64-bit offsets (see
   *   `index-width.ts`).
   */
  constructor(
    readonly vf: VerifiedFunc,
    readonly storage: StoragePlan,
    readonly wideSymbolic = false,
    /** Guard accesses the verifier could not bound (`checkBounds`; see `bounds-check.ts`). */
    readonly checkBounds = false,
  ) {
    this.scope = new RangeScope({ launch: vf.launch });
  }

  /** The guarded accesses so far, by site id (see `bounds-check.ts`). */
  readonly boundsSites: BoundsSite[] = [];

  /** Append one instruction to the body. */
  ins(line: string): void {
    this.body.push(`\t${line};`);
  }

  /** Append one instruction to the prologue. */
  pro(line: string): void {
    this.prologue.push(`\t${line};`);
  }

  comment(text: string): void {
    this.body.push(`\t// ${text}`);
  }

  label(name: string): void {
    this.body.push(`${name}:`);
  }

  /** Fresh labels sharing one number, e.g. `("loop", "loop_end")` → `$L__loop3`, `$L__loop_end3`. */
  newLabels<const H extends readonly string[]>(...hints: H): { [K in keyof H]: string } {
    const n = ++this.labels;
    return hints.map((h) => `$L__${h}${n}`) as { [K in keyof H]: string };
  }

  /**
   * The operand computed for `key` earlier in this scope or an enclosing one, else `compute()`,
   * remembered in the current scope. A scope is a region whose entry dominates its body and whose
   * registers nothing overwrites: each branch arm, loop body and unrolled copy opens one, so a
   * register set on one path is never read on another. An unrolled copy is straight-line code of
   * the scope around it, so a value that uses no variable bound in the copy is remembered there
   * (the address `tid * 4` computed in the first copy serves the others). A `key` of undefined is
   * never reused.
   */
  memo(key: string | undefined, compute: () => string): string {
    if (key === undefined) return compute();
    for (let i = this.scopes.length - 1; i >= 0; i--) {
      const hit = this.scopes[i]!.values.get(key);
      if (hit !== undefined) return hit;
    }
    const op = compute();
    const vars = [...key.matchAll(/\bv(\d+)\b/g)].map((m) => Number(m[1]));
    let i = this.scopes.length - 1;
    while (i > 0 && this.scopes[i]!.transparent && !vars.some((v) => this.scopes[i]!.bound.has(v)))
      i--;
    this.scopes[i]!.values.set(key, op);
    return op;
  }

  /**
   * Run `f` in a new {@link memo} scope; `transparent` for an unrolled copy (straight-line code
   * of the enclosing scope).
   */
  scoped(f: () => void, transparent = false): void {
    this.openScope(transparent);
    try {
      f();
    } finally {
      this.closeScope();
    }
  }

  /** Open a {@link memo} scope, as {@link scoped} does, for a body emitted later. */
  openScope(transparent = false): void {
    this.scopes.push({ values: new Map(), transparent, bound: new Set() });
  }

  /** Close the scope {@link openScope} opened last. */
  closeScope(): void {
    invariant(this.scopes.length > 1, "closeScope without an open scope");
    this.scopes.pop();
  }

  /** Bind variable `id` to operand `op` in the current scope. */
  bind(id: number, op: string): void {
    this.env.set(id, op);
    this.scopes[this.scopes.length - 1]!.bound.add(id);
  }

  /** What range analysis knows here: variable ranges and the launch. */
  rangeEnv(): RangeEnv {
    return this.scope;
  }

  /**
   * The element registers of a local array that lives in registers, in row-major element order,
   * or undefined for any other buffer. They are allocated once per kernel, so every path, loop
   * iteration and unrolled copy reads and writes the same registers (PTX virtual registers are
   * mutable; no renaming across loop back edges).
   */
  elementRegs(buffer: Buffer): readonly string[] | undefined {
    const st = this.storage.buffers.get(buffer.id);
    if (st?.kind !== "registers") return undefined;
    let regs = this.regArrays.get(buffer.id);
    if (!regs) {
      regs = Array.from({ length: st.count }, () => this.reg(buffer.dtype));
      regs.forEach((r) => this.mutable.add(r));
      this.regArrays.set(buffer.id, regs);
    }
    return regs;
  }

  /**
   * The value of integer expression `e` when every variable in it is bound to an immediate here
   * (an unrolled loop's iteration, a let of such a value), else undefined.
   */
  staticInt(e: Expr): bigint | undefined {
    return evalInt(e, (id) => {
      const op = this.env.get(id);
      return op !== undefined && /^(-?\d+|0x[0-9A-Fa-f]+)$/.test(op) ? BigInt(op) : undefined;
    });
  }

  /**
   * Values of the loads of one lane of a vectorized loop, by {@link laneKey}: the lane's register
   * of the vector load that already read them. Empty outside a vectorized loop.
   */
  readonly lanes = new Map<string, string>();

  /** The register already holding load `e` in the current lane of a vectorized loop, if any. */
  laneValue(e: BufferLoad): string | undefined {
    if (this.lanes.size === 0) return undefined;
    const k = laneKey(e.buffer, e.dtype, e.offset);
    return k === undefined ? undefined : this.lanes.get(k);
  }

  /** A fresh register for `dt`. */
  reg(dt: DType): string {
    return this.regs.of(dt);
  }

  /** `%tid.x` and friends, read once into the prologue. */
  special(name: SpecialName): string {
    let r = this.specials.get(name);
    if (!r) {
      r = this.regs.fresh("r");
      this.pro(`mov.u32 ${r}, %${name}`);
      this.specials.set(name, r);
    }
    return r;
  }

  /**
   * Linear thread id, warp and lane at CTA scope. ntid is the launch's static block, so the
   * products are constants; with a 1-D block L is just tid.x.
   */
  threadIds(): ThreadIds {
    if (this.ids) return this.ids;
    const [bx, by, bz] = this.vf.launch.block;
    let linear = this.special("tid.x");
    if (by > 1) {
      const l = this.regs.fresh("r");
      this.pro(`mad.lo.s32 ${l}, ${this.special("tid.y")}, ${bx}, ${linear}`);
      linear = l;
    }
    if (bz > 1) {
      const l = this.regs.fresh("r");
      this.pro(`mad.lo.s32 ${l}, ${this.special("tid.z")}, ${bx * by}, ${linear}`);
      linear = l;
    }
    const warp = this.regs.fresh("r");
    const lane = this.regs.fresh("r");
    this.pro(`shr.u32 ${warp}, ${linear}, 5`);
    this.pro(`and.b32 ${lane}, ${linear}, 31`);
    this.ids = { linear, warp, lane };
    return this.ids;
  }

  /** Record the cvta'd base of a tensor parameter. */
  setParamBase(buffer: Buffer, reg: string): void {
    this.bases.set(buffer.id, { space: "global", reg });
  }

  /**
   * Base address of `buffer`: a parameter's global address, a shared array's 32-bit shared
   * address (`mov.u32 %r, smem`), a dynamic buffer's place in `dyn_smem`, or a local array's
   * 64-bit local address. The verifier checked that every buffer used is a parameter or
   * allocated where it is used (TX2001).
   */
  bufferBase(buffer: Buffer): BufferBase {
    const known = this.bases.get(buffer.id);
    if (known) return known;
    const st = this.storage.buffers.get(buffer.id);
    invariant(st, () => `buffer "${buffer.name}" is neither a parameter nor allocated`);
    invariant(st.kind !== "registers", () => `register array "${buffer.name}" has no address`);
    let base: BufferBase;
    if (st.kind === "dynamic") {
      const r = this.regs.fresh("r");
      this.pro(`mov.u32 ${r}, ${DYN_SMEM}`);
      // CUDA guarantees the dynamic shared array only 16-byte alignment (static shared memory
      // comes first), so a larger alignment (TMA's 1024-byte swizzle atoms) is made at run
      // time, in the slack the module adds to its dynamic bytes (see dynamicSlack).
      const align = this.storage.dynamicAlign;
      if (align > 16) {
        this.pro(`add.s32 ${r}, ${r}, ${align - 1}`);
        this.pro(`and.b32 ${r}, ${r}, ${-align}`);
      }
      let reg = r;
      if (st.offset !== 0) {
        reg = this.regs.fresh("r");
        this.pro(`add.s32 ${reg}, ${r}, ${st.offset}`);
      }
      base = { space: "shared", reg };
    } else if (st.space === "shared") {
      const r = this.regs.fresh("r");
      this.pro(`mov.u32 ${r}, ${st.symbol}`);
      base = { space: "shared", reg: r };
    } else {
      const r = this.regs.fresh("rd");
      this.pro(`mov.u64 ${r}, ${st.symbol}`);
      base = { space: "local", reg: r };
    }
    this.bases.set(buffer.id, base);
    return base;
  }
}
