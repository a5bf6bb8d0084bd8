import { describe, expect, test } from "vitest";
import { binary, intImm, mkVar, structuralEqual, structuralHash } from "@tirx-ts/core";

describe("structural equality", () => {
  test("variables match by position, not by identity or name", () => {
    const a = mkVar("a", "int32");
    const b = mkVar("b", "int32");
    const e1 = binary("add", binary("mul", a, intImm(4)), a);
    const e2 = binary("add", binary("mul", b, intImm(4)), b);
    expect(structuralEqual(e1, e2)).toBe(true);
    expect(structuralHash(e1)).toBe(structuralHash(e2));
  });

  test("one variable cannot match two", () => {
    const a = mkVar("a", "int32");
    const b = mkVar("b", "int32");
    const c = mkVar("c", "int32");
    expect(structuralEqual(binary("add", a, a), binary("add", b, c))).toBe(false);
    expect(structuralHash(binary("add", a, a))).not.toBe(structuralHash(binary("add", b, c)));
  });

  test("constants, dtypes and operators matter", () => {
    const a = mkVar("a", "int32");
    expect(structuralEqual(binary("add", a, intImm(1)), binary("add", a, intImm(2)))).toBe(false);
    expect(structuralEqual(binary("add", a, intImm(1)), binary("sub", a, intImm(1)))).toBe(false);
    expect(structuralEqual(intImm(1, "int32"), intImm(1, "uint32"))).toBe(false);
  });
});
