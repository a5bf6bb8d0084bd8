import { parseArgs } from "node:util";
import { join, resolve } from "node:path";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { codeFrameColumns } from "@babel/code-frame";
import {
  isTirxError,
  renderDiagnostic,
  runPipeline,
  verify,
  type PrimFunc,
  type TirxError,
} from "@tirx-ts/core";
import { ARCHS, emitPtx, PTX_PASSES } from "@tirx-ts/codegen-ptx";
import { printScriptModule } from "@tirx-ts/dsl";
import { LoadError, loadKernelFile } from "./load.js";
import { traceRun } from "./trace.js";
import { layoutRun } from "./layout.js";

/** Stage names `--after` accepts: the verifier, then every pass `emitPtx` runs. */
const STAGES = ["verify", ...PTX_PASSES.map((p) => p.name)];

const USAGE = `usage: tirx build <file.ts> [--kernel NAME] [--emit ptx|ir|script [--after PASS]] [--arch SM]
       tirx trace <file.ts> --kernel NAME [--out trace.json] [--args n=64,k=2]
       tirx layout <file.ts> --kernel NAME [--out DIR] [--args n=64,k=2]
       tirx --version

  build prints the PTX (default) or the IR of the kernels that <file.ts> exports. The IR is a
  script-mode TypeScript module (T.prim_func, formatted with prettier): saved to a file,
  \`tirx build\` accepts it again. --emit script is the same.
  --kernel NAME   only the kernel named NAME (its T.function name or export name)
  --emit ptx|ir|script  what to print (default ptx)
  --after PASS    with --emit ir: the IR after that stage, one of
                  ${STAGES.join(", ")} (default: as written)
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

  Exit codes: 0 ok; 1 the kernel file does not load, exports no kernels, or a kernel has errors (a
  kernel needing a newer --arch than given, and hazards that trace or layout report, included); 2 usage
  errors (unknown option, command, --emit, --after, --arch or --args, a missing file or more than
  one, a --kernel the file does not export, trace or layout of a file with several kernels and no
  --kernel).
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

function isPrimFunc(x: unknown): x is PrimFunc {
  return typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";
}

/**
 * The `tirx` command line. Returns the exit code: 0 ok, 1 kernel errors (including a file that
 * does not load or exports no kernel, a kernel needing a newer arch than `--arch`, and hazard
 * reports of `trace`), 2 usage errors (including an `--arch` outside the accepted targets, a
 * missing file, and a `--kernel` the file does not export). Every usage error prints its reason.
 */
export async function main(argv: readonly string[], io: CliIO = PROCESS_IO): Promise<number> {
  const color = io.color ?? (io === PROCESS_IO && process.stderr.isTTY);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        kernel: { type: "string" },
        emit: { type: "string", default: "ptx" },
        after: { type: "string" },
        arch: { type: "string" },
        out: { type: "string" },
        args: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
    });
  } catch (e) {
    io.err(`tirx: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.version) {
    io.out(`tirx-ts ${version()}\n`);
    return 0;
  }
  if (values.help) {
    io.out(USAGE + "\n");
    return 0;
  }
  const [cmd, file, ...rest] = positionals;
  const usageError = (reason: string): number => {
    io.err(`tirx: ${reason}\n${USAGE}\n`);
    return 2;
  };
  if (cmd === undefined) return usageError("no command given; expected build, trace or layout");
  if (cmd !== "build" && cmd !== "trace" && cmd !== "layout") {
    return usageError(`unknown command "${cmd}"; expected build, trace or layout`);
  }
  if (!file) return usageError(`${cmd}: no kernel file given`);
  if (rest.length > 0) {
    return usageError(`${cmd}: one kernel file expected, got ${1 + rest.length}`);
  }
  let scalars: Record<string, number> = {};
  if (cmd === "trace" || cmd === "layout") {
    const parsedArgs = parseScalars(values.args ?? "");
    if (typeof parsedArgs === "string") {
      io.err(`tirx: --args: ${parsedArgs}\n`);
      return 2;
    }
    scalars = parsedArgs;
  }
  if (values.emit !== "ptx" && values.emit !== "ir" && values.emit !== "script") {
    io.err(`tirx: --emit must be "ptx", "ir" or "script", got "${values.emit}"\n`);
    return 2;
  }
  if (values.after !== undefined && (values.emit === "ptx" || !STAGES.includes(values.after))) {
    io.err(
      values.emit === "ptx"
        ? `tirx: --after needs --emit ir\n${USAGE}\n`
        : `tirx: unknown pass "${values.after}"; --after takes one of: ${STAGES.join(", ")}\n${USAGE}\n`,
    );
    return 2;
  }
  const arch = values.arch;
  if (arch !== undefined && !ARCHS.some((a) => a.name === arch)) {
    io.err(`tirx: unknown --arch "${arch}"; accepted: ${ARCHS.map((a) => a.name).join(", ")}\n`);
    return 2;
  }
  const path = resolve(file);
  if (!existsSync(path)) {
    io.err(`tirx: no such file: ${file}\n`);
    return 2;
  }
  const report = (e: TirxError): number => {
    io.err(renderDiagnostic(e, { color, cwd: process.cwd() }) + "\n");
    return 1;
  };
  let mod: Record<string, unknown>;
  try {
    mod = await loadKernelFile(path);
  } catch (e) {
    if (isTirxError(e)) return report(e as TirxError);
    if (!(e instanceof LoadError)) throw e;
    // A syntax error or an exception of the author's own code while the file loads.
    const loc = e.location;
    const where = loc ? `${file}:${loc.line}:${loc.col}: ` : `${file}: `;
    let text = `${where}error: cannot load the file: ${e.message}\n`;
    if (loc) {
      try {
        const source = readFileSync(loc.file, "utf8");
        const f = codeFrameColumns(
          source,
          { start: { line: loc.line, column: loc.col } },
          {
            highlightCode: color,
            linesAbove: 1,
            linesBelow: 1,
          },
        );
        text += f + "\n";
      } catch {
        // no frame when the file cannot be read again
      }
    }
    io.err(text);
    if (process.env["TIRX_DEBUG"] && e.thrown instanceof Error) io.err(`${e.thrown.stack ?? ""}\n`);
    return 1;
  }
  try {
    let kernels = Object.entries(mod).filter((e): e is [string, PrimFunc] => isPrimFunc(e[1]));
    if (values.kernel) {
      kernels = kernels.filter(([k, f]) => k === values.kernel || f.name === values.kernel);
    }
    if (kernels.length === 0 && values.kernel) {
      // A name the file does not have is the caller's mistake (exit 2), unlike a file of no kernels.
      const all = Object.entries(mod).filter((e): e is [string, PrimFunc] => isPrimFunc(e[1]));
      const names = [...new Set(all.map(([, f]) => f.name))];
      io.err(
        `tirx: ${file} exports no kernel named "${values.kernel}"; ` +
          (names.length > 0
            ? `its kernels: ${names.join(", ")}\n`
            : `it exports no kernels (export the result of T.function)\n`),
      );
      return 2;
    }
    if (kernels.length === 0) {
      io.err(`tirx: ${file} exports no kernels (export the result of T.function)\n`);
      return 1;
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
        io.err(
          `tirx: ${file} exports ${fns.length} kernels; name one with --kernel (${fns.map((f) => f.name).join(", ")})\n`,
        );
        return 2;
      }
      if (cmd === "layout") {
        const dir = values.out ?? `layout-${fns[0]!.name}`;
        const { pictures, reports } = layoutRun(fns[0]!, scalars);
        if (pictures.length === 0) {
          // Not an error: the kernel is fine, it has nothing layout draws (exit 0, like a build).
          io.out(
            `tirx layout: nothing to draw: "${fns[0]!.name}" executed no cp.async tile.apply, ldmatrix or stmatrix (the instructions layout draws) in the simulated launch; no SVG written, ${dir} not created\n`,
          );
          return printHazards(reports, fns[0]!.name, "the pictures are of this run");
        }
        mkdirSync(dir, { recursive: true });
        const used = new Map<string, number>();
        for (const p of pictures) {
          const k = (used.get(p.name) ?? 0) + 1;
          used.set(p.name, k);
          const f = join(dir, `${p.name}${k > 1 ? `-${k}` : ""}.svg`);
          writeFileSync(f, p.svg + "\n");
          io.out(
            `${f}: ${p.op}, ${p.warpInstructions} warp instructions, ${p.wavefronts} wavefronts / ${p.phases} phases (${p.wavefronts - p.phases} from bank conflicts)\n`,
          );
        }
        return printHazards(reports, fns[0]!.name, "the pictures are of this run");
      }
      const { trace, reports } = traceRun(fns[0]!, scalars);
      const json = JSON.stringify(trace);
      if (values.out) writeFileSync(values.out, json + "\n");
      else io.out(json + "\n");
      return printHazards(
        reports,
        fns[0]!.name,
        `the trace${values.out ? ` (${values.out})` : ""} lists them in otherData.hazards`,
      );
    }
    const seen = new Set<PrimFunc>();
    // --emit ir (and script) prints one script-mode TypeScript module (one import, one
    // T.prim_func per kernel) that `tirx build` accepts again.
    const irs: PrimFunc[] = [];
    const headers: string[] = [];
    for (const [, fn] of kernels) {
      if (seen.has(fn)) continue;
      seen.add(fn);
      const vf = verify(fn);
      if (values.emit !== "ptx" && values.after !== undefined) {
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
        irs.push(out.fn);
      } else if (values.emit !== "ptx") irs.push(fn);
      else io.out(emitPtx(vf, arch !== undefined ? { arch } : {}).text);
    }
    if (irs.length > 0) {
      const text = await printScriptModule(irs);
      io.out(headers.map((h) => h + "\n").join("") + text);
    }
    return 0;
  } catch (e) {
    if (isTirxError(e)) return report(e as TirxError);
    throw e;
  }
}

/** `n=64,k=2` as numbers by name, or the reason it is malformed. */
function parseScalars(text: string): Record<string, number> | string {
  const out: Record<string, number> = {};
  for (const part of text.split(",").filter((p) => p.trim() !== "")) {
    const m = /^\s*([A-Za-z_$][\w$]*)\s*=\s*(-?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?)\s*$/i.exec(part);
    if (!m) return `expected name=number, got "${part}"`;
    out[m[1]!] = Number(m[2]);
  }
  return out;
}
