import { createHook } from "node:async_hooks";
import { createRequire, findSourceMap, isBuiltin } from "node:module";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";
import { chunkLongBlocks } from "@tirx-ts/dsl";
import { binaryCacheDir, ensureDir, readOwnFile, writeFileAtomically } from "@tirx-ts/runtime-cuda";

/**
 * Why a kernel file could not be loaded: a syntax error (with its location), an error its
 * top-level code threw, a bundle that could not be written (TX8004), or a top-level `await`
 * that can never settle (TX8005). The CLI reports it as a TirxError of `code`.
 */
export class LoadError extends Error {
  /** Where the problem is, when known: 1-based line and column in `file`. */
  readonly location: { file: string; line: number; col: number; lineText?: string } | undefined;
  /** The error the file's own code threw while it loaded, if that is what happened. */
  readonly thrown: unknown;
  /** The diagnostic code the CLI reports it with. */
  readonly code: "TX8004" | "TX8005";

  constructor(
    message: string,
    location?: LoadError["location"],
    thrown?: unknown,
    code: LoadError["code"] = "TX8004",
  ) {
    super(message);
    this.name = "LoadError";
    this.location = location;
    this.thrown = thrown;
    this.code = code;
  }
}

interface Message {
  text: string;
  location?: { file: string; line: number; column: number; lineText: string } | null;
}

/**
 * Load a TypeScript (or JavaScript) kernel file once and return its exports. The file and the
 * relative files it imports are transformed and bundled by esbuild into one ES module in a
 * temporary folder; every package import (`tirx-ts`, ...) is resolved from the kernel file's own
 * folder to an absolute URL, so the kernel shares the already-loaded tirx-ts packages with the
 * caller and nothing loads twice. Long blocks of the bundle (a generated kernel of thousands of
 * statements) run in arrows of 64 statements (dsl's chunkLongBlocks), so that stack positions
 * stay cheap for V8 to find. The output is always an ES module, whatever the `"type"` of the
 * kernel file's package. Stack positions map back to the kernel file through an inline source
 * map (Node's source-map support is on only while the module evaluates), so spans recorded by
 * `T.*` calls name the author's `file:line:col`. `import.meta.url`, `.filename` and `.dirname`
 * are those of the kernel file.
 * @throws LoadError for a file that does not parse or whose top-level code throws a non-tirx
 *   error, or whose bundle cannot be written to the temporary folder (TX8004), and for a
 *   top-level `await` that waits on nothing that could settle it (TX8005, see
 *   {@link importWatched}); a TirxError thrown by the file's own `T.*` calls is rethrown as is.
 */
export async function loadKernelFile(path: string): Promise<Record<string, unknown>> {
  const file = resolvePath(path);
  const cached = readBundleCache(file);
  return importBundle(file, cached ?? (await bundle(file)));
}

/** The bundled module text (with its inline source map) of a kernel file. */
async function bundle(file: string): Promise<string> {
  const url = pathToFileURL(file).href;
  const esbuild = await import("esbuild");
  const externals: External[] = [];
  let result;
  try {
    result = await esbuild.build({
      entryPoints: [file],
      bundle: true,
      write: false,
      format: "esm",
      platform: "node",
      target: "node20",
      outdir: dirname(file),
      // Paths in esbuild's messages and metafile are relative to this folder, not to the
      // working folder of its service process (which may since have changed or gone).
      absWorkingDir: dirname(file),
      metafile: true,
      sourcemap: "external",
      sourcesContent: false,
      logLevel: "silent",
      // Counts the starts of kernel bodies: importWatched tells a module suspended at a
      // top-level await from one still loading.
      banner: { js: BODY_STARTED_BANNER },
      define: {
        "import.meta.url": JSON.stringify(url),
        "import.meta.filename": JSON.stringify(file),
        "import.meta.dirname": JSON.stringify(dirname(file)),
      },
      plugins: [
        {
          name: "tirx-packages",
          setup(build) {
            // Bare specifiers: packages are loaded by Node, resolved from the importing file.
            build.onResolve({ filter: /^[^./]/ }, (args) => {
              if (args.path.startsWith("/")) return undefined;
              if (isBuiltin(args.path)) return { path: args.path, external: true };
              const importer = args.importer || file;
              const target = resolveFrom(importer, args.path);
              externals.push({ importer, spec: args.path, resolved: target ?? "" });
              // Not resolvable by require (an import-only package): leave it to Node.
              return target !== undefined
                ? { path: pathToFileURL(target).href, external: true }
                : { path: args.path, external: true };
            });
          },
        },
      ],
    });
  } catch (e) {
    const first = (e as { errors?: Message[] }).errors?.[0];
    const loc = first?.location;
    throw new LoadError(
      first?.text ?? (e as Error).message,
      loc
        ? {
            file: resolvePath(dirname(file), loc.file),
            line: loc.line,
            col: loc.column + 1,
            lineText: loc.lineText,
          }
        : undefined,
    );
  }
  const js = result.outputFiles.find((f) => f.path.endsWith(".js"));
  const map = result.outputFiles.find((f) => f.path.endsWith(".js.map"));
  if (!js) throw new LoadError("esbuild produced no output");
  let text = js.text.replace(/\/\/# sourceMappingURL=.*\s*$/, "");
  // Long generated kernels: their statements in arrows of a few dozen each, so that the
  // position of each T.* call costs V8 a short walk (see chunkLongBlocks); the map gains the
  // inserted lines as lines without mappings.
  let chunked: ReturnType<typeof chunkLongBlocks>;
  try {
    chunked = chunkLongBlocks(text);
  } catch {
    chunked = undefined; // only a speed-up: without the parser, the bundle runs as printed
  }
  if (chunked) text = chunked.text;
  if (map) {
    // Absolute source paths; made relative to the written module when it is written.
    const m = JSON.parse(map.text) as { sources: string[]; mappings: string };
    m.sources = m.sources.map((s) => resolvePath(dirname(js.path), s));
    if (chunked) {
      const lines = m.mappings.split(";");
      const inserted = chunked.insertedBefore;
      for (let k = inserted.length - 1; k >= 0; k--) {
        if (inserted[k]! <= lines.length) lines.splice(inserted[k]!, 0, "");
      }
      m.mappings = lines.join(";");
    }
    text += `\n${MAP_PREFIX}${Buffer.from(JSON.stringify(m)).toString("base64")}\n`;
  }
  const inputs = Object.keys(result.metafile?.inputs ?? {}).map((p) =>
    resolvePath(dirname(file), p),
  );
  writeBundleCache(file, inputs, externals, text);
  return text;
}

const MAP_PREFIX = "//# sourceMappingURL=data:application/json;base64,";

const BODY_STARTED = Symbol.for("tirx-ts.kernel-bodies-started");
const BODY_STARTED_BANNER = `globalThis[Symbol.for("tirx-ts.kernel-bodies-started")] = (globalThis[Symbol.for("tirx-ts.kernel-bodies-started")] ?? 0) + 1;`;

/** How many kernel bundles have started their bodies in this process. */
function bodiesStarted(): number {
  return (globalThis as { [BODY_STARTED]?: number })[BODY_STARTED] ?? 0;
}

/**
 * Import `url`, a kernel bundle, and fail with TX8005 instead of waiting forever when its
 * top-level `await` can never settle. That is certain when Node's event loop runs empty while
 * the import is pending ('beforeExit': Node itself would exit with code 13, "unsettled
 * top-level await", for an entry module; a dynamic import just never settles and the process
 * exits 0). In a process with other work (a test runner), the module is taken as stuck when its
 * body has started (it is suspended at an await, not loading) and every async resource created
 * since the import began (a timer, a file or network request, a child process, a worker:
 * tracked with async_hooks, promises aside) is gone: nothing it started is left to resolve the
 * promise. Not tracked either: an open file (FILEHANDLE), whose resource is destroyed only when
 * it is garbage collected, long after it was closed (Node's module loader reads each module
 * through one), while each read, write or close of it is a request of its own (FSREQPROMISE,
 * FILEHANDLECLOSEREQ) that is tracked. Checked on unref'd timers, which keep no process alive and
 * are not tracked.
 */
function importWatched(url: string): Promise<Record<string, unknown>> {
  const started = bodiesStarted();
  const live = new Set<number>();
  const hook = createHook({
    init(id, type) {
      if (type !== "PROMISE" && type !== "FILEHANDLE") live.add(id);
    },
    destroy(id) {
      live.delete(id);
    },
  });
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    let wait = 1;
    let settled = false;
    const stop = (): void => {
      settled = true;
      hook.disable();
      process.off("beforeExit", onEmptyLoop);
      if (timer !== undefined) clearTimeout(timer);
    };
    /** Poll after `ms` on a timer the hook does not see. */
    const later = (ms: number): void => {
      hook.disable();
      timer = setTimeout(poll, ms).unref();
      hook.enable();
    };
    const stuck = (): void => {
      stop();
      reject(
        new LoadError(
          `its top-level await never settles: it waits on a promise that nothing left running can resolve (run as a program, Node would exit with code 13, "unsettled top-level await")`,
          undefined,
          undefined,
          "TX8005",
        ),
      );
    };
    const onEmptyLoop = (): void => {
      if (!settled) stuck();
    };
    const poll = (): void => {
      timer = undefined;
      if (settled) return;
      if (bodiesStarted() > started && live.size === 0) return stuck();
      wait = Math.min(wait * 2, 100);
      later(wait);
    };
    process.on("beforeExit", onEmptyLoop);
    hook.enable();
    import(/* @vite-ignore */ url).then(
      (m: Record<string, unknown>) => {
        if (settled) return;
        stop();
        resolve(m);
      },
      (e: unknown) => {
        if (settled) return;
        stop();
        reject(e);
      },
    );
    later(0);
  });
}

/** Write the bundle next to nothing of the user's (a temporary folder) and import it once. */
async function importBundle(file: string, bundled: string): Promise<Record<string, unknown>> {
  let dir: string;
  try {
    dir = mkdtempSync(join(tmpdir(), "tirx-load-"));
  } catch (e) {
    throw new LoadError(
      `cannot create a temporary folder for its bundle in ${tmpdir()}: ${(e as Error).message} (set TMPDIR to a writable folder)`,
    );
  }
  try {
    const out = join(dir, basename(file).replace(/\.[cm]?[jt]sx?$/, "") + ".mjs");
    let text = bundled;
    const at = text.lastIndexOf(MAP_PREFIX);
    if (at >= 0) {
      // Sources relative to the written module, so that mapped frames name the kernel file.
      const m = JSON.parse(
        Buffer.from(text.slice(at + MAP_PREFIX.length).trim(), "base64").toString("utf8"),
      ) as { sources: string[] };
      m.sources = m.sources.map((s) => relative(dir, s));
      text = `${text.slice(0, at)}${MAP_PREFIX}${Buffer.from(JSON.stringify(m)).toString("base64")}\n`;
    }
    try {
      writeFileSync(out, text);
    } catch (e) {
      throw new LoadError(
        `cannot write its bundle to ${dir}: ${(e as Error).message} (set TMPDIR to a writable folder)`,
      );
    }
    const mapping = process.sourceMapsEnabled;
    process.setSourceMapsEnabled(true);
    try {
      return await importWatched(pathToFileURL(out).href);
    } catch (e) {
      if (e instanceof LoadError) throw e;
      if (e instanceof Error && e.name === "TirxError") throw e;
      // The bundle's path is nothing of the user's: the message names the kernel file instead
      // ("Cannot find package 'x' imported from /tmp/tirx-load-…/k.mjs"), and a missing package
      // is placed at the kernel file's import of it.
      const message = (e instanceof Error ? e.message : String(e))
        .split(pathToFileURL(out).href)
        .join(pathToFileURL(file).href)
        .split(out)
        .join(file);
      const missing = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1];
      const where =
        locationIn(e, file, out) ?? (missing ? importLocation(file, missing) : undefined);
      throw new LoadError(message, where, e);
    } finally {
      process.setSourceMapsEnabled(mapping);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The first stack frame of `e` in `file`, if any: a frame that names `file` (the stack as Node
 * formats it, through the bundle's source map), or one that names `bundle`, the written module,
 * mapped through Node's source map of it (a stack formatted by a formatter that does not apply
 * Node's source maps, such as a test runner's).
 */
function locationIn(e: unknown, file: string, bundle: string): LoadError["location"] {
  const stack = e instanceof Error ? (e.stack ?? "") : "";
  const url = pathToFileURL(file).href;
  const bundleUrl = pathToFileURL(bundle).href;
  for (const line of stack.split("\n")) {
    for (const name of [url, file, bundleUrl, bundle]) {
      const i = line.indexOf(name + ":");
      if (i < 0) continue;
      const m = /^:(\d+):(\d+)/.exec(line.slice(i + name.length));
      if (!m) continue;
      if (name === url || name === file) return { file, line: Number(m[1]), col: Number(m[2]) };
      const entry = findSourceMap(bundle)?.findEntry(Number(m[1]) - 1, Number(m[2]) - 1);
      if (entry && "originalSource" in entry && [url, file].includes(entry.originalSource)) {
        return { file, line: entry.originalLine + 1, col: entry.originalColumn + 1 };
      }
    }
  }
  return undefined;
}

/**
 * Where `file` imports `pkg` (the first `"pkg"` or `'pkg'` string in its text, as an import's
 * specifier is written), if it can be read and does.
 */
function importLocation(file: string, pkg: string): LoadError["location"] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const col = Math.max(lines[i]!.indexOf(`"${pkg}"`), lines[i]!.indexOf(`'${pkg}'`));
    if (col >= 0) return { file, line: i + 1, col: col + 1, lineText: lines[i]! };
  }
  return undefined;
}

/**
 * Where bundles of kernel files are kept between runs: `bundles/` in runtime-cuda's cache
 * directory (binaryCacheDir: TIRX_CACHE_DIR, an absolute XDG_CACHE_HOME, or the user's home);
 * undefined under TIRX_CACHE=off or without one.
 */
function bundleCacheDir(): string | undefined {
  const base = binaryCacheDir();
  return base === undefined ? undefined : join(base, "bundles");
}

/** A package import of the bundle and the file it resolved to ("" when it did not resolve). */
interface External {
  readonly importer: string;
  readonly spec: string;
  readonly resolved: string;
}

/** Resolve a package import as Node's require would from `importer` (with this process's conditions). */
function resolveFrom(importer: string, spec: string): string | undefined {
  try {
    return createRequire(importer).resolve(spec);
  } catch {
    return undefined;
  }
}

interface BundleEntry {
  readonly key: string;
  readonly externals: readonly External[];
  readonly inputs: readonly { path: string; sha256: string }[];
  readonly text: string;
}

/** What a cached bundle depends on besides its inputs: the file, and this tool's versions. */
function bundleKey(file: string): string {
  return createHash("sha256")
    .update(`${file}\0${process.version}\0${BUNDLE_FORMAT}`)
    .digest("hex")
    .slice(0, 32);
}

/** Bump when the bundle's shape changes. */
const BUNDLE_FORMAT = 4;

/**
 * The cached bundle of `file` when every input file (the kernel file and the relative files it
 * imports) still has the contents it had when bundled (SHA-256); else undefined.
 */
function readBundleCache(file: string): string | undefined {
  const dir = bundleCacheDir();
  if (!dir) return undefined;
  const key = bundleKey(file);
  try {
    // Only a file of this user's that no one else can write: its text is run (readOwnFile).
    const bytes = readOwnFile(join(dir, `${key}.json`));
    if (bytes === undefined) return undefined;
    const e = JSON.parse(bytes.toString("utf8")) as BundleEntry;
    if (e.key !== key) return undefined;
    for (const i of e.inputs) if (contentHash(i.path) !== i.sha256) return undefined;
    // Package imports must resolve as they did (another process may use other conditions).
    for (const x of e.externals)
      if ((resolveFrom(x.importer, x.spec) ?? "") !== x.resolved) return undefined;
    return e.text;
  } catch {
    return undefined;
  }
}

function contentHash(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

function writeBundleCache(
  file: string,
  inputs: readonly string[],
  externals: readonly External[],
  text: string,
): void {
  const dir = bundleCacheDir();
  if (!dir) return;
  try {
    const key = bundleKey(file);
    const entry: BundleEntry = {
      key,
      externals,
      inputs: inputs.map((p) => ({ path: p, sha256: contentHash(p) })),
      text,
    };
    if (!ensureDir(dir)) return; // bounded: mkdirSync's recursion loops on procfs
    // 0o644 whatever the umask: readOwnFile refuses group-writable files.
    writeFileAtomically(join(dir, `${key}.json`), JSON.stringify(entry), 0o644);
  } catch {
    // a cache that cannot be written is no cache
  }
}
