// T.tile.copy_async's cp.async path picks the widest chunk that every start offset, row stride
// and row length provably allows: 16-byte .cg, else 8- or 4-byte .ca with explain saying why,
// else TX2022 naming the offset. Each kernel runs on the simulator against the host's copy of the
// tile and its PTX is assembled by ptxas.
import { describe, expect, it } from "vitest";
import { compile, explainTile, sim, tensor, type PrimFunc } from "tirx-ts";
import { isTirxError } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";
import { cpKernel as kernel, GC, GR } from "./util/split-copy-cases.js";

const dev = sim();

/** Run `fn` with G = 1, 2, 3, ...; O's elements and the host's tile of G at (row0, c0). */
function run(
  fn: PrimFunc,
  R: number,
  C: number,
  row0: number,
  c0: number,
  dt: "float16" | "float32",
  ro = 0,
) {
  assembleLater(compileToPtx(fn, { arch: "sm_80" }).text, "sm_80", fn.name);
  const g = Float32Array.from({ length: GR * GC }, (_, i) => i + 1);
  const G = tensor(g, { shape: [GR, GC], dtype: dt, device: dev });
  const O = tensor.zeros([R, C], dt, dev);
  compile(fn)(ro, G, O);
  const got = Array.from(O.toArray() as Float32Array);
  G.dispose();
  O.dispose();
  const want = Array.from(
    { length: R * C },
    (_, k) => g[(row0 + Math.floor(k / C)) * GC + c0 + (k % C)]!,
  );
  return { got, want };
}

describe("cp.async chunk width from the views' provable alignment", () => {
  const cases = [
    { c0: 8, dt: "float16", chunk: "cp.async.cg 16 B" },
    { c0: 4, dt: "float16", chunk: "cp.async.ca 8 B" },
    { c0: 2, dt: "float16", chunk: "cp.async.ca 4 B" },
    { c0: 1, dt: "float32", chunk: "cp.async.ca 4 B" },
    { c0: 2, dt: "float32", chunk: "cp.async.ca 8 B" },
  ] as const;
  for (const c of cases) {
    it(`${c.dt} tile at column ${c.c0}: ${c.chunk}`, () => {
      const fn = kernel(5, 24, 3, c.c0, c.dt);
      const ex = explainTile(fn).join("\n");
      expect(ex).toContain(c.chunk);
      if (!c.chunk.includes("16 B"))
        expect(ex).toMatch(
          /not 16-byte chunks \(\.cg\) because G's view starts at element offset \d+/,
        );
      const { got, want } = run(fn, 5, 24, 3, c.c0, c.dt);
      expect(got).toEqual(want);
    });
  }

  it("a runtime row offset (ro·4·40 + 4 elements) proves 8 bytes: .ca 8 B", () => {
    const fn = kernel(4, 24, 0, 4, "float16", true);
    expect(explainTile(fn).join("\n")).toMatch(
      /cp\.async\.ca 8 B.*a runtime value, a multiple of 4/,
    );
    const { got, want } = run(fn, 4, 24, 4, 4, "float16", 1);
    expect(got).toEqual(want);
  });

  it("an odd float16 column (2-byte aligned) is TX2022 at dispatch naming the offset", () => {
    let err: unknown;
    try {
      explainTile(kernel(5, 24, 3, 3, "float16"));
    } catch (e) {
      err = e;
    }
    expect(isTirxError(err) && err.code).toBe("TX2022");
    expect(String((err as Error).message)).toMatch(
      /G's view starts at element offset 123, only provably 2-byte aligned/,
    );
  });
});
