// The verifier collects every error of a kernel: one TirxError whose own code and span are the
// first error found (as a verifier that stopped there threw) and whose `all` lists every distinct
// error, sorted by position, up to MAX_DIAGNOSTICS. Kernels here get random sequences of
// independent mistakes, each made on its own line of this file with an error message of its own
// (so the expected list follows from the sequence alone), between statements that are fine.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { T, type PrimExpr, type TileView } from "@tirx-ts/dsl";
import {
  MAX_DIAGNOSTICS,
  renderDiagnostic,
  renderDiagnostics,
  TirxError,
  verify,
  type DiagnosticCode,
  type PrimFunc,
} from "@tirx-ts/core";

/** The line of this file that holds `marker`. */
const lineOf = (marker: string): number =>
  readFileSync(fileURLToPath(import.meta.url), "utf8")
    .split("\n")
    .findIndex((l) => l.includes(marker)) + 1;

/** The line where mistake `name` is made (marked `// MISTAKE name`). */
const mistakeLine = (name: string): number => lineOf(`// MISTAKE ${name}`);

interface Tensors {
  readonly A: TileView;
  readonly B: TileView;
  readonly C: TileView;
  readonly S: TileView;
  readonly t: PrimExpr;
}

/** A kind of mistake: its code, the line it is made on, and how to make its k-th instance. */
interface Mistake {
  readonly code: DiagnosticCode;
  readonly line: number;
  /** Equal for two instances whose errors are equal (same code, span and message). */
  readonly key: (k: number) => string;
  readonly make: (x: Tensors, k: number) => void;
}

const MISTAKES: Record<string, Mistake> = {
  // B holds 64 elements; t + 64 + k reaches past them (TX2006 names the range, unique per k).
  store: {
    code: "TX2006",
    line: mistakeLine("store"),
    key: (k) => `store ${k}`,
    make: ({ B, t }, k) => B.set([t.add(64 + k)], T.float32(0)), // MISTAKE store
  },
  // C holds 256 elements; a load at t + 200 + k goes past them.
  load: {
    code: "TX2006",
    line: mistakeLine("load"),
    key: (k) => `load ${k}`,
    make: ({ B, C, t }, k) => B.set([t.floormod(64)], C.get([t.add(200 + k)])), // MISTAKE load
  },
  // A column past A's row (32 wide) whose flat offset stays inside A (TX2006 names the axis and
  // the index's range, unique per k).
  axis: {
    code: "TX2006",
    line: mistakeLine("axis"),
    key: (k) => `axis ${k}`,
    make: ({ A, t }, k) => A.set([t.floordiv(2), t.floormod(2).add(31 + k)], T.float16(0)), // MISTAKE axis
  },
  // More copies than T.unroll may emit (TX2012 names the count).
  unroll: {
    code: "TX2012",
    line: mistakeLine("unroll"),
    key: (k) => `unroll ${k}`,
    make: ({ B }, k) => {
      for (const i of T.unroll(4097 + k)) B.set([i.floormod(64)], T.float32(1)); // MISTAKE unroll
    },
  },
  // .cg with 8-byte chunks (TX3007): the same message at the same place every time, one error.
  cg: {
    code: "TX3007",
    line: mistakeLine("cg"),
    key: () => "cg",
    make: ({ A, S }) => {
      const v = { w: 4, t: 32, v: 4 };
      const dst = S.rearrange("(w t) (r v) -> w t r v", v);
      const src = A.rearrange("(w t) (r v) -> w t r v", v);
      const cg = T.ptx["cp.async.cg.shared.global"];
      T.cuda.tile.apply(cg, dst, src, { chunk_bytes: 8, scope: "cta" }); // MISTAKE cg
    },
  },
};

const fine = ({ B, C, t }: Tensors): void => B.set([t.floormod(64)], C.get([t]));

/** A kernel doing `steps` in order: a mistake kind's next instance, or a fine statement. */
function kernel(steps: readonly (string | "fine")[]): PrimFunc {
  return T.function(
    "mistakes",
    {
      A: T.Tensor([128, 32], "float16"),
      B: T.Tensor([64], "float32"),
      C: T.Tensor([256], "float32"),
    },
    ({ A, B, C }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const S = T.alloc_shared([128, 32], "float16");
      const x = { A, B, C, S, t: T.cuda.thread_idx("x") };
      steps.forEach((s, k) => (s === "fine" ? fine(x) : MISTAKES[s]!.make(x, k)));
    },
  );
}

function errorOf(fn: PrimFunc): TirxError {
  try {
    verify(fn);
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("expected verify to throw");
}

/** What `all` should hold for `steps`: one entry per distinct error, in source order. */
function expected(steps: readonly string[]): { code: string; line: number }[] {
  const seen = new Set<string>();
  const out: { code: string; line: number; k: number }[] = [];
  steps.forEach((s, k) => {
    if (s === "fine") return;
    const m = MISTAKES[s]!;
    if (seen.has(m.key(k))) return;
    seen.add(m.key(k));
    out.push({ code: m.code, line: m.line, k });
  });
  return out.sort((a, b) => a.line - b.line || a.k - b.k).map(({ code, line }) => ({ code, line }));
}

describe("the verifier collects every error of a kernel", () => {
  test("random sequences of independent mistakes: every one, deduplicated, sorted; the first found heads them (fast-check, seed 42)", () => {
    const step = fc.constantFrom("store", "load", "axis", "unroll", "cg", "fine");
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        const mistakes = steps.filter((s) => s !== "fine");
        if (mistakes.length === 0) {
          expect(() => verify(kernel(steps))).not.toThrow();
          return;
        }
        const err = errorOf(kernel(steps));
        // The error a verifier stopping at the first would have thrown: the first mistake made.
        expect(err.code).toBe(MISTAKES[mistakes[0]!]!.code);
        expect(err.span?.line).toBe(MISTAKES[mistakes[0]!]!.line);
        expect(err.all.map((e) => ({ code: e.code, line: e.span?.line }))).toEqual(expected(steps));
      }),
      { seed: 42, numRuns: 40 },
    );
  });

  test(`at MAX_DIAGNOSTICS (${MAX_DIAGNOSTICS}) errors the check stops; the count says so`, () => {
    const steps = Array.from({ length: MAX_DIAGNOSTICS + 5 }, () => "store");
    const err = errorOf(kernel(steps));
    expect(err.all).toHaveLength(MAX_DIAGNOSTICS);
    // The first MAX_DIAGNOSTICS stores, in program order: t + 64 .. t + 64 + 19.
    expect(err.all.map((e) => /elements (\d+)\.\./.exec(e.text)![1])).toEqual(
      Array.from({ length: MAX_DIAGNOSTICS }, (_, k) => String(64 + k)),
    );
    expect(renderDiagnostics(err).endsWith(`${MAX_DIAGNOSTICS} errors (a check stops at 20)`)).toBe(
      true,
    );
  });

  test("a single error is itself: `all` holds it alone and it renders as before", () => {
    const err = errorOf(kernel(["fine", "store", "fine"]));
    expect(err.all).toEqual([err]);
    expect(err.all[0]).toBe(err);
    expect(renderDiagnostics(err)).toBe(renderDiagnostic(err));
  });

  test("several errors render one after another, sorted, then a count", () => {
    const err = errorOf(kernel(["cg", "store", "unroll"]));
    expect(err.code).toBe("TX3007");
    const text = renderDiagnostics(err);
    const heads = text.split("\n").filter((l) => l.includes(": error TX"));
    expect(heads.map((h) => /: error (TX\d{4})/.exec(h)![1])).toEqual([
      "TX2006",
      "TX2012",
      "TX3007",
    ]);
    for (const e of err.all) expect(text).toContain(renderDiagnostic(e));
    expect(text.endsWith("\n\n3 errors")).toBe(true);
  });

  test("errors before a missing device entry are kept; the missing entry stops the check (TX2004)", () => {
    const fn = kernel(["fine"]);
    const err = errorOf({ ...fn, name: "_", body: { kind: "Seq", stmts: [] } });
    expect(err.all.map((e) => e.code)).toEqual(["TX2019", "TX2004"]);
    expect(err.code).toBe("TX2019");
  });

  test("a loop of no iterations does not hide the accesses after it (its empty range ends with it)", () => {
    const fn = T.function("after_empty_loop", { B: T.Tensor([64], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      for (const i of T.range(0)) B.set([i.add(100)], T.float32(1));
      B.set([T.cuda.thread_idx("x").add(64)], T.float32(2)); // AFTER EMPTY LOOP
    });
    const err = errorOf(fn);
    expect(err.all.map((e) => [e.code, e.span?.line])).toEqual([
      ["TX2006", lineOf("// AFTER EMPTY LOOP")],
    ]);
  });
});
