import {
  knownDivisor,
  walkExpr,
  type Buffer,
  type DType,
  type Expr,
  type For,
  type Stmt,
  type Store,
} from "@tirx-ts/core";
import { elemBytes, intImmediate, memType } from "../types.js";
import { elementRef, type ElementRef } from "./address.js";
import { laneKey, type EmitContext } from "./context.js";
import type { ExprEmitter } from "./expr.js";
import { exprKey } from "./key.js";
import { elementReg } from "./register-array.js";
import { braced, loadBytes, loadWords, storeBytes, storeWords } from "./vector-bytes.js";

/** The widest vector access PTX has: `.v4` of 32-bit or `.v2` of 64-bit elements (PTX ISA "ld"). */
const MAX_VECTOR_BYTES = 16;

/** A set of accesses of one vectorized loop to `buffer` at `base + v` for every lane. */
interface Group {
  readonly buffer: Buffer;
  readonly dtype: DType;
  /** The element offset of lane 0 (the loop's first iteration). */
  readonly base: Expr;
  /** Elements per memory instruction: 1 (scalar), or a vector of up to 16 bytes. */
  readonly chunk: number;
  /** A key of the access at the loop variable (see `laneKey`). */
  readonly key: string;
}

/** `file:line:col` of a node, for PTX comments. */
export const where = (s: { span?: { file: string; line: number; col: number } }): string =>
  s.span ? `${s.span.file.split(/[\\/]/).pop()}:${s.span.line}:${s.span.col}` : "?";

function flatten(s: Stmt): Stmt[] {
  return s.kind === "Seq" ? s.stmts.flatMap(flatten) : [s];
}

function mentions(e: Expr, id: number): boolean {
  let found = false;
  walkExpr(e, (x) => {
    if (x.kind === "Var" && x.id === id) found = true;
  });
  return found;
}

/** `offset` as `base + v` (terms of a chain of additions, exactly one of them `v`), else undefined. */
function baseOf(offset: Expr, v: number): Expr | undefined {
  const terms: Expr[] = [];
  const visit = (x: Expr): void => {
    if (x.kind === "Binary" && x.op === "add") {
      visit(x.a);
      visit(x.b);
    } else terms.push(x);
  };
  visit(offset);
  const at = terms.findIndex((t) => t.kind === "Var" && t.id === v);
  if (at < 0) return undefined;
  const rest = terms.filter((_, i) => i !== at);
  if (rest.some((t) => mentions(t, v))) return undefined;
  return rest.reduce<Expr>(
    (acc, t) => ({ kind: "Binary", op: "add", a: acc, b: t, dtype: offset.dtype }),
    { kind: "IntImm", value: 0, dtype: offset.dtype },
  );
}

/** `e` with every variable that is bound to an immediate here replaced by its value. */
function bindStatics(ctx: EmitContext, e: Expr): Expr {
  const c = ctx.staticInt(e);
  if (c !== undefined) return { kind: "IntImm", value: Number(c), dtype: e.dtype };
  if (e.kind === "Binary") return { ...e, a: bindStatics(ctx, e.a), b: bindStatics(ctx, e.b) };
  if (e.kind === "Cast") return { ...e, value: bindStatics(ctx, e.value) };
  // A let-bound variable divides like its value (lets are immutable).
  if (e.kind === "Var") {
    const v = ctx.letValues.get(e.id);
    if (v) return bindStatics(ctx, v);
  }
  return e;
}

/** Alignment in bytes of a buffer's first element, by its storage. */
function bufferAlign(ctx: EmitContext, b: Buffer): number {
  const st = ctx.storage.buffers.get(b.id);
  return st?.kind === "static" ? st.align : b.align;
}

/**
 * Elements per access for `lanes` lanes of `dtype` at `base`: the widest vector (8 or 16 bytes;
 * 16-bit elements also 4, as one `.b32`; 8-bit elements, bool included, also 2 and 4) whose
 * element count is a power of two dividing the lanes and whose bytes divide both the buffer's
 * alignment and the base's known divisor in bytes (`knownDivisor`, with unrolled variables at
 * their values). 1 when none. PTX ISA "ld": a vector access must be aligned to its whole size.
 */
function chunkOf(ctx: EmitContext, b: Buffer, dtype: DType, base: Expr, lanes: number): number {
  const eb = elemBytes(dtype);
  const d = knownDivisor(bindStatics(ctx, base));
  const align = bufferAlign(ctx, b);
  let c = 1;
  while (c * 2 <= Math.min(lanes, MAX_VECTOR_BYTES / eb)) c *= 2;
  for (; c >= 2; c /= 2) {
    const bytes = c * eb;
    if (lanes % c !== 0 || (eb >= 4 && bytes < 8)) continue;
    if (align % bytes === 0 && (d === 0 || d % c === 0)) return c;
  }
  return 1;
}

/**
 * PTX operands of one access of `regs` (lane registers of `dtype`, 16 bits or wider): `.v4.f32`
 * and `{%f1, ...}` for 32/64-bit elements; 16-bit elements move in `.b32` pairs, packed and
 * unpacked with `mov.b32 %r, {%h1, %h2}` (PTX ISA "mov", vector forms).
 */
function vectorOperand(
  ctx: EmitContext,
  regs: readonly string[],
  dtype: DType,
): { type: string; words: string[]; pairs: [string, string, string][] } {
  if (regs.length === 1) return { type: memType(dtype), words: [regs[0]!], pairs: [] };
  if (elemBytes(dtype) !== 2) {
    return { type: `v${regs.length}.${memType(dtype)}`, words: [...regs], pairs: [] };
  }
  const pairs: [string, string, string][] = [];
  for (let i = 0; i < regs.length; i += 2)
    pairs.push([ctx.regs.fresh("r"), regs[i]!, regs[i + 1]!]);
  const words = pairs.map((p) => p[0]);
  return { type: words.length === 1 ? "b32" : `v${words.length}.b32`, words, pairs };
}

/** Load lanes `regs` of `dtype` at `at` as one access (see `vectorOperand`, `loadBytes`). */
function loadLanes(ctx: EmitContext, at: ElementRef, dtype: DType, regs: readonly string[]): void {
  if (elemBytes(dtype) === 1) return loadBytes(ctx, at, dtype, regs);
  const op = vectorOperand(ctx, regs, dtype);
  ctx.ins(`ld.${at.space}.${op.type} ${braced(op.words)}, ${at.ref}`);
  for (const [w, a, b] of op.pairs) ctx.ins(`mov.b32 {${a}, ${b}}, ${w}`);
}

/** Store lanes `values` of `dtype` at `at` as one access (see `vectorOperand`, `storeBytes`). */
function storeLanes(
  ctx: EmitContext,
  at: ElementRef,
  dtype: DType,
  values: readonly string[],
): void {
  if (elemBytes(dtype) === 1) return storeBytes(ctx, at, dtype, values);
  const op = vectorOperand(ctx, values, dtype);
  for (const [w, a, b] of op.pairs) ctx.ins(`mov.b32 ${w}, {${a}, ${b}}`);
  ctx.ins(`st.${at.space}.${op.type} ${at.ref}, ${braced(op.words)}`);
}

/**
 * Emit `s`, a `T.vectorized` loop of `n` iterations from `lo`, with vector memory accesses, or
 * return why it cannot (the caller then unrolls it). The body must be stores whose values read
 * memory only at `base + v` and call no op; every store and load at `base + v` of a memory buffer
 * becomes one access per chunk (the widest aligned vector, see `chunkOf`), loads first, stores
 * after the lanes' values are computed. This reordering keeps the serial meaning because no
 * buffer that is stored to is loaded elsewhere in the loop (one store may read its own element,
 * `A[v] = A[v] * 2`), and distinct buffers do not alias (TIRx assumes the same). Register arrays
 * take part element by element.
 */
export function emitVectorized(
  ctx: EmitContext,
  ex: ExprEmitter,
  s: For,
  lo: number,
  n: number,
): string | undefined {
  const v = s.var.id;
  const stores = flatten(s.body);
  const bad = stores.find((x) => x.kind !== "Store");
  if (bad) return `its body has a ${bad.kind} (only stores vectorize)`;
  const groups = new Map<string, Group>();
  const storeGroups: { store: Store; group?: Group }[] = [];
  const loaded = new Set<number>();
  let why: string | undefined;
  const group = (buffer: Buffer, dtype: DType, offset: Expr, at: string): Group | undefined => {
    if (ctx.elementRegs(buffer)) return undefined; // register arrays: element by element
    const base = baseOf(offset, v);
    const key = laneKey(buffer, dtype, offset);
    if (!base || key === undefined) {
      why ??= `the index of "${buffer.name}" at ${at} is not base + ${s.var.name}`;
      return undefined;
    }
    const first: Expr = {
      kind: "Binary",
      op: "add",
      a: base,
      b: { kind: "IntImm", value: lo, dtype: base.dtype },
      dtype: base.dtype,
    };
    const g = groups.get(key) ?? {
      buffer,
      dtype,
      base: first,
      key,
      chunk: chunkOf(ctx, buffer, dtype, first, n),
    };
    groups.set(key, g);
    return g;
  };
  for (const st of stores as Store[]) {
    walkExpr(st.value, (x) => {
      if (x.kind === "CallExpr") why ??= `the store at ${where(st)} calls ${x.op}`;
      if (x.kind !== "BufferLoad") return;
      loaded.add(x.buffer.id);
      group(x.buffer, x.dtype, x.offset, where(st));
    });
    storeGroups.push({ store: st, group: group(st.buffer, st.dtype, st.offset, where(st)) });
  }
  if (why) return why;
  const stored = storeGroups.map((x) => x.store.buffer.id);
  if (new Set(stored).size !== stored.length) return "it stores to one buffer twice";
  for (const { store } of storeGroups) {
    if (!loaded.has(store.buffer.id)) continue;
    const own = laneKey(store.buffer, store.dtype, store.offset);
    const others = [...groups.values()].filter(
      (g) => g.buffer.id === store.buffer.id && g.key !== own,
    );
    let readsElsewhere = storeGroups.length > 1 || others.length > 0;
    if (ctx.elementRegs(store.buffer)) {
      walkExpr(store.value, (x) => {
        if (
          x.kind === "BufferLoad" &&
          x.buffer.id === store.buffer.id &&
          exprKey(x.offset) !== exprKey(store.offset)
        )
          readsElsewhere = true;
      });
    }
    if (readsElsewhere)
      return `"${store.buffer.name}" is stored to and loaded elsewhere in the loop`;
  }
  const memGroups = [...groups.values()];
  if (memGroups.every((g) => g.chunk === 1)) {
    return memGroups.length === 0
      ? "it accesses no memory"
      : `no access is provably aligned to a vector's bytes (${minVector(memGroups)} or more)`;
  }
  ctx.comment(
    `T.vectorized at ${where(s)}: ${memGroups.map((g) => `"${g.buffer.name}" ${g.chunk === 1 ? "scalar" : `x${g.chunk}`}`).join(", ")}`,
  );
  // Loads of every lane, before any store; 8-bit copies keep their loads' words.
  const direct = directCopies(groups, storeGroups);
  const wordsOf = new Map<string, string[][]>();
  const lanesOf = new Map<string, string[]>();
  for (const g of memGroups) {
    if (!isLoaded(g, stores as Store[])) continue;
    if (direct.has(g.key)) {
      const words: string[][] = [];
      for (let k = 0; k < n; k += g.chunk)
        words.push(loadWords(ctx, access(ctx, ex, g, k), g.chunk / 4));
      wordsOf.set(g.key, words);
      continue;
    }
    const regs =
      copyTarget(ctx, g, storeGroups, s, lo, n) ??
      Array.from({ length: n }, () => ctx.reg(g.dtype));
    lanesOf.set(g.key, regs);
    for (let k = 0; k < n; k += g.chunk)
      loadLanes(ctx, access(ctx, ex, g, k), g.dtype, regs.slice(k, k + g.chunk));
  }
  // Each store: the value of every lane, then the stores.
  for (const { store, group: g } of storeGroups) {
    const words = g && wordsOf.get(wholeLoadKey(store) ?? "");
    if (g && words) {
      words.forEach((w, i) => storeWords(ctx, access(ctx, ex, g, i * g.chunk), w));
      continue;
    }
    const values: string[] = [];
    for (let k = 0; k < n; k++) {
      for (const [key, regs] of lanesOf) ctx.lanes.set(key, regs[k]!);
      ctx.scoped(() => {
        ctx.bind(v, intImmediate(lo + k, s.var.dtype));
        const regs = ctx.elementRegs(store.buffer);
        if (regs) ex.into(store.value, elementReg(ctx, regs, store.buffer, store.offset));
        else values.push(ex.toReg(ex.value(store.value), store.dtype));
      }, true);
      ctx.lanes.clear();
    }
    ctx.env.delete(v);
    if (!g) continue;
    for (let k = 0; k < n; k += g.chunk)
      storeLanes(ctx, access(ctx, ex, g, k), g.dtype, values.slice(k, k + g.chunk));
  }
  return undefined;
}

/** Bytes of the narrowest vector any of `groups` could use: 2 (8-bit), 4 (16-bit) or 8. */
function minVector(groups: readonly Group[]): number {
  return Math.min(...groups.map((g) => Math.max(2, Math.min(8, 2 * elemBytes(g.dtype)))));
}

/** The lane key of a store's value when it is a bare load of the store's dtype (a copy). */
function wholeLoadKey(store: Store): string | undefined {
  const x = store.value;
  return x.kind === "BufferLoad" && x.dtype === store.dtype
    ? laneKey(x.buffer, x.dtype, x.offset)
    : undefined;
}

/**
 * Keys of the int8/uint8 load groups of four or more elements per access whose every use is the
 * whole value of a store with the same chunk: a copy, whose `.u32` words go to the store as
 * loaded, with no unpacking into lanes and packing back (bool copies are excluded: a bool store
 * writes 1 for any nonzero byte).
 */
function directCopies(
  groups: ReadonlyMap<string, Group>,
  storeGroups: readonly { store: Store; group?: Group }[],
): Set<string> {
  const direct = new Set<string>();
  for (const g of groups.values())
    if (elemBytes(g.dtype) === 1 && g.dtype !== "bool" && g.chunk >= 4) direct.add(g.key);
  for (const { store, group } of storeGroups) {
    const whole = wholeLoadKey(store);
    if (whole !== undefined && group && groups.get(whole)?.chunk === group.chunk) continue;
    walkExpr(store.value, (x) => {
      if (x.kind === "BufferLoad") direct.delete(laneKey(x.buffer, x.dtype, x.offset) ?? "");
    });
  }
  return direct;
}

function isLoaded(g: Group, stores: readonly Store[]): boolean {
  let found = false;
  for (const st of stores) {
    walkExpr(st.value, (x) => {
      if (x.kind === "BufferLoad" && laneKey(x.buffer, x.dtype, x.offset) === g.key) found = true;
    });
  }
  return found;
}

/** The address of lanes `k ..` of group `g`. */
function access(ctx: EmitContext, ex: ExprEmitter, g: Group, k: number): ElementRef {
  const offset: Expr = {
    kind: "Binary",
    op: "add",
    a: g.base,
    b: { kind: "IntImm", value: k, dtype: g.base.dtype },
    dtype: g.base.dtype,
  };
  return elementRef(ctx, ex, g.buffer, offset, elemBytes(g.dtype));
}

/**
 * For a loop that only copies `g` into a register array (`a[v] = A[base + v]`), the array's
 * element registers of every lane, so the vector load writes them directly.
 */
function copyTarget(
  ctx: EmitContext,
  g: Group,
  stores: readonly { store: Store }[],
  s: For,
  lo: number,
  n: number,
): string[] | undefined {
  const only = stores.length === 1 ? stores[0]!.store : undefined;
  const regs = only && ctx.elementRegs(only.buffer);
  const x = only?.value;
  if (!regs || x?.kind !== "BufferLoad" || laneKey(x.buffer, x.dtype, x.offset) !== g.key)
    return undefined;
  const out: string[] = [];
  for (let k = 0; k < n; k++) {
    ctx.env.set(s.var.id, intImmediate(lo + k, s.var.dtype));
    out.push(elementReg(ctx, regs, only.buffer, only.offset));
  }
  ctx.env.delete(s.var.id);
  return out;
}
