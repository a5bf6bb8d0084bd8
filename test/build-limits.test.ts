// Limits that ptxas, the driver or the simulator would hit later are checked when the kernel is
// built, each with its code at the author's line: the kernel name as a PTX identifier (TX2019),
// local memory per thread (TX2020), shared memory per CTA, static and dynamic, overall and per
// target (TX2008), and for loops longer than the simulator's loop budget (TX6006), in the builder
// and in script mode. What is accepted at each limit assembles with ptxas and runs.
import { describe, expect, test } from "vitest";
import { T, parseScript } from "tirx-ts";
import {
  MAX_LOCAL_BYTES,
  MAX_PTX_IDENT,
  MAX_SHARED_PER_CTA,
  verify,
  type PrimFunc,
} from "@tirx-ts/core";
import { ARCHS, compileToPtx, emitPtx } from "@tirx-ts/codegen-ptx";
import { MAX_WHILE_ITERATIONS, runSim, simZeros } from "@tirx-ts/runtime-sim";
import { assembleLater } from "./util/ptxas-deferred.js";

/** The error `f` throws (undefined when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** A TirxError of `code` at a line of this file. */
const here = (code: string) => ({ code, span: { file: expect.stringMatching(/build-limits/) } });

const named = (name: string): PrimFunc =>
  T.function(name, { B: T.Tensor([32], "float32") }, ({ B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    B.set([T.cuda.thread_idx("x")], 1);
  });

describe("kernel names (PTX ISA, Identifiers)", () => {
  test.each(["_", "__", "_a", "a", "k_1", "WARP_SZ_", "x".repeat(MAX_PTX_IDENT)])("%s", (name) => {
    const ok = name !== "_";
    const err = thrown(() => verify(named(name)));
    if (!ok) {
      expect(err).toMatchObject(here("TX2019"));
      return;
    }
    expect(err).toBeUndefined();
    const ptx = compileToPtx(named(name));
    assembleLater(ptx.text, ptx.target, `name_${name.length}`);
  });

  test("WARP_SZ, a name PTX predefines, and a name past 1024 characters are TX2019", () => {
    expect(thrown(() => verify(named("WARP_SZ")))).toMatchObject(here("TX2019"));
    expect(thrown(() => verify(named("k".repeat(MAX_PTX_IDENT + 1))))).toMatchObject(
      here("TX2019"),
    );
  });

  test("script mode: a kernel function named _ is TX2019 at the function ($: TX1002)", () => {
    for (const [name, code] of [
      ["_", "TX2019"],
      ["$", "TX1002"],
    ] as const) {
      const text = `import { script as T, type Tensor } from "tirx-ts";
export const k = T.prim_func(function ${name}(B: Tensor<[32], "float32">) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  B[T.cuda.thread_idx("x")] = 1;
});
`;
      expect(thrown(() => verify(parseScript(text, "named.ts")[0]!))).toMatchObject({
        code,
        span: { file: "named.ts", line: 2 },
      });
    }
  });
});

describe("local memory per thread (512 KiB)", () => {
  const local = (elements: number): PrimFunc =>
    T.function("loc", { B: T.Tensor([32], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const t = T.cuda.thread_idx("x");
      const L = T.alloc_local([elements], "float32");
      L.set([t], t.cast("float32"));
      B.set([t], L.get([t]));
    });

  test("exactly 512 KiB assembles and runs", () => {
    const fn = local(MAX_LOCAL_BYTES / 4);
    const ptx = compileToPtx(fn);
    assembleLater(ptx.text, ptx.target, "local_512k");
    const b = simZeros([32], "float32");
    runSim(verify(fn), [b]);
    expect(Array.from(b.toArray() as Float32Array)).toEqual(
      Array.from({ length: 32 }, (_, i) => i),
    );
  });

  test.each([MAX_LOCAL_BYTES / 4 + 1, 2 ** 31])("%i float32 elements are TX2020", (n) => {
    expect(thrown(() => verify(local(n)))).toMatchObject(here("TX2020"));
  });
});

describe("shared memory per CTA", () => {
  const shared = (dynamic: number): PrimFunc =>
    T.function("shm", { B: T.Tensor([32], "float32") }, ({ B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: 1, block: 32, dynamic_shared_bytes: dynamic }),
      });
      const S = T.alloc_shared([32], "float32");
      const t = T.cuda.thread_idx("x");
      S.set([t], 1);
      T.cuda.cta_sync();
      B.set([t], S.get([t]));
    });
  const statics = 32 * 4;

  test("227 KiB in all compiles for sm_90 (raised from sm_80), and sm_80 and sm_86 refuse it", () => {
    const vf = verify(shared(MAX_SHARED_PER_CTA - statics));
    const m = emitPtx(vf);
    expect(m.target).toBe("sm_90");
    assembleLater(m.text, m.target, "shared_227k");
    for (const arch of ["sm_80", "sm_86"]) {
      const err = thrown(() => emitPtx(vf, { arch }));
      expect(err).toMatchObject({ code: "TX2008", notes: [{ message: /sm_90/ }] });
    }
  });

  test("each target's capacity: at it compiles, one byte more is TX2008", () => {
    for (const a of ARCHS) {
      const vf = verify(shared(a.sharedPerCta - statics));
      const m = emitPtx(vf, { arch: a.name });
      assembleLater(m.text, m.target, `shared_${a.name}`);
      const over = shared(a.sharedPerCta - statics + 1);
      expect(thrown(() => emitPtx(verify(over), { arch: a.name }))).toMatchObject({
        code: "TX2008",
      });
    }
  });

  test("past 227 KiB (or 2^40 dynamic bytes) is TX2008 at T.device_entry", () => {
    for (const dynamic of [MAX_SHARED_PER_CTA - statics + 1, 2 ** 40]) {
      expect(thrown(() => verify(shared(dynamic)))).toMatchObject(here("TX2008"));
    }
  });
});

describe("for loops longer than the simulator's loop budget (TX6006)", () => {
  test("T.range past the budget is reported at the loop, before it runs", () => {
    for (const extent of [MAX_WHILE_ITERATIONS + 1, 1e9]) {
      const fn = T.function("long", { B: T.Tensor([1], "int32") }, ({ B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        for (const i of T.range(extent)) B.set([0], i);
      });
      const r = runSim(verify(fn), [simZeros([1], "int32")], { hazards: "collect" });
      expect(r.reports).toMatchObject([here("TX6006")]);
      // It did not run: B keeps its zero.
      expect(thrown(() => runSim(verify(fn), [simZeros([1], "int32")]))).toMatchObject(
        here("TX6006"),
      );
    }
  });

  test("script mode: for (let i = 0; i < 1e9; i++) is TX6006 at the loop", () => {
    const [fn] = parseScript(
      `import { script as T, type Tensor } from "tirx-ts";
export const k = T.prim_func(function k(B: Tensor<[1], "int32">) {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
  for (let i = 0; i < 1e9; i++) B[0] = i;
});
`,
      "long.ts",
    );
    const b = simZeros([1], "int32");
    const r = runSim(verify(fn!), [b], { hazards: "collect" });
    expect(r.reports).toMatchObject([{ code: "TX6006", span: { file: "long.ts", line: 4 } }]);
    expect(Array.from(b.toArray() as Int32Array)).toEqual([0]);
  });

  test("a loop within the budget runs to its end", () => {
    const fn = T.function("short", { B: T.Tensor([1], "int32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      for (const i of T.range(1000)) B.set([0], i);
    });
    const b = simZeros([1], "int32");
    expect(runSim(verify(fn), [b]).reports).toEqual([]);
    expect(Array.from(b.toArray() as Int32Array)).toEqual([999]);
  });
});
