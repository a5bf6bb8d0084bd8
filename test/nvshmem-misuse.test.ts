// T.nvshmem calls written wrongly are TirxErrors while tracing, at the author's line: a local
// side that is not a buffer, or an index that is not an array, is TX1002 (not a TypeError from
// inside the call).
import { describe, expect, test } from "vitest";
import { T } from "tirx-ts";
import { errorOf } from "./util/error-of.js";

const kernel = (body: (buf: ReturnType<typeof T.Tensor> & never) => void) =>
  T.function("k", { Buf: T.Tensor([2, 64], "float32") }, ({ Buf }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
    body(Buf as never);
  });

describe("T.nvshmem misuse", () => {
  test("a side that is not a buffer is TX1002", () => {
    const put = T.nvshmem.put as (...a: unknown[]) => void;
    const get = T.nvshmem.get as (...a: unknown[]) => void;
    for (const f of [
      (b: unknown) => put(b),
      (b: unknown) => put(b, [0], 3, [0], 16, 1),
      (b: unknown) => get(undefined, [0], b, [0], 16, 1),
    ]) {
      const e = errorOf(() => kernel((b) => f(b)));
      expect([e.code, e.message]).toEqual([
        "TX1002",
        expect.stringMatching(/T\.nvshmem\.(put|get): both sides are buffers/),
      ]);
      expect(e.span?.file).toMatch(/nvshmem-misuse\.test\.ts$/);
    }
  });
  test("an index that is not an array is TX1002", () => {
    const put = T.nvshmem.put as (...a: unknown[]) => void;
    const e = errorOf(() =>
      kernel((b) => put(b, 16, b, [T.nvshmem.my_pe(), 0], 16, 1, { scope: "warp" })),
    );
    expect([e.code, e.message]).toEqual([
      "TX1002",
      expect.stringMatching(/an index is an array of element indices.*got 16/),
    ]);
  });
});
