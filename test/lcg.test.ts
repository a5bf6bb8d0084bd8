// The tests' and examples' seeded generator (test/util/lcg.ts) is the LCG it names: every state
// equals the exact (1103515245 · x + 12345) mod 2^32 of BigInt arithmetic over 100,000 steps from
// several seeds, with no repeated state there (the recurrence written with `*` on doubles lost the
// product's low bits and fell into cycles of a few hundred states); no file of the repository
// writes that recurrence with `*` again (of the files git tracks); uniformFrom and intsFrom stay
// in their ranges, and uniformFrom's bulk fill continues the sequence of its calls.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, test } from "vitest";
import { intsFrom, lcg, uniformFrom } from "./util/lcg.js";
import { repoRoot } from "./util/tune-child-dir.js";

describe("lcg", () => {
  test("the exact LCG mod 2^32 for 100,000 steps from seeds 0, 1, 7, 2^32 − 1: no state repeats", () => {
    for (const seed of [0, 1, 7, 2 ** 32 - 1]) {
      const next = lcg(seed);
      let x = BigInt(seed);
      const seen = new Set<number>();
      for (let i = 0; i < 100_000; i++) {
        x = (1103515245n * x + 12345n) % 2n ** 32n;
        const s = next();
        if (s !== Number(x)) expect(s, `seed ${seed}, step ${i}`).toBe(Number(x));
        seen.add(s);
      }
      expect(seen.size, `seed ${seed}`).toBe(100_000);
    }
  });

  test("uniformFrom in [lo, hi), intsFrom in [lo, hi] and every integer of it drawn", () => {
    const u = uniformFrom(3, -8, 8);
    const xs = Array.from({ length: 10_000 }, u);
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(-8);
    expect(Math.max(...xs)).toBeLessThan(8);
    const int = intsFrom(3, -4, 4);
    const counts = new Map<number, number>();
    for (let i = 0; i < 9_000; i++) counts.set(int(), (counts.get(int()) ?? 0) + 1);
    expect([...counts.keys()].sort((a, b) => a - b)).toEqual([-4, -3, -2, -1, 0, 1, 2, 3, 4]);
  });

  test("uniformFrom's calls and its bulk fill give lo + state / 2^32 · (hi − lo) of lcg's states, in one sequence", () => {
    for (const [seed, lo, hi] of [
      [5, -1, 1],
      [9, 0.25, 4],
      [2 ** 32 - 1, -8, 8],
    ] as const) {
      const next = lcg(seed);
      const want = Array.from({ length: 1000 }, () => lo + (next() / 2 ** 32) * (hi - lo));
      const u = uniformFrom(seed, lo, hi);
      // 100 calls, a Float32Array of 300 and a Float64Array of 500 filled, 100 calls.
      const f32 = new Float32Array(300);
      const f64 = new Float64Array(500);
      const head = Array.from({ length: 100 }, () => u());
      u.fill(f32);
      u.fill(f64);
      const tail = Array.from({ length: 100 }, () => u());
      expect(head).toEqual(want.slice(0, 100));
      expect(Array.from(f32)).toEqual(want.slice(100, 400).map(Math.fround));
      expect(Array.from(f64)).toEqual(want.slice(400, 900));
      expect(tail).toEqual(want.slice(900));
    }
  });

  test("no TypeScript file of the repository writes the recurrence with a double product", () => {
    // The files git tracks: an author's own untracked scripts (out/, a try/ folder) are theirs.
    const files = execFileSync("git", ["ls-files", "-z", "--", "*.ts"], {
      cwd: repoRoot,
      encoding: "utf8",
    })
      .split("\0")
      .filter((f) => f !== "")
      .map((f) => join(repoRoot, f))
      .filter((f) => existsSync(f));
    expect(files.length).toBeGreaterThan(100);
    // This file spells the pattern out itself.
    const bad = files
      .filter((f) => !f.endsWith("lcg.test.ts"))
      .filter((f) => /\w\s*\*\s*1103515245\b|1103515245\s*\*\s*\w/.test(readFileSync(f, "utf8")))
      .map((f) => relative(repoRoot, f));
    expect(bad, "use Math.imul (test/util/lcg.ts)").toEqual([]);
  });
});
