import {
  dtypeBytes,
  isStaticShape,
  numel,
  TirxError,
  type Buffer,
  type DType,
  type Span,
} from "@tirx-ts/core";
import { codecOf, type BigCodec, type NumCodec } from "../numeric/codec.js";
import {
  checkGlobalRead,
  checkGlobalWrite,
  checkSharedRead,
  checkSharedWrite,
} from "../exec/hazards.js";
import { reportOob, reportUnwrittenLocal } from "../exec/reports.js";
import { elementWritten, markElement } from "../exec/local-written.js";
import type { Machine } from "../exec/machine.js";
import type { GlobalMem, Placed } from "../exec/memory.js";
import { beforeGlobalWrite } from "../exec/pending-reads.js";
import { accessRecord } from "../exec/context.js";
import type { Layout } from "./layout.js";
import { AccessKind } from "../exec/access-batch.js";

export type NumFn = (t: number) => number;
export type BigFn = (t: number) => bigint;
/** A compiled per-thread effect. */
export type ThreadFn = (t: number) => void;

/**
 * Loads and stores of one element, compiled per state space into closures that take the thread
 * index: bounds (TX6005) and hazard checks, then the dtype's codec on the memory's DataView. Each
 * closure keeps one access record of its site (exec/context.ts) and sets its address and thread
 * (and tensor) before a check, so a check allocates nothing.
 * An access that reports in "collect" mode reads as the codec's zero / is dropped when out of
 * bounds, and proceeds otherwise. An offset of NaN is an access its axis check (compile/axis-check.ts)
 * reported already: it is skipped the same way, with no report of its own.
 *
 * float32 shared and global accesses get closures of their own (the same code): V8 keeps one
 * type feedback per closure literal, so a literal that every dtype shares sees every codec at its
 * `load`/`store` call and inlines none; one only float32 codecs reach keeps that call monomorphic
 * (a row copy simulated after a float16 kernel in the same process ran about 20 % faster).
 */
interface Where {
  readonly space: "global" | "shared" | "local";
  /** Tensor parameter index (global). */
  readonly param: number;
  readonly placed: Placed;
}

function where(layout: Layout, buffer: Buffer, span?: Span): Where {
  const p = layout.params.get(buffer.id);
  if (p !== undefined) {
    // A tensor with symbolic dims has its size only at launch: accesses read the argument's.
    const shape = buffer.shape;
    const size = isStaticShape(shape) ? dtypeBytes(buffer.dtype) * numel(shape) : 0;
    return {
      space: "global",
      param: p,
      placed: { name: buffer.name, span: buffer.span, base: 0, size },
    };
  }
  const s = layout.shared.get(buffer.id);
  if (s) return { space: "shared", param: -1, placed: s };
  const l = layout.local.get(buffer.id);
  if (l) return { space: "local", param: -1, placed: l };
  throw new TirxError(
    "TX2001",
    `buffer "${buffer.name}" is neither a parameter nor allocated in the kernel`,
    span,
  );
}

/**
 * A load of one `dtype` element at element offset `off` of `buffer`. With `batched` (a load of a
 * batched statement, compile/batched.ts) its hazard check is deferred to the statement's end
 * while the Machine's batch is deferring (exec/access-batch.ts).
 */
export function compileLoad(
  m: Machine,
  layout: Layout,
  buffer: Buffer,
  dtype: DType,
  off: NumFn,
  site: number,
  batched = false,
): NumFn | BigFn {
  const w = where(layout, buffer, m.sites[site]);
  const codec = codecOf(dtype);
  const eb = dtypeBytes(dtype);
  const { base, size } = w.placed;
  const zero = codec.wide ? 0n : 0;
  // The site's record: its buffer's placement (bounds reports; shared checks), its tensor (global
  // checks).
  const acc = accessRecord(m, w.placed, eb, site, "reads");
  const g = accessRecord<GlobalMem>(m, undefined, eb, site, "reads");
  const oob = (t: number, rel: number, bytes: number): void => {
    if (rel !== rel) return; // NaN: reported by its axis check
    acc.addr = rel;
    acc.thread = t;
    reportOob(acc, w.space, bytes);
  };
  const load = codec.load as (dv: DataView, a: number) => number;
  if (batched && w.space !== "local") return deferredLoad(m, w, eb, off, site, load, zero);
  if (w.space === "shared") {
    const dv = m.sdv;
    // The thread's CTA's shared window (0 outside a cluster of several CTAs).
    const win = m.win;
    if (dtype === "float32") {
      return (t) => {
        const rel = off(t) * eb;
        if (!(rel >= 0 && rel + eb <= size)) {
          oob(t, rel, size);
          return zero as number;
        }
        if (m.opts.track) {
          const a = base + rel + win[t]!;
          acc.addr = a;
          acc.thread = t;
          checkSharedRead(acc);
          return load(dv, a);
        }
        return load(dv, base + rel + win[t]!);
      };
    }
    return (t) => {
      const rel = off(t) * eb;
      if (!(rel >= 0 && rel + eb <= size)) {
        oob(t, rel, size);
        return zero as number;
      }
      const a = base + rel + win[t]!;
      if (m.opts.track) {
        acc.addr = a;
        acc.thread = t;
        checkSharedRead(acc);
      }
      return load(dv, a);
    };
  }
  if (w.space === "local") {
    const dv = m.ldv;
    const stride = m.localStride;
    // Which local bytes their thread wrote (a tracked read of one it did not is TX6028).
    const written = m.localWritten;
    const wv = written.view;
    return (t) => {
      const rel = off(t) * eb;
      if (!(rel >= 0 && rel + eb <= size)) {
        oob(t, rel, size);
        return zero as number;
      }
      if (m.wgmma.live > 0) {
        acc.addr = base + rel;
        acc.thread = t;
        m.wgmma.checkLocal(acc);
      }
      const a = t * stride + base + rel;
      if (m.opts.track && !elementWritten(wv, a, eb)) {
        acc.addr = base + rel;
        acc.thread = t;
        reportUnwrittenLocal(acc, written.firstUnwritten(a, eb) - t * stride);
      }
      return load(dv, a);
    };
  }
  const globals = m.globals;
  const k = w.param;
  if (dtype === "float32") {
    return (t) => {
      const rel = off(t) * eb;
      const gm = globals[k]!;
      if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
        oob(t, rel, gm.dv.byteLength);
        return zero as number;
      }
      if (m.opts.track && gm.shadow.watched) {
        g.buf = gm;
        g.addr = rel;
        g.thread = t;
        checkGlobalRead(g);
      }
      return load(gm.dv, rel);
    };
  }
  return (t) => {
    const rel = off(t) * eb;
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
      oob(t, rel, gm.dv.byteLength);
      return zero as number;
    }
    if (m.opts.track && gm.shadow.watched) {
      g.buf = gm;
      g.addr = rel;
      g.thread = t;
      checkGlobalRead(g);
    }
    return load(gm.dv, rel);
  };
}

/**
 * A store of one `dtype` element (`value` already of that dtype) at element offset `off`; with
 * `batched` its hazard check is deferred like compileLoad's.
 */
export function compileStore(
  m: Machine,
  layout: Layout,
  buffer: Buffer,
  dtype: DType,
  off: NumFn,
  value: NumFn | BigFn,
  site: number,
  batched = false,
): ThreadFn {
  const w = where(layout, buffer, m.sites[site]);
  const codec = codecOf(dtype);
  const eb = dtypeBytes(dtype);
  const { base, size } = w.placed;
  const acc = accessRecord(m, w.placed, eb, site, "writes");
  const g = accessRecord<GlobalMem>(m, undefined, eb, site, "writes");
  const oob = (t: number, rel: number, bytes: number): void => {
    if (rel !== rel) return; // NaN: reported by its axis check
    acc.addr = rel;
    acc.thread = t;
    reportOob(acc, w.space, bytes);
  };
  // One shape for both codecs: the value closure and the codec agree on number vs bigint.
  const store = (codec as NumCodec | BigCodec).store as (
    dv: DataView,
    a: number,
    v: number,
  ) => void;
  const val = value as NumFn;
  if (batched && w.space !== "local") return deferredStore(m, w, eb, off, val, site, store);
  if (w.space === "shared") {
    const dv = m.sdv;
    // The thread's CTA's shared window (0 outside a cluster of several CTAs).
    const win = m.win;
    if (dtype === "float32") {
      return (t) => {
        const rel = off(t) * eb;
        const v = val(t);
        if (!(rel >= 0 && rel + eb <= size)) return oob(t, rel, size);
        const a = base + rel + win[t]!;
        if (m.opts.track) {
          acc.addr = a;
          acc.thread = t;
          checkSharedWrite(acc);
        }
        store(dv, a, v);
      };
    }
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      if (!(rel >= 0 && rel + eb <= size)) return oob(t, rel, size);
      const a = base + rel + win[t]!;
      if (m.opts.track) {
        acc.addr = a;
        acc.thread = t;
        checkSharedWrite(acc);
      }
      store(dv, a, v);
    };
  }
  if (w.space === "local") {
    const dv = m.ldv;
    const stride = m.localStride;
    const wv = m.localWritten.view;
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      if (!(rel >= 0 && rel + eb <= size)) return oob(t, rel, size);
      if (m.wgmma.live > 0) {
        acc.addr = base + rel;
        acc.thread = t;
        m.wgmma.checkLocal(acc);
      }
      const a = t * stride + base + rel;
      if (m.wgmma.dirty) m.wgmma.noteLocalWrite(a, eb, site);
      markElement(wv, a, eb);
      store(dv, a, v);
    };
  }
  const globals = m.globals;
  const k = w.param;
  if (dtype === "float32") {
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      const gm = globals[k]!;
      if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) return oob(t, rel, gm.dv.byteLength);
      if (m.opts.track) {
        beforeGlobalWrite(m, gm);
        g.buf = gm;
        g.addr = rel;
        g.thread = t;
        checkGlobalWrite(g);
      }
      store(gm.dv, rel, v);
    };
  }
  return (t) => {
    const rel = off(t) * eb;
    const v = val(t);
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) return oob(t, rel, gm.dv.byteLength);
    if (m.opts.track) {
      beforeGlobalWrite(m, gm);
      g.buf = gm;
      g.addr = rel;
      g.thread = t;
      checkGlobalWrite(g);
    }
    store(gm.dv, rel, v);
  };
}

/**
 * compileLoad for a batched statement: bounds at once, the hazard check queued while the batch
 * defers (else made at once, as compileLoad's closures make it).
 */
function deferredLoad(
  m: Machine,
  w: Where,
  eb: number,
  off: NumFn,
  site: number,
  load: (dv: DataView, a: number) => number,
  zero: number | bigint,
): NumFn {
  const { base, size } = w.placed;
  const batch = m.batch;
  const acc = accessRecord(m, w.placed, eb, site, "reads");
  if (w.space === "shared") {
    const dv = m.sdv;
    const win = m.win;
    const q = batch.queue(AccessKind.SharedRead, site, eb, w.placed, -1);
    return (t) => {
      const rel = off(t) * eb;
      if (!(rel >= 0 && rel + eb <= size)) {
        if (rel !== rel) return zero as number; // NaN: reported by its axis check
        acc.addr = rel;
        acc.thread = t;
        reportOob(acc, "shared", size);
        return zero as number;
      }
      const a = base + rel + win[t]!;
      if (m.opts.track) {
        if (batch.deferring && m.speculative === 0) q.push(t, a);
        else {
          acc.addr = a;
          acc.thread = t;
          checkSharedRead(acc);
        }
      }
      return load(dv, a);
    };
  }
  const globals = m.globals;
  const k = w.param;
  const g = accessRecord<GlobalMem>(m, undefined, eb, site, "reads");
  const q = batch.queue(AccessKind.GlobalRead, site, eb, undefined, k);
  return (t) => {
    const rel = off(t) * eb;
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
      if (rel !== rel) return zero as number; // NaN: reported by its axis check
      acc.addr = rel;
      acc.thread = t;
      reportOob(acc, "global", gm.dv.byteLength);
      return zero as number;
    }
    if (m.opts.track) {
      if (batch.deferring && m.speculative === 0) q.push(t, rel);
      else if (gm.shadow.watched) {
        g.buf = gm;
        g.addr = rel;
        g.thread = t;
        checkGlobalRead(g);
      }
    }
    return load(gm.dv, rel);
  };
}

/** compileStore for a batched statement (see deferredLoad). */
function deferredStore(
  m: Machine,
  w: Where,
  eb: number,
  off: NumFn,
  val: NumFn,
  site: number,
  store: (dv: DataView, a: number, v: number) => void,
): ThreadFn {
  const { base, size } = w.placed;
  const batch = m.batch;
  const acc = accessRecord(m, w.placed, eb, site, "writes");
  if (w.space === "shared") {
    const dv = m.sdv;
    const win = m.win;
    const q = batch.queue(AccessKind.SharedWrite, site, eb, w.placed, -1);
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      if (!(rel >= 0 && rel + eb <= size)) {
        if (rel !== rel) return; // NaN: reported by its axis check
        acc.addr = rel;
        acc.thread = t;
        return reportOob(acc, "shared", size);
      }
      const a = base + rel + win[t]!;
      if (m.opts.track) {
        if (batch.deferring) q.push(t, a);
        else {
          acc.addr = a;
          acc.thread = t;
          checkSharedWrite(acc);
        }
      }
      store(dv, a, v);
    };
  }
  const globals = m.globals;
  const k = w.param;
  const g = accessRecord<GlobalMem>(m, undefined, eb, site, "writes");
  const q = batch.queue(AccessKind.GlobalWrite, site, eb, undefined, k);
  return (t) => {
    const rel = off(t) * eb;
    const v = val(t);
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
      if (rel !== rel) return; // NaN: reported by its axis check
      acc.addr = rel;
      acc.thread = t;
      return reportOob(acc, "global", gm.dv.byteLength);
    }
    if (m.opts.track) {
      if (batch.deferring) q.push(t, rel);
      else {
        beforeGlobalWrite(m, gm);
        g.buf = gm;
        g.addr = rel;
        g.thread = t;
        checkGlobalWrite(g);
      }
    }
    store(gm.dv, rel, v);
  };
}

/**
 * A load of one `dtype` element at element offset `off` of `buffer` with no check, report or
 * record: the value an access's index reads when its axis check evaluates it a second time
 * (compile/axis-check.ts), after the access's own evaluation read it with every check. Outside
 * the buffer it reads the codec's zero, as a reported load does.
 */
export function compileRawLoad(
  m: Machine,
  layout: Layout,
  buffer: Buffer,
  dtype: DType,
  off: NumFn,
): NumFn | BigFn {
  const w = where(layout, buffer, undefined);
  const codec = codecOf(dtype);
  const load = codec.load as (dv: DataView, a: number) => number;
  const eb = dtypeBytes(dtype);
  const { base, size } = w.placed;
  const zero = (codec.wide ? 0n : 0) as number;
  if (w.space === "shared") {
    const win = m.win;
    return (t) => {
      const rel = off(t) * eb;
      return rel >= 0 && rel + eb <= size ? load(m.sdv, base + rel + win[t]!) : zero;
    };
  }
  if (w.space === "local") {
    const stride = m.localStride;
    return (t) => {
      const rel = off(t) * eb;
      return rel >= 0 && rel + eb <= size ? load(m.ldv, t * stride + base + rel) : zero;
    };
  }
  const globals = m.globals;
  const k = w.param;
  return (t) => {
    const rel = off(t) * eb;
    const gm = globals[k]!;
    return rel >= 0 && rel + eb <= gm.dv.byteLength ? load(gm.dv, rel) : zero;
  };
}

/** Where `buffer` lives, for address operands (BufferPtr) and tile patterns. */
export function placementOf(layout: Layout, buffer: Buffer, span?: Span): Where {
  return where(layout, buffer, span);
}
