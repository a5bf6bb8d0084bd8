import {
  MEMORY_SCOPES,
  semScopeOf,
  type Expr,
  type OpDef,
  type SimValue,
  type Span,
} from "@tirx-ts/core";
import { codecOf, type NumCodec } from "../../numeric/codec.js";
import {
  checkGlobalWrite,
  checkSharedWrite,
  checkStrongGlobalRead,
  checkStrongSharedRead,
} from "../../exec/hazards.js";
import { beforeGlobalWrite } from "../../exec/pending-reads.js";
import { compileElement, elementOf } from "./element.js";
import { nothing, type ExprCompiler, type UnitAction, type UnitCompiler } from "../compiled.js";

/**
 * A strong load or store (`ld.sem` / `st.sem`) by thread t on the element `exprs[0]` points at:
 * bounds (TX6005), the race checks of a strong access (morally strong with atomics and other
 * strong accesses whose scopes and its own include each other's thread: only unordered plain
 * accesses, and strong ones of too narrow a scope, race; exec/hazards.ts), the access, then its
 * part in the release and acquire patterns (exec/memory-order.ts): a load observes the location's
 * release chains (acquiring them at once, or at the thread's next fence when relaxed), a store
 * heads a new chain (a release, or after a fence of the thread).
 * @returns per thread, the loaded value (a store: the stored value).
 */
export function compileStrong(
  ec: ExprCompiler,
  op: OpDef,
  store: boolean,
  exprs: readonly Expr[],
  span?: Span,
): (t: number) => SimValue {
  const m = ec.m;
  m.order.enabled = true;
  const el = elementOf(ec, op, exprs[0]!, span);
  const dt = el.dt;
  const { sem, scope: scopeName } = semScopeOf(exprs);
  const scope = MEMORY_SCOPES.indexOf(scopeName);
  const value = store ? (ec.any(exprs[1]!, span) as (t: number) => SimValue) : undefined;
  const site = m.site(span);
  // A strong site: it races with another strong access only when the two are not morally
  // strong (its scope and size, exec/strong-sites.ts).
  m.strong.add(site, scope, el.eb, `${store ? "st" : "ld"}.${sem}.${scopeName}`);
  const codec = codecOf(dt) as unknown as NumCodec;
  const zero: SimValue = dt === "uint64" || dt === "int64" ? 0n : 0;
  const verb = store ? "writes" : "reads";
  const mo = m.order;
  const clocks = m.clocks;
  const acquire = sem === "acquire";
  const release = sem === "release";
  const access = (dv: DataView, at: number, t: number, key: object | undefined): SimValue => {
    const who = { scope, group: clocks.group, cta: m.rank[t]! };
    if (value === undefined) {
      const v = codec.load(dv, at) as SimValue;
      mo.read(key, at, t, who, acquire);
      return v;
    }
    const v = value(t);
    codec.store(dv, at, v as number);
    mo.write(key, at, t, who, release, false);
    return v;
  };
  return compileElement(m, el, site, zero, {
    what: "strong accesses",
    boundsVerb: verb,
    verb,
    strong: store,
    checkShared: store ? checkSharedWrite : checkStrongSharedRead,
    checkGlobal: store
      ? (g, gm) => {
          beforeGlobalWrite(m, gm);
          checkGlobalWrite(g);
        }
      : checkStrongGlobalRead,
    access,
  });
}

/**
 * The memory-order unit (PTX ISA, "Memory Consistency Model"; membar/fence; ld; st;
 * griddepcontrol): fences
 * complete the acquire patterns of the thread's earlier strong reads and start the release
 * patterns of its later strong writes; strong loads and stores (compileStrong). fence.sc is
 * simulated as fence.acq_rel (no Fence-SC order; exec/memory-order.ts).
 */
export const ORDER_UNIT = {
  fence: {
    stmt({ ec, fx }) {
      const m = ec.m;
      m.order.enabled = true;
      const scope = MEMORY_SCOPES.indexOf(fx.scope);
      const mo = m.order;
      const clocks = m.clocks;
      return (lanes, n) => {
        for (let i = 0; i < n; i++) {
          const t = lanes[i]!;
          mo.fence(t, { scope, group: clocks.group, cta: m.rank[t]! });
        }
      };
    },
  },
  load: {
    value: ({ ec, op, args, at }) => compileStrong(ec, op, false, args, at),
  },
  // griddepcontrol (PTX ISA): launches run one after another on the simulator, so the
  // prerequisite grids of `wait` have completed (their writes are ordered before every access of
  // this launch) and `launch_dependents` has no dependent grid to let start early: no-ops.
  griddep: { stmt: () => nothing },
  store: {
    stmt({ ec, op, args, at }) {
      const f = compileStrong(ec, op, true, args, at);
      return (lanes, n) => {
        for (let i = 0; i < n; i++) f(lanes[i]!);
      };
    },
  },
} as const satisfies UnitCompiler<UnitAction<"order">>;
