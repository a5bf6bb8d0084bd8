// `ptr` of a view whose dtype is not its buffer's (view_as, flat(dtype)) addresses the view's
// element: the offset is counted in the view's elements, so a float16 view of a uint8 buffer
// steps 2 bytes per element. Run on the simulator, and the PTX assembled with ptxas.
import { describe, expect, it } from "vitest";
import { isTirxError, verify } from "@tirx-ts/core";
import { emitPtx } from "@tirx-ts/codegen-ptx";
import { T, compile, sim, tensor } from "tirx-ts";
import { assemblePtx } from "./util/ptxas.js";

const byteOffsets = T.function("byte_offsets", { O: T.Tensor([4], "int32") }, ({ O }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
  const raw = T.alloc_shared([64], "uint8", { name: "raw" });
  const words = T.alloc_shared([16], "uint32", { name: "words" });
  const h = raw.view_as("float16");
  O.set(
    [0],
    h
      .ptr([3])
      .sub(raw.ptr([0]))
      .cast("int32"),
  );
  O.set(
    [1],
    raw
      .view_as("uint32")
      .ptr([5])
      .sub(raw.ptr([0]))
      .cast("int32"),
  );
  O.set(
    [2],
    raw
      .flat("float16")
      .ptr([7])
      .sub(raw.ptr([0]))
      .cast("int32"),
  );
  O.set(
    [3],
    words
      .view_as("float16")
      .ptr([4])
      .sub(words.ptr([0]))
      .cast("int32"),
  );
});

describe("ptr of a view of another dtype", () => {
  it("counts the view's elements (float16 view of bytes: 2 bytes each)", () => {
    const o = tensor(new Int32Array(4), { shape: [4], dtype: "int32", device: sim() });
    compile(byteOffsets, { target: "cuda" })(o);
    expect(Array.from(o.toArray() as Int32Array)).toEqual([6, 20, 14, 8]);
    const mod = emitPtx(verify(byteOffsets));
    assemblePtx(mod.text, mod.target);
  });

  it("a narrower view's ptr must land on a whole buffer element (TX1014)", () => {
    let code = "";
    try {
      T.function("odd", { O: T.Tensor([1], "int32") }, ({ O }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 1 }) });
        const words = T.alloc_shared([16], "uint32", { name: "words" });
        O.set([0], words.view_as("float16").ptr([3]).cast("int32"));
      });
    } catch (e) {
      if (!isTirxError(e)) throw e;
      code = `${e.code}: ${e.message}`;
    }
    expect(code).toMatch(/^TX1014: .*whole uint32 element/);
  });
});
