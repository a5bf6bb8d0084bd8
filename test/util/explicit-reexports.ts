// A Vite plugin for the test runner: the packages' `export * from "./x.js"` become
// `export { a, b, ... } from "./x.js"` (x's value exports, its own star exports followed), so
// that the module runner gives each re-exported name a getter of its own. Vite's SSR transform
// turns a star export into getters that share one closure (`() => module[key]`): a keyed load
// that V8 cannot specialise, paid on every call through a barrel (`@tirx-ts/core`'s index reaches
// operandOffset through three of them). The suite's profile on the 2-core machine spent 26 s of
// ~740 s in that getter (the wgmma simulator's address arithmetic, the builder, codecs).
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { parseAst, type Plugin } from "vite";

/** A package source file (not the lab's, whose star exports name packages). */
const PACKAGE_SOURCE = /[\\/]packages[\\/][^\\/]+[\\/]src[\\/].+\.ts$/;
const STAR = /^export \* from "\.{1,2}\/[^"]+";$/m;

/** The .ts file of relative specifier `spec` ("./x.js") imported from `from`; undefined if none. */
function sourceOf(spec: string, from: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const file = resolve(dirname(from), spec.replace(/\.js$/, ".ts"));
  return existsSync(file) ? file : undefined;
}

/** Names bound by a declaration's pattern (`const { a, b: [c] } = ...` binds a and c). */
function bound(pattern: unknown, out: string[]): void {
  const p = pattern as { type: string; name?: string; [k: string]: unknown };
  if (p.type === "Identifier") {
    out.push(p.name!);
  } else if (p.type === "ObjectPattern") {
    for (const q of p["properties"] as { type: string; value?: unknown; argument?: unknown }[]) {
      bound(q.type === "RestElement" ? q.argument : q.value, out);
    }
  } else if (p.type === "ArrayPattern") {
    for (const q of p["elements"] as unknown[]) if (q) bound(q, out);
  } else if (p.type === "RestElement") {
    bound(p["argument"], out);
  } else if (p.type === "AssignmentPattern") {
    bound(p["left"], out);
  }
}

/** What a module exports: value names of its own (and named re-exports), and its star exports. */
interface Exports {
  readonly names: readonly string[];
  /** The specifiers of `export * from "..."`, in order. */
  readonly stars: readonly string[];
}

/**
 * The exports of `text` (types and `declare`d names have no value at run time, and are left
 * out).
 */
function exportsOf(text: string, file: string): Exports {
  const names: string[] = [];
  const stars: string[] = [];
  for (const s of parseAst(text, { lang: "ts" }, file).body) {
    if (s.type === "ExportAllDeclaration") {
      if (s.exportKind === "type") continue;
      if (s.exported) names.push((s.exported as { name: string }).name);
      else stars.push(s.source.value);
      continue;
    }
    if (s.type !== "ExportNamedDeclaration" || s.exportKind === "type") continue;
    const d = s.declaration as { type: string; declare?: boolean; [k: string]: unknown } | null;
    if (d && !d.declare) {
      if (d.type === "VariableDeclaration")
        for (const v of d["declarations"] as { id: unknown }[]) bound(v.id, names);
      else if (["FunctionDeclaration", "ClassDeclaration", "TSEnumDeclaration"].includes(d.type))
        names.push((d["id"] as { name: string }).name);
    }
    for (const sp of s.specifiers) {
      if (sp.exportKind !== "type") names.push((sp.exported as { name: string }).name);
    }
  }
  return { names, stars };
}

/** Each file's exports, by path, with the text they were read from. */
const parsed = new Map<string, { text: string; exports: Exports }>();

/**
 * The value names `file` exports, its star exports followed (a name of the file or an earlier
 * star export first, as the module runner keeps the first); undefined when a star export's
 * names cannot be known here (a package, a missing file). Every file read is added to `files`.
 */
function valueExports(file: string, files: Set<string>): string[] | undefined {
  if (files.has(file)) return []; // seen on this walk: its names came with the first visit
  files.add(file);
  const text = readFileSync(file, "utf8");
  let hit = parsed.get(file);
  if (hit?.text !== text) parsed.set(file, (hit = { text, exports: exportsOf(text, file) }));
  const names = [...hit.exports.names];
  for (const spec of hit.exports.stars) {
    const from = sourceOf(spec, file);
    const more = from === undefined ? undefined : valueExports(from, files);
    if (more === undefined) return undefined;
    names.push(...more);
  }
  return names;
}

/**
 * `code` of `id` with each `export * from "./x.js"` spelled as the names it exports (a name
 * exported by the file itself or an earlier star export stays theirs, as the module runner's
 * star exports keep the first); undefined when nothing changes. `files` collects what was read.
 */
function spellOut(code: string, id: string, files: Set<string>): string | undefined {
  if (!PACKAGE_SOURCE.test(id) || !STAR.test(code)) return undefined;
  const taken = new Set(exportsOf(code, id).names);
  const edits: { start: number; end: number; text: string }[] = [];
  for (const s of parseAst(code, { lang: "ts" }, id).body) {
    if (s.type !== "ExportAllDeclaration" || s.exported || s.exportKind === "type") continue;
    const from = sourceOf(s.source.value, id);
    const names = from === undefined ? undefined : valueExports(from, files);
    if (names === undefined) continue;
    const own = names.filter((n) => !taken.has(n));
    for (const n of own) taken.add(n);
    edits.push({
      start: s.start,
      end: s.end,
      text: `export { ${own.join(", ")} } from ${JSON.stringify(s.source.value)};`,
    });
  }
  if (edits.length === 0) return undefined;
  let out = code;
  for (const e of edits.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  return out;
}

/**
 * The plugin. A rewritten file is kept out of vitest's module cache on disk (its output depends
 * on other files' exports; the barrels are a few small files) and Vite watches the files it read.
 */
export function explicitReexports(): Plugin {
  return {
    name: "tirx-explicit-reexports",
    enforce: "pre",
    transform(code, id) {
      const files = new Set<string>();
      const out = spellOut(code, id, files);
      if (out === undefined) return undefined;
      for (const f of files) this.addWatchFile(f);
      return { code: out, map: null };
    },
    configureVitest({ experimental_defineCacheKeyGenerator }) {
      experimental_defineCacheKeyGenerator(({ id, sourceCode }) =>
        PACKAGE_SOURCE.test(id) && STAR.test(sourceCode) ? false : undefined,
      );
    },
  };
}
