// Reports name buffers as the author named them: a shared or local buffer without `{ name }` takes
// the variable it is bound to (builder and script mode); one bound to nothing is named by its
// declaration's position, so the report leads back to it.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { bufferName, isTirxError, verify, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { emitPtx } from "@tirx-ts/codegen-ptx";
import { T, parseScript, type TileView } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { markers } from "./util/markers.js";

const file = fileURLToPath(import.meta.url);
const line = markers(import.meta.url).at;
const src = readFileSync(file, "utf8").split("\n");

function thrown(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

/** The shared and local buffers `fn` allocates, by name, in order. */
function allocated(fn: PrimFunc): string[] {
  const names: string[] = [];
  const walk = (x: unknown): void => {
    if (Array.isArray(x)) return x.forEach(walk);
    if (typeof x !== "object" || x === null) return;
    const o = x as { kind?: string; buffer?: { name: string } };
    if (o.kind === "Alloc") names.push(o.buffer!.name);
    Object.values(o).forEach(walk);
  };
  walk(fn.body);
  return names;
}

const stage = (s: TileView): TileView => s;

const bound = T.function("bound", { A: T.Tensor([32, 4], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  const tid = T.cuda.thread_idx("x");
  const tile = T.alloc_shared([32, 4], "float32");
  const annotated: TileView = T.alloc_shared([4], "float32");
  const spread = T.alloc_shared([8], "float32");
  let later = T.alloc_local([4], "float32");
  later = stage(later);
  const named = T.alloc_shared([2], "float32", { name: "explicit" });
  const unbound = stage(T.alloc_shared([16], "float32")); // @unbound
  tile.set([tid, 0], A.get([tid, 0]));
  annotated.set([0], spread.get([0]));
  later.set([0], named.get([0]));
  unbound.set([0], 1);
});

describe("builder mode", () => {
  test("an unnamed allocation takes the variable it is bound to; { name } wins", () => {
    expect(allocated(bound)).toEqual(["tile", "annotated", "spread", "later", "explicit", "smem"]);
  });

  test("PTX names the shared symbols after them", () => {
    const text = emitPtx(verify(bound), { arch: "sm_80" }).text;
    expect(text).toMatch(/\.shared \.align 16 \.b8 smem_tile\[512\];/);
    expect(text).toMatch(/\.shared \.align 16 \.b8 smem_spread\[32\];/);
  });

  test("bufferName: quoted for a named buffer, the declaration for an unnamed one", () => {
    const span = { file, line: 12, col: 5 };
    expect(bufferName({ name: "tile", scope: "shared", span })).toBe('"tile"');
    const here = relative(process.cwd(), file);
    expect(bufferName({ name: "smem", scope: "shared", span })).toBe(
      `<buffer declared at ${here}:12:5>`,
    );
    expect(bufferName({ name: "local", scope: "local", span })).toBe(
      `<buffer declared at ${here}:12:5>`,
    );
    // A tensor parameter is always named; a named "local" shared buffer too.
    expect(bufferName({ name: "smem", scope: "global", span })).toBe('"smem"');
    expect(bufferName({ name: "local", scope: "shared", span })).toBe('"local"');
  });
});

/** A kernel whose thread 0 reads a shared row before the cp.async filling it is waited for. */
function early(alloc: () => TileView) {
  return T.function(
    "early",
    { A: T.Tensor([32, 4], "float32"), B: T.Tensor([32], "float32") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = alloc();
      T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"]!, s.sub(tid, ":"), A.sub(tid, ":"), {
        chunk_bytes: 16,
      });
      T.ptx.cp.async_.commit_group();
      B.set([tid], s.get([tid, 0]));
      T.ptx.cp.async_.wait_all();
    },
  );
}

function report(alloc: () => TileView): TirxError {
  const a = simTensor(new Float32Array(128), { shape: [32, 4], dtype: "float32" });
  const r = runSim(verify(early(alloc)), [a, simZeros([32], "float32")], { hazards: "collect" });
  expect(r.reports.length).toBeGreaterThan(0);
  return r.reports[0]!;
}

describe("simulator reports", () => {
  test("a bound buffer is named by its variable", () => {
    const e = report(() => {
      const stagingTile = T.alloc_shared([32, 4], "float32");
      return stagingTile;
    });
    expect(e.code).toBe("TX6001");
    expect(e.message).toContain('reads shared "stagingTile" byte');
  });

  test("an unbound buffer is named by its declaration, not 'smem'", () => {
    const e = report(() => T.alloc_shared([32, 4], "float32")); // @early-alloc
    expect(e.code).toBe("TX6001");
    // V8 places a method call at its property name.
    const col = src[line("early-alloc") - 1]!.indexOf("alloc_shared") + 1;
    expect(e.message).toContain(
      `reads shared <buffer declared at ${relative(process.cwd(), file)}:${line("early-alloc")}:${col}> byte`,
    );
    expect(e.message).not.toContain('"smem"');
  });
});

describe("verifier messages", () => {
  test("an access outside a bound buffer names it, an unbound one by its declaration", () => {
    const k = (bind: boolean) =>
      T.function("outside", { B: T.Tensor([8], "float32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const partials = T.alloc_local([4], "float32");
        const v = bind ? partials : stage(T.alloc_local([4], "float32")); // @unbound-local
        for (const i of T.range(8)) B.set([i], v.get([i]));
      });
    const named = thrown(() => verify(k(true)));
    expect(named.message).toContain('access to "partials" at elements 0..7');
    const e = thrown(() => verify(k(false)));
    expect(e.message).toMatch(
      new RegExp(
        `access to <buffer declared at [^>]*:${line("unbound-local")}:\\d+> at elements 0\\.\\.7`,
      ),
    );
    expect(e.message).not.toContain('"local"');
  });
});

describe("script mode", () => {
  const dir = fileURLToPath(new URL("./.printed/buffer-names/", import.meta.url));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const text = `import { script as T, type Tensor } from "tirx-ts";
export const k = T.prim_func(function k(A: Tensor<[32, 4], "float32">) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  const tid = T.cuda.thread_idx("x");
  const rows = T.alloc_shared([32, 4], "float32");
  const acc = T.alloc_local([4], "float32");
  rows[tid][0] = A[tid][0];
  acc[0] = rows[tid][0];
  A[tid][1] = acc[0];
});
`;

  test("bindings name the buffers, from the syntax tree (the text need not be on disk)", () => {
    const [fn] = Object.values(parseScript(text, `${dir}not-written.ts`));
    expect(allocated(fn as PrimFunc)).toEqual(["rows", "acc"]);
  });

  test("and from a file on disk the same way", () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(`${dir}k.ts`, text);
    const [fn] = Object.values(parseScript(text, `${dir}k.ts`));
    expect(allocated(fn as PrimFunc)).toEqual(["rows", "acc"]);
  });
});
