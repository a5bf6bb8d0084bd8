// The test runner loads the workspace packages as they are built (packages/*/dist, what `tsc -b`
// emits and what users install), through Node's own module loader, instead of transforming their
// TypeScript sources through Vite's module runner. On the 2-core machine the suite spent about
// 60 s less CPU this way (transform and import of the packages in each worker, and every
// cross-module reference going through the runner's getters; 465 → 404 CPU-s, 4:14 → 3:41).
// `npm test` builds first (`tsc -b && vitest run`); a `vitest run` whose packages are not built, or
// were edited since (packagesBuilt), takes their TypeScript sources as before, so it never tests
// a stale build.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Plugin } from "vite";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** A built package module, loaded by Node (vitest's `server.deps.external`). */
export const BUILT_MODULE = /[\\/]packages[\\/][^\\/]+[\\/]dist[\\/].+\.js$/;

/** packages/<name>/src/<path>.{js,ts} (the capture groups: name and path without extension). */
const SOURCE = /[\\/]packages[\\/]([^\\/]+)[\\/]src[\\/](.+)\.(?:js|ts)$/;

/**
 * A Vite plugin: a test's relative import of a package's source file (a module that the package
 * does not export, e.g. `../packages/runtime-sim/src/exec/async-copy.js`) loads the built module
 * (`packages/runtime-sim/dist/exec/async-copy.js`), so the test and the package share one
 * instance of it (a patched prototype, a counter). Packages without a build (the lab) keep their
 * sources.
 */
export function builtPackageModules(): Plugin {
  return {
    name: "tirx-built-package-modules",
    enforce: "pre",
    resolveId(source, importer) {
      if (!importer || !source.startsWith(".") || SOURCE.test(importer)) return null;
      const m = SOURCE.exec(resolve(dirname(importer), source));
      if (!m) return null;
      const built = join(root, "packages", m[1]!, "dist", `${m[2]!}.js`);
      return existsSync(built) ? built : null;
    },
  };
}

/** The newest modification time (ms) of the files under `dir`. */
function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

/**
 * Whether every package project of `tsc -b` (the root tsconfig's references under packages/) has
 * a build at least as new as its sources: a tsconfig.tsbuildinfo (which each build writes) not
 * older than any file under its src/. False (and the tests take the packages' sources) on a
 * fresh clone before `tsc -b`, after an edit that was not built, and on a machine that has the
 * dependencies but no build.
 */
export function packagesBuilt(): boolean {
  const { references } = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")) as {
    references: { path: string }[];
  };
  return references
    .map((r) => r.path)
    .filter((p) => p.startsWith("packages/"))
    .every((p) => {
      const info = join(root, p, "tsconfig.tsbuildinfo");
      return existsSync(info) && newest(join(root, p, "src")) <= statSync(info).mtimeMs;
    });
}
