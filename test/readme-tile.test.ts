// README.md's table of tile primitives is TILE_PRIMITIVES (packages/core/src/tile/registry.ts):
// one row per record, its name, scopes and doc line, in the registry's order. A primitive added
// to the registry fails this test, naming the missing rows; `TIRX_UPDATE_README=1 npx vitest run
// test/readme-tile.test.ts` rewrites the table in place (nothing else in README.md changes).
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { TILE_PRIMITIVES } from "@tirx-ts/core";

const readme = fileURLToPath(new URL("../README.md", import.meta.url));
const BEGIN = "<!-- tile-primitives: generated from TILE_PRIMITIVES";
const END = "<!-- /tile-primitives -->";

/** The table's rows as the registry gives them (a `|` in a doc line escaped). */
function rows(): string[] {
  return Object.values(TILE_PRIMITIVES).map(
    (p) => `| \`${p.name}\` | ${p.scopes.join(", ")} | ${p.doc.replace(/\|/g, "\\|")} |`,
  );
}

/** A row's cells, trimmed (prettier pads them to align the columns). */
const cells = (row: string): string =>
  row
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((c) => c.trim())
    .join(" | ");

test("README.md's tile primitive table is TILE_PRIMITIVES, row for row", async () => {
  const text = readFileSync(readme, "utf8");
  const begin = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  expect(begin, `README.md has the marker ${BEGIN}`).toBeGreaterThanOrEqual(0);
  expect(end, `README.md has the marker ${END}`).toBeGreaterThan(begin);
  const open = text.indexOf("\n", begin) + 1;
  const shown = text
    .slice(open, end)
    .split("\n")
    .filter((l) => /^\| *`/.test(l))
    .map(cells);
  const want = rows().map(cells);
  if (process.env.TIRX_UPDATE_README === "1" && shown.join("\n") !== want.join("\n")) {
    const table = ["| primitive | scopes | what it does |", "| --- | --- | --- |", ...rows()];
    const next = text.slice(0, open) + table.join("\n") + "\n" + text.slice(end);
    const prettier = await import("prettier");
    const options = (await prettier.resolveConfig(readme)) ?? {};
    writeFileSync(readme, await prettier.format(next, { ...options, filepath: readme }));
    return;
  }
  const missing = want.filter((r) => !shown.includes(r));
  const stale = shown.filter((r) => !want.includes(r));
  expect(
    { missing, stale },
    "README.md's tile table differs from TILE_PRIMITIVES; TIRX_UPDATE_README=1 npx vitest run test/readme-tile.test.ts rewrites it",
  ).toEqual({ missing: [], stale: [] });
  expect(shown, "the table's rows are in the registry's order").toEqual(want);
});
