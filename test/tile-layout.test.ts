// The T surface of TIRx's TileLayout (T.TileLayout, T.S, T.R, T.O, T.layout.*), register tiles
// T.alloc_local(shape, dtype, { layout }) in the IR, their verifier check (TX2021), the printers
// (builder and script mode) and script mode's `layout` option. A layout changes no PTX today.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { T, parseScript, printFunc, printScriptModuleText } from "@tirx-ts/dsl";
import {
  mmaSyncOperandLayout,
  parseTileLayout,
  showTileLayout,
  structuralEqual,
  TirxError,
  verify,
  type Buffer,
  type PrimFunc,
  type Stmt,
  type TileLayout,
} from "@tirx-ts/core";
import { emitPtx } from "@tirx-ts/codegen-ptx";

function errorOf(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new TirxError("TX1002", "expected a TirxError");
}

/** The line of this file that holds `marker`. */
const lineOf = (marker: string): number =>
  readFileSync(fileURLToPath(import.meta.url), "utf8")
    .split("\n")
    .findIndex((l) => l.includes(marker)) + 1;

/** The local buffers `fn` allocates. */
function locals(fn: PrimFunc): Buffer[] {
  const out: Buffer[] = [];
  const walk = (s: Stmt): void => {
    if (s.kind === "Alloc" && s.buffer.scope === "local") out.push(s.buffer);
    for (const v of Object.values(s)) {
      if (Array.isArray(v)) {
        for (const x of v as unknown[]) {
          if (typeof x === "object" && x !== null && "kind" in x) walk(x as Stmt);
        }
      } else if (typeof v === "object" && v !== null && (v as { kind?: unknown }).kind) {
        const k = (v as { kind: string }).kind;
        if (k !== "Buffer" && k !== "Var" && k !== "LaunchConfig") walk(v as Stmt);
      }
    }
  };
  walk(fn.body);
  return out;
}

/** A kernel over one float32 output that allocates a [shape] float32 local tile with `layout`. */
function kernel(shape: number[], layout: TileLayout | undefined, block = 32, name = "k"): PrimFunc {
  return T.function(name, { Out: T.Tensor([128], "float32") }, ({ Out }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
    const tid = T.cuda.thread_idx("x");
    const acc = T.alloc_local(shape, "float32", layout ? { layout } : {});
    acc.flat().set([0], T.float32(1));
    T.if_(tid.lt(128), () => Out.set([tid], acc.flat().get([0])));
  });
}

describe("T.TileLayout, T.S, T.R, T.O", () => {
  it("the parts and the notation text build the same layout", () => {
    const parts = T.TileLayout(
      T.S([8, 2, 4, 2], ["4@laneid", "1@warpid", "1@laneid", 1]),
      T.R([2], ["4@warpid"]),
      T.O(16, "3@laneid"),
    );
    const text = T.TileLayout(
      "S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + O[(16, 3@laneid)]",
    );
    expect(parts).toEqual(text);
    expect(showTileLayout(parts)).toBe(
      "S[(8, 2, 4, 2) : (4@laneid, 1@warpid, 1@laneid, 1)] + R[2 : 4@warpid] + O[(16, 3@laneid)]",
    );
    expect(T.TileLayout(T.S([4, 8]))).toEqual(parseTileLayout("S[4, 8]"));
  });

  it("the built-ins under T.layout", () => {
    expect(T.layout.mma_sync_operand_layout("C", "m16n8k16", "float32")).toEqual(
      mmaSyncOperandLayout("C", "m16n8k16", "float32"),
    );
    expect(showTileLayout(T.layout.wgmma_operand_layout("D", 64, "float32"))).toBe(
      "S[(4, 2, 8, 8, 4, 2) : (32@tid_in_wg, 2, 4@tid_in_wg, 4, 1@tid_in_wg, 1)]",
    );
    expect(showTileLayout(T.layout.wg_local_layout(4))).toBe("S[(128, 4) : (1@tid_in_wg, 1)]");
  });

  it("a bad spec is TX1026 at the author's line", () => {
    const e = errorOf(() => T.S([8, 4], ["4@lane" as never, 1])); // marker: bad-axis
    expect(e.code).toBe("TX1026");
    expect(e.span?.line).toBe(lineOf("marker: bad-axis"));
    expect(errorOf(() => T.TileLayout("S[(8, 4) : (4@laneid)]")).code).toBe("TX1026");
    expect(errorOf(() => T.TileLayout(T.R([2], ["1@warpid"]) as never)).code).toBe("TX1026");
    expect(errorOf(() => T.TileLayout(T.S([2]), T.O(1), T.O(2))).code).toBe("TX1026");
    expect(errorOf(() => T.S([0]))).toMatchObject({ code: "TX1026" });
    expect(errorOf(() => T.layout.wgmma_operand_layout("D", 60, "float32")).code).toBe("TX1026");
  });
});

describe("T.alloc_local(shape, dtype, { layout })", () => {
  const C = () => T.layout.mma_sync_operand_layout("C", "m16n8k16", "float32");

  it("records the layout on the local buffer and verifies", () => {
    const fn = kernel([16, 8], C());
    const [acc] = locals(fn);
    expect(acc!.tileLayout).toEqual(C());
    expect(() => verify(fn)).not.toThrow();
    // Without a layout: no field, today's meaning.
    expect(locals(kernel([16, 8], undefined))[0]!.tileLayout).toBeUndefined();
  });

  it("a layout is not a SwizzleLayout or a string (TX1002)", () => {
    const e = errorOf(() => kernel([16, 8], T.swizzle_mode("128B") as never));
    expect(e.code).toBe("TX1002");
    expect(errorOf(() => kernel([16, 8], "S[16, 8]" as never)).code).toBe("TX1002");
  });

  it("stores a thread's own slots: a laid-out tile emits the module of a plain array of its span on m", () => {
    // C of m16n8k16 float32 gives each thread 4 slots of the 128 elements.
    const a = emitPtx(verify(kernel([16, 8], C()))).text;
    const b = emitPtx(verify(kernel([4], undefined))).text;
    expect(a).toBe(b);
  });

  it("the verifier: the layout must hold the tile's size (TX2021), whatever its dims", () => {
    // 128 elements of C grouped by [8, 16]: the 8 lane groups split into 4 and 2 (TIRx group).
    expect(() => verify(kernel([8, 16], C()))).not.toThrow();
    const e = errorOf(() => verify(kernel([16, 4], C())));
    expect(e.code).toBe("TX2021");
    expect(e.message).toMatch(/the shard has 128 elements, the shape 64/);
    // [4, 6] over (6, 4): no dim lines up with the iters, but the shape has the layout's size
    // (TIRx docs, "Tensor Layout": a shape is admitted when its total size equals the shard's).
    const six = T.TileLayout(T.S([6, 4], ["1@laneid", 1]));
    expect(() => verify(kernel([4, 6], six))).not.toThrow();
  });

  it("the verifier: thread axes must fit the launch (TX2021)", () => {
    // 32 lanes need a block of at least 32 threads.
    const e = errorOf(() => verify(kernel([16, 8], C(), 16)));
    expect(e.code).toBe("TX2021");
    expect(e.message).toMatch(
      /binds laneid 0\.\.31, but a CTA of block \(16, 1, 1\) has 16 threads/,
    );
    // A wgmma accumulator needs the 128 threads of a warpgroup.
    const D = T.layout.wgmma_operand_layout("D", 8, "float32");
    expect(() => verify(kernel([64, 8], D, 128))).not.toThrow();
    expect(errorOf(() => verify(kernel([64, 8], D, 64))).code).toBe("TX2021");
    // Two warps by warpid: a 32-thread block has one.
    const W = T.TileLayout(T.S([2, 32], ["1@warpid", "1@laneid"]));
    expect(() => verify(kernel([2, 32], W, 64))).not.toThrow();
    expect(errorOf(() => verify(kernel([2, 32], W, 32))).message).toMatch(/warpid 0\.\.1/);
    // pid is reserved: a launch has one device.
    const P = T.TileLayout(T.S([2, 32], ["1@pid", "1@laneid"]));
    expect(errorOf(() => verify(kernel([2, 32], P))).message).toMatch(/pid is reserved/);
    // Without a cluster, one CTA per cluster.
    const Q = T.TileLayout(T.S([2, 32], ["1@cta_in_cluster", "1@laneid"]));
    expect(errorOf(() => verify(kernel([2, 32], Q))).code).toBe("TX2021");
    // A negative coordinate, and m past the tile.
    const N = T.TileLayout(T.S([32], ["1@laneid"]), T.O("-1@laneid"));
    expect(errorOf(() => verify(kernel([32], N))).code).toBe("TX2021");
    const M = T.TileLayout(T.S([4], [2]));
    expect(errorOf(() => verify(kernel([4], M))).message).toMatch(/slots 0\.\.6/);
  });

  it("the verifier: a layout must not put two elements in one thread slot (TX2021)", () => {
    // Each layout sends two logical elements to the same (thread, slot): a copy in and out would
    // silently lose one of them.
    const cases: [number[], string, number, RegExp][] = [
      [
        [128, 8],
        "S[(4, 32, 8) : (1@warpid, 1@laneid, 0)]",
        128,
        /elements \[0, 0\] and \[0, 1\] in the same slot \(m 0 of laneid 0, warpid 0\)/,
      ],
      [
        [32, 8],
        "S[(32, 2, 4) : (1@laneid, 1, 1)]",
        32,
        /elements \[0, 1\] and \[0, 4\] in the same slot \(m 1 of laneid 0\)/,
      ],
      [
        [128, 8],
        "S[(4, 32, 2, 4) : (1@warpid, 1@laneid, 2, 1)]",
        128,
        /elements \[0, 2\] and \[0, 4\] in the same slot \(m 2 of laneid 0, warpid 0\)/,
      ],
    ];
    for (const [shape, text, block, why] of cases) {
      const fn = T.function(
        "k",
        { X: T.Tensor(shape, "float32"), Y: T.Tensor(shape, "float32") },
        ({ X, Y }) => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block }) });
          const a = T.alloc_local(shape, "float32", { layout: T.TileLayout(text) }); // marker: clash
          T.tile.cta.copy(a, X);
          T.tile.cta.copy(Y, a);
        },
      );
      const e = errorOf(() => verify(fn));
      expect(e.code, text).toBe("TX2021");
      expect(e.message, text).toMatch(why);
      expect(e.span?.line, text).toBe(lineOf("marker: clash"));
    }
    // Injective layouts pass: distinct slots, and a replica on another thread.
    const ok = T.TileLayout("S[(32, 2, 4) : (1@laneid, 4, 1)]");
    expect(() => verify(kernel([32, 8], ok))).not.toThrow();
    const rep = T.TileLayout("S[(32, 4) : (1@laneid, 1)] + R[2 : 1@warpid]");
    expect(() => verify(kernel([32, 4], rep, 64))).not.toThrow();
    // A replica that lands an element on a slot another element holds is a clash too.
    const overlap = T.TileLayout("S[(16, 2) : (1@laneid, 1)] + R[2 : 1@laneid]");
    expect(errorOf(() => verify(kernel([16, 2], overlap))).message).toMatch(
      /elements \[0, 0\] and \[1, 0\] in the same slot \(m 0 of laneid 1\)/,
    );
  });

  it("T.alloc_local reports it at its own line while building, before any T.tile call reads the tile", () => {
    const e = errorOf(() =>
      T.function("k", { Out: T.Tensor([32], "float32") }, ({ Out }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
        const acc = T.alloc_local([16, 4], "float32", { layout: C() }); // marker: alloc-line
        T.tile.warp.fill(acc, T.float32(0));
        Out.set([T.cuda.thread_idx("x")], acc.get([0, 0]));
      }),
    );
    expect(e.code).toBe("TX2021");
    expect(e.span?.line).toBe(lineOf("marker: alloc-line"));
  });
});

describe("printers and script mode", () => {
  const fn = () => kernel([16, 8], T.layout.mma_sync_operand_layout("C", "m16n8k16", "float32"));

  it("the builder printer writes the layout as T.TileLayout(notation)", () => {
    expect(printFunc(fn())).toContain(
      `T.alloc_local([16, 8], "float32", { name: "acc", layout: T.TileLayout("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]") })`,
    );
  });

  it("script mode: print, parse back, structurally equal (the layout included)", () => {
    const f = fn();
    const text = printScriptModuleText([f]);
    expect(text).toContain('layout: T.TileLayout("S[(2, 8, 4, 2) : (2, 4@laneid, 1@laneid, 1)]")');
    const [back] = parseScript(text, "tile-layout-roundtrip.ts");
    expect(structuralEqual(f, back)).toBe(true);
    expect(locals(back!)[0]!.tileLayout).toEqual(locals(f)[0]!.tileLayout);
    // A different layout is a different kernel.
    const other = kernel([16, 8], T.TileLayout(T.S([16, 8], ["1@laneid", 1])));
    expect(structuralEqual(f, other)).toBe(false);
  });

  it("script mode takes the layout option from T.S parts and T.layout built-ins", () => {
    const head = 'import { script as T, type Tensor } from "tirx-ts";\n';
    const text = `${head}export const k = T.prim_func(function k(Out: Tensor<[128], "float32">) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  const a = T.alloc_local([16, 8], "float32", { layout: T.layout.mma_sync_operand_layout("C", "m16n8k16", "float32") });
  const b = T.alloc_local([16, 8], "float32", { layout: T.TileLayout(T.S([2, 8, 4, 2], [2, "4@laneid", "1@laneid", 1])) });
  a[0][0] = b[0][0];
  Out[0] = a[0][0];
});\n`;
    const [k] = parseScript(text, "tile-layout-script.ts");
    const [a, b] = locals(k!);
    expect(a!.tileLayout).toEqual(b!.tileLayout);
    expect(a!.tileLayout).toEqual(mmaSyncOperandLayout("C", "m16n8k16", "float32"));
    expect(() => verify(k!)).not.toThrow();
  });
});
