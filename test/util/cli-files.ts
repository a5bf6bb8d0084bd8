// Files for the `tirx` command's tests: small kernels, files that fail to load in each way, and
// paths that are no kernel files, written into one folder inside the repository (so that
// `tirx-ts` resolves), and an in-process runner of the command.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { main } from "../../packages/tirx-ts/src/cli.js";

export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A new folder `test/.printed/<prefix>-XXXXXX` (gitignored, inside the repository so that
 * `tirx-ts` resolves; its own name, so that test runs side by side do not share it).
 */
export function printedDir(prefix: string): string {
  const printed = join(repoRoot, "test", ".printed");
  mkdirSync(printed, { recursive: true });
  return mkdtempSync(join(printed, `${prefix}-`));
}

/** A kernel of 32 threads storing `value` into `A` (float32 [32]). */
const small = (name: string, value: number): string =>
  `export const ${name} = T.function("${name}", { A: T.Tensor([32], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  A.set([T.cuda.thread_idx("x")], T.float32(${value}));
});
`;

const IMPORT = `import { T } from "tirx-ts";\n`;

/** File names (relative to the folder) by what they hold. */
export const CLI_FILES = {
  /** One kernel, `one`. */
  one: "one.ts",
  /** Two kernels, `first` and `second`. */
  two: "two.ts",
  /** `vadd` with a scalar `n` and tensors of the symbolic extent n (guarded). */
  symbolic: "symbolic.ts",
  /** A kernel whose simulated run has a hazard (trace and layout exit 1). */
  hazard: "hazard.ts",
  /** A kernel after a top-level await of a timer that fires (loads fine). */
  awaitsTimer: "awaits_timer.ts",
  /** A top-level await of a promise nothing resolves. */
  awaitsForever: "awaits_forever.ts",
  /** The same, in a file the kernel file imports. */
  importsAwaitsForever: "imports_awaits_forever.ts",
  /** Top-level code that throws an Error. */
  throws: "throws.ts",
  /** Top-level code that throws a number. */
  throwsValue: "throws_value.ts",
  /** A T.* misuse at the top level (a TirxError while loading). */
  tirxError: "tirx_error.ts",
  /** A syntax error. */
  syntax: "syntax.ts",
  /** An import of a package that is not installed (line 2). */
  missingPackage: "missing_package.ts",
  /** A module that exports no kernel. */
  noKernels: "no_kernels.ts",
  /** An empty file. */
  empty: "empty.ts",
  /** A JSON file. */
  json: "data.json",
  /** A text file. */
  text: "notes.txt",
  /** A folder named like a kernel file. */
  folder: "folder.ts",
  /** A path that does not exist. */
  missing: "missing.ts",
  /** A symbolic link to a file that does not exist. */
  dangling: "dangling.ts",
  /** A kernel file used as a folder on the way to another path. */
  underFile: "one.ts/inside.ts",
} as const;

/** Write every file of CLI_FILES into `dir` (created, emptied first). */
export function writeCliFiles(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const w = (name: string, text: string) => writeFileSync(join(dir, name), text);
  w(CLI_FILES.one, IMPORT + small("one", 1));
  w(CLI_FILES.two, IMPORT + small("first", 1) + small("second", 2));
  w(
    CLI_FILES.symbolic,
    IMPORT +
      `export const vadd = T.function(
  "vadd",
  { n: T.int32, A: T.Tensor(["n"], "float32"), C: T.Tensor(["n"], "float32") },
  ({ n, A, C }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 32)], block: 32 }) });
    const i = T.cuda.block_idx("x").mul(32).add(T.cuda.thread_idx("x"));
    T.if_(i.lt(n), () => C.set([i], A.get([i]).add(T.float32(1))));
  },
);
`,
  );
  w(
    CLI_FILES.hazard,
    IMPORT +
      `export const racy = T.function("racy", { A: T.Tensor([32], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
  const t = T.cuda.thread_idx("x");
  const s = T.alloc_shared([32], "float32", { name: "s" });
  s.set([t], T.float32(1));
  A.set([t], s.get([t.add(1).mod(32)])); // no cta_sync between the write and the read
});
`,
  );
  w(
    CLI_FILES.awaitsTimer,
    IMPORT + `await new Promise((resolve) => setTimeout(resolve, 5));\n` + small("after_timer", 3),
  );
  w(CLI_FILES.awaitsForever, IMPORT + `await new Promise(() => {});\n` + small("never", 4));
  w("forever_helper.ts", `await new Promise(() => {});\nexport const x = 1;\n`);
  w(
    CLI_FILES.importsAwaitsForever,
    IMPORT + `import { x } from "./forever_helper.js";\n` + small("never_either", 5) + `void x;\n`,
  );
  w(CLI_FILES.throws, `throw new Error("this kernel file fails on purpose");\n`);
  w(CLI_FILES.throwsValue, `throw 42;\n`);
  w(CLI_FILES.tirxError, IMPORT + `T.float32("one" as unknown as number);\n`);
  w(CLI_FILES.syntax, `export const x = ;\n`);
  w(
    CLI_FILES.missingPackage,
    IMPORT + `import { x } from "tirx-tss-not-installed";\nexport const y = x;\n`,
  );
  w(CLI_FILES.noKernels, `export const answer = 42;\nexport default { kind: "not a kernel" };\n`);
  w(CLI_FILES.empty, ``);
  w(CLI_FILES.json, `{ "kind": "PrimFunc" }\n`);
  w(CLI_FILES.text, `not a kernel\n`);
  mkdirSync(join(dir, CLI_FILES.folder));
  symlinkSync(join(dir, "nowhere.ts"), join(dir, CLI_FILES.dangling));
}

/** What one in-process run of the command gave. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Run `tirx ...args` in-process with `cwd` as the working folder. */
export async function runCli(args: readonly string[], cwd: string): Promise<CliRun> {
  let out = "";
  let err = "";
  const saved = process.cwd();
  process.chdir(cwd);
  try {
    const code = await main(args, {
      out: (t) => void (out += t),
      err: (t) => void (err += t),
      color: false,
    });
    return { code, out, err };
  } finally {
    process.chdir(saved);
  }
}
