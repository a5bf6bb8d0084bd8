import {
  accessSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  statSync,
  writeFileSync,
  type Stats,
} from "node:fs";
import { dirname, extname, join, resolve } from "node:path";
import { TirxError } from "@tirx-ts/core";
import { ensureDir } from "@tirx-ts/runtime-cuda";

/** The extensions of a kernel file: what esbuild loads as TypeScript or JavaScript. */
export const KERNEL_EXTENSIONS = [".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx"];

/** Node's errno code of a file-system error (`"ENOENT"`, ...). */
const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code;

/** Why a file-system call failed, in words, from its errno code (Node's `error.code`). */
function reason(e: unknown): string {
  switch (errno(e)) {
    case "ENOENT":
      return "no such file or folder";
    case "ENOTDIR":
      return "a part of the path is a file, not a folder";
    case "EACCES":
    case "EPERM":
      return "permission denied";
    case "EISDIR":
      return "it is a folder";
    case "EROFS":
      return "the file system is read-only";
    case "ENOSPC":
    case "EDQUOT":
      return "no space left on the device";
    case "ENAMETOOLONG":
      return "the name is too long";
    case "ELOOP":
      return "too many symbolic links";
    case "EEXIST":
      return "it exists and is not a folder";
    default:
      return e instanceof Error ? e.message : String(e);
  }
}

/** `statSync(path)`, or the error it threw. */
function stat(path: string): { st: Stats; error?: undefined } | { st?: undefined; error: unknown } {
  try {
    return { st: statSync(path) };
  } catch (error) {
    return { error };
  }
}

/**
 * The absolute path of the kernel file `file` named on the command line, after checking that it
 * can be loaded: it exists, is a regular file (not a folder, a device or a dangling link), has
 * a TypeScript or JavaScript extension ({@link KERNEL_EXTENSIONS}) and can be opened for reading.
 * @throws TirxError TX8002 naming what is wrong.
 */
export function checkKernelFile(file: string): string {
  const path = resolve(file);
  const bad = (why: string): never => {
    throw new TirxError("TX8002", `${file}: ${why}`);
  };
  const { st: s, error } = stat(path);
  if (!s) {
    if (errno(error) === "ENOENT") {
      let dangling = false;
      try {
        dangling = lstatSync(path).isSymbolicLink();
      } catch {
        // no link either
      }
      return bad(dangling ? "a symbolic link to a file that does not exist" : "no such file");
    }
    return bad(`cannot be read: ${reason(error)}`);
  }
  if (s.isDirectory()) bad("is a folder, not a kernel file");
  if (!s.isFile()) bad("is not a regular file (a kernel file is a .ts or .js file)");
  const ext = extname(path).toLowerCase();
  if (!KERNEL_EXTENSIONS.includes(ext)) {
    bad(
      `a kernel file is TypeScript or JavaScript (${KERNEL_EXTENSIONS.join(", ")}), not ${ext === "" ? "a file without an extension" : ext}`,
    );
  }
  try {
    closeSync(openSync(path, "r"));
  } catch (e) {
    bad(`cannot be read: ${reason(e)}`);
  }
  return path;
}

/**
 * Check, before a run, that `tirx trace --out FILE` (or `tirx layout --tile ... --out FILE`)
 * can write `out`: not a folder, not the kernel file `input` (an absolute path, when there is one)
 * itself, and in an existing folder that may be written
 * to (the file itself, when it exists, too).
 * @throws TirxError TX8003.
 */
export function checkOutFile(out: string, input?: string): void {
  const bad = (why: string): never => {
    throw new TirxError("TX8003", `--out ${out}: ${why}`);
  };
  const path = resolve(out);
  const { st } = stat(path);
  if (st) {
    if (
      input !== undefined &&
      st.isFile() &&
      st.ino === statSync(input).ino &&
      st.dev === statSync(input).dev
    ) {
      bad("is the kernel file; the trace would overwrite it");
    }
    if (st.isDirectory()) {
      bad(`is a folder; trace writes one file (for example --out ${join(out, "trace.json")})`);
    }
    try {
      accessSync(path, constants.W_OK);
    } catch (e) {
      bad(`cannot be written: ${reason(e)}`);
    }
    return;
  }
  const parent = dirname(path);
  const { st: pst, error } = stat(parent);
  if (!pst) return bad(`its folder ${parent} cannot be used: ${reason(error)}`);
  if (!pst.isDirectory()) bad(`${parent} is not a folder`);
  try {
    accessSync(parent, constants.W_OK);
  } catch (e) {
    bad(`its folder ${parent} cannot be written: ${reason(e)}`);
  }
}

/**
 * Check, before a run, that `tirx layout --out DIR` can make `dir` its folder: an existing
 * folder, or a path whose nearest existing ancestor is a folder that may be written to.
 * @throws TirxError TX8003.
 */
export function checkOutDir(dir: string): void {
  const bad = (why: string): never => {
    throw new TirxError("TX8003", `--out ${dir}: ${why}`);
  };
  let path = resolve(dir);
  let found = stat(path);
  if (found.st) {
    if (!found.st.isDirectory()) bad("is a file; layout writes a folder of SVG files");
  } else {
    // The nearest ancestor that exists must be a folder we may create folders in.
    const missing = (e: unknown): boolean => errno(e) === "ENOENT" || errno(e) === "ENOTDIR";
    while (missing(found.error) && dirname(path) !== path) {
      path = dirname(path);
      found = stat(path);
    }
    if (!found.st) return bad(`cannot be created: ${reason(found.error)}`);
    if (!found.st.isDirectory()) bad(`cannot be created: ${path} is a file`);
  }
  try {
    accessSync(path, constants.W_OK);
  } catch (e) {
    bad(`cannot be written: ${reason(e)}`);
  }
}

/**
 * Write `text` to `path` for option `option` (`--out`).
 * @throws TirxError TX8003 when the file system refuses.
 */
export function writeOut(option: string, path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new TirxError("TX8003", `${option} ${path}: cannot be written: ${reason(e)}`);
  }
}

/**
 * Create the folder `dir` (and its missing parents) for option `option`.
 * @throws TirxError TX8003 when the file system refuses.
 */
export function makeOutDir(option: string, dir: string): void {
  // Bounded (runtime-cuda's ensureDir): mkdirSync's recursion loops forever on procfs.
  if (ensureDir(dir)) return;
  let why = "a parent is not a folder, or the file system refuses";
  try {
    mkdirSync(dir); // only for the file system's reason
  } catch (e) {
    why = reason(e);
  }
  throw new TirxError("TX8003", `${option} ${dir}: cannot be created: ${why}`);
}
