import { formatSpan, type Span } from "./span.js";
import { relativeToCwd } from "./host/node.js";

/**
 * The names `T.alloc_shared` and `T.alloc_local` give a buffer the author neither named
 * (`{ name }`) nor bound to a variable (`const tile = T.alloc_shared(...)`).
 */
const UNNAMED: Readonly<Record<string, string | undefined>> = {
  global: undefined,
  shared: "smem",
  "shared.dyn": "smem",
  local: "local",
};

/**
 * A buffer as messages name it: its name in quotes (`"tile"`), as the author gave it or bound it;
 * for a shared or local buffer the author left unnamed, its declaration instead
 * (`<buffer declared at kernel.ts:12:17>`, the path relative to the working directory), so that
 * a report leads back to it. `scope` may be left out for a shared or local buffer (the
 * simulator's placed buffers); a global tensor is a parameter and always has its name.
 */
export function bufferName(b: {
  readonly name: string;
  readonly span?: Span | undefined;
  readonly scope?: "global" | "shared" | "shared.dyn" | "local";
}): string {
  const unnamed =
    b.scope === undefined ? b.name === "smem" || b.name === "local" : UNNAMED[b.scope] === b.name;
  if (!unnamed || b.span === undefined) return `"${b.name}"`;
  const file = relativeToCwd(b.span.file);
  return `<buffer declared at ${formatSpan({ ...b.span, file })}>`;
}
