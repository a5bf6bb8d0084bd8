import { describe, expect, test } from "vitest";
import { T } from "@tirx-ts/dsl";
import { mkBuffer, TirxError, verify, type PrimFunc } from "@tirx-ts/core";

function codeOf(build: () => PrimFunc): string {
  try {
    verify(build());
  } catch (e) {
    if (e instanceof TirxError) return e.code;
    throw e;
  }
  return "verified";
}

const launch = (block = 32) => T.cuda.LaunchConfig({ grid: 1, block });

describe("well-formedness", () => {
  test("a kernel without device_entry is refused (TX2004)", () => {
    expect(codeOf(() => T.function("k", { A: T.Tensor([4], "int32") }, () => {}))).toBe("TX2004");
  });

  test("thread indices before device_entry are refused (TX2002)", () => {
    expect(() =>
      T.function("k", {}, () => {
        T.cuda.thread_idx("x");
      }),
    ).toThrow(expect.objectContaining({ code: "TX2002" }));
  });

  test("a variable used after its loop is refused (TX2001)", () => {
    expect(
      codeOf(() =>
        T.function("k", { A: T.Tensor([32], "int32") }, ({ A }) => {
          T.device_entry({ launch: launch() });
          let leaked = undefined as unknown as Parameters<typeof A.set>[1];
          for (const i of T.range(4)) leaked = i;
          A.set([0], leaked);
        }),
      ),
    ).toBe("TX2001");
  });

  test("a constant out-of-bounds store is refused (TX2006); the thread range is bounded by the launch", () => {
    const k = (n: number) => () =>
      T.function("k", { A: T.Tensor([32], "int32") }, ({ A }) => {
        T.device_entry({ launch: launch(n) });
        const tid = T.cuda.thread_idx("x");
        A.set([tid], tid);
      });
    expect(codeOf(k(32))).toBe("verified");
    expect(codeOf(k(64))).toBe("TX2006");
  });

  test("storing a value of another dtype needs a cast (TX2005)", () => {
    expect(
      codeOf(() =>
        T.function("k", { A: T.Tensor([32], "float32") }, ({ A }) => {
          T.device_entry({ launch: launch() });
          A.set([0], T.cuda.thread_idx("x"));
        }),
      ),
    ).toBe("TX2005");
  });

  test("launch limits (TX2007) and shared capacity (TX2008)", () => {
    expect(
      codeOf(() =>
        T.function("k", {}, () => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 2048 }) });
        }),
      ),
    ).toBe("TX2007");
    expect(
      codeOf(() =>
        T.function("k", {}, () => {
          T.device_entry({ launch: launch() });
          T.alloc_shared([64 * 1024], "float32");
        }),
      ),
    ).toBe("TX2008");
  });

  test("wait_group takes a static 0..7 (TX3022)", () => {
    expect(
      codeOf(() =>
        T.function("k", {}, () => {
          T.device_entry({ launch: launch() });
          T.ptx.cp.async_.wait_group(8);
        }),
      ),
    ).toBe("TX3022");
  });

  test("tensors over 2^48 bytes are refused (TX2011); over 2^31 - 1 they verify", () => {
    const k = (rows: number) => () =>
      T.function("k", { A: T.Tensor([rows, 16384, 65536], "float16") }, ({ A }) => {
        T.device_entry({ launch: launch() });
        A.set([0, 0, 0], T.float16(1));
      });
    expect(codeOf(k(1))).toBe("verified"); // 2^31 bytes
    expect(codeOf(k(2 ** 17))).toBe("verified"); // 2^48 bytes
    expect(codeOf(k(2 ** 17 + 1))).toBe("TX2011");
  });

  test("T.unroll needs a constant trip count of at most 4096 (TX2012)", () => {
    const k =
      (bound: (n: ReturnType<typeof T.int32>) => number | ReturnType<typeof T.int32>) => () =>
        T.function("k", { A: T.Tensor([8], "int32"), n: T.int32 }, ({ A, n }) => {
          T.device_entry({ launch: launch() });
          for (const i of T.unroll(bound(n))) A.set([i.floormod(8)], i);
        });
    expect(codeOf(k(() => 4096))).toBe("verified");
    expect(codeOf(k(() => 4097))).toBe("TX2012");
    expect(codeOf(k((n) => n))).toBe("TX2012");
  });

  test("a tile pattern repeating more than 4096 times per thread is refused (TX2012)", () => {
    const k = (rows: number) => () =>
      T.function("k", { A: T.Tensor([rows, 4], "uint8") }, ({ A }) => {
        T.device_entry({ launch: launch(1) });
        const s = T.alloc_shared([rows, 4], "uint8");
        T.cuda.tile.apply(T.ptx["cp.async.ca.shared.global"], s, A, { chunk_bytes: 4 });
      });
    expect(codeOf(k(4096))).toBe("verified");
    expect(codeOf(k(4097))).toBe("TX2012");
  });

  test("an allocation in global memory is refused (TX2009): global tensors are parameters", () => {
    const fn = T.function("k", {}, () => {
      T.device_entry({ launch: launch() });
    });
    const entry = fn.body.kind === "DeviceEntry" ? fn.body : undefined;
    if (!entry) throw new Error("unexpected IR");
    const buf = mkBuffer("g", [4], "float32", "global");
    const bad: PrimFunc = { ...fn, body: { ...entry, body: { kind: "Alloc", buffer: buf } } };
    expect(codeOf(() => bad)).toBe("TX2009");
  });
});
