// A PTX module's instruction lines that match a pattern, for inline snapshots of lowerings.

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
