// A misspelled member of T in a builder kernel body (T.cuda.thread_id, T.cdua.thread_idx) threw
// a raw TypeError ("… is not a function", "Cannot read properties of undefined"). It is TX1024
// at the misspelled member, naming its owner and the nearest member; any other error a body
// throws passes through unchanged. The same holds through an alias or a cast of a namespace
// (`const w = T.tile.warp; w.sums(…)`, `(T as any).alloc_shard`), which the source line's
// `T.a.b` path did not show, and outside a kernel body; reading what other libraries probe
// objects for (then, toJSON, symbols, and any key util.inspect or another library reads) still
// yields undefined.
import { format, inspect } from "node:util";
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

  it("through an alias or a cast of a namespace: TX1024 at the member, with its owner's path", () => {
    const e = thrown(() => {
      const warp = T.tile.warp;
      // @ts-expect-error: misspelled on purpose
      warp.sums();
    }) as TirxError;
    expect(e.code).toBe("TX1024");
    expect(e.message).toContain('"sums" is not a member of T.tile.warp (did you mean "sum"?)');
    expect(e.span?.lineText?.slice(e.span.col - 1, e.span.col - 1 + 4)).toBe("sums");
    const cast = thrown(() => (T as unknown as Record<string, () => void>).alloc_shard!());
    expect((cast as TirxError).code).toBe("TX1024");
    expect((cast as TirxError).message).toContain('(did you mean "alloc_shared"?)');
    const key = ["thread", "idxx"].join("_");
    const computed = thrown(() => (T.cuda as unknown as Record<string, unknown>)[key]);
    expect((computed as TirxError).message).toContain(
      '"thread_idxx" is not a member of T.cuda (did you mean "thread_idx"?)',
    );
  });

  it("outside a kernel body too, and deeper namespaces name their whole path", () => {
    const wg = T.tile.wg;
    let e: unknown;
    try {
      // @ts-expect-error: misspelled on purpose
      wg.reduce_sum();
    } catch (x) {
      e = x;
    }
    expect((e as TirxError).code).toBe("TX1024");
    expect((e as TirxError).message).toMatch(/"reduce_sum" is not a member of T\.tile\.wg/);
  });

  it("members read as before: the same namespace object each time, keys and probes unchanged", async () => {
    expect(T.tile).toBe(T.tile);
    expect(T.tile.warp).toBe(T.tile.warp);
    // Two names of one namespace stay one object.
    expect(T.ptx.cp.async).toBe(T.ptx.cp.async_);
    expect(Object.keys(T.cuda)).toContain("thread_idx");
    expect("thread_idx" in T.cuda).toBe(true);
    expect("thread_id" in T.cuda).toBe(false);
    const probe = T.cuda as unknown as Record<string | symbol, unknown>;
    for (const k of ["then", "toJSON", "$$typeof", "asymmetricMatch", "__esModule"]) {
      expect(probe[k], k).toBeUndefined();
    }
    expect(probe[Symbol.iterator]).toBeUndefined();
    // A namespace goes through promise adoption and JSON as a plain object does.
    expect(await Promise.resolve(T.tile.warp)).toBe(T.tile.warp);
    expect(() => JSON.stringify(T.cuda)).not.toThrow();
    // Code that is not the author's reads what a namespace may lack to learn what it is
    // (util.inspect reads "0"): undefined there, as on a plain object.
    expect(inspect(T.cuda, { depth: 0 })).toContain("thread_idx");
    expect(inspect(T, { depth: 1 })).toContain("cuda");
    expect(format("%o", T.tile.warp)).toContain("sum");
    // T.ptx's own namespaces likewise (inspecting T.ptx read "0" and threw TX1002).
    expect(inspect(T.ptx, { depth: 0 })).toContain("wgmma");
    expect(inspect(T.ptx.cp.async_)).toContain("commit_group");
    expect(inspect(T.ptx.cvt)).toContain("e4m3x2_f32");
  });
});
