// The tensor API and launch arguments: every input gives the right data or a TirxError with a
// code (never a TypeError, RangeError or plain Error). Instances first (a device that is not
// one, `using` on the simulator, disposed tensors, data that no element of the dtype holds,
// scalars outside their dtype, runSim's own arguments), then fixed-seed fuzzing of tensor() and
// of launches.
import { describe, expect, test } from "vitest";
import fc from "fast-check";
import { T, compile, sim, tensor } from "tirx-ts";
import {
  DTYPES,
  isTirxError,
  verify,
  type DType,
  type DeviceTensor,
  type KernelArg,
} from "@tirx-ts/core";
import { runSim } from "@tirx-ts/runtime-sim";

/** The error `f` throws (undefined when it returns). */
function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

/** A TirxError of `code`, optionally at a line of this file. */
const coded = (code: string, atHere = false) =>
  atHere ? { code, span: { file: expect.stringMatching(/tensor-args/) } } : { code };

const dev = sim();
const f32 = (xs: readonly number[]) =>
  tensor(xs, { shape: [xs.length], dtype: "float32", device: dev });

describe("compile()", () => {
  test("a target the kernel cannot take is TX5006 at the compile() call", () => {
    const k = T.function("k", { A: T.Tensor([4], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [1], block: 4 }) });
      A.set([T.cuda.thread_idx("x")], T.float32(1));
    });
    expect(thrown(() => compile(k, { target: "cuda", arch: "sm_75" }))).toMatchObject(
      coded("TX5006", true),
    );
  });
});

describe("tensor()", () => {
  test("a device that is not one is TX5012 (it was a TypeError from inside the runtime)", () => {
    for (const device of [{}, { kind: "cuda", name: "x" }, "sim", 0, null]) {
      const opts = { shape: [4], dtype: "float32", device } as never;
      expect(thrown(() => tensor([1, 2, 3, 4], opts))).toMatchObject(coded("TX5012"));
      expect(thrown(() => tensor.zeros([4], "float32", device as never))).toMatchObject(
        coded("TX5012"),
      );
      expect(thrown(() => tensor.empty([4], "float32", device as never))).toMatchObject(
        coded("TX5012"),
      );
    }
  });

  test("`using` disposes a simulator tensor at the end of its block", () => {
    let kept: DeviceTensor | undefined;
    {
      using t = f32([1, 2, 3, 4]);
      kept = t;
      expect(Array.from(t.toArray() as Float32Array)).toEqual([1, 2, 3, 4]);
      expect(t.disposed).toBe(false);
    }
    expect(kept.disposed).toBe(true);
    expect(thrown(() => kept!.toArray())).toMatchObject(coded("TX5011", true));
    expect(thrown(() => kept!.toBytes())).toMatchObject(coded("TX5011", true));
    kept.dispose(); // idempotent
  });

  test("a use after dispose() is TX5011 at the user's line, with the fix in a note", () => {
    const t = f32([1, 2, 3, 4]);
    t.dispose();
    const line = new Error().stack!.split("\n")[1]!.match(/:(\d+):\d+\)?$/)![1]!;
    const e = thrown(() => t.toArray());
    expect(e).toMatchObject({
      ...coded("TX5011", true),
      span: { line: Number(line) + 1 },
      notes: [{ message: expect.stringContaining("make it again") }],
    });
    expect(thrown(() => (t as unknown as { storage: unknown }).storage)).toMatchObject(
      coded("TX5011", true),
    );
  });

  test.each<[string, unknown, DType]>([
    ["a string element", [1, "2", 3, 4], "float32"],
    ["a hole", [1, , 3, 4], "float32"], // eslint-disable-line no-sparse-arrays
    ["undefined", [1, undefined, 3, 4], "int32"],
    ["an object", [1, {}, 3, 4], "float32"],
    ["a symbol", [1, Symbol(), 3, 4], "float32"],
    ["a fraction for int32", [1, 1.5, 3, 4], "int32"],
    ["NaN for int64", [1, NaN, 3, 4], "int64"],
    ["Infinity for uint8", [1, Infinity, 3, 4], "uint8"],
    ["a fraction in a Float64Array for int32", new Float64Array([1, 2, 0.5, 4]), "int32"],
    ["three elements for four", [1, 2, 3], "float32"],
    ["null", null, "float32"],
    ["a number", 4, "float32"],
    ["an array-like with a bad length", { length: -1 }, "float32"],
  ])("%s is TX5007, at the tensor() call", (_, data, dtype) => {
    expect(thrown(() => tensor(data as never, { shape: [4], dtype, device: dev }))).toMatchObject(
      coded("TX5007", true),
    );
  });

  test("shapes, dtypes and options that are not are coded", () => {
    const bad: [unknown, unknown, string][] = [
      [[-1], "float32", "TX5007"],
      [[1.5], "float32", "TX5007"],
      ["4", "float32", "TX5007"],
      [[2 ** 40], "float32", "TX5007"],
      [[4], "f32", "TX1003"],
      [[4], undefined, "TX1003"],
    ];
    for (const [shape, dtype, code] of bad) {
      const opts = { shape, dtype, device: dev } as never;
      // At the call (each had no source position: printed without file:line or code frame).
      expect(thrown(() => tensor([1, 2, 3, 4], opts))).toMatchObject(coded(code, true));
      expect(thrown(() => tensor.zeros(shape as never, dtype as never, dev))).toMatchObject(
        coded(code, true),
      );
    }
    const typo = { shape: [4], dtype: "float32", devcie: dev } as never;
    expect(thrown(() => tensor([1, 2, 3, 4], typo))).toMatchObject(coded("TX5007"));
    expect(thrown(() => tensor([1, 2, 3, 4], null as never))).toMatchObject(coded("TX5007"));
  });

  test("messages spell a dtype with its article: an int32, a uint8, a float16", () => {
    const msg = (dtype: DType, v: number) =>
      (thrown(() => tensor([v], { dtype, device: dev })) as Error).message;
    expect(msg("int32", 1.5)).toMatch(/which an int32 element cannot hold/);
    expect(msg("uint8", 0.5)).toMatch(/which a uint8 element cannot hold/);
    expect(msg("int8", NaN)).toMatch(/which an int8 element cannot hold/);
  });

  test("without a shape the data's length is the one dimension", () => {
    const t = tensor(Float32Array.of(1, 2, 3), { dtype: "float32", device: dev });
    expect(t.shape).toEqual([3]);
    expect(Array.from(t.toArray() as Float32Array)).toEqual([1, 2, 3]);
    expect(thrown(() => tensor(7 as never, { dtype: "float32", device: dev }))).toMatchObject(
      coded("TX5007", true),
    );
  });
});

// C[i] = A[i] * s + n for i < 4 (and flag chooses A or 0).
const axpy = T.function(
  "axpy",
  {
    A: T.Tensor([4], "float32"),
    C: T.Tensor([4], "float32"),
    s: T.float32,
    n: T.int32,
    flag: T.bool,
  },
  ({ A, C, s, n, flag }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 4 }) });
    const i = T.cuda.thread_idx("x");
    C.set([i], T.if_then_else(flag, A.get([i]).mul(s).add(n.cast("float32")), T.float32(0)));
  },
);
const run = compile(axpy);

/** What C holds after a launch with these (valid) scalars: float32 arithmetic, as on the device. */
function expected(a: readonly number[], s: number, n: number, flag: boolean): number[] {
  // Each float32 operation rounds its exact result once; Math.fround of the double result gives
  // that (a double has more than 2·24 + 2 bits). n is cast to float32 first.
  const f = Math.fround;
  return a.map((x) => (flag ? f(f(f(x) * f(s)) + f(n)) : 0));
}

describe("launch arguments", () => {
  const a = () => f32([1, 2, 3, 4]);
  const c = () => tensor.zeros([4], "float32", dev);

  test("valid arguments run with the right data", () => {
    const C = c();
    run(a(), C, 2.5, 3, true);
    expect(Array.from(C.toArray() as Float32Array)).toEqual(expected([1, 2, 3, 4], 2.5, 3, true));
    run(a(), C, 2.5, -(2n ** 31n), false);
    expect(Array.from(C.toArray() as Float32Array)).toEqual([0, 0, 0, 0]);
  });

  test.each<[string, () => unknown[], string]>([
    ["too few", () => [a(), c(), 1, 2], "TX5001"],
    ["too many", () => [a(), c(), 1, 2, true, 5], "TX5001"],
    ["a float16 tensor", () => [tensor.zeros([4], "float16", dev), c(), 1, 2, true], "TX5002"],
    ["a tensor of 5", () => [f32([1, 2, 3, 4, 5]), c(), 1, 2, true], "TX5003"],
    ["a disposed tensor", () => [disposed(), c(), 1, 2, true], "TX5011"],
    ["a number for a tensor", () => [1, c(), 1, 2, true], "TX5005"],
    [
      "a look-alike tensor",
      () => [{ device: dev, shape: [4], dtype: "float32" }, c(), 1, 2, true],
      "TX5004",
    ],
    [
      "a tensor on no device",
      () => [{ device: {}, shape: [4], dtype: "float32" }, c(), 1, 2, true],
      "TX5012",
    ],
    [
      "a tensor whose shape is not a list",
      () => [{ device: dev, shape: 4, dtype: "float32" }, c(), 1, 2, true],
      "TX5005",
    ],
    ["1.5 for int32", () => [a(), c(), 1, 1.5, true], "TX5005"],
    ["2^31 for int32", () => [a(), c(), 1, 2 ** 31, true], "TX5005"],
    ["2^31 as a bigint for int32", () => [a(), c(), 1, 2n ** 31n, true], "TX5005"],
    ["NaN for int32", () => [a(), c(), 1, NaN, true], "TX5005"],
    ["true for int32", () => [a(), c(), 1, true, true], "TX5005"],
    ["a string for float32", () => [a(), c(), "1", 2, true], "TX5005"],
    ["a boolean for float32", () => [a(), c(), false, 2, true], "TX5005"],
    ["2 for bool", () => [a(), c(), 1, 2, 2], "TX5005"],
    ["undefined for bool", () => [a(), c(), 1, 2, undefined], "TX5005"],
  ])("%s is %s at the call", (_, args, code) => {
    expect(thrown(() => run(...(args() as KernelArg[])))).toMatchObject(coded(code, true));
  });
});

describe("runSim's own arguments", () => {
  test("a non-verified kernel, arguments that are not a list and unknown or mistyped options are coded", () => {
    const vf = verify(axpy);
    const args = (): KernelArg[] => [
      f32([1, 2, 3, 4]),
      tensor.zeros([4], "float32", dev),
      1,
      2,
      true,
    ];
    const cases: [() => unknown, string][] = [
      [() => runSim(null as never, args()), "TX1002"],
      [() => runSim(axpy as never, args()), "TX1002"],
      [() => runSim(vf, "abc" as never), "TX5001"],
      [() => runSim(vf, undefined as never), "TX5001"],
      [() => runSim(vf, args(), { hazards: "warn" as never }), "TX1002"],
      [() => runSim(vf, args(), { simSeed: 1.5 }), "TX1002"],
      [() => runSim(vf, args(), { jitAfter: -1 }), "TX1002"],
      [() => runSim(vf, args(), { trace: 1 as never }), "TX1002"],
      [() => runSim(vf, args(), { seed: 3 } as never), "TX1002"],
      [() => runSim(vf, args(), null as never), "TX1002"],
    ];
    for (const [f, code] of cases) expect(thrown(f)).toMatchObject(coded(code));
    expect(runSim(vf, args(), { hazards: "collect", simSeed: 3, jitAfter: 0 }).reports).toEqual([]);
  });
});

function disposed(): DeviceTensor {
  const t = f32([1, 2, 3, 4]);
  t.dispose();
  return t;
}

describe("fuzzing (fixed seeds)", () => {
  // Values a caller might pass anywhere: right ones, near misses and anything at all.
  const anything: fc.Arbitrary<unknown> = fc.oneof(
    fc.double(),
    fc.integer({ min: -(2 ** 33), max: 2 ** 33 }),
    fc.bigInt({ min: -(2n ** 65n), max: 2n ** 65n }),
    fc.boolean(),
    fc.string({ maxLength: 3 }),
    fc.constantFrom(null, undefined, NaN, Infinity, -0, {}, [], Symbol("x"), () => 1),
  );
  const dtypes = fc.constantFrom<DType>(...DTYPES);

  test("tensor(): the right elements or a coded error", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.array(fc.oneof(fc.integer({ min: -300, max: 300 }), anything), { maxLength: 6 }),
          anything,
        ),
        fc.oneof(fc.array(fc.integer({ min: -1, max: 4 }), { maxLength: 3 }), anything),
        fc.oneof(dtypes, anything),
        fc.oneof(fc.constant(dev), fc.constant(undefined), anything),
        (data, shape, dtype, device) => {
          let t: DeviceTensor;
          try {
            t = tensor(data as never, { shape, dtype, device } as never);
          } catch (e) {
            expect(isTirxError(e) && /^TX\d{4}$/.test(e.code)).toBe(true);
            return;
          }
          // Accepted: data was a list of that many integers (or the like), and each element reads
          // back as its dtype holds it (checked for the exact dtypes; floats round).
          const xs = data as unknown[];
          expect(t.shape).toEqual(shape);
          const back = Array.from(t.toArray() as ArrayLike<number | bigint>);
          expect(back.length).toBe(xs.length);
          xs.forEach((x, i) => {
            const v = back[i]!;
            if (dtype === "int32") expect(v).toBe(Number(BigInt.asIntN(32, BigInt(x as number))));
            else if (dtype === "uint8")
              expect(v).toBe(Number(BigInt.asUintN(8, BigInt(x as number))));
            else if (dtype === "float32" || dtype === "float64") {
              expect(v).toBe(dtype === "float32" ? Math.fround(Number(x)) : Number(x));
            }
          });
          t.dispose();
        },
      ),
      { seed: 42, numRuns: 400 },
    );
  });

  test("launches: the right data or a coded error; all-valid arguments always run", () => {
    let ran = 0;
    const good = (): KernelArg[] => [a(), tensor.zeros([4], "float32", dev), 1.5, 2, true];
    const a = () => f32([1, 2, 3, 4]);
    const argument = (i: number): fc.Arbitrary<{ v: unknown; ok: boolean }> =>
      fc.oneof(
        { weight: 12, arbitrary: fc.constant(null).map(() => ({ v: good()[i], ok: true })) },
        {
          weight: 1,
          arbitrary: fc
            .constantFrom(
              () => tensor.zeros([4], "int32", dev),
              () => tensor.zeros([2, 2], "float32", dev),
              () => disposed(),
              () => ({ device: dev, shape: [4], dtype: "float32" }),
            )
            .map((make) => ({ v: make(), ok: false })),
        },
        { weight: 2, arbitrary: anything.map((v) => ({ v, ok: false })) },
        // Scalars that are right for their dtype.
        {
          weight: 1,
          arbitrary: fc
            .oneof(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), fc.boolean(), fc.double())
            .map((v) => ({
              v,
              ok:
                (i === 2 && typeof v === "number") ||
                (i === 3 && Number.isInteger(v)) ||
                (i === 4 && typeof v === "boolean"),
            })),
        },
      );
    fc.assert(
      fc.property(
        fc.tuple(argument(0), argument(1), argument(2), argument(3), argument(4)),
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(5) },
          { weight: 1, arbitrary: fc.constantFrom(4, 6) },
        ),
        (parts, count) => {
          const args = parts.slice(0, count).map((p) => p.v);
          while (args.length < count) args.push(1);
          const valid = count === 5 && parts.every((p) => p.ok);
          let err: unknown;
          try {
            run(...(args as KernelArg[]));
          } catch (e) {
            err = e;
          }
          if (err !== undefined) {
            expect(valid).toBe(false);
            expect(isTirxError(err) && /^TX\d{4}$/.test(err.code)).toBe(true);
            return;
          }
          const [A, C, s, n, flag] = args as [
            DeviceTensor,
            DeviceTensor,
            unknown,
            unknown,
            unknown,
          ];
          const av = Array.from(A.toArray() as Float32Array);
          expect(Array.from(C.toArray() as Float32Array)).toEqual(
            expected(av, Number(s), Number(n), Boolean(flag)),
          );
          ran++;
        },
      ),
      { seed: 7, numRuns: 300 },
    );
    // Both outcomes were exercised.
    expect(ran).toBeGreaterThan(30);
    expect(ran).toBeLessThan(270);
  });
});
