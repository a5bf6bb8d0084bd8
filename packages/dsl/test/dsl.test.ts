import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { T, printFunc, PrimExpr } from "@tirx-ts/dsl";
import { structuralEqual, structuralHash, TirxError, type PrimFunc } from "@tirx-ts/core";

const here = fileURLToPath(import.meta.url);

function seed(name = "copy_async"): PrimFunc {
  return T.function(
    name,
    { A: T.Tensor([128, 32], "float16"), B: T.Tensor([128, 32], "float16") },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const shared = T.alloc_shared([128, 32], "float16", { layout: "default" });
      const src = A.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
      const dst = shared.rearrange("(w t) (r v) -> w t r v", { w: 4, t: 32, v: 8 });
      T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"], dst, src, {
        chunk_bytes: 16,
        scope: "cta",
      });
      T.ptx.cp.async_.commit_group();
      T.ptx.cp.async_.wait_group(0);
      T.cuda.cta_sync();
      for (const j of T.range(32)) B.set([tid, j], shared.get([tid, j]));
    },
  );
}

function errCode(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (e instanceof TirxError) return e.code;
    throw e;
  }
  return "no error";
}

describe("T namespace", () => {
  test("the seed kernel prints as script text", () => {
    expect(printFunc(seed())).toMatchInlineSnapshot(`
      "import { T } from "tirx-ts";

      export const copy_async = T.function("copy_async", { A: T.Tensor([128, 32], "float16"), B: T.Tensor([128, 32], "float16") }, ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const threadIdx_x = T.cuda.thread_idx("x");
        const shared = T.alloc_shared([128, 32], "float16", { name: "shared" });
        T.cuda.tile.apply(T.ptx["cp.async.cg.shared.global"], shared.as_strided({ offset: 0, shape: [4, 32, 4, 8], strides: [1024, 32, 8, 1], axes: ["w","t","r","v"] }), A.as_strided({ offset: 0, shape: [4, 32, 4, 8], strides: [1024, 32, 8, 1], axes: ["w","t","r","v"] }), { "chunk_bytes": 16, "scope": "cta" });
        T.ptx.cp.async_.commit_group();
        T.call_op("cp.async.wait_group", 0);
        T.cuda.cta_sync();
        for (const i of T.range(32)) {
          B.flat().set([threadIdx_x.mul(32).add(i)], shared.flat().get([threadIdx_x.mul(32).add(i)]));
        }
      });
      "
    `);
  });

  test("two traces of the same kernel are structurally equal, a changed one is not", () => {
    expect(structuralEqual(seed(), seed())).toBe(true);
    expect(structuralHash(seed())).toBe(structuralHash(seed()));
    expect(structuralEqual(seed(), seed("other"))).toBe(false);
  });

  test("recorded nodes carry the author's file and line", () => {
    let line = 0;
    const k = T.function("k", { A: T.Tensor([32], "int32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      line = Number(new Error().stack!.split("\n")[1]!.split(":").at(-2)) + 1;
      A.set([T.cuda.thread_idx("x")], 7);
    });
    const body = k.body.kind === "Seq" ? k.body.stmts[0]! : k.body;
    if (body.kind !== "DeviceEntry" || body.body.kind !== "Seq") throw new Error("unexpected IR");
    const store = body.body.stmts.find((s) => s.kind === "Store")!;
    expect(store.span?.file).toBe(here);
    expect(store.span?.line).toBe(line);
  });

  test("T.* statements outside a T.function body are refused (TX1001)", () => {
    expect(errCode(() => T.cuda.cta_sync())).toBe("TX1001");
  });

  test("device_entry twice is refused (TX1006)", () => {
    expect(
      errCode(() =>
        T.function("k", {}, () => {
          const l = T.cuda.LaunchConfig({ grid: 1, block: 32 });
          T.device_entry({ launch: l });
          T.device_entry({ launch: l });
        }),
      ),
    ).toBe("TX1006");
  });

  test("operators need matching dtypes; literals adopt the other side's dtype", () => {
    T.function("k", { n: T.int32, x: T.Scalar("float32") }, ({ n, x }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      expect(n.add(1).dtype).toBe("int32");
      expect(x.mul(0.5).dtype).toBe("float32");
      expect(errCode(() => n.add(x))).toBe("TX1007");
      expect(T.uint32(16).dtype).toBe("uint32");
      expect(T.if_then_else(n.lt(3), T.uint32(16), T.uint32(0)).dtype).toBe("uint32");
    });
  });

  test("T.ptx indexes opcodes and holds the cp.async namespace", () => {
    expect(T.ptx["cp.async.ca.shared.global"]?.opcode).toBe("cp.async.ca.shared.global");
    expect(typeof T.ptx.cp.async_.commit_group).toBe("function");
  });

  test("views: sub with strings and T.slice, view_as reinterpreting bytes", () => {
    T.function("k", { A: T.Tensor([16, 16], "uint8") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 16 }) });
      expect(A.sub(3, ":").shape).toEqual([16]);
      expect(A.sub("0:8", T.slice(0, 16, 4)).shape).toEqual([8, 4]);
      expect(A.view_as("uint32").shape).toEqual([16, 4]);
      expect(A.sub(T.cuda.thread_idx("x"))).toBeInstanceOf(Object);
      expect(A.get([0, 0])).toBeInstanceOf(PrimExpr);
    });
  });
});
