import { fileURLToPath } from "node:url";
import type { Span } from "@tirx-ts/core";

const OWN_FILES =
  /[\\/]packages[\\/](dsl|core|codegen-ptx|runtime-sim|runtime-cuda|tirx-ts)[\\/](src|dist)[\\/]/;
const FRAME = /\(?((?:file:\/\/)?[^\s()]+?):(\d+):(\d+)\)?$/;

/**
 * The author's source position of the current T.* (or `compile`) call: the first stack frame
 * outside the tirx-ts packages. Node maps positions through source maps under tsx and vitest, so these are the
 * lines of the author's .ts file.
 */
export function callerSpan(): Span | undefined {
  const saved = Error.stackTraceLimit;
  Error.stackTraceLimit = 30;
  const stack = new Error().stack ?? "";
  Error.stackTraceLimit = saved;
  for (const line of stack.split("\n").slice(1)) {
    const m = FRAME.exec(line.trim());
    if (!m) continue;
    let file = m[1]!;
    if (file.startsWith("file://")) file = fileURLToPath(file);
    if (OWN_FILES.test(file) || file.startsWith("node:") || file.includes("node_modules")) continue;
    return { file, line: Number(m[2]), col: Number(m[3]) };
  }
  return undefined;
}
