import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { T, type PrimExpr } from "@tirx-ts/dsl";
import { mkBuffer, TirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { runSim, simZeros } from "@tirx-ts/runtime-sim";

function codeOf(build: () => PrimFunc): string {
  try {
    verify(build());
  } catch (e) {
    if (e instanceof TirxError) return e.code;
    throw e;
  }
  return "verified";
}

function errorOf(build: () => PrimFunc): TirxError {
  try {
    verify(build());
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

/** The line of this file that holds `marker`. */
const lineOf = (marker: string): number =>
  readFileSync(fileURLToPath(import.meta.url), "utf8")
    .split("\n")
    .findIndex((l) => l.includes(marker)) + 1;

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

describe("bounds in the else-branch of T.if_", () => {
  /** 128 threads, S of `size` float32: T.if_(cond, {}, S[index]) with tid and i < 8 in scope. */
  const elseAccess =
    (
      cond: (tid: PrimExpr) => PrimExpr,
      index: (tid: PrimExpr) => PrimExpr,
      size = 64,
    ): (() => PrimFunc) =>
    () =>
      T.function("k", { O: T.Tensor([128], "float32") }, ({ O }) => {
        T.device_entry({ launch: launch(128) });
        const tid = T.cuda.thread_idx("x");
        const S = T.alloc_shared([size], "float32", { name: "S" });
        T.if_(
          cond(tid),
          () => O.set([tid], T.float32(0)),
          () => O.set([tid], S.get([index(tid)])),
        );
      });

  test("the negated guard bounds the else-branch: tid < 64 leaves tid - 64 in 0..63", () => {
    // The new-user trial's kernel, as written.
    const trial = T.function("k", { O: T.Tensor([64], "float32") }, ({ O }) => {
      T.device_entry({ launch: launch(128) });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([64], "float32", { name: "S" });
      T.if_(
        tid.lt(64),
        () => {
          S.set([tid], tid.cast("float32"));
        },
        () => {
          O.set([tid.sub(64)], S.get([tid.sub(64)]));
        },
      );
    });
    expect(() => verify(trial)).not.toThrow();
  });

  test("an else-branch access past the negated guard is still TX2006 at its line", () => {
    const e = errorOf(() =>
      T.function("k", { O: T.Tensor([128], "float32") }, ({ O }) => {
        T.device_entry({ launch: launch(128) });
        const tid = T.cuda.thread_idx("x");
        const S = T.alloc_shared([64], "float32", { name: "S" });
        T.if_(
          tid.lt(64),
          () => S.set([tid], tid.cast("float32")),
          () => O.set([tid], S.get([tid])), // ELSE-OOB
        );
      }),
    );
    expect(e.code).toBe("TX2006");
    expect(e.text).toContain('access to "S" at elements 64..127, but it holds 64 elements');
    expect(e.span?.line).toBe(lineOf("// ELSE-OOB"));
  });

  test("on the simulator the else-branch reads what the then-branch wrote, with no reports", () => {
    const fn = T.function("k", { O: T.Tensor([128], "float32") }, ({ O }) => {
      T.device_entry({ launch: launch(128) });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([64], "float32", { name: "S" });
      T.if_(tid.lt(64), () => S.set([tid], tid.mul(3).cast("float32")));
      T.cuda.cta_sync();
      T.if_(
        tid.lt(64),
        () => O.set([tid], S.get([tid])),
        () => O.set([tid], S.get([tid.sub(64)]).add(T.float32(1000))),
      );
    });
    const out = simZeros([128], "float32");
    const res = runSim(verify(fn), [out], { hazards: "collect" });
    expect(res.reports).toEqual([]);
    const want = Array.from({ length: 128 }, (_, t) => (t < 64 ? t * 3 : (t - 64) * 3 + 1000));
    expect(Array.from(out.toArray() as Float32Array)).toEqual(want);
  });

  test("each comparison's negation, either side order", () => {
    const cases: [string, (t: PrimExpr) => PrimExpr, (t: PrimExpr) => PrimExpr, number?][] = [
      ["le", (t) => t.le(63), (t) => t.sub(64)],
      ["gt", (t) => t.gt(63), (t) => t],
      ["ge", (t) => t.ge(64), (t) => t],
      ["flipped lt", (t) => T.int32(64).gt(t), (t) => t.sub(64)],
      ["flipped ge", (t) => T.int32(63).lt(t), (t) => t],
      // tid != 127 fails only at tid == 127.
      ["ne", (t) => t.ne(127), (t) => t.sub(127)],
      // tid == 0 fails for 1..127: the excluded value was an end of tid's range.
      ["eq", (t) => t.eq(0), (t) => t.sub(1), 127],
      ["not", (t) => t.lt(64).not(), (t) => t],
      // !(a || b) is !a && !b: 32 <= tid < 96.
      ["or", (t) => t.lt(32).or(t.ge(96)), (t) => t.sub(32)],
      // !(a && b) says nothing unless a side always holds; tid >= 0 does.
      ["and with a side always true", (t) => t.ge(0).and(t.ge(64)), (t) => t],
    ];
    for (const [what, cond, index, size] of cases) {
      expect(codeOf(elseAccess(cond, index, size)), what).toBe("verified");
    }
  });

  test("nothing is learned where the negation is not a conjunction, or of floats", () => {
    const cases: [string, (t: PrimExpr) => PrimExpr, (t: PrimExpr) => PrimExpr, number?][] = [
      // !(64 <= tid && tid < 120) also holds for 120..127.
      ["and", (t) => t.ge(64).and(t.lt(120)), (t) => t],
      // tid == 5 fails for 0..4 and 6..127: tid - 1 still reaches -1.
      ["eq inside the range", (t) => t.eq(5), (t) => t.sub(1), 127],
      // A float comparison is false for NaN too.
      ["float", (t) => t.cast("float32").lt(T.float32(64)), (t) => t.sub(64)],
    ];
    for (const [what, cond, index, size] of cases) {
      expect(codeOf(elseAccess(cond, index, size)), what).toBe("TX2006");
    }
  });

  test("nested ifs and ifs in loops narrow each else-branch, and the ranges come back after", () => {
    const nested = (after: boolean) => () =>
      T.function("k", { O: T.Tensor([128], "float32") }, ({ O }) => {
        T.device_entry({ launch: launch(128) });
        const tid = T.cuda.thread_idx("x");
        const S = T.alloc_shared([32], "float32", { name: "S" });
        T.if_(
          tid.lt(64),
          () => O.set([tid], T.float32(0)),
          () =>
            T.if_(
              tid.lt(96),
              () => O.set([tid], S.get([tid.sub(64)])),
              () => O.set([tid], S.get([tid.sub(96)])),
            ),
        );
        if (after) O.set([tid], S.get([tid.sub(96)])); // AFTER-IF
      });
    expect(codeOf(nested(false))).toBe("verified");
    const e = errorOf(nested(true));
    expect(e.code).toBe("TX2006");
    expect(e.span?.line).toBe(lineOf("// AFTER-IF"));

    const loop = (index: (i: PrimExpr) => PrimExpr) => () =>
      T.function("k", { O: T.Tensor([8], "float32") }, ({ O }) => {
        T.device_entry({ launch: launch(1) });
        const S = T.alloc_shared([64], "float32", { name: "S" });
        for (const i of T.range(8)) {
          T.if_(
            i.lt(4),
            () => S.set([i.mul(16)], i.cast("float32")),
            () => O.set([i], S.get([index(i)])),
          );
        }
      });
    expect(codeOf(loop((i) => i.sub(4).mul(16)))).toBe("verified");
    expect(codeOf(loop((i) => i.mul(16)))).toBe("TX2006");
  });
});
