import { fileURLToPath } from "node:url";
import type { Span } from "@tirx-ts/core";

const OWN_FILES = /[\\/](packages[\\/]dsl[\\/](src|dist)|node_modules[\\/]@tirx-ts[\\/]dsl)[\\/]/;
const FRAME = /\(?((?:file:\/\/)?[^\s()]+?):(\d+):(\d+)\)?$/;

/**
 * The author's source position of the current T.* call: the first stack frame outside this
 * package. Node maps positions through source maps under tsx and vitest, so these are the
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
