// Options bags of T.ptx (and T.math) ops are checked like tile.apply's: an unknown key is an
// error with a "did you mean", a non-object is a TirxError. Static operands that are not static
// integers report the op's own code, or the generic TX2017, never cp.async's TX3022.
import { describe, expect, it } from "vitest";
import { isTirxError } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

/** The line of the caller of `here()` plus `d`. */
function here(d = 0): number {
  return Number(new Error().stack!.split("\n")[2]!.match(/:(\d+):\d+\)?$/)![1]) + d;
}

const SW = { align: 1024, layout: T.swizzle_mode("128B") } as const;

/** Run `body` in a 128-thread kernel with a 128B-swizzled [64,64] A and [8,64] B tile. */
function attempt(body: (c: Ctx) => void): string | undefined {
  try {
    T.function("k", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const sA = T.alloc_shared([64, 64], "float16", { name: "sA", ...SW });
      const sB = T.alloc_shared([8, 64], "float16", { name: "sB", ...SW });
      const acc = T.alloc_local([4], "float32", { name: "acc" });
      const desc = T.ptx.wgmma.encode_matrix_descriptor;
      T.ptx.wgmma.fence();
      body({
        tid,
        sA,
        acc,
        da: desc(sA.ptr([0, 0]), 16, 1024, 3),
        db: desc(sB.ptr([0, 0]), 16, 1024, 3),
      });
    });
  } catch (e) {
    return isTirxError(e) ? `${e.code}@${e.span?.line ?? "?"}: ${e.message}` : String(e);
  }
  return undefined;
}

interface Ctx {
  tid: ReturnType<typeof T.cuda.thread_idx>;
  sA: ReturnType<typeof T.alloc_shared>;
  acc: ReturnType<typeof T.alloc_local>;
  da: ReturnType<typeof T.ptx.wgmma.encode_matrix_descriptor>;
  db: ReturnType<typeof T.ptx.wgmma.encode_matrix_descriptor>;
}

describe("options bags of T.ptx ops", () => {
  it("a misspelt wgmma.mma_async option is refused with a did-you-mean (TX1002)", () => {
    let line = 0;
    const err = attempt(({ acc, da, db }) => {
      line = here(1);
      T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, da, db, { scaleD: 0 } as never);
    });
    expect(err).toMatch(
      new RegExp(`^TX1002@${line}: .*no option "scaleD"; did you mean "scale_d"`),
    );
    const err2 = attempt(({ acc, da, db }) => {
      line = here(1);
      T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, da, db, { transB: 1 } as never);
    });
    expect(err2).toMatch(new RegExp(`^TX1002@${line}: .*did you mean "trans_b"`));
  });

  it("null options are a TirxError, not a TypeError", () => {
    let line = 0;
    const err = attempt(({ acc, da, db }) => {
      line = here(1);
      T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, da, db, null as never);
    });
    expect(err).toMatch(new RegExp(`^TX1002@${line}: .*options must be an object`));
  });

  it("T.exp (math) options are checked too", () => {
    let line = 0;
    const err = attempt(({ tid }) => {
      line = here(1);
      T.exp(tid.cast("float32"), { aprox: true } as never);
    });
    expect(err).toMatch(new RegExp(`^TX1002@${line}: .*did you mean "approx"`));
  });
});

describe("static operands that are not static integers", () => {
  it("a runtime LBO or a fractional swizzle of a descriptor is TX7007 (wgmma/descriptor)", () => {
    let line = 0;
    const err = attempt(({ sA, tid }) => {
      line = here(1);
      T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0, 0]), tid as never, 1024, 3);
    });
    expect(err).toMatch(new RegExp(`^TX7007@${line}: .*ldo of .* takes a static integer`));
    const err2 = attempt(({ sA }) => {
      line = here(1);
      T.ptx.wgmma.encode_matrix_descriptor(sA.ptr([0, 0]), 16, 1024, 1.5);
    });
    expect(err2).toMatch(new RegExp(`^TX7007@${line}: .*swizzle of `));
  });

  it("a runtime wgmma.wait_group is the generic TX2017; cp.async's keeps TX3022", () => {
    let line = 0;
    const err = attempt(({ tid }) => {
      line = here(1);
      T.ptx.wgmma.wait_group(tid as never);
    });
    expect(err).toMatch(
      new RegExp(`^TX2017@${line}: .*n of T.ptx.wgmma.wait_group takes a static integer`),
    );
    const err2 = attempt(({ tid }) => {
      line = here(1);
      T.ptx.cp.async_.wait_group(tid as never);
    });
    expect(err2).toMatch(new RegExp(`^TX3022@${line}: `));
  });

  it("a fractional scale_a is TX7004 (the op's code), a boolean trans_b is accepted", () => {
    let line = 0;
    const err = attempt(({ acc, da, db }) => {
      line = here(1);
      T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, da, db, { scale_a: 0.5 });
    });
    expect(err).toMatch(new RegExp(`^TX7004@${line}: .*scale_a of `));
    expect(
      attempt(({ acc, da, db }) =>
        T.ptx.wgmma.mma_async("m64n8k16", "float16", acc, 0, da, db, { trans_b: false }),
      ),
    ).toBeUndefined();
  });
});
