// The IR printer round-trips: every kernel of examples/*.ts and a set of test kernels (also as
// each pass of the PTX pipeline leaves them) print as a `T` module which, imported, rebuilds a
// structurally equal PrimFunc. All kernels go into ONE generated module, imported once in a plain
// node process (importInNode). The script printer's round trip of the examples' stages
// (printScript → parseScript) runs here too, on the same run of the pipeline (the kernels as
// written and the random functions are in script-roundtrip and printer-property).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { T, parseScript, printFuncAsync, printModule, printScriptModuleText } from "@tirx-ts/dsl";
import {
  mapStmt,
  runPipeline,
  structuralEqual,
  verify,
  type PrimFunc,
  type Stmt,
} from "@tirx-ts/core";
import { PTX_PASSES } from "@tirx-ts/codegen-ptx";
import {
  initArrive,
  mbarrierOps,
  oneTile,
  storeOnly,
} from "../packages/codegen-ptx/test/util/bulk-kernels.js";
import { rowCopyKernel, seedKernel as simSeed } from "../packages/runtime-sim/test/kernels.js";
import { seedKernel } from "./kernels/seed.js";
import { importInNode } from "./util/import-in-node.js";

const examplesDir = fileURLToPath(new URL("../examples/", import.meta.url));
// Gitignored and prettier-ignored: generated modules live inside the repository so that
// `tirx-ts` resolves from them.
const outDir = fileURLToPath(new URL("./.printed/roundtrip/", import.meta.url));

function isPrimFunc(x: unknown): x is PrimFunc {
  return typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";
}

/** Control flow, lets, casts, bool, if_then_else, local buffers, unrolled and stepped loops. */
const control = T.function(
  "control",
  { A: T.Tensor([64], "float32"), B: T.Tensor([64], "int32"), n: T.int32 },
  ({ A, B, n }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [2, 1, 1], block: [32, 2] }) });
    const tid = T.cuda.thread_idx("x");
    const ty = T.cuda.thread_idx("y");
    const acc = T.alloc_local([4], "float32", { name: "acc" });
    const k = T.let_("k", tid.mul(2).add(ty).floormod(64));
    for (const j of T.unroll(4)) acc.set([j], A.get([k]).mul(j.cast("float32")));
    for (const j of T.range(1, n.min(8), 2)) acc.set([0], acc.get([0]).add(j.cast("float32")));
    for (const [a, b] of T.grid(2, 2)) B.set([a.mul(2).add(b)], a.bitxor(b).shl(1).shr(1));
    const flag = T.let_("flag", tid.lt(16).and(ty.eq(0)).or(tid.ge(30).not()));
    T.if_(
      flag,
      () => B.set([tid], T.if_then_else(flag, tid.max(3), T.int32(-1))),
      () => A.set([tid], acc.get([1]).div(3).sub(-0.5)),
    );
    const w = T.let_("w", T.int32(0));
    T.while_(
      () => w.lt(0),
      () => B.set([0], w.div(2).mod(3).bitand(7).bitor(1)),
    );
    T.if_(n.gt(0).and(true), () => B.set([63], n.le(5).cast("int32")));
    T.cuda.cta_sync();
  },
);

/** 64-bit and narrow integers, bigint constants, half floats through a reinterpreting view. */
const wide = T.function(
  "wide",
  {
    X: T.Tensor([16], "int64"),
    Y: T.Tensor([16], "uint64"),
    H: T.Tensor([16], "float16"),
    s: T.uint64,
    t: T.int8,
  },
  ({ X, Y, H, s, t }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 16 }) });
    const tid = T.cuda.thread_idx("x");
    X.set([tid], X.get([tid]).add(9007199254740993n).mul(tid.cast("int64")));
    Y.set([tid], s.bitand(0xffffffffffn).shr(T.uint64(3)));
    H.set([tid], H.get([tid]).mul(1.5).add(t.cast("float16")));
    const words = H.view_as("uint32");
    words.set([tid.floordiv(2)], words.get([0]).bitor(T.uint32(1)));
    Y.set([0], H.ptr([tid]));
  },
);

/** Symbolic dims in two axes and a runtime grid. */
const symbolic = T.function(
  "symbolic",
  {
    rows: T.int32,
    A: T.Tensor(["rows", "cols"], "float32"),
    cols: T.int32,
    B: T.Tensor(["rows", 8], "float32"),
  },
  ({ rows, A, cols, B }) => {
    T.device_entry({
      launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(rows, 4), 2], block: 32 }),
    });
    const r = T.cuda.block_idx("x").mul(4).add(T.cuda.block_idx("y"));
    T.if_(r.lt(rows), () => {
      for (const c of T.range(cols)) A.set([r, c], A.get([r, c]).add(1));
      for (const c of T.range(8)) B.sub(r, ":").set([c], 0);
    });
  },
);

/** Dynamic shared memory with an alignment, and a uint64 cache policy parameter. */
const dynamic = T.function("dyn_shared", { A: T.Tensor([256], "float32") }, ({ A }) => {
  T.device_entry({
    launch: T.cuda.LaunchConfig({ grid: 1, block: 64, dynamic_shared_bytes: 1024 }),
  });
  const tid = T.cuda.thread_idx("x");
  const sm = T.alloc_shared([256], "float32", { dynamic: true, align: 128, name: "tile" });
  for (const j of T.range(4)) sm.set([tid.add(j.mul(64))], A.get([tid.add(j.mul(64))]));
  T.cuda.cta_sync();
  A.set([tid], sm.get([T.int32(255).sub(tid)]));
});

/** The proxy fences of each state space (one surface, T.ptx.fence.proxy_async(space)). */
const fences = T.function("fences", { A: T.Tensor([32], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  const tid = T.cuda.thread_idx("x");
  A.set([tid], 1);
  T.ptx.fence.proxy_async();
  T.ptx.fence.proxy_async("global");
  T.ptx.fence.proxy_async("all");
  T.ptx.fence.mbarrier_init();
});

const testKernels: PrimFunc[] = [
  fences,
  control,
  wide,
  symbolic,
  dynamic,
  seedKernel(),
  seedKernel({ opcode: "cp.async.ca.shared.global" }),
  simSeed,
  rowCopyKernel(1024),
  oneTile(),
  oneTile({ cacheHint: true, pred: true, dstSpace: "shared::cluster" }),
  mbarrierOps(),
  initArrive(),
  storeOnly(),
];

/** A kernel as written (`stage` undefined) or as a stage of the PTX pipeline left it. */
interface Case {
  label: string;
  fn: PrimFunc;
  stage?: string;
}

/** The IR after every stage of the PTX pipeline, TileOps replaced by the tile.apply they print as. */
function stages(fn: PrimFunc): Case[] {
  const out: Case[] = [{ label: `${fn.name} as written`, fn }];
  // One run of the pipeline, every stage kept.
  runPipeline(verify(fn), PTX_PASSES, {
    onStage: (name, cur) => {
      const body = mapStmt(cur.fn.body, {
        stmt: (s: Stmt): Stmt => (s.kind === "TileOp" ? s.source : s),
      });
      out.push({ label: `${fn.name} after ${name}`, fn: { ...cur.fn, body }, stage: name });
    },
  });
  return out;
}

let cases: Case[] = [];
let rebuilt: PrimFunc[] = [];
/** The example kernels after every pass of the PTX pipeline, each under a name of its own. */
let exampleStages: PrimFunc[] = [];

beforeAll(async () => {
  const fromExamples: PrimFunc[] = [];
  for (const f of readdirSync(examplesDir).filter((f) => f.endsWith(".ts"))) {
    const mod = (await import(`${examplesDir}${f}`)) as Record<string, unknown>;
    fromExamples.push(...Object.values(mod).filter(isPrimFunc));
  }
  const ofExamples = fromExamples.flatMap(stages);
  exampleStages = ofExamples.flatMap((c) =>
    c.stage === undefined ? [] : [{ ...c.fn, name: `${c.fn.name}_${c.stage.replace(/\W/g, "_")}` }],
  );
  cases = [...ofExamples, ...testKernels.flatMap(stages)];
  // Every kernel under its own name, so that the exports of one module do not collide.
  const named = cases.map((c, i) => ({ ...c.fn, name: `k${i}_${c.fn.name}` }));
  mkdirSync(outDir, { recursive: true });
  const file = `${outDir}roundtrip.mjs`;
  writeFileSync(file, printModule(named));
  const mod = importInNode(file);
  rebuilt = named.map((f) => mod[f.name]!);
});

afterAll(() => rmSync(outDir, { recursive: true, force: true }));

describe("printFunc round-trips through the T builder", () => {
  test("every example kernel and test kernel, at every stage", () => {
    expect(cases.length).toBeGreaterThan(60);
    const bad = cases.filter(
      (c, i) => !structuralEqual({ ...c.fn, name: "k" }, { ...rebuilt[i]!, name: "k" }),
    );
    expect(bad.map((c) => c.label)).toEqual([]);
  });

  test("the printed text of a small kernel", async () => {
    const k = T.function(
      "axpy",
      { n: T.int32, a: T.float32, X: T.Tensor(["n"], "float32"), Y: T.Tensor(["n"], "float32") },
      ({ n, a, X, Y }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 128)], block: 128 }) });
        const i = T.cuda.block_idx("x").mul(128).add(T.cuda.thread_idx("x"));
        T.if_(i.lt(n), () => Y.set([i], a.mul(X.get([i])).add(Y.get([i]))));
      },
    );
    expect(await printFuncAsync(k)).toMatchInlineSnapshot(`
      "import { T } from "tirx-ts";

      export const axpy = T.function(
        "axpy",
        { n: T.int32, a: T.float32, X: T.Tensor(["n"], "float32"), Y: T.Tensor(["n"], "float32") },
        ({ n, a, X, Y }) => {
          T.device_entry({
            launch: T.cuda.LaunchConfig({ grid: n.add(128).sub(1).floordiv(128), block: 128 }),
          });
          const blockIdx_x = T.cuda.block_idx("x");
          const threadIdx_x = T.cuda.thread_idx("x");
          T.if_(blockIdx_x.mul(128).add(threadIdx_x).lt(n), () => {
            Y.flat().set(
              [blockIdx_x.mul(128).add(threadIdx_x)],
              a
                .mul(X.flat().get([blockIdx_x.mul(128).add(threadIdx_x)]))
                .add(Y.flat().get([blockIdx_x.mul(128).add(threadIdx_x)])),
            );
          });
        },
      );
      "
    `);
  });
});

describe("printScript → parseScript", () => {
  test("every example kernel after every pass of the PTX pipeline", () => {
    expect(exampleStages.length).toBeGreaterThanOrEqual(8 * PTX_PASSES.length);
    // Unformatted: the unrolled stages are large, and the kernels as written went through prettier.
    const back = parseScript(printScriptModuleText(exampleStages), "roundtrip.ts");
    expect(back.length).toBe(exampleStages.length);
    const bad = exampleStages.filter((f, i) => !structuralEqual(f, back[i]!)).map((f) => f.name);
    expect(bad).toEqual([]);
  });
});

describe("the builder forms the printer writes", () => {
  const build = (body: (A: ReturnType<typeof T.alloc_shared>) => void) =>
    T.function("k", { A: T.Tensor([8], "int32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      body(A);
    });
  const codeOf = (f: () => unknown): string | undefined => {
    try {
      f();
    } catch (e) {
      return (e as { code?: string }).code;
    }
    return undefined;
  };
  test("T.raw keeps what the method spellings fold", () => {
    const k = build((A) => {
      A.flat().set([0], T.raw.binary("add", A.flat().get([1]), 0));
      A.flat().set([1], T.raw.cast("int32", T.int32(3)));
    });
    const body = (k.body as unknown as { body: { stmts: { value: { kind: string } }[] } }).body
      .stmts;
    expect(body.map((s) => s.value.kind)).toEqual(["Binary", "Cast"]);
  });
  test("flat, as_strided and T.raw refuse malformed operands", () => {
    expect(codeOf(() => build((A) => A.flat().get([0, 1] as never)))).toBe("TX1004");
    expect(codeOf(() => build((A) => A.as_strided({ shape: [0], strides: [1] })))).toBe("TX1002");
    expect(codeOf(() => build((A) => A.as_strided({ shape: [2, 2], strides: [1] })))).toBe(
      "TX1002",
    );
    expect(codeOf(() => build(() => T.raw.binary("pow" as never, 1, 2)))).toBe("TX1002");
    expect(codeOf(() => build((A) => T.raw.binary("add", A.flat().get([0]), 1.5)))).toBe("TX1007");
    expect(codeOf(() => build(() => T.call_op("no.such.op")))).toBe("TX2010");
  });
});
