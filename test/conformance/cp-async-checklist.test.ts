// Issue 4: every line of the cp.async conformance checklist, as named tests. Each line has a
// legal input at the rule's edge that is accepted (verified, compiled, and where it matters
// assembled by ptxas and simulated) and an illegal/edge one that is rejected with a TirxError of
// the specific code at the author's tile.apply line (marked CHECK-APPLY below), or, for runtime
// semantics, the bytes it produces on the simulated device.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import {
  T,
  compile,
  sim,
  tensor,
  TirxError,
  verify,
  type DType,
  type PrimExpr,
  type PrimFunc,
  type TileView,
} from "tirx-ts";
import { dtypeBytes } from "@tirx-ts/core";
import { assembleLater } from "../util/ptxas-deferred.js";

const FILE = fileURLToPath(import.meta.url);
const SOURCE = readFileSync(FILE, "utf8").split("\n");
const lineOf = (marker: string): number =>
  SOURCE.findIndex((l) => l.trimEnd().endsWith(marker) && /T\.|view_as/.test(l)) + 1;
const APPLY_LINE = lineOf("// CHECK-APPLY");
const SENTINEL = 0xa5;
const POLICY = 0x14f0000000000000n;

const eb = dtypeBytes;

interface H {
  A: TileView;
  B: TileView;
  S: TileView;
  tid: PrimExpr;
  flag: PrimExpr;
  pol: PrimExpr;
}

/** One test kernel: `(A global, B global, flag int32, pol uint64)`, one cp.async tile.apply. */
interface K {
  opcode?: string;
  chunk?: number;
  params?: (h: H) => Record<string, unknown>;
  /** [dst, src]; default: thread tid's row of S and A, split into chunk-sized atoms. */
  views?: (h: H) => [unknown, unknown];
  adtype?: DType;
  sdtype?: DType;
  ashape?: number[];
  sshape?: number[];
  block?: number;
  dynamic?: boolean;
  salign?: number;
  /** Statements after the apply; default: commit, wait_group 0, cta_sync, copy row tid to B. */
  after?: (h: H) => void;
  /** Fill S with SENTINEL by plain stores first (default true). */
  prefill?: boolean;
  /** Replace the opcode object (for non-opcode first operands). */
  op?: unknown;
  rawParams?: unknown;
}

function rowView(v: TileView, tid: PrimExpr, chunk: number): TileView {
  return v.sub(tid, ":").rearrange("(r v) -> r v", { v: chunk / eb(v.dtype) });
}

function kernel(k: K = {}): PrimFunc {
  const chunk = k.chunk ?? 16;
  const block = k.block ?? 32;
  const adtype = k.adtype ?? "uint8";
  const sdtype = k.sdtype ?? "uint8";
  const ashape = k.ashape ?? [block, 32 / eb(adtype)];
  const sshape = k.sshape ?? [block, 32 / eb(sdtype)];
  return T.function(
    "checklist",
    {
      A: T.Tensor(ashape, adtype),
      B: T.Tensor(sshape, sdtype),
      flag: T.int32,
      pol: T.uint64,
    },
    ({ A, B, flag, pol }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: 1,
          block,
          ...(k.dynamic ? { dynamic_shared_bytes: 8192 } : {}),
        }),
      });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared(sshape, sdtype, {
        ...(k.dynamic ? { dynamic: true } : {}),
        ...(k.salign ? { align: k.salign } : {}),
      });
      const h: H = { A, B, S, tid, flag, pol };
      const cols = sshape[1]!;
      const fill =
        sdtype === "uint64" ? 0xa5a5a5a5a5a5a5a5n : Number(`0x${"a5".repeat(eb(sdtype))}`);
      if (k.prefill ?? true) {
        for (const j of T.range(cols)) S.set([tid, j], T[sdtype](fill));
        T.cuda.cta_sync();
      }
      const [d, s] = k.views ? k.views(h) : [rowView(S, tid, chunk), rowView(A, tid, chunk)];
      const params =
        "rawParams" in k ? k.rawParams : { chunk_bytes: chunk, ...(k.params ? k.params(h) : {}) };
      const op = k.op ?? T.ptx[k.opcode ?? "cp.async.ca.shared.global"];
      // prettier-ignore
      T.cuda.tile.apply(op as never, d as TileView, s as TileView, params as Record<string, unknown>); // CHECK-APPLY
      if (k.after) k.after(h);
      else {
        T.ptx.cp.async_.commit_group();
        T.ptx.cp.async_.wait_group(0);
        T.cuda.cta_sync();
        for (const j of T.range(cols)) B.set([tid, j], S.get([tid, j]));
      }
    },
  );
}

/** Build and verify; the TirxError it raises (or a test failure when it verifies / throws else). */
function rejection(k: K | (() => PrimFunc)): TirxError {
  try {
    verify(typeof k === "function" ? k() : kernel(k));
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw new Error(`expected a TirxError, got ${String(e)}`);
  }
  throw new Error("expected a TirxError, but the kernel verified");
}

/** Rejected with `code` at the tile.apply line of this file (or `line`), message matching `text`. */
function rejects(
  k: K | (() => PrimFunc),
  code: string,
  text?: RegExp,
  line = APPLY_LINE,
): TirxError {
  const e = rejection(k);
  expect(e.code, e.message).toBe(code);
  expect(e.span?.file).toBe(FILE);
  expect(e.span?.line, e.message).toBe(line);
  if (text) expect(e.text).toMatch(text);
  return e;
}

/** Verified, compiled, and (optionally) assembled by ptxas for sm_80; returns the PTX. */
function accepts(k: K, opts: { ptxas?: boolean } = {}): string {
  const run = compile(kernel(k));
  // Queued: ptxas assembles this file's modules in a few merged runs after its tests (a module
  // it refuses fails the file, named with its opcode).
  if (opts.ptxas ?? true) assembleLater(run.ptx, "sm_80", k.opcode ?? "module");
  return run.ptx;
}

/** Run on the simulator with A = `input` bytes (default 1..n, none 0 or SENTINEL); B's bytes. */
function simulate(k: K, flag = 1, input?: Uint8Array): { out: Uint8Array; input: Uint8Array } {
  const block = k.block ?? 32;
  const adtype = k.adtype ?? "uint8";
  const sdtype = k.sdtype ?? "uint8";
  const ashape = k.ashape ?? [block, 32 / eb(adtype)];
  const sshape = k.sshape ?? [block, 32 / eb(sdtype)];
  const aBytes = ashape[0]! * ashape[1]! * eb(adtype);
  const bBytes = sshape[0]! * sshape[1]! * eb(sdtype);
  const x =
    input ??
    Uint8Array.from({ length: aBytes }, (_, i) => {
      const v = 1 + ((i * 11) % 200);
      return v === SENTINEL ? 7 : v;
    });
  const run = compile(kernel(k));
  const a = tensor(x, { shape: ashape, dtype: adtype, device: sim() });
  const b = tensor(new Uint8Array(bBytes).fill(0x3c), {
    shape: sshape,
    dtype: sdtype,
    device: sim(),
  });
  run(a, b, flag, POLICY);
  return { out: b.toBytes(), input: x };
}

const cpLines = (ptx: string): string[] =>
  ptx
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => /^(@!?%p\d+ )?cp\.async\.c[ag]\./.test(l));

// ---------------------------------------------------------------------------------------------
describe("## Call", () => {
  describe("`T.cuda.tile.apply(T.ptx[opcode], dst, src, { chunk_bytes, scope?, src_size?, ignore_src?, cache_policy?, pred? })`", () => {
    test("accepts a call with every parameter (pred, src_size, cache_policy, explicit scope)", () => {
      const ptx = accepts({
        opcode: "cp.async.ca.shared.global.L2::cache_hint",
        params: (h) => ({
          scope: "thread",
          pred: h.flag.ne(0),
          src_size: T.uint32(8),
          cache_policy: h.pol,
        }),
      });
      expect(cpLines(ptx)).toEqual([
        expect.stringMatching(
          /^@%p\d+ cp\.async\.ca\.shared\.global\.L2::cache_hint \[%r\d+\], \[%rd\d+\], 16, 8, %rd\d+;$/,
        ),
        expect.stringMatching(/\[%r\d+\+16\], \[%rd\d+\+16\], 16, 8, %rd\d+;$/),
      ]);
    });
    test("rejects a first operand that is not T.ptx[opcode], and parameters that are not an object (TX1002)", () => {
      rejects({ op: "cp.async.ca.shared.global" }, "TX1002", /opcode such as T\.ptx/);
      rejects({ rawParams: 16 }, "TX1002", /parameters must be an object/);
      rejects({ rawParams: null }, "TX1002", /parameters must be an object/);
      rejects({ params: () => ({ pred: {} }) }, "TX1002", /parameter pred must be/);
    });
  });

  describe("Operand order is dst (shared), src (global). Only the listed keys are parameters; anything else (e.g. an unknown key, or a qualifier passed as a parameter) is rejected.", () => {
    test("accepts (dst shared, src global)", () => {
      accepts({});
    });
    test("rejects (src global, dst shared) swapped: TX3011", () => {
      rejects(
        { views: (h) => [rowView(h.A, h.tid, 16), rowView(h.S, h.tid, 16)] },
        "TX3011",
        /shared-to-global is not a cp\.async/,
      );
    });
    test('rejects unknown keys with "did you mean": TX3004', () => {
      rejects(
        { params: () => ({ chunk_byte: 16 }) },
        "TX3004",
        /unknown parameter "chunk_byte".*did you mean "chunk_bytes"\?/,
      );
      rejects({ params: () => ({ srcsize: 4 }) }, "TX3004", /did you mean "src_size"\?/);
      rejects({ params: () => ({ ignore_source: true }) }, "TX3004", /did you mean "ignore_src"\?/);
      rejects({ params: () => ({ cachepolicy: 1n }) }, "TX3004", /did you mean "cache_policy"\?/);
      rejects({ params: () => ({ prd: true }) }, "TX3004", /did you mean "pred"\?/);
      rejects({ params: () => ({ elect_one: true }) }, "TX3004", /unknown parameter "elect_one"/);
    });
    test("rejects a qualifier passed as a parameter, naming the opcode it belongs in: TX3004", () => {
      rejects(
        { params: () => ({ "L2::128B": true }) },
        "TX3004",
        /"L2::128B" is an opcode qualifier.*T\.ptx\["cp\.async\.ca\.shared\.global\.L2::128B"\]/,
      );
      rejects(
        { params: () => ({ cache_hint: true }) },
        "TX3004",
        /opcode qualifier.*L2::cache_hint/,
      );
      rejects(
        { params: () => ({ cg: true }) },
        "TX3004",
        /T\.ptx\["cp\.async\.cg\.shared\.global"\]/,
      );
      rejects({ params: () => ({ prefetch: 128 }) }, "TX3004", /unknown parameter "prefetch"/);
    });
  });

  describe("Opcode: `cp.async.{ca|cg}.shared{::cta}.global{.L2::cache_hint}{.L2::64B|.L2::128B|.L2::256B}`. Unknown qualifiers, two prefetch sizes, wrong state spaces are rejected.", () => {
    test("accepts all 32 spellings (ca/cg × shared/shared::cta × hint × prefetch), and the qualifiers in either order; ptxas agrees", () => {
      for (const cache of ["ca", "cg"])
        for (const space of ["shared", "shared::cta"])
          for (const hint of [false, true])
            for (const pf of ["", ".L2::64B", ".L2::128B", ".L2::256B"]) {
              const orders =
                hint && pf
                  ? [`.L2::cache_hint${pf}`, `${pf}.L2::cache_hint`]
                  : [`${hint ? ".L2::cache_hint" : ""}${pf}`];
              for (const q of orders) {
                const opcode = `cp.async.${cache}.${space}.global${q}`;
                const ptx = accepts(
                  { opcode, params: (h) => (hint ? { cache_policy: h.pol } : {}) },
                  { ptxas: space === "shared::cta" || q.startsWith(".L2::2") },
                );
                expect(cpLines(ptx)[0]).toContain(`${opcode} [`);
              }
            }
    });
    test('rejects misspelled qualifiers and cache operators with "did you mean": TX3001', () => {
      rejects(
        { opcode: "cp.async.ca.shared.global.L2::128b" },
        "TX3001",
        /unknown qualifier "\.L2::128b"; did you mean "\.L2::128B"\?/,
      );
      rejects(
        { opcode: "cp.async.ca.shared.global.L2::cache_hnt" },
        "TX3001",
        /did you mean "\.L2::cache_hint"\?/,
      );
      rejects(
        { opcode: "cp.async.ca.shared.global.L2::512B" },
        "TX3001",
        /unknown qualifier "\.L2::512B"/,
      );
      rejects(
        { opcode: "cp.async.cs.shared.global" },
        "TX3001",
        /must be \.ca or \.cg, got "\.cs"; did you mean "\.ca"\?/,
      );
      rejects({ opcode: "cp.async.shared.global" }, "TX3001", /must be \.ca or \.cg/);
      rejects(
        {
          opcode: "cp.async.ca.shared.global.L2::cache_hint.L2::cache_hint",
          params: (h) => ({ cache_policy: h.pol }),
        },
        "TX3001",
        /appears twice/,
      );
      rejects({ opcode: "cp.async.ca.shared.global." }, "TX3001", /unknown qualifier/);
    });
    test("rejects two prefetch sizes: TX3003", () => {
      rejects(
        { opcode: "cp.async.ca.shared.global.L2::128B.L2::256B" },
        "TX3003",
        /two prefetch sizes/,
      );
      rejects(
        {
          opcode: "cp.async.cg.shared.global.L2::64B.L2::cache_hint.L2::64B",
          params: (h) => ({ cache_policy: h.pol }),
        },
        "TX3003",
      );
    });
    test("rejects wrong state spaces: TX3002", () => {
      rejects(
        { opcode: "cp.async.ca.shared::cluster.global" },
        "TX3002",
        /::cluster is not allowed/,
      );
      rejects(
        { opcode: "cp.async.ca.global.shared" },
        "TX3002",
        /shared to global is not a cp\.async form/,
      );
      rejects(
        { opcode: "cp.async.ca.shared.local" },
        "TX3002",
        /source state space must be \.global/,
      );
      rejects({ opcode: "cp.async.ca.shard.global" }, "TX3002", /did you mean "\.shared"\?/);
      rejects({ opcode: "cp.async.ca.shared.globl" }, "TX3002", /did you mean "\.global"\?/);
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("## Parameters", () => {
  describe("`chunk_bytes`: required static 4, 8 or 16; never inferred from the layout. `.cg` requires 16.", () => {
    test("accepts .ca with 4, 8 and 16 and .cg with 16; the PTX copy size is chunk_bytes", () => {
      for (const chunk of [4, 8, 16]) {
        const ptx = accepts({ chunk });
        expect(cpLines(ptx)[0]).toMatch(new RegExp(`, ${chunk};$`));
        expect(cpLines(ptx).length).toBe(32 / chunk);
      }
      expect(cpLines(accepts({ opcode: "cp.async.cg.shared.global" }))[0]).toMatch(/, 16;$/);
    });
    test("rejects a missing chunk_bytes even where the layout has 16-byte rows: TX3005", () => {
      rejects({ rawParams: {} }, "TX3005", /never inferred/);
      rejects({ rawParams: { scope: "thread" } }, "TX3005");
    });
    test('rejects 0, 2, 12, 32, 16.5, "16", 16n and a runtime value: TX3006', () => {
      for (const c of [0, 2, 12, 32, 16.5, "16", 16n, true]) {
        rejects({ rawParams: { chunk_bytes: c } }, "TX3006", /constant 4, 8 or 16/);
      }
      rejects({ params: (h) => ({ chunk_bytes: h.flag }) }, "TX3006", /runtime value/);
    });
    test(".cg with 4 or 8 bytes: TX3007 (with the fix: use .ca)", () => {
      rejects({ opcode: "cp.async.cg.shared.global", chunk: 8 }, "TX3007", /use \.ca/);
      rejects({ opcode: "cp.async.cg.shared::cta.global.L2::64B", chunk: 4 }, "TX3007");
    });
  });

  describe('`scope`: "thread" (default) or "cta". At CTA scope the operands carry explicit `(warp, lane)` group axes in front; missing group axes are rejected. Scope elects no issuing thread.', () => {
    const cta = (v: TileView, w: number, c = 16): TileView =>
      v.rearrange("(w t) (r c) -> w t r c", { w, t: 32, c: c / eb(v.dtype) });
    test("accepts thread scope by default and explicitly: one cp.async per atom of the thread's row", () => {
      expect(cpLines(accepts({})).length).toBe(2);
      expect(cpLines(accepts({ params: () => ({ scope: "thread" }) })).length).toBe(2);
    });
    test("accepts CTA scope with (warp, lane) group axes; every thread issues (no election), each row arrives", () => {
      const k: K = {
        block: 128,
        params: () => ({ scope: "cta" }),
        views: (h) => [cta(h.S, 4), cta(h.A, 4)],
      };
      const ptx = accepts(k);
      expect(ptx).not.toMatch(/elect|%laneid/);
      expect(cpLines(ptx).length).toBe(2);
      expect(cpLines(ptx)[0]).toMatch(/^cp\.async/); // no guard: no issuing thread is elected
      const { out, input } = simulate(k);
      expect([...out]).toEqual([...input]);
      // Two warps at CTA scope in a 64-thread CTA, with a (warp, lane, element) shape (no repeat).
      accepts({
        block: 64,
        chunk: 16,
        params: () => ({ scope: "cta" }),
        views: (h) => [
          h.S.rearrange("(w t) (r c) -> w t r c", { w: 2, t: 32, c: 16 }).sub(":", ":", 0, ":"),
          h.A.rearrange("(w t) (r c) -> w t r c", { w: 2, t: 32, c: 16 }).sub(":", ":", 1, ":"),
        ],
      });
    });
    test('rejects scope "warp", "Thread" and 5: TX3008', () => {
      for (const scope of ["warp", "Thread", "cluster", 5])
        rejects({ params: () => ({ scope }) }, "TX3008");
    });
    test("rejects CTA-scope operands without the lane axis (missing group axes): TX3009", () => {
      rejects(
        {
          block: 128,
          params: () => ({ scope: "cta" }),
          views: (h) => [
            h.S.rearrange("a (r c) -> a r c", { c: 16 }),
            h.A.rearrange("a (r c) -> a r c", { c: 16 }),
          ],
        },
        "TX3009",
        /no lane axis of 32/,
      );
      // Group axes on one side only.
      rejects(
        {
          block: 128,
          params: () => ({ scope: "cta" }),
          views: (h) => [cta(h.S, 4), h.A.rearrange("a (r c) -> a r c", { c: 16 })],
        },
        "TX3009",
        /src must have shape/,
      );
      // Thread-scope views at CTA scope.
      rejects({ params: () => ({ scope: "cta" }) }, "TX3009");
    });
    test("rejects a warp axis whose extent is not the launch's warp count, and a CTA of partial warps: TX3010", () => {
      rejects(
        {
          block: 64,
          ashape: [128, 32],
          sshape: [128, 32],
          prefill: false,
          after: () => {},
          params: () => ({ scope: "cta" }),
          views: (h) => [cta(h.S, 4), cta(h.A, 4)],
        },
        "TX3010",
        /extent 4, but the launch has 2 warps/,
      );
      rejects(
        {
          block: 48,
          ashape: [128, 32],
          sshape: [128, 32],
          prefill: false,
          after: () => {},
          params: () => ({ scope: "cta" }),
          views: (h) => [cta(h.S, 4), cta(h.A, 4)],
        },
        "TX3010",
        /whole warps/,
      );
    });
  });

  describe("`src_size`: runtime byte count in 0..chunk_bytes (an immediate outside that range is rejected); copies that prefix and zero-fills the rest. Mutually exclusive with `ignore_src`.", () => {
    test("accepts the edge immediates 0 and chunk_bytes (emitted as immediates) and a runtime uint32/int32", () => {
      expect(cpLines(accepts({ chunk: 8, params: () => ({ src_size: 0 }) }))[0]).toMatch(
        /, 8, 0;$/,
      );
      expect(cpLines(accepts({ chunk: 8, params: () => ({ src_size: T.uint32(8) }) }))[0]).toMatch(
        /, 8, 8;$/,
      );
      expect(
        cpLines(accepts({ params: (h) => ({ src_size: T.uint32(h.tid.floormod(17)) }) }))[0],
      ).toMatch(/, 16, %r\d+;$/);
      accepts({ params: (h) => ({ src_size: h.tid.floormod(17) }) });
    });
    test("rejects immediates outside 0..chunk_bytes: TX3019", () => {
      rejects({ params: () => ({ src_size: 17 }) }, "TX3019", /17 is outside 0\.\.16/);
      rejects({ params: () => ({ src_size: -1 }) }, "TX3019");
      rejects({ chunk: 4, params: () => ({ src_size: T.uint32(5) }) }, "TX3019", /outside 0\.\.4/);
      rejects({ chunk: 8, params: () => ({ src_size: T.uint32(4).add(5) }) }, "TX3019");
    });
    test("rejects src_size together with ignore_src: TX3018", () => {
      rejects(
        { params: (h) => ({ src_size: 4, ignore_src: h.flag.ne(0) }) },
        "TX3018",
        /at most one/,
      );
      rejects({ params: () => ({ src_size: 16, ignore_src: false }) }, "TX3018");
    });
    test("rejects a src_size of the wrong type (float, int64, bool, uint64 bigint): TX3021", () => {
      rejects({ params: () => ({ src_size: 2.5 }) }, "TX3021");
      rejects({ params: () => ({ src_size: T.int64(4) }) }, "TX3021");
      rejects({ params: () => ({ src_size: true }) }, "TX3021");
      rejects({ params: () => ({ src_size: 4n }) }, "TX3021");
      rejects({ params: () => ({ src_size: "4" }) }, "TX3021");
    });
    test("bytes: thread t copies t % 17 bytes of each 16-byte atom, the rest of the chunk is zeros", () => {
      const { out, input } = simulate({
        params: (h) => ({ src_size: T.uint32(h.tid.floormod(17)) }),
      });
      for (let t = 0; t < 32; t++)
        for (let b = 0; b < 32; b++) {
          const i = t * 32 + b;
          expect(out[i], `thread ${t} byte ${b}`).toBe(b % 16 < t % 17 ? input[i] : 0);
        }
    });
  });

  describe("`ignore_src`: runtime bool; true zero-fills the whole chunk.", () => {
    test("accepts a runtime bool and a constant (a predicate register in PTX 7.5)", () => {
      const ptx = accepts({ params: (h) => ({ ignore_src: h.tid.lt(3) }) });
      expect(cpLines(ptx)[0]).toMatch(/, 16, %p\d+;$/);
      expect(ptx).toMatch(/^\.version 7\.5$/m);
      accepts({ params: () => ({ ignore_src: true }) });
    });
    test("rejects a non-bool ignore_src (int32, number 1): TX3021", () => {
      rejects(
        { params: (h) => ({ ignore_src: h.flag }) },
        "TX3021",
        /ignore_src must be a runtime bool/,
      );
      rejects({ params: () => ({ ignore_src: 1 }) }, "TX3021");
    });
    test("bytes: threads with tid % 3 == 0 get zeros, the others the source", () => {
      const { out, input } = simulate({ params: (h) => ({ ignore_src: h.tid.floormod(3).eq(0) }) });
      for (let i = 0; i < out.length; i++)
        expect(out[i]).toBe(Math.floor(i / 32) % 3 === 0 ? 0 : input[i]);
    });
  });

  describe("`cache_policy`: runtime uint64; required exactly when the opcode contains `.L2::cache_hint`.", () => {
    test("accepts a uint64 param and a constant with .L2::cache_hint (both orders with a prefetch size)", () => {
      for (const opcode of [
        "cp.async.cg.shared.global.L2::cache_hint",
        "cp.async.cg.shared.global.L2::cache_hint.L2::256B",
        "cp.async.cg.shared.global.L2::64B.L2::cache_hint",
      ]) {
        expect(cpLines(accepts({ opcode, params: (h) => ({ cache_policy: h.pol }) }))[0]).toMatch(
          /, 16, %rd\d+;$/,
        );
      }
      accepts({
        opcode: "cp.async.ca.shared.global.L2::cache_hint",
        params: () => ({ cache_policy: POLICY }),
      });
      accepts({
        opcode: "cp.async.ca.shared.global.L2::cache_hint",
        params: () => ({ cache_policy: (1n << 64n) - 1n }),
      });
    });
    test("rejects .L2::cache_hint without cache_policy, and cache_policy without .L2::cache_hint: TX3020", () => {
      rejects({ opcode: "cp.async.cg.shared.global.L2::cache_hint" }, "TX3020", /no cache_policy/);
      rejects(
        { opcode: "cp.async.cg.shared.global.L2::128B", params: (h) => ({ cache_policy: h.pol }) },
        "TX3020",
        /needs \.L2::cache_hint/,
      );
    });
    test("rejects a cache_policy that is not a uint64 (int32, float, out-of-range bigint): TX3021", () => {
      const op = "cp.async.cg.shared.global.L2::cache_hint";
      rejects({ opcode: op, params: (h) => ({ cache_policy: h.flag }) }, "TX3021");
      rejects({ opcode: op, params: () => ({ cache_policy: 2.5 }) }, "TX3021");
      rejects(
        { opcode: op, params: () => ({ cache_policy: 1n << 64n }) },
        "TX3021",
        /does not fit in a uint64/,
      );
      rejects({ opcode: op, params: () => ({ cache_policy: -1n }) }, "TX3021");
    });
    test("bytes: a cache hint does not change what is copied", () => {
      const { out, input } = simulate({
        opcode: "cp.async.cg.shared.global.L2::cache_hint",
        params: (h) => ({ cache_policy: h.pol }),
      });
      expect([...out]).toEqual([...input]);
    });
  });

  describe("`pred`: runtime bool; false suppresses the instruction: nothing is written, no zeros, and a skipped issue does no group accounting. Predication is not zero fill.", () => {
    const withPred = (fill: Record<string, unknown>): K => ({
      params: (h) => ({ pred: h.flag.ne(0), ...fill }),
    });
    test("accepts a runtime bool pred: a guard @%p on every cp.async", () => {
      const lines = cpLines(accepts(withPred({})));
      expect(lines.length).toBe(2);
      for (const l of lines) expect(l).toMatch(/^@%p\d+ cp\.async/);
    });
    test("rejects a non-bool pred (int32, a view, a string): TX3021", () => {
      rejects({ params: (h) => ({ pred: h.flag }) }, "TX3021", /pred must be a runtime bool/);
      rejects({ params: (h) => ({ pred: rowView(h.A, h.tid, 16) }) }, "TX3021", /got a view/);
      rejects({ params: () => ({ pred: "true" }) }, "TX3021");
    });
    test("bytes: pred false leaves the sentinel in shared; pred true copies", () => {
      const off = simulate(withPred({}), 0);
      expect(off.out.every((b) => b === SENTINEL)).toBe(true);
      const on = simulate(withPred({}), 1);
      expect([...on.out]).toEqual([...on.input]);
    });
    test("bytes: pred false with ignore_src true / src_size 0 still writes nothing, while ignore_src / src_size alone write zeros", () => {
      for (const fill of [{ ignore_src: true }, { src_size: 0 }]) {
        expect(simulate(withPred(fill), 0).out.every((b) => b === SENTINEL)).toBe(true);
        expect(simulate(withPred(fill), 1).out.every((b) => b === 0)).toBe(true);
        expect(simulate({ params: () => fill }).out.every((b) => b === 0)).toBe(true);
      }
    });
    test("a skipped issue does no group accounting: reading its bytes without a wait is no hazard, while an issued one is (TX6001)", () => {
      const readNow = (flag: number): unknown => {
        try {
          return simulate(
            {
              ...withPred({}),
              after: (h) => {
                for (const j of T.range(32)) h.B.set([h.tid, j], h.S.get([h.tid, j]));
                T.ptx.cp.async_.wait_all();
              },
            },
            flag,
          ).out;
        } catch (e) {
          return e;
        }
      };
      const skipped = readNow(0);
      expect(skipped).toBeInstanceOf(Uint8Array);
      expect([...(skipped as Uint8Array)].every((b) => b === SENTINEL)).toBe(true);
      const issued = readNow(1);
      expect(issued).toBeInstanceOf(TirxError);
      expect((issued as TirxError).code).toBe("TX6001");
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("## Operands", () => {
  describe("Thread scope: each region has shape `(*repeat, element)`; CTA scope: `(warp, lane, *repeat, element)`.", () => {
    test("accepts thread-scope regions with 0, 1 and 2 repeat axes; one cp.async per repeat index", () => {
      expect(
        cpLines(accepts({ views: (h) => [h.S.sub(h.tid, "0:16"), h.A.sub(h.tid, "16:32")] }))
          .length,
      ).toBe(1);
      expect(cpLines(accepts({ chunk: 4 })).length).toBe(8);
      const two = (v: TileView, tid: PrimExpr): TileView =>
        v.sub(tid, ":").rearrange("(a b c) -> a b c", { b: 4, c: 4 });
      const k: K = { chunk: 4, views: (h) => [two(h.S, h.tid), two(h.A, h.tid)] };
      expect(cpLines(accepts(k)).length).toBe(8);
      const { out, input } = simulate(k);
      expect([...out]).toEqual([...input]);
    });
    test("rejects a scalar region (no element axis) at thread scope: TX3012", () => {
      rejects(
        {
          chunk: 4,
          views: (h) => [h.S.view_as("uint32").sub(h.tid, 0), h.A.view_as("uint32").sub(h.tid, 0)],
        },
        "TX3012",
        /scalar view/,
      );
    });
  });

  describe("The final axis occupies exactly `chunk_bytes` bytes, is contiguous and naturally aligned to `chunk_bytes` on both sides. float16 with 16 bytes: 8 elements; a b32 view of the same bytes: 4.", () => {
    const f16 = { adtype: "float16", sdtype: "uint16" } as const;
    test("accepts float16 atoms of 8 elements, and a b32 (uint32) view of the same bytes with 4 (byte copy)", () => {
      accepts({ ...f16 });
      const b32: K = {
        ...f16,
        views: (h) => [
          h.S.sub(h.tid, ":").view_as("uint32").rearrange("(r v) -> r v", { v: 4 }),
          h.A.sub(h.tid, ":").rearrange("(r v) -> r v", { v: 8 }),
        ],
      };
      const ptx = accepts(b32);
      expect(cpLines(ptx).every((l) => l.endsWith(", 16;"))).toBe(true);
      const { out, input } = simulate(b32);
      expect([...out]).toEqual([...input]);
    });
    test("rejects float16 atoms of 4 elements and b32 atoms of 8 (wrong byte count): TX3012", () => {
      rejects(
        {
          ...f16,
          views: (h) => [
            h.S.sub(h.tid, ":").rearrange("(r v) -> r v", { v: 4 }),
            h.A.sub(h.tid, ":").rearrange("(r v) -> r v", { v: 4 }),
          ],
        },
        "TX3012",
        /8 elements/,
      );
      rejects(
        {
          ...f16,
          views: (h) => [
            h.S.sub(h.tid, ":").view_as("uint32").rearrange("(r v) -> r v", { v: 8 }),
            h.A.sub(h.tid, ":").rearrange("(r v) -> r v", { v: 8 }),
          ],
        },
        "TX3012",
        /32 bytes.*4 elements/,
      );
    });
    test("rejects a non-contiguous final axis: TX3013", () => {
      rejects(
        {
          chunk: 4,
          views: (h) => [
            h.S.sub(h.tid, ":").rearrange("(v r) -> r v", { v: 4 }),
            rowView(h.A, h.tid, 4),
          ],
        },
        "TX3013",
        /contiguous/,
      );
      rejects(
        {
          chunk: 4,
          views: (h) => [
            rowView(h.S, h.tid, 4),
            h.A.sub(h.tid, "0:32:2").rearrange("(r v) -> r v", { v: 4 }),
          ],
        },
        "TX3013",
      );
    });
    test("accepts an offset that is a multiple of chunk_bytes (4 float16 = 8 bytes with chunk 8)", () => {
      accepts({ ...f16, chunk: 8, views: (h) => [h.S.sub(h.tid, "4:8"), h.A.sub(h.tid, "12:16")] });
    });
    test("rejects an offset of one float16 element on either side, 8 bytes with chunk 16, and a 4-byte aligned shared buffer: TX3014", () => {
      rejects(
        { ...f16, views: (h) => [h.S.sub(h.tid, "1:9"), h.A.sub(h.tid, "0:8")] },
        "TX3014",
        /dst atoms.*2-byte aligned/,
      );
      rejects(
        { ...f16, views: (h) => [h.S.sub(h.tid, "0:8"), h.A.sub(h.tid, "1:9")] },
        "TX3014",
        /src atoms.*2-byte aligned/,
      );
      rejects(
        { ...f16, views: (h) => [h.S.sub(h.tid, "4:12"), h.A.sub(h.tid, "4:12")] },
        "TX3014",
        /8-byte aligned/,
      );
      rejects({ salign: 4 }, "TX3014", /4-byte aligned/);
      // A runtime offset (flag elements) is not provably aligned.
      rejects(
        {
          ashape: [32, 40],
          views: (h) => [
            rowView(h.S, h.tid, 16),
            h.A.sub(h.tid, "0:32").rearrange("(r v) -> r v", { v: 16 }),
          ],
        },
        "TX3014",
        /src atoms.*8-byte aligned/,
      );
      // A runtime row pitch of 34 bytes (17 float16): row tid is only 2-byte aligned.
      rejects(
        {
          adtype: "float16",
          sdtype: "uint16",
          ashape: [32, 17],
          views: (h) => [h.S.sub(h.tid, "0:8"), h.A.sub(h.tid, "0:8")],
        },
        "TX3014",
        /src atoms.*2-byte aligned/,
      );
    });
  });

  describe("(fix) a reinterpreting view of a runtime offset keeps its alignment, and is refused when it cannot hold", () => {
    test("view_as(uint32) of a float16 row at runtime offset tid*16+1 is TX1014 at the view_as line (it used to round down silently)", () => {
      const e = rejection({
        adtype: "float16",
        sdtype: "uint16",
        chunk: 4,
        views: (h) => [
          h.S.sub(h.tid, "1:3").view_as("uint32"), // CHECK-VIEW-AS
          h.A.sub(h.tid, "0:2"),
        ],
      });
      expect(e.code).toBe("TX1014");
      expect(e.span?.line).toBe(lineOf("// CHECK-VIEW-AS"));
    });
  });

  describe("Source and destination may use different storage types of equal total size: a byte copy, not a conversion. Each side's atom must hold whole elements.", () => {
    test("accepts float32 source bytes into uint8 shared, and float64 with chunk 8; bytes arrive unconverted", () => {
      const k: K = { adtype: "float32", sdtype: "uint8" };
      accepts(k);
      const input = new Uint8Array(new Float32Array(32 * 8).map((_, i) => 1.5 + i).buffer);
      const { out } = simulate(k, 1, input);
      expect([...out]).toEqual([...input]);
      accepts({ adtype: "float64", sdtype: "uint16", chunk: 8 });
    });
    test("rejects float64 with chunk 4 (half an element) on either side: TX3015", () => {
      rejects(
        {
          adtype: "float64",
          chunk: 4,
          views: (h) => [rowView(h.S, h.tid, 4), h.A.sub(h.tid, ":")],
        },
        "TX3015",
        /whole float64 elements.*src/,
      );
      rejects(
        { sdtype: "uint64", chunk: 4, views: (h) => [h.S.sub(h.tid, ":"), rowView(h.A, h.tid, 4)] },
        "TX3015",
        /dst/,
      );
    });
  });

  describe("Group and repeat shapes must agree between the two sides.", () => {
    test("accepts equal repeat shapes with different element counts (uint8 vs uint32)", () => {
      accepts({ sdtype: "uint32" });
    });
    test("rejects (2, 8) against (1, 8) and (2, 16) against (1, 2, 16): TX3016", () => {
      rejects(
        {
          chunk: 8,
          views: (h) => [rowView(h.S, h.tid, 8).sub("0:2"), rowView(h.A, h.tid, 8).sub("0:3")],
        },
        "TX3016",
        /disagree/,
      );
      rejects(
        {
          views: (h) => [
            rowView(h.S, h.tid, 16),
            rowView(h.A, h.tid, 16).rearrange("(a r) v -> a r v", { a: 1 }),
          ],
        },
        "TX3016",
      );
    });
  });

  describe("Source is global; destination is shared or dynamic shared. Shared-to-global is rejected.", () => {
    test("accepts static and dynamic shared destinations (bytes arrive)", () => {
      accepts({});
      const k: K = { dynamic: true };
      accepts(k);
      const { out, input } = simulate(k);
      expect([...out]).toEqual([...input]);
    });
    test("rejects shared-to-global (swapped operands, and the global.shared opcode), a shared source and a local destination", () => {
      rejects(
        { views: (h) => [rowView(h.A, h.tid, 16), rowView(h.S, h.tid, 16)] },
        "TX3011",
        /shared-to-global/,
      );
      rejects({ opcode: "cp.async.cg.global.shared" }, "TX3002");
      rejects(
        { views: (h) => [rowView(h.S, h.tid, 16), rowView(h.S, h.tid, 16)] },
        "TX3011",
        /global source/,
      );
      rejects(
        () =>
          T.function("local_dst", { A: T.Tensor([32, 16], "uint8") }, ({ A }) => {
            T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
            const tid = T.cuda.thread_idx("x");
            const L = T.alloc_local([16], "uint8");
            // prettier-ignore
            T.cuda.tile.apply(T.ptx["cp.async.ca.shared.global"], L, A.sub(tid, ":"), { chunk_bytes: 16 }); // CHECK-LOCAL
          }),
        "TX3011",
        /local/,
        lineOf("// CHECK-LOCAL"),
      );
    });
  });

  describe("The source view must lie within its declared tensor, even when a zero-fill operand is given.", () => {
    test("accepts a source view that ends at the tensor's last byte", () => {
      accepts({
        ashape: [32, 32],
        views: (h) => [h.S.sub(h.tid, "16:32"), h.A.sub(h.tid, "16:32")],
      });
    });
    test("rejects a source view past the tensor with no fill, ignore_src true, and src_size 0: TX3017", () => {
      const k = (p: Record<string, unknown>): K => ({ ashape: [16, 32], params: () => p });
      rejects(
        k({}),
        "TX3017",
        /source view of "A" reaches elements 0\.\.1023, but the buffer holds 512/,
      );
      rejects(k({ ignore_src: true }), "TX3017");
      rejects(k({ src_size: 0 }), "TX3017");
    });
    test("rejects a destination view past the shared buffer: TX3024", () => {
      rejects(
        { sshape: [16, 32], prefill: false, after: () => T.ptx.cp.async_.wait_all() },
        "TX3024",
      );
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("## Code generation", () => {
  describe("One `cp.async` per repeat index with the atom's shared and global addresses, `chunk_bytes`, and the optional `src_size` / `ignore_src` / `cache_policy` operands. `pred` becomes a guard predicate.", () => {
    test("a (2, 4) repeat of 4-byte atoms emits 8 cp.async at displacements 0, 4, .., 28 with all operands", () => {
      const ptx = accepts({
        chunk: 4,
        opcode: "cp.async.ca.shared.global.L2::cache_hint.L2::128B",
        views: (h) => [
          h.S.sub(h.tid, ":").rearrange("(a b v) -> a b v", { a: 2, v: 4 }),
          h.A.sub(h.tid, ":").rearrange("(a b v) -> a b v", { a: 2, v: 4 }),
        ],
        params: (h) => ({ pred: h.flag.ne(0), ignore_src: h.tid.lt(4), cache_policy: h.pol }),
      });
      const lines = cpLines(ptx);
      expect(lines.length).toBe(8);
      lines.forEach((l, i) => {
        const d = i === 0 ? "" : `\\+${4 * i}`;
        expect(l).toMatch(
          new RegExp(
            `^@%p\\d+ cp\\.async\\.ca\\.shared\\.global\\.L2::cache_hint\\.L2::128B \\[%r\\d+${d}\\], \\[%rd\\d+${d}\\], 4, %p\\d+, %rd\\d+;$`,
          ),
        );
      });
    });
  });

  describe("No `commit_group`, `wait_group`, barrier or thread election is inserted. No synchronous copy or narrower instruction is ever substituted.", () => {
    test("a kernel with only the tile.apply has only cp.async: no commit, wait, bar, ld/st, election", () => {
      const ptx = accepts({
        prefill: false,
        after: () => {},
        params: (h) => ({ pred: h.tid.lt(5), src_size: T.uint32(h.tid) }),
      });
      expect(cpLines(ptx).length).toBe(2);
      expect(ptx).not.toMatch(
        /commit_group|wait_group|wait_all|bar\.|barrier|elect|\bld\.(global|shared)|\bst\./,
      );
      for (const l of cpLines(ptx)) expect(l).toMatch(/, 16, %r\d+;$/);
    });
    test("the .ca 4-byte form stays 4 bytes and .cg stays 16 (never narrowed or widened)", () => {
      expect(
        cpLines(accepts({ chunk: 4 })).every(
          (l) => l.includes("cp.async.ca.shared.global [") && l.endsWith(", 4;"),
        ),
      ).toBe(true);
      expect(
        cpLines(accepts({ opcode: "cp.async.cg.shared.global" })).every((l) => l.endsWith(", 16;")),
      ).toBe(true);
    });
  });

  describe("`T.ptx.cp.async_.commit_group()`, `T.ptx.cp.async_.wait_group(n)` (n a static integer) and `wait_all` map one-to-one to their PTX instructions.", () => {
    test("commit, wait_group 7, commit, wait_all, wait_group 0, commit appear exactly in that order and count", () => {
      const ptx = accepts({
        prefill: false,
        after: () => {
          T.ptx.cp.async_.commit_group();
          T.ptx.cp.async_.wait_group(7);
          T.ptx.cp.async_.commit_group();
          T.ptx.cp.async_.wait_all();
          T.ptx.cp.async_.wait_group(0);
          T.ptx.cp.async_.commit_group();
        },
      });
      const ops = ptx
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => /^cp\.async\.(commit|wait)/.test(l));
      expect(ops).toEqual([
        "cp.async.commit_group;",
        "cp.async.wait_group 7;",
        "cp.async.commit_group;",
        "cp.async.wait_all;",
        "cp.async.wait_group 0;",
        "cp.async.commit_group;",
      ]);
      expect(ptx).not.toMatch(/bar\.sync|barrier/);
    });
    test("rejects wait_group 8, -1, 1.5 and a runtime n: TX3022 at the wait_group line", () => {
      const waitLine = lineOf("// CHECK-WAIT");
      for (const n of [8, -1, 1.5, "rt"]) {
        rejects(
          {
            prefill: false,
            after: (h) => {
              T.ptx.cp.async_.wait_group((n === "rt" ? h.flag : n) as number); // CHECK-WAIT
            },
          },
          "TX3022",
          undefined,
          waitLine,
        );
      }
    });
  });
});

// ---------------------------------------------------------------------------------------------
describe("## The seed's two worked examples must run as written", () => {
  test("1. (128,32) float16 copy, 128 threads, four 16-byte copies per thread at CTA scope; result equals input.", async () => {
    const mod = await import("../../examples/copy_async.js");
    const r = mod.runExample(sim());
    expect(r.ok, r.summary).toBe(true);
    const ptx = compile(mod.copy_async).ptx;
    expect(cpLines(ptx).length).toBe(4);
    assembleLater(ptx, "sm_80", "copy_async");
  });
  test("2. Partial rows: uint8 rows of 16 bytes, `src_size = T.if_then_else(tid < valid_rows, T.uint32(16), T.uint32(0))`, opcode `cp.async.cg.shared.global.L2::128B`: rows past `valid_rows` arrive as zeros.", async () => {
    const mod = await import("../../examples/zero_fill_rows.js");
    for (const valid of [0, 1, 37, 64]) {
      const r = mod.runExample(sim(), valid);
      expect(r.ok, r.summary).toBe(true);
      const out = r.outputs[0]!;
      for (let i = valid * 16; i < out.length; i++) expect(out[i]).toBe(0);
    }
    assembleLater(compile(mod.zero_fill_rows).ptx, "sm_80", "zero_fill_rows");
  });
});
