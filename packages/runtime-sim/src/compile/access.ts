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
  reportOob,
} from "../exec/hazards.js";
import { beforeGlobalWrite, type Machine, type Placed } from "../exec/machine.js";
import type { Layout } from "./layout.js";
import { AccessKind, type AccessQueue } from "../exec/access-batch.js";

export type NumFn = (t: number) => number;
export type BigFn = (t: number) => bigint;
/** A compiled per-thread effect. */
export type ThreadFn = (t: number) => void;

/**
 * Loads and stores of one element, compiled per state space into closures that take the thread
 * index: bounds (TX6005) and hazard checks, then the dtype's codec on the memory's DataView.
 * An access that reports in "collect" mode reads as the codec's zero / is dropped when out of
 * bounds, and proceeds otherwise.
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
  const { base, size, name, span } = w.placed;
  const zero = codec.wide ? 0n : 0;
  const oob = (t: number, rel: number): void =>
    reportOob(m, w.space, name, span, rel, eb, size, t, site, "reads");
  const load = codec.load as (dv: DataView, a: number) => number;
  if (batched && w.space !== "local") return deferredLoad(m, w, eb, off, site, load, zero);
  if (w.space === "shared") {
    const dv = m.sdv;
    const placed = w.placed;
    // The thread's CTA's shared window (0 outside a cluster of several CTAs).
    const win = m.win;
    if (dtype === "float32") {
      return (t) => {
        const rel = off(t) * eb;
        if (!(rel >= 0 && rel + eb <= size)) {
          oob(t, rel);
          return zero as number;
        }
        if (m.opts.track) {
          const a = base + rel + win[t]!;
          checkSharedRead(m, placed, a, eb, t, site);
          return load(dv, a);
        }
        return load(dv, base + rel + win[t]!);
      };
    }
    return (t) => {
      const rel = off(t) * eb;
      if (!(rel >= 0 && rel + eb <= size)) {
        oob(t, rel);
        return zero as number;
      }
      const a = base + rel + win[t]!;
      if (m.opts.track) checkSharedRead(m, placed, a, eb, t, site);
      return load(dv, a);
    };
  }
  if (w.space === "local") {
    const dv = m.ldv;
    const stride = m.localStride;
    return (t) => {
      const rel = off(t) * eb;
      if (!(rel >= 0 && rel + eb <= size)) {
        oob(t, rel);
        return zero as number;
      }
      if (m.wgmma.live > 0) m.wgmma.checkLocal(m, t, base + rel, eb, site, "reads");
      return load(dv, t * stride + base + rel);
    };
  }
  const globals = m.globals;
  const k = w.param;
  if (dtype === "float32") {
    return (t) => {
      const rel = off(t) * eb;
      const gm = globals[k]!;
      if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
        reportOob(m, w.space, name, span, rel, eb, gm.dv.byteLength, t, site, "reads");
        return zero as number;
      }
      if (m.opts.track && (gm.meta.writer || gm.meta.recordReads))
        checkGlobalRead(m, gm, rel, eb, t, site);
      return load(gm.dv, rel);
    };
  }
  return (t) => {
    const rel = off(t) * eb;
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
      reportOob(m, w.space, name, span, rel, eb, gm.dv.byteLength, t, site, "reads");
      return zero as number;
    }
    if (m.opts.track && (gm.meta.writer || gm.meta.recordReads))
      checkGlobalRead(m, gm, rel, eb, t, site);
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
  const { base, size, name, span } = w.placed;
  const oob = (t: number, rel: number): void =>
    reportOob(m, w.space, name, span, rel, eb, size, t, site, "writes");
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
    const placed = w.placed;
    // The thread's CTA's shared window (0 outside a cluster of several CTAs).
    const win = m.win;
    if (dtype === "float32") {
      return (t) => {
        const rel = off(t) * eb;
        const v = val(t);
        if (!(rel >= 0 && rel + eb <= size)) return oob(t, rel);
        const a = base + rel + win[t]!;
        if (m.opts.track) checkSharedWrite(m, placed, a, eb, t, site);
        store(dv, a, v);
      };
    }
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      if (!(rel >= 0 && rel + eb <= size)) return oob(t, rel);
      const a = base + rel + win[t]!;
      if (m.opts.track) checkSharedWrite(m, placed, a, eb, t, site);
      store(dv, a, v);
    };
  }
  if (w.space === "local") {
    const dv = m.ldv;
    const stride = m.localStride;
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      if (!(rel >= 0 && rel + eb <= size)) return oob(t, rel);
      if (m.wgmma.live > 0) m.wgmma.checkLocal(m, t, base + rel, eb, site, "writes");
      if (m.wgmma.dirty) m.wgmma.noteLocalWrite(t * stride + base + rel, eb, site);
      store(dv, t * stride + base + rel, v);
    };
  }
  const globals = m.globals;
  const k = w.param;
  if (dtype === "float32") {
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      const gm = globals[k]!;
      if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
        return reportOob(m, w.space, name, span, rel, eb, gm.dv.byteLength, t, site, "writes");
      }
      if (m.opts.track) {
        beforeGlobalWrite(m, gm);
        checkGlobalWrite(m, gm, rel, eb, t, site);
      }
      store(gm.dv, rel, v);
    };
  }
  return (t) => {
    const rel = off(t) * eb;
    const v = val(t);
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
      return reportOob(m, w.space, name, span, rel, eb, gm.dv.byteLength, t, site, "writes");
    }
    if (m.opts.track) {
      beforeGlobalWrite(m, gm);
      checkGlobalWrite(m, gm, rel, eb, t, site);
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
  const { base, size, name, span } = w.placed;
  const batch = m.batch;
  if (w.space === "shared") {
    const dv = m.sdv;
    const placed = w.placed;
    const win = m.win;
    const q = batch.queue(AccessKind.SharedRead, site, eb, placed, -1);
    return (t) => {
      const rel = off(t) * eb;
      if (!(rel >= 0 && rel + eb <= size)) {
        reportOob(m, "shared", name, span, rel, eb, size, t, site, "reads");
        return zero as number;
      }
      const a = base + rel + win[t]!;
      if (m.opts.track) {
        if (batch.deferring && m.speculative === 0) q.push(t, a);
        else checkSharedRead(m, placed, a, eb, t, site);
      }
      return load(dv, a);
    };
  }
  const globals = m.globals;
  const k = w.param;
  const q = batch.queue(AccessKind.GlobalRead, site, eb, undefined, k);
  return (t) => {
    const rel = off(t) * eb;
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
      reportOob(m, "global", name, span, rel, eb, gm.dv.byteLength, t, site, "reads");
      return zero as number;
    }
    if (m.opts.track) {
      if (batch.deferring && m.speculative === 0) q.push(t, rel);
      else if (gm.meta.writer || gm.meta.recordReads) checkGlobalRead(m, gm, rel, eb, t, site);
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
  const { base, size, name, span } = w.placed;
  const batch = m.batch;
  if (w.space === "shared") {
    const dv = m.sdv;
    const placed = w.placed;
    const win = m.win;
    const q = batch.queue(AccessKind.SharedWrite, site, eb, placed, -1);
    return (t) => {
      const rel = off(t) * eb;
      const v = val(t);
      if (!(rel >= 0 && rel + eb <= size)) {
        return reportOob(m, "shared", name, span, rel, eb, size, t, site, "writes");
      }
      const a = base + rel + win[t]!;
      if (m.opts.track) {
        if (batch.deferring) q.push(t, a);
        else checkSharedWrite(m, placed, a, eb, t, site);
      }
      store(dv, a, v);
    };
  }
  const globals = m.globals;
  const k = w.param;
  const q = batch.queue(AccessKind.GlobalWrite, site, eb, undefined, k);
  return (t) => {
    const rel = off(t) * eb;
    const v = val(t);
    const gm = globals[k]!;
    if (!(rel >= 0 && rel + eb <= gm.dv.byteLength)) {
      return reportOob(m, "global", name, span, rel, eb, gm.dv.byteLength, t, site, "writes");
    }
    if (m.opts.track) {
      if (batch.deferring) q.push(t, rel);
      else {
        beforeGlobalWrite(m, gm);
        checkGlobalWrite(m, gm, rel, eb, t, site);
      }
    }
    store(gm.dv, rel, v);
  };
}

/** Where `buffer` lives, for address operands (BufferPtr) and tile patterns. */
export function placementOf(layout: Layout, buffer: Buffer, span?: Span): Where {
  return where(layout, buffer, span);
}
