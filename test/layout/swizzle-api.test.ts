import { describe, expect, it } from "vitest";
import {
  applySwizzle,
  swizzleInBytes,
  swizzleKeepsContiguous,
  swizzleLayout,
  swizzleMode,
  swizzleModeOf,
  swizzlePeriodBytes,
  TirxError,
  type Buffer,
} from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";

/** The 128B swizzle as TMA documents it: 16-byte chunk c of 128-byte row r goes to c ^ (r % 8). */
function tma128(x: number): number {
  const row = Math.floor(x / 128);
  const chunk = Math.floor(x / 16) % 8;
  return (x & ~0x7f) | (((chunk ^ (row % 8)) * 16) | (x % 16));
}

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof TirxError ? e.code : String(e);
  }
  return undefined;
};

describe("swizzle layouts", () => {
  it("TMA's 128B mode is Swizzle<3,4,3> on bytes and matches the chunk-XOR-row rule", () => {
    const l = swizzleMode("128B");
    for (let x = 0; x < 4096; x++) expect(applySwizzle(l, x)).toBe(tma128(x));
    expect(swizzlePeriodBytes(l)).toBe(1024);
    expect(swizzleModeOf(l)).toBe(3);
    expect(swizzleModeOf(swizzleMode(1))).toBe(1);
  });

  it("is a bijection on its period, inner and outer", () => {
    for (const inner of [true, false]) {
      const l = swizzleLayout(2, 2, 3, inner, "byte");
      const seen = new Set<number>();
      for (let x = 0; x < swizzlePeriodBytes(l); x++) seen.add(applySwizzle(l, x));
      expect(seen.size).toBe(swizzlePeriodBytes(l));
      expect(Math.max(...seen)).toBe(swizzlePeriodBytes(l) - 1);
    }
  });

  it("TIRx's example: SwizzleLayout(0, 2, 3) maps 10 to 11", () => {
    expect(applySwizzle(swizzleLayout(0, 2, 3, true, "byte"), 10)).toBe(11);
  });

  it("an element layout of float16 shifts M by one bit", () => {
    const l = swizzleInBytes(swizzleLayout(3, 3, 3), "float16");
    expect([l.perElement, l.swizzleLen, l.atomLen, l.unit]).toEqual([4, 3, 3, "byte"]);
  });

  it("knows which runs stay contiguous", () => {
    const l = swizzleMode("128B");
    expect(swizzleKeepsContiguous(l, 16, 16)).toBe(true);
    expect(swizzleKeepsContiguous(l, 8, 16)).toBe(false);
    expect(swizzleKeepsContiguous(l, 32, 32)).toBe(false);
    expect(swizzleKeepsContiguous(l, 4, 4)).toBe(true);
    expect(swizzleKeepsContiguous(undefined, 1, 64)).toBe(true);
  });

  it("refuses malformed layouts with TX1016", () => {
    expect(code(() => swizzleLayout(3, 4, 3))).toBe("TX1016");
    expect(code(() => swizzleLayout(-1, 1, 3))).toBe("TX1016");
    expect(code(() => swizzleMode(0 as 1))).toBe("TX1016");
    const message = (f: () => unknown): string => {
      try {
        f();
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    };
    expect(message(() => T.swizzle_mode("none" as "32B"))).toMatch(
      /swizzle mode "none" is no swizzle: leave the layout out/,
    );
    expect(message(() => T.swizzle_mode("256B" as "32B"))).toMatch(
      /swizzle mode "256B" is not one of "32B", "64B", "128B" \(or 1, 2, 3\)/,
    );
  });

  it("T.alloc_shared takes a layout, aligns the tile to its period, and checks its size", () => {
    let buf: Buffer | undefined;
    T.function("k", {}, () => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      buf = T.alloc_shared([16, 64], "float16", { layout: T.SwizzleLayout(3, 3, 3) }).view.buffer;
    });
    expect(buf!.layout).toEqual(swizzleMode("128B"));
    expect(buf!.align).toBe(1024);
    expect(
      code(() =>
        T.function("k", {}, () => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
          T.alloc_shared([4, 64], "float16", { layout: T.swizzle_mode("128B") });
        }),
      ),
    ).toBe("TX1016");
    expect(
      code(() =>
        T.function("k", {}, () => {
          T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
          T.alloc_shared([8, 64], "float16", { layout: T.swizzle_mode("128B"), align: 16 });
        }),
      ),
    ).toBe("TX1016");
  });
});
