import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { TirxError, verify } from "@tirx-ts/core";
import { lineOf, seedKernel, type SeedVariant } from "./kernels/seed.js";

const seedFile = fileURLToPath(new URL("./kernels/seed.ts", import.meta.url));

function buildError(v: SeedVariant): TirxError {
  try {
    verify(seedKernel(v));
  } catch (e) {
    if (e instanceof TirxError) return e;
    throw e;
  }
  throw new Error("expected a TirxError, but the kernel verified");
}

describe("the seed kernel's three illegal variants fail at build time at the tile.apply line", () => {
  const cases: [string, SeedVariant, string, string][] = [
    [".cg with chunk_bytes 8", { chunk_bytes: 8 }, "TX3007", "cp-async/cg-16"],
    ["dst and src swapped", { swap: true }, "TX3011", "cp-async/direction"],
    [
      "CTA scope views without the lane axis",
      { pattern: "(w t) (r v) -> (w t) r v", sizes: { w: 4, t: 32, v: 8 } },
      "TX3009",
      "cp-async/group-axes",
    ],
  ];
  test.each(cases)("%s", async (_name, variant, code, rule) => {
    const err = buildError(variant);
    expect(err.code).toBe(code);
    expect(err.rule).toBe(rule);
    expect(err.message).toContain(rule);
    expect(err.span?.file).toBe(seedFile);
    expect(err.span?.line).toBe(await lineOf(seedFile, "// APPLY"));
    expect(err.render()).toContain("T.cuda.tile.apply(op, d, s");
  });

  test("the unaltered seed kernel verifies", () => {
    expect(() => verify(seedKernel())).not.toThrow();
  });
});
