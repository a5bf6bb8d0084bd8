import { TirxError, type Note } from "../diagnostics.js";
import type { DiagnosticCode } from "../catalog.js";
import type { Span } from "../span.js";
import { withFileText } from "../source-lines.js";
import { filePathOf } from "../host/node.js";

/** Source and build folders of this repository's packages (as a workspace checkout has them). */
const OWN_FILES =
  /[\\/]packages[\\/](dsl|core|codegen-ptx|runtime-sim|runtime-cuda|runtime|kernels|tirx-ts)[\\/](src|dist|bin)[\\/]/;
const FRAME = /\(?((?:file:\/\/)?[^\s()]+?):(\d+):(\d+)\)?$/;

/** True for a frame of the program that uses tirx-ts (not tirx-ts, Node, or an installed package). */
function foreign(file: string): boolean {
  return !(OWN_FILES.test(file) || file.startsWith("node:") || file.includes("node_modules"));
}

/**
 * The position of the current call into tirx-ts in the caller's own source: the first stack
 * frame outside the tirx-ts packages, Node's internals and installed packages (positions are
 * mapped through source maps under tsx and vitest, so they are lines of the author's .ts file).
 * The span carries its line's text (withFileText). Undefined when every frame is ours (the
 * `tirx` CLI's own launches). Formats a stack, which costs tens of microseconds: for errors, not
 * for every launch.
 */
export function callSite(): Span | undefined {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 64;
  // The stack without an Error object: V8 formats it on `frames` (first line a header).
  const frames: { stack?: string } = {};
  Error.captureStackTrace(frames);
  const stack = frames.stack ?? "";
  Error.stackTraceLimit = saved;
  for (const line of stack.split("\n").slice(1)) {
    const m = FRAME.exec(line.trim());
    if (!m) continue;
    let file = m[1]!;
    if (file.startsWith("file://")) file = filePathOf(file);
    if (!foreign(file)) continue;
    return withFileText({ file, line: Number(m[2]), col: Number(m[3]) });
  }
  return undefined;
}

/**
 * A launch-time error about a kernel's arguments (TX5001–TX5005, TX5008, TX5009, TX2011) at the
 * caller's line that launched it (`callSite()`: the `run(a, b)`), with a note at the kernel's
 * declaration (`T.function(` / `T.prim_func(`) and `notes` after it. Without a call site (a
 * launch by the CLI itself) the error stands at the declaration.
 */
export function launchArgError(
  code: DiagnosticCode,
  message: string,
  kernel: { readonly name: string; readonly span?: Span | undefined },
  notes: readonly Note[] = [],
): TirxError {
  const site = callSite();
  if (site === undefined) return new TirxError(code, message, kernel.span, notes);
  const declared: Note[] = kernel.span
    ? [{ message: `kernel "${kernel.name}" is declared here`, span: kernel.span }]
    : [];
  return new TirxError(code, message, site, [...declared, ...notes]);
}
