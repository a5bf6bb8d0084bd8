import { parseArgs } from "node:util";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { existsSync, writeFileSync } from "node:fs";
import {
  isTirxError,
  renderDiagnostic,
  runPipeline,
  verify,
  type PrimFunc,
  type TirxError,
} from "@tirx-ts/core";
import { emitPtx, PTX_PASSES } from "@tirx-ts/codegen-ptx";
import { printModuleAsync, printScriptModule } from "@tirx-ts/dsl";
import { traceKernel } from "./trace.js";

/** Stage names `--after` accepts: the verifier, then every pass `emitPtx` runs. */
const STAGES = ["verify", ...PTX_PASSES.map((p) => p.name)];

const USAGE = `usage: tirx build <file.ts> [--kernel NAME] [--emit ptx|ir|script [--after PASS]] [--arch SM]
       tirx trace <file.ts> --kernel NAME [--out trace.json] [--args n=64,k=2]

  Prints the PTX (default) or the IR of the kernels that <file.ts> exports. The IR is a
  TypeScript module in T syntax: saved to a file, \`tirx build\` accepts it again.
  --kernel NAME   only the kernel named NAME (its T.function name or export name)
  --emit ptx|ir|script  what to print (default ptx); script: script-mode TypeScript (T.prim_func)
  --after PASS    with --emit ir: the IR after that stage, one of
                  ${STAGES.join(", ")} (default: as written)
  --arch SM       PTX target: sm_80 (default), sm_86, sm_87, sm_89, sm_90, sm_90a;
                  cp.async.bulk, mbarrier transaction counts and async-proxy fences need sm_90

  trace runs the kernel on the simulator and writes a Chrome / Perfetto trace (JSON; open it in
  ui.perfetto.dev): per CTA and warp, cp.async groups, waits, barrier and mbarrier phases, on a
  logical clock (statements executed). Tensors hold the pattern i % 251; scalars are 1 unless
  --args sets them (a symbolic dim takes the scalar of its name).
  --out FILE      where to write the trace (default: stdout)
  --args LIST     scalar arguments, name=value separated by commas

  Set TIRX_DEBUG=1 for the stack of an error raised while the file loads.`;

function isPrimFunc(x: unknown): x is PrimFunc {
  return typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "PrimFunc";
}

/** The `tirx` command line. Returns the exit code: 0 ok, 1 kernel errors, 2 usage. */
export async function main(argv: readonly string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        kernel: { type: "string" },
        emit: { type: "string", default: "ptx" },
        after: { type: "string" },
        arch: { type: "string", default: "sm_80" },
        out: { type: "string" },
        args: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (e) {
    process.stderr.write(`tirx: ${(e as Error).message}\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(USAGE + "\n");
    return 0;
  }
  const [cmd, file, ...rest] = positionals;
  if ((cmd !== "build" && cmd !== "trace") || !file || rest.length > 0) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let scalars: Record<string, number> = {};
  if (cmd === "trace") {
    const parsedArgs = parseScalars(values.args ?? "");
    if (typeof parsedArgs === "string") {
      process.stderr.write(`tirx: --args: ${parsedArgs}\n`);
      return 2;
    }
    scalars = parsedArgs;
  }
  if (values.emit !== "ptx" && values.emit !== "ir" && values.emit !== "script") {
    process.stderr.write(`tirx: --emit must be "ptx", "ir" or "script", got "${values.emit}"\n`);
    return 2;
  }
  if (values.after !== undefined && (values.emit === "ptx" || !STAGES.includes(values.after))) {
    process.stderr.write(
      values.emit === "ptx"
        ? `tirx: --after needs --emit ir\n${USAGE}\n`
        : `tirx: unknown pass "${values.after}"; --after takes one of: ${STAGES.join(", ")}\n${USAGE}\n`,
    );
    return 2;
  }
  const path = resolve(file);
  if (!existsSync(path)) {
    process.stderr.write(`tirx: no such file: ${file}\n`);
    return 2;
  }
  let mod: Record<string, unknown>;
  try {
    const { tsImport } = await import("tsx/esm/api");
    mod = (await tsImport(pathToFileURL(path).href, import.meta.url)) as Record<string, unknown>;
  } catch (e) {
    if (isTirxError(e)) return report(e as TirxError);
    // A syntax error or an exception of the author's own code while the file loads.
    const err = e as Error & {
      errors?: { text: string; location?: { line: number; column: number } }[];
    };
    const first = err.errors?.[0];
    const where = first?.location
      ? `${file}:${first.location.line}:${first.location.column + 1}: `
      : `${file}: `;
    process.stderr.write(
      `${where}error: cannot load the file: ${first?.text ?? err.message ?? String(e)}\n`,
    );
    if (process.env["TIRX_DEBUG"]) process.stderr.write(`${err.stack ?? ""}\n`);
    return 1;
  }
  try {
    let kernels = Object.entries(mod).filter((e): e is [string, PrimFunc] => isPrimFunc(e[1]));
    if (values.kernel) {
      kernels = kernels.filter(([k, f]) => k === values.kernel || f.name === values.kernel);
    }
    if (kernels.length === 0) {
      process.stderr.write(
        values.kernel
          ? `tirx: ${file} exports no kernel named "${values.kernel}"\n`
          : `tirx: ${file} exports no kernels (export the result of T.function)\n`,
      );
      return 1;
    }
    if (cmd === "trace") {
      const fns = [...new Set(kernels.map(([, f]) => f))];
      if (fns.length !== 1) {
        process.stderr.write(
          `tirx: ${file} exports ${fns.length} kernels; name one with --kernel (${fns.map((f) => f.name).join(", ")})\n`,
        );
        return 2;
      }
      const json = JSON.stringify(traceKernel(fns[0]!, scalars));
      if (values.out) writeFileSync(values.out, json + "\n");
      else process.stdout.write(json + "\n");
      return 0;
    }
    const seen = new Set<PrimFunc>();
    // --emit ir prints one TypeScript module in T syntax (one import, one export per kernel)
    // that `tirx build` accepts again.
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
      else process.stdout.write(emitPtx(vf, { arch: values.arch! }).text);
    }
    if (irs.length > 0) {
      const text = await (values.emit === "script" ? printScriptModule : printModuleAsync)(irs);
      process.stdout.write(headers.map((h) => h + "\n").join("") + text);
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

/** Print a diagnostic with its code frame; the exit code for kernel errors. */
function report(e: TirxError): number {
  process.stderr.write(
    renderDiagnostic(e, { color: process.stderr.isTTY, cwd: process.cwd() }) + "\n",
  );
  return 1;
}
