// A misspelled member of T in a builder kernel body (T.cuda.thread_id, T.cdua.thread_idx) threw
// a raw TypeError ("… is not a function", "Cannot read properties of undefined"). It is TX1024
// at the misspelled member, naming its owner and the nearest member; any other error a body
// throws passes through unchanged.
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { isTirxError, type TirxError } from "@tirx-ts/core";

/** What building a one-block kernel whose body runs `f` throws. */
function thrown(f: () => unknown): unknown {
  try {
    T.function("k", { A: T.Tensor([128], "float32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [1], block: 128 }) });
      f();
      A.set([T.cuda.thread_idx("x")], T.float32(1));
    });
  } catch (e) {
    return e;
  }
  return undefined;
}

describe("a misspelled member of T in a builder kernel", () => {
  it("T.cuda.thread_id: TX1024 at the member, did you mean thread_idx", () => {
    const e = thrown(() =>
      // @ts-expect-error: misspelled on purpose (a user's untyped file under tsx)
      T.cuda.thread_id("x"),
    ) as TirxError;
    expect(isTirxError(e)).toBe(true);
    expect(e.code).toBe("TX1024");
    expect(e.message).toContain(
      '"thread_id" is not a member of T.cuda (did you mean "thread_idx"?)',
    );
    expect(e.span?.file).toMatch(/unknown-member\.test\.ts$/);
    expect(e.span?.lineText?.slice(e.span.col - 1, e.span.col - 1 + 9)).toBe("thread_id");
  });

  it("T.cdua.thread_idx: TX1024 at the namespace, did you mean cuda", () => {
    const e = thrown(() =>
      // @ts-expect-error: misspelled on purpose
      T.cdua.thread_idx("x"),
    ) as TirxError;
    expect(e.code).toBe("TX1024");
    expect(e.message).toContain('"cdua" is not a member of T (did you mean "cuda"?)');
  });

  it("another TypeError, and a plain Error, pass through unchanged", () => {
    const oops = new Error("the author's own");
    expect(
      thrown(() => {
        throw oops;
      }),
    ).toBe(oops);
    const te = thrown(() => (undefined as unknown as () => void)());
    expect(te).toBeInstanceOf(TypeError);
    expect(isTirxError(te)).toBe(false);
  });
});
