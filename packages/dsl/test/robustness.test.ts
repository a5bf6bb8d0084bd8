/**
 * Robustness: for any input, building and compiling a kernel raises only TirxError. Each public
 * T.* entry point gets arbitrary values (fc.anything, bigint, symbols, NaN, huge and negative
 * numbers, strings, null-prototype objects, sparse arrays) in each argument position, inside a
 * T.function body and outside one; what builds is verified and compiled to PTX.
 */
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { PrimExpr, T, TileView } from "@tirx-ts/dsl";
import { DTYPES, isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { compile } from "tirx-ts";

type Fn = (...args: unknown[]) => unknown;
const call = (f: unknown, ...args: unknown[]): unknown => (f as Fn)(...args);

/** What kernel code has at hand: tensors, a shared tile, an mbarrier, indices. */
interface Ctx {
  readonly A: TileView;
  readonly B: TileView;
  readonly S: TileView;
  readonly bar: TileView;
  readonly tid: PrimExpr;
  readonly n: PrimExpr;
}

/** An argument: a fixed value, or one taken from the kernel being built. */
type Arg = (ctx: Ctx) => unknown;

const SYM = Symbol("x");
const weird: fc.Arbitrary<unknown> = fc.oneof(
  fc.anything({
    withBigInt: true,
    withBoxedValues: true,
    withNullPrototype: true,
    withObjectString: true,
    withSparseArray: true,
    withMap: true,
    withSet: true,
    withDate: true,
    withTypedArray: true,
    maxDepth: 2,
  }),
  fc.bigInt(),
  fc.constantFrom<unknown>(
    SYM,
    Symbol(),
    Symbol.iterator,
    NaN,
    Infinity,
    -Infinity,
    -0,
    2 ** 53,
    1e300,
    -1,
    -(2 ** 31),
    2 ** 31,
    2n ** 64n,
    -(2n ** 70n),
    Object.create(null),
    [],
    [undefined],
    // eslint-disable-next-line no-sparse-arrays
    [, 1],
    { toString: 5 },
    { valueOf: null, toString: null },
    { kind: "Slice", start: "a" },
    { kind: "Slice", start: 0, stop: 2, step: 0 },
    { kind: "TensorType", shape: "x", dtype: 5 },
    { kind: "ScalarType", dtype: SYM },
    { launch: {} },
    { grid: [1, 1, 1], block: [1, 1, 1] },
    { grid: [1, 1, 1], block: [32, 1, 1], dynamicSharedBytes: 0 },
    "",
    ":",
    "...",
    "0:4",
    "-1:",
    "99999999999999999999:",
    "a b -> b a",
    "(a b) -> a b",
    "x",
    "y",
    "cp.async",
    "cp.async.cg.shared.global",
    "cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes",
    "float32",
    "int32",
    "uint64",
    "bool",
    "constructor",
    "__proto__",
    "toString",
    () => undefined,
    () => 1,
  ),
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 }),
  fc.double(),
  fc.string({ maxLength: 8 }),
  fc.array(fc.oneof(fc.integer({ min: -4, max: 64 }), fc.bigInt(), fc.double()), {
    maxLength: 4,
  }),
);

const views = fc.constantFrom<Arg>(
  (c) => c.A,
  (c) => c.B,
  (c) => c.S,
  (c) => c.bar,
  (c) => c.A.sub(1),
  (c) => c.S.view_as("uint8"),
);

const fromCtx = fc.constantFrom<Arg>(
  (c) => c.A,
  (c) => c.B,
  (c) => c.S,
  (c) => c.bar,
  (c) => c.tid,
  (c) => c.n,
  (c) => c.tid.lt(4),
  (c) => c.tid.cast("uint64"),
  (c) => c.A.sub(0),
  (c) => c.bar.sub(0),
  (c) => c.bar.ptr([0]),
  (c) => T.ptx["cp.async.cg.shared.global"],
  (c) => T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"],
);

/** An argument: mostly `valid`, often anything at all, sometimes something from the kernel. */
function arg(valid: Arg): fc.Arbitrary<Arg> {
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant(valid) },
    { weight: 3, arbitrary: weird.map(value) },
    { weight: 1, arbitrary: fromCtx },
  );
}
/** A fixed argument that prints as its value in counterexamples. */
function value(v: unknown): Arg {
  return Object.assign(() => v, { [fc.toStringMethod]: () => fc.stringify(v) });
}
const any = (v: unknown): fc.Arbitrary<Arg> => arg(() => v);

/** A public entry point: its argument generators and how to call it. */
interface Entry {
  readonly name: string;
  readonly args: readonly fc.Arbitrary<Arg>[];
  readonly call: (ctx: Ctx, args: unknown[]) => unknown;
  /** Called where T.device_entry has not run yet (T.device_entry itself). */
  readonly beforeEntry?: boolean;
}

const anyDtype = fc.constantFrom(...DTYPES);

/** Use what an entry point returned, so that verify and codegen see it. */
function consume(r: unknown, ctx: Ctx): void {
  if (r instanceof PrimExpr) T.let_("r", r);
  else if (r instanceof TileView) {
    const v = r.get(r.shape.map(() => 0));
    T.let_("v", v);
    r.set(
      r.shape.map(() => 0),
      v,
    );
  } else if (r && typeof r === "object" && Symbol.iterator in r) {
    for (const i of r as Iterable<unknown>) {
      if (i instanceof PrimExpr) ctx.A.set([i, 0], 1.5);
    }
  }
}

const body = (): Arg => () => () => undefined;
const p = (...args: fc.Arbitrary<Arg>[]): readonly fc.Arbitrary<Arg>[] => args;

const entries: Entry[] = [
  {
    name: "T.function",
    args: p(any("k"), any({ X: T.Tensor([8], "float32"), m: T.int32 }), arg(body())),
    call: (_c, [name, params, b]) => T.function(name as string, params as {}, b as () => void),
  },
  {
    name: "T.Tensor",
    args: p(any([8, 4]), any("float16")),
    call: (_c, [s, d]) => T.Tensor(s as number[], d as "float32"),
  },
  { name: "T.Scalar", args: p(any("int32")), call: (_c, [d]) => T.Scalar(d as "int32") },
  {
    name: "T.device_entry",
    args: p(any({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) })),
    call: (_c, [o]) => call(T.device_entry, o),
    beforeEntry: true,
  },
  {
    name: "T.cuda.LaunchConfig",
    args: p(any(64), any(1), any(0)),
    call: (_c, [block, grid, dyn]) => {
      const cfg = T.cuda.LaunchConfig({
        block,
        grid,
        ...(dyn === 0 ? {} : { dynamic_shared_bytes: dyn }),
      } as never);
      T.device_entry({ launch: cfg });
    },
    beforeEntry: true,
  },
  ...(["thread_idx", "block_idx", "block_dim", "grid_dim"] as const).map((k): Entry => ({
    name: `T.cuda.${k}`,
    args: p(any("x")),
    call: (_c, [a]) => call(T.cuda[k], a),
  })),
  {
    name: "T.alloc_shared",
    args: p(any([4, 4]), any("float32"), any({ name: "tile", align: 16 })),
    call: (_c, [s, d, o]) => call(T.alloc_shared, s, d, o),
  },
  {
    name: "T.alloc_local",
    args: p(any([4]), any("int32"), any({ name: "regs" })),
    call: (_c, [s, d, o]) => call(T.alloc_local, s, d, o),
  },
  // Layouts: the constructors and the built-ins take any value too.
  { name: "T.S", args: p(any([4, 8]), any([1, "1@laneid"])), call: (_c, a) => call(T.S, ...a) },
  { name: "T.R", args: p(any([2]), any(["1@warpid"])), call: (_c, a) => call(T.R, ...a) },
  { name: "T.O", args: p(any("1@laneid")), call: (_c, a) => call(T.O, ...a) },
  {
    name: "T.TileLayout",
    args: p(any("S[(4, 8) : (1, 1@laneid)]"), any(undefined), any(undefined)),
    call: (_c, a) => call(T.TileLayout, ...a),
  },
  {
    name: "T.ComposeLayout",
    args: p(any(T.swizzle_mode("128B")), any(T.TileLayout("S[(8, 64) : (64, 1)]")), any("float16")),
    call: (_c, a) => call(T.ComposeLayout, ...a),
  },
  { name: "T.swizzle_mode", args: p(any("128B")), call: (_c, a) => call(T.swizzle_mode, ...a) },
  {
    name: "T.SwizzleLayout",
    args: p(any(3), any(3), any(3)),
    call: (_c, a) => call(T.SwizzleLayout, ...a),
  },
  {
    name: "T.layout.mma_sync_tile_layout",
    args: p(any("C"), any("m16n8k16"), any("float32"), any(16), any(8)),
    call: (_c, a) => call(T.layout.mma_sync_tile_layout, ...a),
  },
  {
    name: "T.layout.wgmma_tile_layout",
    args: p(any("D"), any(64), any(64), any("float32")),
    call: (_c, a) => call(T.layout.wgmma_tile_layout, ...a),
  },
  {
    name: "T.alloc_local with a layout",
    args: p(
      any([32, 4]),
      any("float32"),
      any({ layout: T.TileLayout("S[(32, 4) : (1@laneid, 1)]") }),
    ),
    call: (_c, [s, d, o]) => call(T.alloc_local, s, d, o),
  },
  {
    name: "T.range",
    args: p(any(4), any(undefined)),
    call: (_c, [a, b]) => call(T.range, a, b),
  },
  {
    name: "T.unroll",
    args: p(any(0), any(4)),
    call: (_c, [a, b]) => call(T.unroll, a, b),
  },
  {
    name: "T.if_",
    args: p(
      arg((c) => c.tid.lt(4)),
      arg(body()),
      any(undefined),
    ),
    call: (_c, [c, t, e]) => call(T.if_, c, t, e),
  },
  {
    name: "T.while_",
    args: p(
      arg((c) => () => c.tid.lt(4)),
      arg(body()),
    ),
    call: (_c, [c, b]) => call(T.while_, c, b),
  },
  {
    name: "T.let_",
    args: p(
      any("x"),
      arg((c) => c.tid),
    ),
    call: (_c, [n, v]) => call(T.let_, n, v),
  },
  {
    name: "T.if_then_else",
    args: p(
      arg((c) => c.tid.lt(1)),
      arg((c) => c.tid),
      any(0),
    ),
    call: (_c, [c, t, f]) => call(T.if_then_else, c, t, f),
  },
  {
    name: "T.slice",
    args: p(any(0), any(8), any(2)),
    call: (c, [a, b, s]) => c.A.sub(call(T.slice, a, b, s) as never),
  },
  {
    name: "dtype constructors",
    args: p(
      anyDtype.map(
        (d): Arg =>
          () =>
            d,
      ),
      arg((c) => c.tid),
    ),
    call: (_c, [d, v]) => call(T[d as "int32"], v),
  },
  ...(
    [
      "add",
      "sub",
      "mul",
      "div",
      "mod",
      "floordiv",
      "floormod",
      "min",
      "max",
      "lt",
      "le",
      "gt",
      "ge",
      "eq",
      "ne",
      "and",
      "or",
    ] as const
  ).map((k): Entry => ({
    name: `T.${k}`,
    args: p(
      arg((c) => c.tid),
      any(1),
    ),
    call: (_c, [a, b]) => call(T[k], a, b),
  })),
  { name: "T.not", args: p(arg((c) => c.tid.lt(1))), call: (_c, [a]) => call(T.not, a) },
  {
    name: "PrimExpr methods",
    args: p(
      fc
        .constantFrom(
          "add",
          "sub",
          "mul",
          "div",
          "mod",
          "floordiv",
          "floormod",
          "min",
          "max",
          "bitand",
          "bitor",
          "bitxor",
          "shl",
          "shr",
          "eq",
          "ne",
          "lt",
          "le",
          "gt",
          "ge",
          "and",
          "or",
          "not",
          "cast",
        )
        .map(
          (m): Arg =>
            () =>
              m,
        ),
      arg((c) => c.tid),
      any(3),
    ),
    call: (_c, [m, recv, b]) => {
      const r = recv instanceof PrimExpr ? recv : new PrimExpr(T.int32(0).expr);
      const method = (r as unknown as Record<string, Fn>)[m as string]!;
      return method.call(r, b);
    },
  },
  {
    name: "view.rearrange",
    args: p(views, any("(a b) c -> a b c"), any({ a: 8 })),
    call: (_c, [v, pat, s]) => call((v as TileView).rearrange.bind(v), pat, s),
  },
  {
    name: "view.sub",
    args: p(
      views,
      fc
        .array(
          arg((c) => c.tid),
          { maxLength: 4 },
        )
        .map(
          (as): Arg =>
            (c) =>
              as.map((a) => a(c)),
        ),
    ),
    call: (_c, [v, idx]) => (v as TileView).sub(...(idx as never[])),
  },
  {
    name: "view.view_as",
    args: p(views, any("uint32")),
    call: (_c, [v, d]) => call((v as TileView).view_as.bind(v), d),
  },
  {
    name: "view.get",
    args: p(
      views,
      arg((c) => [c.tid, 0]),
    ),
    call: (_c, [v, i]) => call((v as TileView).get.bind(v), i),
  },
  {
    name: "view.set",
    args: p(
      views,
      arg((c) => [c.tid, 0]),
      any(1.5),
    ),
    call: (_c, [v, i, x]) => call((v as TileView).set.bind(v), i, x),
  },
  {
    name: "view.ptr",
    args: p(
      views,
      arg(() => [0]),
    ),
    call: (_c, [v, i]) => call((v as TileView).ptr.bind(v), i),
  },
  {
    name: "T.cuda.tile.apply",
    args: p(
      arg(() => T.ptx["cp.async.cg.shared.global"]),
      arg((c) => c.S.rearrange("r (k v) -> r k v", { v: 4 }).sub(c.tid.floormod(16))),
      arg((c) => c.A.sub(c.tid.floormod(16), "0:16").rearrange("(k v) -> k v", { v: 4 })),
      any({ chunk_bytes: 16 }),
    ),
    call: (_c, [op, d, s, params]) => call(T.cuda.tile.apply, op, d, s, params),
  },
  {
    name: "T.ptx[name]",
    args: p(
      fc
        .oneof(
          fc.constantFrom("cp.async.ca.shared.global", "cp.async", "cp", "cp_async", "mbarier"),
          fc.string({ maxLength: 12 }),
          weird.filter(
            (v) => typeof v === "string" || typeof v === "symbol" || typeof v === "number",
          ),
        )
        .map(value),
    ),
    call: (c, [k]) => {
      const op = (T.ptx as Record<PropertyKey, unknown>)[k as PropertyKey];
      T.cuda.tile.apply(op as never, c.S.sub(c.tid.floormod(16)), c.A.sub(c.tid.floormod(16)), {
        chunk_bytes: 16,
      });
    },
  },
  ...(
    [
      ["T.ptx.cp", () => T.ptx.cp],
      ["T.ptx.cp.async_", () => T.ptx.cp.async_],
      ["T.ptx.cp.async", () => T.ptx.cp.async],
      ["T.ptx.cp.async_.bulk", () => T.ptx.cp.async_.bulk],
      ["T.ptx.mbarrier", () => T.ptx.mbarrier],
      ["T.ptx.mbarrier.arrive", () => T.ptx.mbarrier.arrive],
      ["T.ptx.fence", () => T.ptx.fence],
    ] as const
  ).map(([name, ns]): Entry => ({
    name: `${name}[member](...)`,
    args: p(
      fc.oneof(
        fc.constantFrom(...Object.keys(ns())).map(
          (k): Arg =>
            () =>
              k,
        ),
        weird
          .filter((v) => typeof v === "string" || typeof v === "symbol" || typeof v === "number")
          .map(value),
      ),
      arg((c) => c.bar),
      any(0),
    ),
    call: (_c, [k, a, b]) => {
      // Object.prototype and Function.prototype members are plain JS, not T.* entry points.
      if ((k as PropertyKey) in Function.prototype) return undefined;
      const m = (ns() as unknown as Record<PropertyKey, unknown>)[k as PropertyKey];
      if (typeof m === "function") return call(m, a, b);
      return undefined;
    },
  })),
  {
    name: "T.ptx.cp.async_ and bulk groups",
    args: p(
      fc
        .constantFrom(
          T.ptx.cp.async_.commit_group,
          T.ptx.cp.async_.wait_group,
          T.ptx.cp.async_.wait_all,
          T.ptx.cp.async_.bulk.commit_group,
          T.ptx.cp.async_.bulk.wait_group,
          T.ptx.cp.async_.bulk.wait_group_read,
        )
        .map(
          (f): Arg =>
            () =>
              f,
        ),
      any(0),
    ),
    call: (_c, [f, n]) => call(f, n),
  },
  {
    name: "T.ptx.mbarrier.*",
    args: p(
      fc
        .constantFrom(
          T.ptx.mbarrier.init,
          T.ptx.mbarrier.arrive,
          T.ptx.mbarrier.arrive.expect_tx,
          T.ptx.mbarrier.try_wait,
        )
        .map(
          (f): Arg =>
            () =>
              f,
        ),
      arg((c) => c.bar),
      any(1),
    ),
    call: (_c, [f, bar, x]) => call(f, bar, x),
  },
  {
    name: "T.ptx.fence.*",
    args: p(
      fc.constantFrom(T.ptx.fence.proxy_async, T.ptx.fence.mbarrier_init).map(
        (f): Arg =>
          () =>
            f,
      ),
      any(undefined),
    ),
    call: (_c, [f, x]) => call(f, x),
  },
];

let errors = 0;

/** Every error must be a TirxError; anything else fails the property with its stack. */
function onlyTirx(f: () => void): void {
  try {
    f();
  } catch (e) {
    if (!isTirxError(e)) throw e;
    // Rendering must work too (it reads the author's file, so only now and then).
    if (++errors % 64 === 0) expect(e.render()).toContain(e.code);
  }
}

let outside: Ctx | undefined;

const RUNS = Number(process.env["TIRX_FUZZ_RUNS"] ?? 500);

const PARAMS = { A: T.Tensor([64, 16], "float32"), B: T.Tensor([4096], "uint8"), n: T.int32 };
const LAUNCH = T.cuda.LaunchConfig({ grid: 1, block: 64 });

function kernel(entry: Entry, args: readonly Arg[]): PrimFunc {
  return T.function("fuzz", PARAMS, ({ A, B, n }) => {
    if (!entry.beforeEntry) T.device_entry({ launch: LAUNCH });
    // Built on first use: tracing records each T.* call with its source position, which costs.
    let S: TileView | undefined;
    let bar: TileView | undefined;
    let tid: PrimExpr | undefined;
    const ctx: Ctx = {
      A,
      B,
      n,
      get S() {
        return (S ??= T.alloc_shared([16, 16], "float32"));
      },
      get bar() {
        return (bar ??= T.alloc_shared([2], "uint64", { name: "bars" }));
      },
      get tid() {
        return (tid ??= entry.beforeEntry ? n : T.cuda.thread_idx("x"));
      },
    };
    if (!outside) {
      outside = { A, B, n, S: ctx.S, bar: ctx.bar, tid: ctx.tid };
    }
    consume(
      entry.call(
        ctx,
        args.map((a) => a(ctx)),
      ),
      ctx,
    );
  });
}

function check(entry: Entry, args: readonly Arg[]): void {
  let fn: PrimFunc | undefined;
  onlyTirx(() => {
    fn = kernel(entry, args);
  });
  if (fn) onlyTirx(() => void compileToPtx(fn!, { arch: "sm_90" }));
  // Outside a T.function body, with handles of a finished kernel.
  if (outside) {
    const ctx = outside;
    onlyTirx(() =>
      consume(
        entry.call(
          ctx,
          args.map((a) => a(ctx)),
        ),
        ctx,
      ),
    );
  }
}

describe("every T.* entry point raises only TirxError, for any argument", () => {
  for (const entry of entries) {
    test(entry.name, () => {
      fc.assert(
        fc.property(fc.tuple(...entry.args), (args) => check(entry, args)),
        { numRuns: RUNS },
      );
    });
  }

  test("verify, compileToPtx and compile take any value", () => {
    const good = kernel(entries[0]!, [() => "k", () => ({}), () => () => undefined]);
    const fnArb = fc.oneof(weird, fc.constant(good));
    fc.assert(
      fc.property(fnArb, weird, (fn, opts) => {
        onlyTirx(() => void verify(fn as PrimFunc));
        onlyTirx(() => void compileToPtx(fn as PrimFunc, opts as {}));
        onlyTirx(() => void compile(fn as PrimFunc, opts as never));
        onlyTirx(() => void compile(good, { target: "cuda", arch: opts } as never));
      }),
      { numRuns: 500 },
    );
  });
});

function code(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return e.code;
    throw e;
  }
  return "no error";
}

const inBody = (f: (A: TileView) => void): (() => PrimFunc) => {
  return () =>
    T.function("k", { A: T.Tensor([8, 4], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      f(A);
    });
};

describe("the reviewer's repros raise TirxError", () => {
  test("A.rearrange(undefined)", () => {
    expect(code(inBody((A) => A.rearrange(undefined as never)))).toBe("TX1010");
  });
  test("LaunchConfig with grid undefined; device_entry with launch {}", () => {
    expect(code(() => T.cuda.LaunchConfig({ grid: undefined as never, block: 128 }))).toBe(
      "TX2007",
    );
    expect(code(() => T.function("k", {}, () => T.device_entry({ launch: {} as never })))).toBe(
      "TX2007",
    );
  });
  test("compile(undefined), compile({}), compile(k, null)", () => {
    const k = inBody(() => undefined)();
    expect(code(() => compile(undefined as never))).toBe("TX1002");
    expect(code(() => compile({} as never))).toBe("TX1002");
    expect(code(() => compile(k, null as never))).toBe("TX1002");
    expect(code(() => compileToPtx(undefined as never))).toBe("TX1002");
    expect(code(() => verify({} as never))).toBe("TX1002");
  });
  test("T.Tensor(5n, ...) and bigint in messages", () => {
    expect(code(() => T.Tensor(5n as never, "float32"))).toBe("TX2003");
    expect(() => T.Tensor([5n] as never, "float32")).toThrow(/\[5n\]/);
    expect(code(() => T.function("k", {}, () => T.cuda.thread_idx(1n as never)))).toBe("TX1002");
    expect(code(inBody(() => T.alloc_shared([1n] as never, "float32")))).toBe("TX2003");
    expect(code(inBody(() => T.alloc_shared([4], "float32", { name: 5n as never })))).toBe(
      "TX1002",
    );
  });
  test("T.if_(c, undefined), T.function with a bad body or parameters", () => {
    expect(() => inBody(() => T.if_(true, undefined as never))()).toThrow(
      /T\.if_ needs a function for the then-branch, got undefined/,
    );
    expect(code(() => T.function("k", {}, 0 as never))).toBe("TX1002");
    expect(code(() => T.function("k", undefined as never, () => undefined))).toBe("TX1002");
    expect(code(inBody(() => T.alloc_shared([4], "float32", { name: true as never })))).toBe(
      "TX1002",
    );
  });
  test("symbols and null-prototype objects in cast, view_as, sub and wait_group", () => {
    expect(code(inBody((A) => A.get([0, 0]).cast(Symbol("d") as never)))).toBe("TX1003");
    expect(code(inBody((A) => A.view_as(Object.create(null) as never)))).toBe("TX1003");
    expect(code(inBody((A) => A.sub(Symbol("i") as never)))).toBe("TX1002");
    expect(code(inBody(() => T.ptx.cp.async_.wait_group(Symbol() as never)))).toBe("TX3022");
    expect(code(inBody(() => T.ptx.cp.async_.wait_group(Object.create(null) as never)))).toBe(
      "TX3022",
    );
  });
  test("bigint scope of a bulk copy", () => {
    const f = inBody((A) => {
      const S = T.alloc_shared([8, 4], "float32");
      const bars = T.alloc_shared([1], "uint64");
      T.cuda.tile.apply(
        T.ptx["cp.async.bulk.shared::cta.global.mbarrier::complete_tx::bytes"],
        S,
        A,
        { chunk_bytes: 128, mbar: bars.sub(0), scope: 5n },
      );
    });
    expect(code(() => verify(f()))).toMatch(/^TX4/);
  });
  test("T.ptx: unknown names, did you mean, and the cp.async alias", () => {
    expect(() => (T.ptx as unknown as Record<string, unknown>)["mbarier"]).toThrow(
      /did you mean T\.ptx\.mbarrier\?/,
    );
    expect(() => (T.ptx as unknown as Record<string, unknown>)["cp_async"]).toThrow(/TX1002/);
    expect(() => (T.ptx.cp.async as unknown as Record<string, unknown>)["commit_groups"]).toThrow(
      /did you mean T\.ptx\.cp\.async_\.commit_group\?/,
    );
    expect(T.ptx.cp.async).toBe(T.ptx.cp.async_);
    expect(code(inBody(() => T.ptx.cp.async.commit_group()))).toBe("no error");
    expect(T.ptx["cp.async.ca.shared.global"]?.opcode).toBe("cp.async.ca.shared.global");
    expect((T.ptx as unknown as Record<string, unknown>)["then"]).toBeUndefined();
  });
  test("free comparison and logic functions", () => {
    const f = inBody((A) => {
      const x = A.get([0, 0]);
      const c = T.and(T.le(x, 1), T.or(T.gt(x, 0), T.not(T.eq(x, 2))));
      T.if_(T.and(c, T.ne(T.div(3, 2), T.mod(5, 3))), () =>
        A.set([0, 0], T.ge(x, 1).cast("float32")),
      );
    });
    expect(code(() => compileToPtx(f()))).toBe("no error");
  });
});
