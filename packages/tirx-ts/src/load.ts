import { createRequire, isBuiltin } from "node:module";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join, relative, resolve as resolvePath } from "node:path";
import { pathToFileURL } from "node:url";

/** Why a kernel file could not be loaded: a syntax error (with its location) or a thrown error. */
export class LoadError extends Error {
  /** Where the problem is, when known: 1-based line and column in `file`. */
  readonly location: { file: string; line: number; col: number; lineText?: string } | undefined;
  /** The error the file's own code threw while it loaded, if that is what happened. */
  readonly thrown: unknown;

  constructor(message: string, location?: LoadError["location"], thrown?: unknown) {
    super(message);
    this.name = "LoadError";
    this.location = location;
    this.thrown = thrown;
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
 * caller and nothing loads twice. The output is always an ES module, whatever the `"type"` of the
 * kernel file's package. Stack positions map back to the kernel file through an inline source
 * map (Node's source-map support is on only while the module evaluates), so spans recorded by
 * `T.*` calls name the author's `file:line:col`. `import.meta.url`, `.filename` and `.dirname`
 * are those of the kernel file.
 * @throws LoadError for a file that does not parse or whose top-level code throws a non-tirx
 *   error; a TirxError thrown by the file's own `T.*` calls is rethrown as is.
 */
export async function loadKernelFile(path: string): Promise<Record<string, unknown>> {
  const file = resolvePath(path);
  const url = pathToFileURL(file).href;
  const esbuild = await import("esbuild");
  const requireFrom = (importer: string) => createRequire(importer);
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
      sourcemap: "external",
      sourcesContent: false,
      logLevel: "silent",
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
              try {
                const target = requireFrom(args.importer || file).resolve(args.path);
                return { path: pathToFileURL(target).href, external: true };
              } catch {
                // Not resolvable by require (an import-only package): leave it to Node.
                return { path: args.path, external: true };
              }
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
            file: resolvePath(loc.file),
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
  const dir = mkdtempSync(join(tmpdir(), "tirx-load-"));
  try {
    const out = join(dir, basename(file).replace(/\.[cm]?[jt]sx?$/, "") + ".mjs");
    let text = js.text.replace(/\/\/# sourceMappingURL=.*\s*$/, "");
    if (map) {
      // Sources relative to the written module, so that mapped frames name the kernel file.
      const m = JSON.parse(map.text) as { sources: string[] };
      m.sources = m.sources.map((s) => relative(dir, resolvePath(dirname(js.path), s)));
      const b64 = Buffer.from(JSON.stringify(m)).toString("base64");
      text += `\n//# sourceMappingURL=data:application/json;base64,${b64}\n`;
    }
    writeFileSync(out, text);
    const mapping = process.sourceMapsEnabled;
    process.setSourceMapsEnabled(true);
    try {
      return (await import(/* @vite-ignore */ pathToFileURL(out).href)) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof Error && e.name === "TirxError") throw e;
      throw new LoadError(e instanceof Error ? e.message : String(e), locationIn(e, file), e);
    } finally {
      process.setSourceMapsEnabled(mapping);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The first stack frame of `e` in `file`, if any. */
function locationIn(e: unknown, file: string): LoadError["location"] {
  const stack = e instanceof Error ? (e.stack ?? "") : "";
  const url = pathToFileURL(file).href;
  for (const line of stack.split("\n")) {
    for (const name of [url, file]) {
      const i = line.indexOf(name + ":");
      if (i < 0) continue;
      const m = /^:(\d+):(\d+)/.exec(line.slice(i + name.length));
      if (m) return { file, line: Number(m[1]), col: Number(m[2]) };
    }
  }
  return undefined;
}
