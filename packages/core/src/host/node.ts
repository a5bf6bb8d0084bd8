// Node's built-in modules without an import statement: the compiler packages (core, dsl,
// codegen-ptx, runtime-sim) run in a browser too, so none of them imports a Node built-in. What
// they take from Node (source files for code frames, paths relative to the working directory,
// source maps, environment variables) comes through these functions, which give undefined off
// Node, and every caller has a fallback for that case. On Node they use
// `process.getBuiltinModule` (Node ≥ 20.16; the packages require ≥ 20.19).
import type * as Fs from "node:fs";
import type * as Module from "node:module";
import type * as Path from "node:path";
import type * as Url from "node:url";

/** The built-in modules the compiler packages use, by name. */
interface Builtins {
  readonly fs: typeof Fs;
  readonly module: typeof Module;
  readonly path: typeof Path;
  readonly url: typeof Url;
}

/** Node's `process` where there is one (globalThis.process; undefined in a browser). */
interface NodeProcess {
  readonly env: Record<string, string | undefined>;
  cwd(): string;
  getBuiltinModule?(id: string): object | undefined;
  sourceMapsEnabled?: boolean;
  setSourceMapsEnabled?(enabled: boolean): void;
}

/** `process` on Node (and Node-compatible runtimes), undefined elsewhere. */
export function nodeProcess(): NodeProcess | undefined {
  const p = (globalThis as { process?: NodeProcess }).process;
  return p !== undefined && typeof p.cwd === "function" ? p : undefined;
}

/**
 * The Node built-in module `id` ("fs", "module", "path", "url"), or undefined off Node (or on a
 * Node without process.getBuiltinModule, before 20.16).
 */
export function nodeBuiltin<K extends keyof Builtins>(id: K): Builtins[K] | undefined {
  const get = nodeProcess()?.getBuiltinModule;
  return get === undefined ? undefined : (get.call(nodeProcess(), `node:${id}`) as Builtins[K]);
}

/** The environment variable `name` on Node; undefined elsewhere or when unset. */
export function envVar(name: string): string | undefined {
  return nodeProcess()?.env[name];
}

/**
 * `file` relative to `from` (default: the working directory) when it lies under it, else `file`
 * unchanged; `file` unchanged off Node (a browser has no working directory).
 */
export function relativeToCwd(file: string, from?: string): string {
  const path = nodeBuiltin("path");
  const cwd = from ?? nodeProcess()?.cwd();
  if (path === undefined || cwd === undefined || !path.isAbsolute(file)) return file;
  const rel = path.relative(cwd, file);
  return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel) ? rel : file;
}

/** The path of a `file://` URL (Node's fileURLToPath; off Node, the URL's decoded pathname). */
export function filePathOf(url: string): string {
  const u = nodeBuiltin("url");
  if (u !== undefined) return u.fileURLToPath(url);
  return decodeURIComponent(new URL(url).pathname);
}
