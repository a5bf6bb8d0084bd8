// The in-process compile cache (issue 13, item 2): keyed by the IR's structural hash, its spans
// and the options; TIRX_CACHE=off disables it.
import { afterEach, expect, test } from "vitest";
import { T, compile, sim, tensor } from "tirx-ts";
import { spanFingerprint } from "../packages/runtime/src/cache.js";

const make = (n: number, name = "cache_inc") =>
  T.function(name, { A: T.Tensor([n], "float32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: n }) });
    const tid = T.cuda.thread_idx("x");
    A.set([tid], A.get([tid]).add(1));
  });
// The same kernel written at another place in the source.
const elsewhere = (n: number) =>
  T.function("cache_inc", { A: T.Tensor([n], "float32") }, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: n }) });
    const tid = T.cuda.thread_idx("x");
    A.set([tid], A.get([tid]).add(1));
  });

afterEach(() => {
  delete process.env["TIRX_CACHE"];
});

test("an equal kernel compiled again returns the same compilation; a different one does not", () => {
  const f = make(64);
  const first = compile(f);
  expect(compile(f)).toBe(first); // the same PrimFunc
  expect(compile(make(64))).toBe(first); // rebuilt: a new object, structurally equal, same spans
  expect(compile(make(32))).not.toBe(first); // another shape
  expect(compile(make(64, "other"))).not.toBe(first); // another entry name
  expect(compile(f, { target: "cuda", arch: "sm_90" })).not.toBe(first); // other options
  expect(compile(f, { target: "cuda", hazards: "collect" })).not.toBe(first);
  // Equal IR from other source lines keeps its own spans (diagnostics point at its lines).
  expect(spanFingerprint(elsewhere(64))).not.toBe(spanFingerprint(f));
  expect(compile(elsewhere(64))).not.toBe(first);
  // The cached compilation runs.
  const a = tensor.zeros([64], "float32", sim());
  compile(make(64))(a);
  expect((a.toArray() as Float32Array)[63]).toBe(1);
});

test("TIRX_CACHE=off compiles every time", () => {
  const f = make(16);
  process.env["TIRX_CACHE"] = "off";
  expect(compile(f)).not.toBe(compile(f));
});

test("a kernel equal but for an access's axis extents is verified again (TX2006), not served", () => {
  // Row 1 of B seen as [4, w] with B's strides: the same flat offsets for every w.
  const rows = (w: number) =>
    T.function("cache_axis", { B: T.Tensor([4, 8], "float32") }, ({ B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
      const v = B.as_strided({ shape: [4, w], strides: [8, 1] });
      for (const j of T.range(6)) v.set([1, j], 1);
    });
  expect(() => compile(rows(8))).not.toThrow();
  expect(spanFingerprint(rows(4))).not.toBe(spanFingerprint(rows(8)));
  expect(() => compile(rows(4))).toThrow(expect.objectContaining({ code: "TX2006" }));
});
