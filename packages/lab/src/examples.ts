// The repository's examples, as text, by path relative to examples/ ("vector_add.ts",
// "tile/softmax.ts", "script/vector_add.ts"): the lab's example menu, and the files an example's
// relative imports ("../gemm_hopper.js") resolve to.
const raw = import.meta.glob("../../../examples/**/*.ts", {
  query: "?raw",
  import: "default",
  eager: true,
}) as Record<string, string>;

/** Example texts by path under examples/. */
export const EXAMPLES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(raw)
    .map(([k, v]) => [k.replace(/^.*\/examples\//, ""), v] as const)
    .sort(([a], [b]) => order(a) - order(b) || a.localeCompare(b)),
);

/** Builder examples first, then tile, then script mode. */
function order(path: string): number {
  return path.startsWith("script/") ? 2 : path.startsWith("tile/") ? 1 : 0;
}

/** The seed kernel: the first example a fresh lab shows. */
export const SEED = "vector_add.ts";

/** Resolve `spec` imported by the example at `from` to an example path, or undefined. */
export function resolveExample(from: string, spec: string): string | undefined {
  if (!spec.startsWith(".")) return undefined;
  const parts = from.split("/").slice(0, -1);
  for (const p of spec.split("/")) {
    if (p === "..") parts.pop();
    else if (p !== ".") parts.push(p);
  }
  const path = parts.join("/").replace(/\.js$/, ".ts");
  return path in EXAMPLES ? path : undefined;
}
