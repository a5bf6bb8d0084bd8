import {
  invariant,
  MEMORY_SCOPES,
  semScopeOf,
  type AtomicAction,
  type AtomicUnitAction,
  type DType,
  type Expr,
  type OpDef,
  type SimValue,
  type Span,
} from "@tirx-ts/core";
import { codecOf, type NumCodec } from "../../numeric/codec.js";
import {
  bf16Bits,
  bf16Value,
  f16Bits,
  f16Value,
  roundBf16,
  roundF16,
} from "../../numeric/float.js";
import { checkAtomicAccess, checkGlobalWrite, checkSharedWrite } from "../../exec/hazards.js";
import { compileElement, elementOf } from "./element.js";
import type { ActionCompiler, ExprCompiler, UnitAction, UnitCompiler } from "../compiled.js";
import { beforeGlobalWrite } from "../../exec/pending-reads.js";

const scratch = new DataView(new ArrayBuffer(8));

/** The bits of a float32 value (for `atom.cas.b32`, which compares bit patterns). */
function f32Bits(x: number): number {
  scratch.setFloat32(0, x, true);
  return scratch.getUint32(0, true);
}

/** One half of a packed pair: add two 16-bit float bit patterns, rounded once (`.rn`, no FTZ). */
function addHalf(kind: "f16x2" | "bf16x2", a: number, b: number): number {
  return kind === "f16x2"
    ? f16Bits(roundF16(f16Value(a) + f16Value(b)))
    : bf16Bits(roundBf16(bf16Value(a) + bf16Value(b)));
}

/**
 * The read-modify-write of an atomic on an element of `dt`: the new value from the old one and
 * the operands, or undefined when nothing is written (a failed CAS). As the PTX instruction
 * computes it: `add.f32` rounded once, integer adds wrapping, CAS comparing bit patterns.
 */
function rmwOf(
  action: AtomicAction,
  dt: DType,
  packed: "f16x2" | "bf16x2" | undefined,
): (old: SimValue, a: SimValue, b: SimValue) => SimValue | undefined {
  if (packed) {
    return (old, a) => {
      const o = old as number;
      const v = a as number;
      const lo = addHalf(packed, o & 0xffff, v & 0xffff);
      const hi = addHalf(packed, o >>> 16, v >>> 16);
      return ((hi << 16) | lo) >>> 0;
    };
  }
  const wide = dt === "uint64";
  switch (action) {
    case "add":
      if (wide) return (o, a) => BigInt.asUintN(64, (o as bigint) + (a as bigint));
      if (dt === "float32") return (o, a) => Math.fround((o as number) + (a as number));
      if (dt === "int32") return (o, a) => ((o as number) + (a as number)) | 0;
      return (o, a) => ((o as number) + (a as number)) >>> 0;
    case "min":
      return (o, a) => (a < o ? a : o);
    case "max":
      return (o, a) => (a > o ? a : o);
    case "exch":
      return (_o, a) => a;
    case "cas":
      if (dt === "float32")
        return (o, c, v) => (f32Bits(o as number) === f32Bits(c as number) ? v : undefined);
      return (o, c, v) => (o === c ? v : undefined);
    default:
      invariant(false, `atomic ${action} has no simulator semantics`);
  }
}

/**
 * An atomic (`atom` with a result, `red` without) by thread t on the element `exprs[0]` points
 * at: bounds (TX6005), then the race checks of an atomic (another thread's plain write with no
 * barrier between is TX6003; never-written shared memory TX6004; other strong accesses race only
 * when not morally strong: a scope that does not include the other's thread), then
 * the read-modify-write. Threads run a statement in lane order, so a statement's atomics apply in
 * thread order within a warp and warp order within the CTA.
 * @returns per thread, the old value of the element.
 */
function compileAtomic(
  ec: ExprCompiler,
  op: OpDef,
  fx: AtomicUnitAction,
  exprs: readonly Expr[],
  span?: Span,
): (t: number) => SimValue {
  const m = ec.m;
  const action = fx.action;
  const el = elementOf(ec, op, exprs[0]!, span);
  const dt = el.dt;
  // An ordered atomic's last two operands are its static sem and scope (not values).
  const order = fx.ordered ? semScopeOf(exprs) : { sem: "relaxed" as const, scope: "gpu" as const };
  if (fx.ordered) m.order.enabled = true;
  const scope = MEMORY_SCOPES.indexOf(order.scope);
  const acquire = order.sem === "acquire" || order.sem === "acq_rel";
  const release = order.sem === "release" || order.sem === "acq_rel";
  const mo = m.order;
  const clocks = m.clocks;
  /**
   * The memory-model side of the read-modify-write at location (`key`, `at`) by thread t: its
   * read observes the location's release chains, its write (when it wrote) continues them and,
   * as a release or after a fence of t, heads one (exec/memory-order.ts).
   */
  const ordering = (key: object | undefined, at: number, t: number, wrote: boolean): void => {
    const who = { scope, group: clocks.group, cta: m.rank[t]! };
    mo.read(key, at, t, who, acquire);
    if (wrote) mo.write(key, at, t, who, release, true);
  };
  const vals = exprs
    .slice(1, fx.ordered ? -2 : undefined)
    .map((e) => ec.any(e, span) as (t: number) => SimValue);
  const a = vals[0]!;
  const b = vals[1] ?? a;
  const site = m.site(span);
  // A strong site: it races with another strong access only when the two are not morally
  // strong (its scope and size, exec/strong-sites.ts).
  m.strong.add(
    site,
    scope,
    el.eb,
    `${fx.returns ? "atom" : "red"}.${order.sem}.${order.scope}.${action}`,
  );
  const codec = codecOf(dt) as unknown as NumCodec;
  const rmw = rmwOf(action, dt, fx.packed);
  const zero: SimValue = dt === "uint64" ? 0n : 0;
  const apply = (dv: DataView, at: number, t: number, key: object | undefined): SimValue => {
    const old = codec.load(dv, at) as SimValue;
    const nv = rmw(old, a(t), b(t));
    if (nv !== undefined) codec.store(dv, at, nv as number);
    if (mo.enabled) ordering(key, at, t, nv !== undefined);
    return old;
  };
  // The site's records: bounds reports, and the atomic's write (verb "writes", atomic).
  return compileElement(m, el, site, zero, {
    what: "atomics",
    boundsVerb: "atomically updates",
    verb: "writes",
    strong: true,
    checkShared: (acc) => {
      checkAtomicAccess(acc);
      checkSharedWrite(acc);
    },
    checkGlobal: (g, gm) => {
      beforeGlobalWrite(m, gm);
      checkGlobalWrite(g);
    },
    access: apply,
  });
}

/**
 * Every atomic action, as a statement op (`red`: the old values are dropped) and as a value op
 * (`atom`: the old value). The read-modify-write of each action is rmwOf's.
 */
const ATOMIC: ActionCompiler<UnitAction<"atomic">> = {
  stmt({ ec, op, fx, args, at }) {
    const f = compileAtomic(ec, op, fx, args, at);
    return (lanes, n) => {
      for (let i = 0; i < n; i++) f(lanes[i]!);
    };
  },
  value: ({ ec, op, fx, args, at }) => compileAtomic(ec, op, fx, args, at),
};

/** The atomic unit (PTX ISA, atom and red): one compiler for every read-modify-write. */
export const ATOMIC_UNIT = {
  add: ATOMIC,
  min: ATOMIC,
  max: ATOMIC,
  cas: ATOMIC,
  exch: ATOMIC,
  and: ATOMIC,
  or: ATOMIC,
  xor: ATOMIC,
} as const satisfies UnitCompiler<UnitAction<"atomic">>;
