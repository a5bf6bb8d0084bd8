import { parseArgs } from "node:util";
import { join } from "node:path";
import { readFileSync } from "node:fs";
import {
  ARCHS,
  archNamed,
  countLine,
  didYouMean,
  invariant,
  isTirxError,
  MAX_DIAGNOSTICS,
  renderDiagnostic,
  renderDiagnostics,
  runPipeline,
  sortDiagnostics,
  TirxError,
  verify,
  withFileText,
  type DiagnosticCode,
  type PrimFunc,
} from "@tirx-ts/core";
import { emitPtx, PTX_PASSES } from "@tirx-ts/codegen-ptx";
import { explainTile, printScriptModule } from "@tirx-ts/dsl";
import { LoadError, loadKernelFile } from "./load.js";
import { traceRun } from "./trace.js";
import { layoutRun } from "./layout.js";
import { drawLayoutCommand, LAYOUT_SPEC_OPTIONS, LAYOUT_SPEC_USAGE } from "./layout-command.js";
import { checkKernelFile, checkOutDir, checkOutFile, makeOutDir, writeOut } from "./cli-paths.js";

/** Stage names `--after` accepts: the verifier, then every pass `emitPtx` runs. */
const STAGES = ["verify", ...PTX_PASSES.map((p) => p.name)];

const USAGE = `usage: tirx build <file.ts> [--kernel NAME] [--emit ptx|ir|script [--after PASS]] [--arch SM] [--explain]
       tirx trace <file.ts> --kernel NAME [--out trace.json] [--args n=64,k=2]
       tirx layout <file.ts> --kernel NAME [--out DIR] [--args n=64,k=2]
       tirx layout (--tile NOTATION | --builtin NAME | <file.ts> --layout NAME)
                   [--shape DIMS] [--dtype DT] [--swizzle SW] [--out FILE.svg | DIR/]
       tirx --version

  build prints the PTX (default) or the IR of the kernels that <file.ts> exports. The IR is a
  script-mode TypeScript module (T.prim_func, formatted with prettier): saved to a file,
  \`tirx build\` accepts it again. --emit script is the same.
  --kernel NAME   only the kernel named NAME (its T.function name or export name)
  --emit ptx|ir|script  what to print (default ptx)
  --after PASS    with --emit ir: the IR after that stage, one of
                  ${STAGES.join(", ")} (default: as written)
  --explain       before each kernel's PTX (with --emit ir or script: at the top of the module),
                  one comment line per T.tile call: the instructions its layouts chose and why
                  (file:line T.tile.cta.sum → shfl.sync.bfly ×5 + ...)
  --arch SM       PTX target: sm_80, sm_86, sm_87, sm_89, sm_90, sm_90a. Default: the lowest
                  the kernel needs (sm_80; sm_90 for cp.async.bulk, TMA, mbarrier transaction
                  counts, async-proxy fences, stmatrix and clusters; sm_90a for wgmma,
                  setmaxnreg and TMA multicast)

  trace runs the kernel on the simulator and writes a Chrome / Perfetto trace (JSON; open it in
  ui.perfetto.dev): per CTA and warp, cp.async groups, waits, barrier and mbarrier phases, on a
  logical clock (statements executed). Tensors hold the pattern i % 251; scalars are 1 unless
  --args sets them (a symbolic dim takes the scalar of its name).
  --out FILE      where to write the trace (default: stdout)
  --args LIST     scalar arguments, name=value separated by commas
  The simulator's hazard reports (TX6xxx: a read before its cp.async wait, an accumulator read
  before wgmma.wait_group, ...) are printed on stderr as diagnostics, each distinct one once, and
  listed in the trace's otherData.hazards; the trace is written all the same, and trace exits 1.

  layout runs the kernel on the simulator (arguments as for trace) and writes one SVG per
  cp.async tile.apply and ldmatrix/stmatrix into DIR (default: layout-<kernel>): which (warp,
  lane) moves which bytes of dst and src in the statement's first execution in CTA 0, shared
  bytes drawn over the 32 banks, moves of a phase with a bank conflict outlined in red. It
  prints each statement's shared wavefronts against its phases (the excess: bank conflicts).
  A kernel that executes none of these instructions gets a line saying so, no DIR, and exit 0.
  Hazard reports of the run are printed as for trace, and layout then exits 1.

${LAYOUT_SPEC_USAGE}

  Every error is a diagnostic with a code (TX8xxx for the command line and its files).
  Exit codes: 0 ok; 1 the kernel file does not load (TX8004; TX8005 for a top-level await that
  never settles), exports no kernels (TX8006), or a kernel has errors (a kernel needing a newer
  --arch than given, and hazards that trace or layout report, included); 2 usage errors
  (TX8001: unknown option, command, --emit, --after, --arch or --args, an option given twice,
  without a value or not taken by the command, more than one file), a kernel file that is
  missing, not a regular .ts/.js file or unreadable (TX8002), an --out path that cannot be
  written (TX8003), a --kernel the file does not export and trace or layout of a file with
  several kernels and no --kernel (TX8007), a layout to draw that is not given right (TX8008:
  notation that does not parse, an unknown built-in, a --shape it does not group by, a --shape
  dim below 1 or a --swizzle out of range, each naming the value and its range); 70 an
  internal error of tirx-ts (a bug: please report it).
  Set TIRX_DEBUG=1 for the stack of an error raised while the file loads.`;

/** The package version, from tirx-ts's package.json. */
export function version(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
    version: string;
  };
  return pkg.version;
}

/** Where the CLI writes: stdout and stderr (a test passes its own). */
export interface CliIO {
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** Whether to color diagnostics (default: stderr is a terminal). */
  readonly color?: boolean;
}

const PROCESS_IO: CliIO = {
  out: (t) => void process.stdout.write(t),
  err: (t) => void process.stderr.write(t),
};

/** Diagnostics of the caller's command line and paths: exit code 2; every other one exits 1. */
/**
 * What a usage error (TX8001) prints under its one line: the commands' synopsis, not the whole
 * help (80 lines that buried the error above them).
 */
const SYNOPSIS = `${USAGE.slice(0, USAGE.indexOf("\n\n"))}\n(tirx --help describes every option)`;

const USAGE_EXIT: readonly DiagnosticCode[] = ["TX8001", "TX8002", "TX8003", "TX8007", "TX8008"];

/** The exit code of an internal error (a bug in tirx-ts): sysexits' EX_SOFTWARE. */
const INTERNAL_EXIT = 70;

/** The options of each command (`help` and `version` are taken everywhere). */
const OPTIONS = {
  build: ["kernel", "emit", "after", "arch", "explain"],
  trace: ["kernel", "out", "args"],
  layout: ["kernel", "out", "args", ...LAYOUT_SPEC_OPTIONS],
} as const;

function isPrimFunc(x: unknown): x is PrimFunc {
  return typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";
}

const usage = (message: string): never => {
  throw new TirxError("TX8001", message);
};

/**
 * The `tirx` command line. Returns the exit code: 0 ok; 1 when the kernel file does not load
 * (TX8004, TX8005), exports no kernel (TX8006) or a kernel has errors (including a kernel
 * needing a newer arch than `--arch`, and hazard reports of `trace` and `layout`); 2 for the
 * caller's mistakes (TX8001 usage, TX8002 the kernel file, TX8003 an `--out` path, TX8007
 * `--kernel`); 70 for an internal error. Every failure prints a coded diagnostic; nothing is
 * thrown.
 */
export async function main(argv: readonly string[], io: CliIO = PROCESS_IO): Promise<number> {
  const color = io.color ?? (io === PROCESS_IO && process.stderr.isTTY);
  if (io === PROCESS_IO) watchStdout();
  try {
    return await run(argv, io, color);
  } catch (e) {
    if (isTirxError(e)) {
      const spanless = e.span === undefined;
      io.err(
        (spanless ? "tirx: " : "") +
          renderDiagnostics(e, { color, cwd: process.cwd() }) +
          "\n" +
          (e.code === "TX8001" ? `${SYNOPSIS}\n` : ""),
      );
      return USAGE_EXIT.includes(e.code) ? 2 : 1;
    }
    const err = e instanceof Error ? e : undefined;
    io.err(
      `tirx: internal error (a bug in tirx-ts; please report it with the command line): ${err ? `${err.name}: ${err.message}` : String(e)}\n` +
        (process.env["TIRX_DEBUG"] && err?.stack ? `${err.stack}\n` : ""),
    );
    return INTERNAL_EXIT;
  }
}

let stdoutWatched = false;

/**
 * Turn errors of writing to stdout into a diagnostic: a reader that stopped reading (EPIPE:
 * `tirx build k.ts | head`) ends the command quietly; any other (a full disk under `> k.ptx`)
 * is TX8003 and exit 2.
 */
function watchStdout(): void {
  if (stdoutWatched) return;
  stdoutWatched = true;
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(0);
    process.stderr.write(
      `tirx: ${renderDiagnostic(new TirxError("TX8003", `standard output cannot be written: ${e.message}`))}\n`,
    );
    process.exit(2);
  });
}

/** The command line's options, as parseArgs takes them. */
const ARG_OPTIONS = {
  kernel: { type: "string" },
  emit: { type: "string" },
  after: { type: "string" },
  arch: { type: "string" },
  out: { type: "string" },
  args: { type: "string" },
  tile: { type: "string" },
  builtin: { type: "string" },
  layout: { type: "string" },
  shape: { type: "string" },
  dtype: { type: "string" },
  swizzle: { type: "string" },
  explain: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

/** The options that take a value (the string ones of {@link ARG_OPTIONS}). */
const VALUE_OPTIONS: ReadonlySet<string> = new Set(
  Object.entries(ARG_OPTIONS).flatMap(([name, o]) => (o.type === "string" ? [name] : [])),
);

/**
 * `--shape -4,8` as `--shape=-4,8`: parseArgs takes a value starting with "-" for an option
 * ("argument is ambiguous"), but a negative number names no option, so it is the value; the
 * option's own check then says what range it takes (`--shape -4,8: dim 0 is -4, ...`).
 */
function joinNegativeValues(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const next = argv[i + 1];
    if (
      VALUE_OPTIONS.has(a.replace(/^--/, "")) &&
      a.startsWith("--") &&
      next !== undefined &&
      /^-\d/.test(next)
    ) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

/**
 * parseArgs' unknown-option error (ERR_PARSE_ARGS_UNKNOWN_OPTION) as one line naming the option
 * and the nearest known one (`unknown option "--emti"; did you mean "--emit"?`), else the list of
 * options; undefined for any other error.
 */
function unknownOption(e: unknown): string | undefined {
  if ((e as { code?: unknown } | null)?.code !== "ERR_PARSE_ARGS_UNKNOWN_OPTION") return undefined;
  const given = /'([^']+)'/.exec((e as Error).message)?.[1];
  if (given === undefined) return undefined;
  const names = Object.keys(ARG_OPTIONS).map((n) => `--${n}`);
  const guess = didYouMean(given.replace(/=.*$/, ""), names);
  return `unknown option ${JSON.stringify(given)}; ${guess ? `did you mean "${guess}"?` : `the options are ${names.join(", ")}`}`;
}

async function run(argv: readonly string[], io: CliIO, color: boolean): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv),
      allowPositionals: true,
      tokens: true,
      options: ARG_OPTIONS,
    });
  } catch (e) {
    return usage(unknownOption(e) ?? (e as Error).message);
  }
  const { values, positionals, tokens } = parsed;
  if (values.version) {
    io.out(`tirx-ts ${version()}\n`);
    return 0;
  }
  if (values.help) {
    io.out(USAGE + "\n");
    return 0;
  }
  const [cmd, file, ...rest] = positionals;
  if (cmd === undefined) return usage("no command given; expected build, trace or layout");
  if (cmd !== "build" && cmd !== "trace" && cmd !== "layout") {
    const guess = didYouMean(cmd, ["build", "trace", "layout"]);
    return usage(
      `unknown command ${JSON.stringify(cmd)}; expected build, trace or layout${guess ? ` (did you mean "${guess}"?)` : ""}`,
    );
  }
  // `tirx layout --tile / --builtin / FILE --layout` draws one TileLayout, not a kernel's accesses.
  const drawsLayout =
    cmd === "layout" &&
    (values.tile !== undefined || values.builtin !== undefined || values.layout !== undefined);
  if (!file && !drawsLayout) {
    return usage(
      cmd === "layout"
        ? "layout: no kernel file given (or --tile, --builtin, or FILE --layout NAME to draw a TileLayout)"
        : `${cmd}: no kernel file given`,
    );
  }
  if (rest.length > 0) return usage(`${cmd}: one kernel file expected, got ${1 + rest.length}`);
  const given = new Set<string>();
  for (const t of tokens) {
    if (t.kind !== "option" || t.name === "help" || t.name === "version") continue;
    if (given.has(t.name)) usage(`--${t.name} is given more than once`);
    given.add(t.name);
    if (!(OPTIONS[cmd] as readonly string[]).includes(t.name)) {
      const takers = Object.entries(OPTIONS)
        .filter(([, o]) => (o as readonly string[]).includes(t.name))
        .map(([c]) => c);
      usage(
        `${cmd} takes no --${t.name} (${takers.join(" and ")} ${takers.length > 1 ? "do" : "does"})`,
      );
    }
    if (t.value === "") usage(`--${t.name} needs a value`);
  }
  if (drawsLayout) {
    return drawLayoutCommand(values, file, io, (p, f) => load(p, f, io));
  }
  invariant(
    file !== undefined,
    "a command without a file is refused above unless it draws a layout",
  );
  if (cmd === "layout") {
    const spec = LAYOUT_SPEC_OPTIONS.find((o) => given.has(o));
    if (spec !== undefined) {
      usage(
        `--${spec} is for drawing a TileLayout (with --tile, --builtin or --layout), not a kernel's accesses`,
      );
    }
  }
  let scalars: Record<string, number> = {};
  if (values.args !== undefined) {
    const parsedArgs = parseScalars(values.args);
    if (typeof parsedArgs === "string") return usage(`--args: ${parsedArgs}`);
    scalars = parsedArgs;
  }
  const emit = values.emit ?? "ptx";
  if (emit !== "ptx" && emit !== "ir" && emit !== "script") {
    return usage(`--emit must be "ptx", "ir" or "script", got ${JSON.stringify(emit)}`);
  }
  if (values.after !== undefined && emit === "ptx") return usage("--after needs --emit ir");
  if (values.after !== undefined && !STAGES.includes(values.after)) {
    return usage(
      `unknown pass ${JSON.stringify(values.after)}; --after takes one of: ${STAGES.join(", ")}`,
    );
  }
  const arch = values.arch;
  if (arch !== undefined && !archNamed(arch)) {
    return usage(
      `unknown --arch ${JSON.stringify(arch)}; accepted: ${ARCHS.map((a) => a.name).join(", ")}`,
    );
  }
  const path = checkKernelFile(file);
  if (cmd === "trace" && values.out !== undefined) checkOutFile(values.out, path);
  if (cmd === "layout" && values.out !== undefined) checkOutDir(values.out);
  const mod = await load(path, file, io);
  let kernels: [string, PrimFunc][];
  try {
    kernels = Object.entries(mod).filter((e): e is [string, PrimFunc] => isPrimFunc(e[1]));
  } catch (e) {
    if (isTirxError(e)) throw e;
    throw new TirxError("TX8004", `${file}: reading its exports threw: ${String(e)}`);
  }
  const all = kernels;
  if (values.kernel !== undefined) {
    kernels = kernels.filter(([k, f]) => k === values.kernel || f.name === values.kernel);
  }
  if (kernels.length === 0 && values.kernel !== undefined) {
    // A name the file does not have is the caller's mistake (exit 2), unlike a file of no kernels.
    const names = [...new Set(all.map(([, f]) => f.name))];
    throw new TirxError(
      "TX8007",
      `${file} exports no kernel named ${JSON.stringify(values.kernel)}; ` +
        (names.length > 0
          ? `its kernels: ${names.join(", ")}`
          : `it exports no kernels (export the result of T.function)`),
    );
  }
  if (kernels.length === 0) {
    throw new TirxError(
      "TX8006",
      `${file} exports no kernels (export the result of T.function or T.prim_func)`,
    );
  }
  /**
   * Print the simulator's hazard reports of a trace or layout run as diagnostics, each
   * distinct one once (an unrolled statement, or every thread, repeats the same one), and a
   * total; the exit code: 1 when there were any, else 0.
   */
  const printHazards = (reports: readonly TirxError[], kernel: string, where: string): number => {
    if (reports.length === 0) return 0;
    const seen = new Map<string, number>();
    for (const r of reports) {
      const text = renderDiagnostic(r, { color, cwd: process.cwd() });
      seen.set(text, (seen.get(text) ?? 0) + 1);
    }
    for (const [text, n] of seen) {
      io.err(text + (n > 1 ? `\n  note: reported ${n} times in the run` : "") + "\n");
    }
    io.err(
      `tirx: ${reports.length} hazard report${reports.length === 1 ? "" : "s"} (${seen.size} distinct) in the simulated run of "${kernel}"; ${where}\n`,
    );
    return 1;
  };
  if (cmd === "trace" || cmd === "layout") {
    const fns = [...new Set(kernels.map(([, f]) => f))];
    if (fns.length !== 1) {
      throw new TirxError(
        "TX8007",
        `${file} exports ${fns.length} kernels; name one with --kernel (${fns.map((f) => f.name).join(", ")})`,
      );
    }
    const fn = fns[0]!;
    checkScalarNames(fn, scalars);
    if (cmd === "layout") {
      const dir = values.out ?? `layout-${fn.name}`;
      if (values.out === undefined) checkOutDir(dir);
      const { pictures, reports } = layoutRun(fn, scalars);
      if (pictures.length === 0) {
        // Not an error: the kernel is fine, it has nothing layout draws (exit 0, like a build).
        io.out(
          `tirx layout: nothing to draw: "${fn.name}" executed no cp.async tile.apply, ldmatrix or stmatrix (the instructions layout draws) in the simulated launch; no SVG written, ${dir} not created\n`,
        );
        return printHazards(reports, fn.name, "no picture was drawn");
      }
      makeOutDir("--out", dir);
      const used = new Map<string, number>();
      for (const p of pictures) {
        const k = (used.get(p.name) ?? 0) + 1;
        used.set(p.name, k);
        const f = join(dir, `${p.name}${k > 1 ? `-${k}` : ""}.svg`);
        writeOut("--out", f, p.svg + "\n");
        io.out(
          `${f}: ${p.op}, ${p.warpInstructions} warp instructions, ${p.wavefronts} wavefronts / ${p.phases} phases (${p.wavefronts - p.phases} from bank conflicts)\n`,
        );
      }
      return printHazards(reports, fn.name, "the pictures are of this run");
    }
    const { trace, reports } = traceRun(fn, scalars);
    const json = JSON.stringify(trace);
    if (values.out !== undefined) {
      writeOut("--out", values.out, json + "\n");
      // As layout names each file it writes: what was written, where.
      const events = trace.traceEvents.length;
      io.out(
        `${values.out}: the trace of "${fn.name}", ${events} events (open it in chrome://tracing or Perfetto)\n`,
      );
    } else io.out(json + "\n");
    return printHazards(
      reports,
      fn.name,
      `the trace${values.out !== undefined ? ` (${values.out})` : ""} lists them in otherData.hazards`,
    );
  }
  const seen = new Set<PrimFunc>();
  // --emit ir (and script) prints one script-mode TypeScript module (one import, one
  // T.prim_func per kernel) that `tirx build` accepts again.
  const irs: PrimFunc[] = [];
  const headers: string[] = [];
  // Every kernel is checked to the end; once one has errors nothing more is printed on stdout,
  // and the errors of all are printed together at the end.
  const failed = new Map<string, readonly TirxError[]>();
  for (const [, fn] of kernels) {
    if (seen.has(fn)) continue;
    seen.add(fn);
    try {
      build(fn);
    } catch (e) {
      if (!isTirxError(e)) throw e;
      failed.set(fn.name, [...(failed.get(fn.name) ?? []), ...e.all]);
    }
  }
  if (failed.size > 0) {
    printKernelErrors(failed, io, color);
    return 1;
  }
  if (irs.length > 0) {
    const text = await printScriptModule(irs);
    io.out(headers.map((h) => h + "\n").join("") + text);
  }
  return 0;

  /** Verify `fn` and print its PTX, or keep its IR for the module printed at the end. */
  function build(fn: PrimFunc): void {
    const vf = verify(fn);
    if (emit !== "ptx" && values.after !== undefined) {
      const after = values.after;
      const notes: string[] = [];
      const out =
        after === "verify"
          ? vf
          : runPipeline(vf, PTX_PASSES, {
              after,
              onStage: (name, cur, pass) => {
                if (name === after && pass.notes) notes.push(...pass.notes(cur));
              },
            });
      headers.push(`// IR of "${fn.name}" after ${after}`, ...notes.map((n) => `// ${n}`));
      if (values.explain) headers.push(...explainTile(fn).map((l) => `// ${l}`));
      irs.push(out.fn);
    } else if (emit !== "ptx") {
      if (values.explain) headers.push(...explainTile(fn).map((l) => `// ${l}`));
      irs.push(fn);
    } else {
      const text = emitPtx(vf, arch !== undefined ? { arch } : {}).text;
      const why = values.explain ? explainTile(fn).map((l) => `// ${l}\n`) : [];
      if (failed.size === 0) io.out(why.join("") + text);
    }
  }
}

/**
 * Print the errors of the kernels that have some (by kernel name), as esbuild prints a build's
 * messages: all of them, sorted by position, each with its code frame, a blank line between two,
 * then a count line (`tirx: 3 errors in kernel "k"`).
 */
function printKernelErrors(
  failed: ReadonlyMap<string, readonly TirxError[]>,
  io: CliIO,
  color: boolean,
): void {
  const errors = sortDiagnostics([...failed.values()].flat());
  const blocks = errors.map(
    (e) =>
      (e.span === undefined ? "tirx: " : "") + renderDiagnostic(e, { color, cwd: process.cwd() }),
  );
  const names = [...failed.keys()].map((k) => JSON.stringify(k)).join(", ");
  const where = failed.size === 1 ? `kernel ${names}` : `kernels ${names}`;
  const limited = [...failed.values()].some((e) => e.length >= MAX_DIAGNOSTICS);
  io.err(`${blocks.join("\n\n")}\n\ntirx: ${countLine(errors.length, limited)} in ${where}\n`);
}

/**
 * Load the kernel file; a file that does not parse, throws, or awaits forever becomes its
 * diagnostic (TX8004, TX8005) at the location the error names, when it names one.
 */
async function load(path: string, file: string, io: CliIO): Promise<Record<string, unknown>> {
  try {
    return await loadKernelFile(path);
  } catch (e) {
    if (isTirxError(e) || !(e instanceof LoadError)) throw e;
    if (process.env["TIRX_DEBUG"] && e.thrown instanceof Error) {
      io.err(`${e.thrown.stack ?? ""}\n`);
    }
    const loc = e.location;
    const message =
      e.code === "TX8005" ? `${file}: ${e.message}` : `cannot load the file: ${e.message}`;
    throw new TirxError(
      e.code,
      loc ? message : `${file}: ${message}`,
      loc ? withFileText({ file: loc.file, line: loc.line, col: loc.col }) : undefined,
    );
  }
}

/**
 * Check `--args` names against `fn`: each must be a scalar parameter or a symbolic dim, and a
 * symbolic dim's value a non-negative integer (its tensor's extent).
 * @throws TirxError TX8001.
 */
function checkScalarNames(fn: PrimFunc, scalars: Readonly<Record<string, number>>): void {
  const known = new Set<string>();
  const dims = new Map<string, string>();
  for (const p of fn.params) {
    if (p.kind === "scalar") known.add(p.name);
    else {
      for (const d of p.buffer.shape) {
        if (typeof d !== "number") {
          known.add(d.name);
          if (!dims.has(d.name)) dims.set(d.name, p.name);
        }
      }
    }
  }
  for (const [name, v] of Object.entries(scalars)) {
    if (!known.has(name)) {
      usage(
        `--args: "${fn.name}" has no scalar parameter or symbolic dim named ${name}` +
          (known.size > 0 ? ` (it has: ${[...known].join(", ")})` : " (it has none)"),
      );
    }
    const tensor = dims.get(name);
    if (tensor !== undefined && (!Number.isSafeInteger(v) || v < 0)) {
      usage(`--args: ${name} is an extent of "${tensor}", a non-negative integer, not ${v}`);
    }
  }
}

/** `n=64,k=2` as numbers by name, or the reason it is malformed. */
function parseScalars(text: string): Record<string, number> | string {
  const out: Record<string, number> = {};
  for (const part of text.split(",").filter((p) => p.trim() !== "")) {
    const m = /^\s*([A-Za-z_$][\w$]*)\s*=\s*(-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*$/i.exec(part);
    if (!m) return `expected name=number, got "${part}"`;
    const value = Number(m[2]);
    if (!Number.isFinite(value)) return `${m[1]}=${m[2]} is not a finite number`;
    if (Object.hasOwn(out, m[1]!)) return `${m[1]} is given more than once`;
    out[m[1]!] = value;
  }
  return out;
}
