import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { parseCircular, parseDependencyTree, type DependencyTree } from "dpdm";
import { afterAll, describe, expect, it } from "vitest";

/**
 * No import circle inside any package, value or type (issue 21: "no import circles, checked by a
 * well-kept tool"). dpdm parses every TypeScript source of a package's `src` (each file is an
 * entry, so files the index does not reach are checked too), type-only imports included, and
 * follows only imports that stay inside that `src`: another package's import leaves the package
 * (the layering keeps those arrows pointing down to core).
 */

const ROOT = resolve(fileURLToPath(new URL("..", import.meta.url)));
/** Every workspace package's folder name under packages/ (the root package.json's list). */
const PACKAGES: string[] = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { workspaces: string[] }
).workspaces.map((w) => w.replace(/^packages\//, ""));

/** Every `.ts` file under `dir`, absolute. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(p));
    else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out.sort();
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * dpdm's dependency tree of every `.ts` file under `src` (an absolute path), paths relative to
 * `src`: the files it parsed (value: their imports) and those it left out (value: null).
 */
async function analyze(src: string): Promise<{ tree: DependencyTree; circles: string[][] }> {
  const tree = await parseDependencyTree(tsFiles(src), {
    context: src,
    cwd: src,
    include: new RegExp(`^${escape(src + sep)}`),
    transform: false, // keep `import type`: type circles count too
    skipDynamicImports: false,
  });
  return { tree, circles: parseCircular(tree) };
}

/** The files dpdm parsed, sorted. */
const parsed = (tree: DependencyTree): string[] =>
  Object.keys(tree)
    .filter((k) => tree[k] !== null)
    .sort();

/** `a.ts -> b.ts -> a.ts` text of a circle, for the failure message. */
const show = (c: readonly string[]): string => [...c, c[0]].join(" -> ");

describe("import circles (dpdm)", () => {
  const tmp = mkdtempSync(join(tmpdir(), "tirx-circles-"));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it("the check finds a planted type-only circle written as the sources are (.js suffixes)", async () => {
    const src = join(tmp, "src");
    const files: Record<string, string> = {
      "index.ts": 'export { a } from "./a.js";\n',
      "a.ts": 'import type { B } from "./b.js";\nexport const a = (b: B): number => b.n;\n',
      "b.ts": 'import type { a } from "./a.js";\nexport interface B { n: number; f?: typeof a }\n',
      "c.ts": 'import { a } from "./a.js";\nexport const c = a;\n',
    };
    mkdirSync(src);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(src, name), text);
    // Resolved as a package's sources are: through a tsconfig extending the repository's.
    const base = JSON.stringify(join(ROOT, "tsconfig.base.json"));
    writeFileSync(join(tmp, "tsconfig.json"), `{ "extends": ${base}, "include": ["src"] }\n`);
    const { tree, circles } = await analyze(src);
    expect(parsed(tree)).toEqual(["a.ts", "b.ts", "c.ts", "index.ts"]);
    expect(tree["c.ts"]?.map((d) => d.id)).toEqual(["a.ts"]);
    expect(circles.map((c) => [...c].sort())).toEqual([["a.ts", "b.ts"]]);
  });

  for (const pkg of PACKAGES) {
    it(`${pkg}: no circle among its sources`, async () => {
      const src = join(ROOT, "packages", pkg, "src");
      const files = tsFiles(src).map((f) => relative(src, f));
      const { tree, circles } = await analyze(src);
      // The tool saw the TypeScript sources themselves: it parsed every file, and every relative
      // import resolved to a parsed file of src (not dist, not unresolved).
      expect(parsed(tree)).toEqual(files);
      for (const [file, deps] of Object.entries(tree)) {
        for (const d of deps ?? []) {
          if (!d.request.startsWith(".")) continue;
          expect(d.id && tree[d.id], `${file} imports ${d.request}`).toBeTruthy();
        }
      }
      expect(circles.map(show)).toEqual([]);
    }, 60_000);
  }
});
