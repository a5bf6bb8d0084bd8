/**
 * `word` with its indefinite article, as English spells it before a dtype's name: "an int32",
 * "a uint8" (said "you-int"), "a float16", "a bfloat16".
 * @param word A dtype or another lower-case word. Never throws.
 */
export function withArticle(word: string): string {
  // A vowel sound: a, e, i, o (int32, index); "u" here is "you" (uint8, u32).
  return `${/^[aeio]/.test(word) ? "an" : "a"} ${word}`;
}
