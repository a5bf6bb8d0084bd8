// The vectorizer: a vector access must be aligned to the whole
// vector (PTX ISA "ld": .v4.f32 needs 16 bytes), so a dynamic shared buffer only 4-byte aligned
// (packed at byte 4 of dyn_smem, after a 4-byte one) keeps its accesses scalar even where the
// index is a multiple of the vector length. (Static shared buffers are placed 16-byte aligned.)
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";

const count = (text: string, what: string): number => text.split(what).length - 1;

/** Each thread copies 4 floats of A into a shared buffer of alignment `align`, and back to B. */
const kernel = (align: number) =>
  T.function(
    `sh_align_${align}`,
    { A: T.Tensor([32, 4], "float32"), B: T.Tensor([32, 4], "float32") },
    ({ A, B }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: 1, block: 32, dynamic_shared_bytes: 1024 }),
      });
      const i = T.cuda.thread_idx("x");
      const pad = T.alloc_shared([1], "float32", { name: "pad", align: 4, dynamic: true });
      const S = T.alloc_shared([32, 4], "float32", { name: "S", align, dynamic: true });
      pad.set([0], T.float32(0));
      for (const v of T.vectorized(4)) S.set([i, v], A.get([i, v]));
      for (const v of T.vectorized(4)) B.set([i, v], S.get([i, v]));
    },
  );

describe("vector width follows the buffer's alignment, not the element's", () => {
  it("align 16: the shared accesses are .v4", () => {
    const text = compileToPtx(kernel(16), { arch: "sm_80" }).text;
    expect(count(text, "st.shared.v4.f32")).toBe(1);
    expect(count(text, "ld.shared.v4.f32")).toBe(1);
  });
  it("align 4: no shared .v2/.v4 access", () => {
    const text = compileToPtx(kernel(4), { arch: "sm_80" }).text;
    expect(text).not.toMatch(/(ld|st)\.shared\.v[24]/);
  });
});
