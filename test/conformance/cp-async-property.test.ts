// Issue 4, property tests of the cp.async contract (fast-check, fixed seed):
// - random legal configurations (dtypes of both sides with equal bytes, reinterpreting views via
//   view_as, views from sub and rearrange, chunk 4/8/16, thread or CTA scope with matching
//   launches, qualifiers in either order, every operand form) verify, compile, and run on the
//   simulated device to the bytes the seed's rules predict; every distinct module is assembled by ptxas;
// - mutations of legal configurations that break one rule raise a TirxError and never any other
//   exception; random garbage parameter values raise nothing but TirxError.
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { T, compile, sim, tensor, TirxError, verify, type DType, type PrimFunc } from "tirx-ts";
import { dtypeBytes } from "@tirx-ts/core";
import { assembleAll, type PtxFailure } from "./ptxas-pool.js";

const SEED = 0x7c0a5f;
/**
 * Runs of each refusal property (mutations, garbage parameter values). With this seed, 1000 runs
 * apply every mutation kind and every garbage key at least MIN_PER_KIND times (the tests count
 * them, so a lower count or another seed cannot silently drop a kind); 2000 found nothing more.
 */
const RUNS = 1000;
const MIN_PER_KIND = 15;
/**
 * Legal configurations simulated (and their modules assembled): each costs a compile, a
 * simulated launch and two ptxas runs, so fewer than the mutations; the test checks that these
 * runs still reach every value of every field of Config (and every pred × fill pair). With this
 * seed 150 runs reach them all (300 took 8 s more CPU, half of it ptxas); the operand forms'
 * cross product is test/conformance/cp-async-matrix.test.ts's (every legal cell on both archs
 * and the simulator).
 */
const LEGAL_RUNS = 150;
const SENTINEL = 0xa5;
const POLICY = 0x14f0000000000000n;
console.log(
  `cp-async property tests: fast-check seed ${SEED}, ${LEGAL_RUNS} legal runs, ${RUNS} of each other kind`,
);

const eb = dtypeBytes;
const ALL_DTYPES: DType[] = [
  "uint8",
  "int8",
  "uint16",
  "int16",
  "float16",
  "bfloat16",
  "uint32",
  "int32",
  "float32",
  "uint64",
  "int64",
  "float64",
];
const SHARED_DTYPES: DType[] = ["uint8", "uint16", "uint32", "uint64"];

interface Config {
  chunk: 4 | 8 | 16;
  cache: "ca" | "cg";
  space: "shared" | "shared::cta";
  hint: boolean;
  prefetch: 0 | 64 | 128 | 256;
  hintFirst: boolean;
  scope: "thread" | "cta";
  /** Threads (a multiple of 32 at CTA scope). */
  block: number;
  /** Atoms copied per thread, and the atom offset of the copied range in the row. */
  rep: number;
  off: number;
  /** Split the repeat axis in two (rep = r1 * r2) at thread scope. */
  split: boolean;
  aBuf: DType;
  aView: DType;
  sBuf: DType;
  sView: DType;
  scopeExplicit: boolean;
  pred: "none" | "true" | "false" | "const";
  fill: "none" | "src_size" | "src_size_imm" | "ignore_src" | "ignore_const";
  srcSizeImm: number;
}

const dtypesFor = (chunk: number, from: DType[]): DType[] =>
  from.filter((d) => chunk % eb(d) === 0);

const legalConfig: fc.Arbitrary<Config> = fc
  .record({
    chunk: fc.constantFrom(4, 8, 16) as fc.Arbitrary<4 | 8 | 16>,
    cg: fc.boolean(),
    space: fc.constantFrom("shared", "shared::cta") as fc.Arbitrary<"shared" | "shared::cta">,
    hint: fc.boolean(),
    prefetch: fc.constantFrom(0, 64, 128, 256) as fc.Arbitrary<0 | 64 | 128 | 256>,
    hintFirst: fc.boolean(),
    cta: fc.boolean(),
    warps: fc.integer({ min: 1, max: 2 }),
    threadBlock: fc.constantFrom(1, 7, 32, 64),
    rep: fc.integer({ min: 1, max: 4 }),
    off: fc.integer({ min: 0, max: 2 }),
    split: fc.boolean(),
    picks: fc.array(fc.nat(), { minLength: 4, maxLength: 4 }),
    scopeExplicit: fc.boolean(),
    pred: fc.constantFrom("none", "true", "false", "const") as fc.Arbitrary<Config["pred"]>,
    fill: fc.constantFrom(
      "none",
      "src_size",
      "src_size_imm",
      "ignore_src",
      "ignore_const",
    ) as fc.Arbitrary<Config["fill"]>,
    srcSizeImm: fc.nat(16),
  })
  .map((r): Config => {
    const pick = (xs: DType[], i: number): DType => xs[r.picks[i]! % xs.length]!;
    const all = dtypesFor(r.chunk, ALL_DTYPES);
    const shared = dtypesFor(r.chunk, SHARED_DTYPES);
    const rep = r.split && r.rep % 2 === 0 ? r.rep : r.rep;
    return {
      chunk: r.chunk,
      cache: r.cg && r.chunk === 16 ? "cg" : "ca",
      space: r.space,
      hint: r.hint,
      prefetch: r.prefetch,
      hintFirst: r.hintFirst,
      scope: r.cta ? "cta" : "thread",
      block: r.cta ? 32 * r.warps : r.threadBlock,
      rep,
      off: r.off,
      split: r.split && !r.cta && rep % 2 === 0,
      aBuf: pick(all, 0),
      aView: pick(all, 1),
      sBuf: pick(shared, 2),
      sView: pick(all, 3),
      scopeExplicit: r.scopeExplicit,
      pred: r.pred,
      fill: r.fill,
      srcSizeImm: r.srcSizeImm % (r.chunk + 1),
    };
  });

function opcodeOf(c: Config): string {
  const q = [...(c.hint ? ["L2::cache_hint"] : []), ...(c.prefetch ? [`L2::${c.prefetch}B`] : [])];
  if (!c.hintFirst) q.reverse();
  return [`cp.async.${c.cache}.${c.space}.global`, ...q].join(".");
}

/** Bytes per row (per thread): the copied atoms plus `off` before and one spare after. */
const rowBytes = (c: Config): number => (c.off + c.rep + 1) * c.chunk;

/** A mutation that makes a legal configuration illegal (applied while building). */
type Mutation =
  | { kind: "chunk"; value: unknown }
  | { kind: "misalign"; side: "dst" | "src" }
  | { kind: "swap" }
  | { kind: "opcode"; opcode: string }
  | { kind: "param"; key: string; value: unknown }
  | { kind: "shape" }
  | { kind: "oob" }
  | { kind: "operandType"; key: "pred" | "src_size" | "ignore_src" | "cache_policy"; dtype: DType }
  | { kind: "fillBoth" }
  | { kind: "policy"; drop: boolean }
  | { kind: "srcSizeImm"; value: number }
  | { kind: "scope"; value: unknown }
  | { kind: "ctaGroup"; warps: number };

function build(c: Config, m?: Mutation): PrimFunc {
  const row = rowBytes(c);
  const aRows = m?.kind === "oob" ? Math.max(1, c.block - 1) : c.block;
  const sRowElems = row / eb(c.sBuf);
  return T.function(
    "prop",
    {
      A: T.Tensor([aRows, row / eb(c.aBuf)], c.aBuf),
      B: T.Tensor([c.block, sRowElems], c.sBuf),
      flag: T.int32,
      pol: T.uint64,
    },
    ({ A, B, flag, pol }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: c.block }) });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([c.block, sRowElems], c.sBuf);
      const fillValue =
        c.sBuf === "uint64" ? 0xa5a5a5a5a5a5a5a5n : Number(`0x${"a5".repeat(eb(c.sBuf))}`);
      for (const j of T.range(sRowElems)) S.set([tid, j], T[c.sBuf](fillValue));
      T.cuda.cta_sync();
      // The copied atoms of each row, in bytes [lo, hi); misalignment shifts one side by a byte.
      const lo = c.off * c.chunk;
      const hi = lo + c.rep * c.chunk;
      const side = (buf: typeof A, bufDt: DType, viewDt: DType, shift: number, atoms: number) => {
        const e = eb(bufDt);
        const a = Math.floor((lo + shift) / e);
        const b = a + Math.ceil((atoms * c.chunk) / e);
        const v = viewDt;
        if (c.scope === "cta") {
          const w = m?.kind === "ctaGroup" ? m.warps : c.block / 32;
          return buf
            .sub(":", `${a}:${b}`)
            .view_as(v)
            .rearrange("(w t) (r v) -> w t r v", { w, t: 32, v: c.chunk / eb(v) });
        }
        const r = buf.sub(tid, `${a}:${b}`).view_as(v);
        return c.split
          ? r.rearrange("(r1 r2 v) -> r1 r2 v", { r1: 2, v: c.chunk / eb(v) })
          : r.rearrange("(r v) -> r v", { v: c.chunk / eb(v) });
      };
      const shiftD = m?.kind === "misalign" && m.side === "dst" ? 1 : 0;
      const shiftS = m?.kind === "misalign" && m.side === "src" ? 1 : 0;
      const sBuf = shiftD ? S.view_as("uint8") : S;
      const aBuf = shiftS ? A.view_as("uint8") : A;
      let dst = side(sBuf, shiftD ? "uint8" : c.sBuf, c.sView, shiftD, c.rep);
      let src = side(aBuf, shiftS ? "uint8" : c.aBuf, c.aView, shiftS, c.rep);
      if (m?.kind === "shape") src = side(A, c.aBuf, c.aView, 0, c.rep + 1);
      if (m?.kind === "swap") [dst, src] = [src, dst];
      const params: Record<string, unknown> = { chunk_bytes: c.chunk };
      if (c.scopeExplicit || c.scope === "cta") params["scope"] = c.scope;
      if (c.pred === "const") params["pred"] = true;
      else if (c.pred !== "none") params["pred"] = flag.ne(0);
      if (c.fill === "src_size") params["src_size"] = T.uint32(tid.floormod(c.chunk + 1));
      if (c.fill === "src_size_imm") params["src_size"] = c.srcSizeImm;
      if (c.fill === "ignore_src") params["ignore_src"] = tid.floormod(3).eq(0);
      if (c.fill === "ignore_const") params["ignore_src"] = false;
      if (c.hint) params["cache_policy"] = pol;
      let opcode = opcodeOf(c);
      if (m?.kind === "chunk") params["chunk_bytes"] = m.value;
      if (m?.kind === "opcode") opcode = m.opcode;
      if (m?.kind === "param") params[m.key] = m.value;
      if (m?.kind === "scope") params["scope"] = m.value;
      if (m?.kind === "fillBoth") {
        params["src_size"] = 0;
        params["ignore_src"] = tid.lt(1);
      }
      if (m?.kind === "policy") {
        if (m.drop) delete params["cache_policy"];
        else params["cache_policy"] = pol;
      }
      if (m?.kind === "srcSizeImm") params["src_size"] = m.value;
      if (m?.kind === "operandType") {
        const v = m.key === "cache_policy" ? pol : flag;
        params[m.key] = v.cast(m.dtype);
      }
      T.cuda.tile.apply(T.ptx[opcode], dst, src, params);
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const j of T.range(sRowElems)) B.set([tid, j], S.get([tid, j]));
    },
  );
}

function inputOf(c: Config): Uint8Array {
  const out = new Uint8Array(c.block * rowBytes(c));
  for (let i = 0; i < out.length; i++) {
    const v = 1 + ((i * 29 + c.chunk) % 250);
    out[i] = v === SENTINEL ? 3 : v;
  }
  return out;
}

function expected(c: Config, input: Uint8Array): Uint8Array {
  const row = rowBytes(c);
  const out = new Uint8Array(c.block * row).fill(SENTINEL);
  if (c.pred === "false") return out;
  for (let t = 0; t < c.block; t++) {
    const copied =
      c.fill === "src_size"
        ? t % (c.chunk + 1)
        : c.fill === "src_size_imm"
          ? c.srcSizeImm
          : c.fill === "ignore_src"
            ? t % 3 === 0
              ? 0
              : c.chunk
            : c.chunk;
    for (let r = 0; r < c.rep; r++) {
      const base = t * row + (c.off + r) * c.chunk;
      for (let b = 0; b < c.chunk; b++) out[base + b] = b < copied ? input[base + b]! : 0;
    }
  }
  return out;
}

const params = { seed: SEED, numRuns: RUNS, endOnFailure: true } as const;

/** Every value each field of a legal Config can take (from legalConfig's domains). */
const DOMAINS: { readonly [K in keyof Config]?: readonly unknown[] } = {
  chunk: [4, 8, 16],
  cache: ["ca", "cg"],
  space: ["shared", "shared::cta"],
  hint: [false, true],
  prefetch: [0, 64, 128, 256],
  hintFirst: [false, true],
  scope: ["thread", "cta"],
  block: [1, 7, 32, 64],
  rep: [1, 2, 3, 4],
  off: [0, 1, 2],
  split: [false, true],
  aBuf: ALL_DTYPES,
  aView: ALL_DTYPES,
  sBuf: SHARED_DTYPES,
  sView: ALL_DTYPES,
  scopeExplicit: [false, true],
  pred: ["none", "true", "false", "const"],
  fill: ["none", "src_size", "src_size_imm", "ignore_src", "ignore_const"],
};

describe("cp.async property tests (fast-check)", () => {
  test(`${LEGAL_RUNS} random legal configurations verify, compile and simulate to the expected bytes; every distinct PTX module is assembled by ptxas for sm_80 and sm_90`, async () => {
    let n = 0;
    // The values each field took, and the pred × fill pairs: the runs must reach all of them.
    const seen = new Map<string, Set<unknown>>();
    const saw = (key: string, v: unknown): void => {
      if (!seen.has(key)) seen.set(key, new Set());
      seen.get(key)!.add(v);
    };
    const modules = new Set<string>();
    // ptxas runs while the simulator works: every 64 new modules go to the pool at once (one
    // process per batch and arch), and the property yields to the event loop so they start.
    const pending: Promise<PtxFailure[]>[] = [];
    let batch: string[] = [];
    const flush = (): void => {
      if (batch.length === 0) return;
      const first = modules.size - batch.length;
      const jobs = batch.flatMap((text, i) =>
        ["sm_80", "sm_90"].map((arch) => ({ name: `case ${first + i}`, text, arch })),
      );
      pending.push(assembleAll(jobs, 1));
      batch = [];
    };
    await fc.assert(
      fc.asyncProperty(legalConfig, async (c) => {
        for (const k of Object.keys(DOMAINS)) saw(k, c[k as keyof Config]);
        saw("pred × fill", `${c.pred} × ${c.fill}`);
        const run = compile(build(c));
        if (!modules.has(run.ptx)) {
          modules.add(run.ptx);
          batch.push(run.ptx);
          if (batch.length >= 64) {
            flush();
            await new Promise((r) => setImmediate(r));
          }
        }
        n++;
        const input = inputOf(c);
        const a = tensor(input, {
          shape: [c.block, rowBytes(c) / eb(c.aBuf)],
          dtype: c.aBuf,
          device: sim(),
        });
        const b = tensor(new Uint8Array(c.block * rowBytes(c)).fill(0x3c), {
          shape: [c.block, rowBytes(c) / eb(c.sBuf)],
          dtype: c.sBuf,
          device: sim(),
        });
        run(a, b, c.pred === "false" ? 0 : 1, POLICY);
        const out = b.toBytes();
        const want = expected(c, input);
        const at = out.findIndex((v, k) => v !== want[k]);
        if (at >= 0)
          throw new Error(`${JSON.stringify(c)}: byte ${at} is ${out[at]}, expected ${want[at]}`);
      }),
      { ...params, numRuns: LEGAL_RUNS },
    );
    expect(n).toBe(LEGAL_RUNS);
    for (const [k, all] of Object.entries(DOMAINS)) {
      expect(
        all.filter((v) => !seen.get(k)?.has(v)),
        `values of ${k} never generated`,
      ).toEqual([]);
    }
    expect(seen.get("pred × fill")?.size).toBe(DOMAINS.pred!.length * DOMAINS.fill!.length);
    flush();
    const failures = (await Promise.all(pending)).flat();
    expect(failures.slice(0, 3)).toEqual([]);
    console.log(
      `cp-async property: ${modules.size} distinct PTX modules assembled for sm_80 and sm_90`,
    );
  }, 300_000);

  const QUALIFIER_LIKE = ["L2::cache_hint", "L2::64B", "L2::128B", "L2::256B"];
  const mutation: fc.Arbitrary<(c: Config) => Mutation | undefined> = fc.oneof(
    fc
      .constantFrom<unknown>(
        0,
        1,
        2,
        3,
        5,
        6,
        12,
        24,
        32,
        64,
        -4,
        -16,
        4.5,
        16.000001,
        NaN,
        Infinity,
        "16",
        "4",
        16n,
        true,
        false,
      )
      .map((value) => () => ({ kind: "chunk", value }) as Mutation),
    fc.constantFrom("dst", "src").map((side) => () => ({ kind: "misalign", side }) as Mutation),
    fc.constant(() => ({ kind: "swap" }) as Mutation),
    fc
      .oneof(
        fc.constantFrom(
          "cp.async.cg.shared.global.L2::128B.L2::64B",
          "cp.async.ca.shared::cluster.global",
          "cp.async.ca.global.shared",
          "cp.async.cx.shared.global",
          "cp.async.ca.shared.shared",
          "cp.async.ca.shared.global.L2::512B",
          "cp.async.ca.shared.global.L2::128b",
          "cp.async.ca.shared.global.L2::cache_hint.L2::cache_hint",
          "cp.async",
          "cp.async.",
          "cp.async.ca",
          "cp.async.ca.shared",
          "cp.asyncca.shared.global",
          "cp.async.bulk.shared.global",
          "",
          "ld.global",
        ),
        fc
          .string({ minLength: 1, maxLength: 12 })
          .filter((q) => !QUALIFIER_LIKE.includes(q) && !q.includes("."))
          .map((q) => `cp.async.ca.shared.global.${q}`),
        fc.string({ maxLength: 40 }).filter((s) => !/^cp\.async\.c[ag]\.shared/.test(s)),
      )
      .map((opcode) => () => ({ kind: "opcode", opcode }) as Mutation),
    fc
      .oneof(
        fc.constantFrom(
          "chunk",
          "chunkbytes",
          "src",
          "dst",
          "L2::128B",
          "cache_hint",
          "cg",
          "ca",
          "predicate",
          "elect",
        ),
        fc.string({ minLength: 1, maxLength: 10 }),
      )
      .filter(
        (k) =>
          !["chunk_bytes", "scope", "src_size", "ignore_src", "cache_policy", "pred"].includes(k) &&
          k !== "__proto__",
      )
      .map((key) => () => ({ kind: "param", key, value: 1 }) as Mutation),
    fc.constant((c: Config) =>
      c.scope === "thread" && !c.split ? ({ kind: "shape" } as Mutation) : undefined,
    ),
    fc.constant((c: Config) => (c.block > 1 ? ({ kind: "oob" } as Mutation) : undefined)),
    fc
      .record({
        key: fc.constantFrom("pred", "src_size", "ignore_src", "cache_policy") as fc.Arbitrary<
          "pred" | "src_size" | "ignore_src" | "cache_policy"
        >,
        dtype: fc.constantFrom<DType>(
          "int8",
          "int16",
          "int32",
          "uint16",
          "int64",
          "uint64",
          "uint32",
          "float16",
          "float32",
          "float64",
          "bool",
        ),
      })
      .map(({ key, dtype }) => (c: Config): Mutation | undefined => {
        const ok =
          key === "pred" || key === "ignore_src"
            ? dtype === "bool"
            : key === "src_size"
              ? dtype === "uint32" || dtype === "int32"
              : dtype === "uint64";
        if (ok) return undefined;
        if (key === "cache_policy" && !c.hint) return undefined;
        if ((key === "src_size" || key === "ignore_src") && c.fill !== "none") return undefined;
        return { kind: "operandType", key, dtype };
      }),
    fc.constant(() => ({ kind: "fillBoth" }) as Mutation),
    fc.constant((c: Config) => ({ kind: "policy", drop: c.hint }) as Mutation),
    fc
      .oneof(fc.integer({ min: 17, max: 2 ** 31 - 1 }), fc.integer({ min: -(2 ** 31), max: -1 }))
      .map(
        (value) =>
          (c: Config): Mutation | undefined =>
            c.fill === "ignore_src" || c.fill === "ignore_const"
              ? undefined
              : { kind: "srcSizeImm", value },
      ),
    fc
      .constantFrom<unknown>("warp", "CTA", "block", "", 0, 1, true, 32n)
      .map((value) => () => ({ kind: "scope", value }) as Mutation),
    fc.integer({ min: 0, max: 4 }).map(
      (w) =>
        (c: Config): Mutation | undefined =>
          c.scope === "cta" && w !== c.block / 32 ? { kind: "ctaGroup", warps: w } : undefined,
    ),
  );

  test(`${RUNS} mutations of legal configurations (wrong chunk, misalignment, swapped operands, bad qualifiers/params, mismatched shapes, out-of-bounds views, wrong operand dtypes) raise a TirxError, never another exception`, () => {
    let rejected = 0;
    const kinds = new Map<string, number>();
    fc.assert(
      fc.property(legalConfig, mutation, (c, mutate) => {
        const m = mutate(c);
        if (m === undefined) return; // that mutation does not apply to this configuration
        kinds.set(m.kind, (kinds.get(m.kind) ?? 0) + 1);
        let err: unknown;
        try {
          verify(build(c, m));
        } catch (e) {
          err = e;
        }
        if (!(err instanceof TirxError)) {
          throw new Error(
            `${JSON.stringify(c)} with ${JSON.stringify(m, (_k, v) => (typeof v === "bigint" ? `${v}n` : v))}: ${err === undefined ? "verified" : `threw ${String(err)}`}`,
          );
        }
        rejected++;
      }),
      params,
    );
    console.log(
      `cp-async property: ${rejected} of ${RUNS} mutations applied, all rejected with TirxError`,
    );
    expect(rejected).toBeGreaterThan(RUNS / 2);
    const ALL_KINDS: Mutation["kind"][] = [
      "chunk",
      "misalign",
      "swap",
      "opcode",
      "param",
      "shape",
      "oob",
      "operandType",
      "fillBoth",
      "policy",
      "srcSizeImm",
      "scope",
      "ctaGroup",
    ];
    console.log(`cp-async property: mutations applied per kind: ${JSON.stringify([...kinds])}`);
    for (const k of ALL_KINDS) {
      expect(kinds.get(k) ?? 0, `mutations of kind ${k}`).toBeGreaterThanOrEqual(MIN_PER_KIND);
    }
  }, 180_000);

  test(`${RUNS} random garbage values (fc.anything) for each parameter raise only TirxError (or verify, when the value happens to be legal)`, () => {
    const keys = ["chunk_bytes", "scope", "src_size", "ignore_src", "cache_policy", "pred"];
    const perKey = new Map<string, number>();
    fc.assert(
      fc.property(
        legalConfig,
        fc.constantFrom(...keys),
        fc.anything({
          withBigInt: true,
          withNullPrototype: true,
          withTypedArray: true,
          withDate: true,
          withMap: true,
          withSet: true,
        }),
        (c, key, value) => {
          perKey.set(key, (perKey.get(key) ?? 0) + 1);
          try {
            verify(build(c, { kind: "param", key, value }));
          } catch (e) {
            if (!(e instanceof TirxError)) {
              throw new Error(`${key} = ${fc.stringify(value)}: threw ${String(e)}`);
            }
          }
        },
      ),
      params,
    );
    console.log(`cp-async property: garbage values per parameter: ${JSON.stringify([...perKey])}`);
    for (const k of keys) {
      expect(perKey.get(k) ?? 0, `garbage values for ${k}`).toBeGreaterThanOrEqual(MIN_PER_KIND);
    }
  }, 180_000);
});
