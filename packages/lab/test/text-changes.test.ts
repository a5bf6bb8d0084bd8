// textChanges: the edits the lab's read-only views get when a rebuild replaces their text turn
// the old text into the new one exactly, and a rebuild that changes a name in a few lines edits
// those lines only.
import fc from "fast-check";
import { ChangeSet, Text } from "@codemirror/state";
import { describe, expect, test } from "vitest";
import { textChanges } from "../src/text-changes.js";

/** `a` with textChanges(a, b) applied, as CodeMirror applies them. */
function apply(a: string, b: string): string {
  return ChangeSet.of(textChanges(a, b), a.length)
    .apply(Text.of(a.split("\n")))
    .toString();
}

describe("textChanges", () => {
  test("a rebuild's PTX: only the names in the comments change", () => {
    const ptx = (id: string): string =>
      [
        ".visible .entry k(",
        ")",
        "{",
        `\t// If at ${id}:37:7`,
        "\tadd.s32 %r7, %r6, 3;",
        `\t// For at ${id}:40:20`,
        "\tst.global.f32 [%rd9], %f9;",
        "}",
        "",
      ].join("\n");
    const a = ptx("d9cd6a85-594a-482a-bc5e-4641a4057eec");
    const b = ptx("0b7e93f2-1c44-4a0e-9d2f-77aa0c5e1d38");
    const changes = textChanges(a, b) as { from: number; to: number; insert: string }[];
    expect(changes).toHaveLength(2);
    for (const c of changes) expect(c.to - c.from).toBeLessThanOrEqual(36);
    expect(apply(a, b)).toBe(b);
  });

  test("equal texts need no change; lines added or removed are one change", () => {
    expect(textChanges("a\nb", "a\nb")).toEqual([]);
    expect(apply("a\nb\nc", "a\nc")).toBe("a\nc");
    expect(apply("\nx", "y\nx")).toBe("y\nx");
    expect(apply("", "a\nb")).toBe("a\nb");
    expect(apply("a\nb", "")).toBe("");
    expect(textChanges("x\nab", "xab\nab")).toHaveLength(1);
    expect(apply("x\nab", "xab\nab")).toBe("xab\nab");
  });

  test("any two texts: the changes turn the first into the second", () => {
    const text = fc
      .array(fc.constantFrom("a", "b", "\n", "x1", "// c"), { maxLength: 12 })
      .map((p) => p.join(""));
    fc.assert(fc.property(text, text, (a, b) => apply(a, b) === b));
  });
});
