// A PTX module's instruction lines that match a pattern, for inline snapshots of lowerings, and
// the body of its innermost loop that issues wgmmas.

/** The lines of PTX `text` matching `re`, trimmed, joined by newlines. */
export const ptxLines = (text: string, re: RegExp): string =>
  text
    .split("\n")
    .filter((l) => re.test(l))
    .map((l) => l.trim())
    .join("\n");

/** The counts of PTX `text`'s `mbarrier.init.shared::cta.b64` instructions, sorted (as text). */
export const mbarrierInitCounts = (text: string): string[] =>
  (text.match(/mbarrier\.init\.shared::cta\.b64 \[[^\]]+\], \d+;/g) ?? [])
    .map((l) => l.replace(/.*, (\d+);/, "$1"))
    .sort();

/**
 * The instructions (trimmed lines) of the innermost loop of PTX `text` whose body issues wgmmas
 * (a GEMM's consumer K loop): codegen-ptx labels a loop `$L__loopN:` and its end
 * `$L__loop_endN:`; undefined when no loop issues one.
 */
export function wgmmaLoop(text: string): string[] | undefined {
  const loops: string[][] = [];
  const open: { label: string; body: string[] }[] = [];
  for (const l of text.split("\n").map((x) => x.trim())) {
    const head = /^(\$L__loop\d+):$/.exec(l);
    const end = /^\$L__loop_end(\d+):$/.exec(l);
    if (head) open.push({ label: head[1]!, body: [] });
    else if (end && open.at(-1)?.label === `$L__loop${end[1]}`) loops.push(open.pop()!.body);
    else for (const o of open) o.body.push(l);
  }
  const withWgmma = loops.filter((b) => b.some((l) => l.startsWith("wgmma.mma_async")));
  return withWgmma.length === 0
    ? undefined
    : withWgmma.reduce((a, b) => (b.length < a.length ? b : a));
}
