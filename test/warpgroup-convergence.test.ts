// Warpgroup-aligned instructions (wgmma.fence / mma_async / commit_group / wait_group,
// setmaxnreg: `.sync.aligned` over the 128 threads of a warpgroup) under an `if` whose condition
// the verifier can evaluate per thread and finds split within a warpgroup are refused at build
// (TX7012, core/src/verify/warpgroup-convergence.ts). Conditions uniform per warpgroup, and ones
// the verifier cannot evaluate (block index, loop variables, loads), build; the simulator checks
// the latter (TX6011, test/wgmma/aligned.test.ts). Lines come from `// @name` markers.
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type TirxError } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { markers } from "./util/markers.js";

const { at } = markers(import.meta.url);
type Idx = ReturnType<typeof T.cuda.thread_idx>;

/** A kernel of `block` threads running `body(tid)`. */
function kernel(block: number, body: (tid: Idx) => void) {
  return T.function("wg_cond", { B: T.Tensor([block], "float32") }, ({ B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block }) });
    const tid = T.cuda.thread_idx("x");
    body(tid);
    B.set([tid], T.float32(1));
  });
}

/** The error verify throws for `fn` (its first), or undefined when it builds. */
function buildError(fn: ReturnType<typeof kernel>): TirxError | undefined {
  try {
    verify(fn);
    return undefined;
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
}

/** code@line of the build's errors (every one of an aggregate), [] when it builds. */
function codes(fn: ReturnType<typeof kernel>): string[] {
  const e = buildError(fn);
  if (e === undefined) return [];
  return (e.all ?? [e]).map((x) => `${x.code}@${x.span?.line ?? "?"}`);
}

describe("warpgroup-aligned instructions under divergent conditions (TX7012)", () => {
  it("refuses setmaxnreg and wgmma.fence under tid < 64 and tid % 2 == 0, naming the condition", () => {
    expect(
      codes(
        kernel(128, (tid) =>
          T.if_(tid.lt(64), () => {
            T.ptx.setmaxnreg(false, 40); // @maxLt64
          }),
        ),
      ),
    ).toEqual([`TX7012@${at("maxLt64")}`]);
    expect(
      codes(
        kernel(128, (tid) =>
          T.if_(tid.floormod(2).eq(0), () => {
            T.ptx.wgmma.fence(); // @fenceEven
          }),
        ),
      ),
    ).toEqual([`TX7012@${at("fenceEven")}`]);
    const e = buildError(
      kernel(256, (tid) => {
        const high = tid.ge(192);
        T.if_(high, () => T.ptx.setmaxnreg(true, 232)); // @condHigh
      }),
    )!;
    expect(e.code).toBe("TX7012");
    expect(e.message).toMatch(
      /setmaxnreg\.inc\.sync\.aligned\.u32 .* warpgroup 1: it holds for thread 192 and not for thread 128; .*floordiv\(thread_idx, 128\)/,
    );
    expect(e.notes[0]?.span?.line).toBe(at("condHigh"));
  });

  it("refuses in the else arm and under a nested divergent if", () => {
    expect(
      codes(
        kernel(256, (tid) =>
          T.if_(
            tid.lt(128),
            () => {},
            () =>
              T.if_(tid.lt(160), () => {
                T.ptx.wgmma.commit_group(); // @nested
              }),
          ),
        ),
      ),
    ).toEqual([`TX7012@${at("nested")}`]);
    expect(
      codes(
        kernel(128, (tid) =>
          T.if_(
            tid.lt(32),
            () => {},
            () => {
              T.ptx.wgmma.wait_group(0); // @elseArm
            },
          ),
        ),
      ),
    ).toEqual([`TX7012@${at("elseArm")}`]);
  });

  it("builds under warpgroup-uniform conditions and ones it cannot evaluate", () => {
    const uniform: ((tid: Idx) => void)[] = [
      // wg == 0 with wg = tid / 128 (the producer branch of a warp-specialised kernel)
      (tid) => {
        const wg = tid.floordiv(128);
        T.if_(
          wg.eq(0),
          () => T.ptx.setmaxnreg(false, 40),
          () => T.ptx.setmaxnreg(true, 232),
        );
      },
      (tid) => T.if_(tid.lt(128), () => T.ptx.setmaxnreg(false, 40)),
      (tid) => T.if_(tid.floordiv(128).eq(1), () => T.ptx.wgmma.fence()),
      // the block index, and a loop variable: not evaluated (uniform here; the simulator checks)
      () => T.if_(T.cuda.block_idx("x").eq(0), () => T.ptx.wgmma.fence()),
      () => {
        for (const k of T.range(2)) T.if_(k.eq(0), () => T.ptx.wgmma.fence());
      },
      // a divergent if around instructions that are not warpgroup-aligned
      (tid) => T.if_(tid.eq(0), () => T.ptx.fence.proxy_async()),
      // true for every thread of the block
      (tid) => T.if_(tid.lt(1000), () => T.ptx.wgmma.fence()),
    ];
    for (const body of uniform) expect(codes(kernel(256, body))).toEqual([]);
  });
});
