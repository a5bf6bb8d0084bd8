import { didYouMean, TirxError, type Span } from "@tirx-ts/core";
import { memberNames } from "./members.js";
import { authorSpanOfStack } from "./span.js";

/** The builder's `T`, registered by builder-t.ts (which imports the modules that use it). */
let registered: object | undefined;

/**
 * Register the `T` namespace whose members {@link unknownTMember} checks.
 * @param t builder-t.ts's `builderT`.
 */
export function registerT(t: object): void {
  registered = t;
}

/**
 * TX1024 for `key`, which `obj` (spelled `owner` in the kernel's text, e.g. `T.cuda`) lacks, at
 * `span`, with the nearest of `obj`'s members for a name (none for an index). Builder mode ({@link unknownTMember}) and script
 * mode (lower-expr.ts, `member`) report a misspelled member with it.
 */
export function unknownMemberError(
  key: string | number,
  owner: string,
  obj: object,
  span?: Span,
): TirxError {
  const near = typeof key === "string" ? didYouMean(key, memberNames(obj)) : undefined;
  return new TirxError(
    "TX1024",
    `"${key}" is not a member of ${owner}${near ? ` (did you mean "${near}"?)` : ""}`,
    span,
    [
      {
        message:
          "check the name against the builder's T: README.md's \"A kernel\" and the sections after it name its members, and an editor completes them from its types",
      },
    ],
  );
}

/** A member path of T in the author's line: `T.cuda.thread_id`. */
const T_PATH = /\bT((?:\s*\.\s*[A-Za-z_$][\w$]*)+)/g;

/**
 * What a kernel body's TypeError means when the body called a member of `T` that does not exist:
 * `T.cuda.thread_id("x")` throws "… is not a function", `T.cdua.thread_idx("x")` "Cannot read
 * properties of undefined". The author's line (the error's first frame outside the packages) is
 * read, and the first `T.a.b…` path on it that names a missing member becomes TX1024 at that
 * member, with the nearest existing name. Script mode reports the same mistake itself
 * (lower-expr.ts, `member`).
 * @param e What the body threw.
 * @param t The `T` namespace the body sees (default: the registered one).
 * @returns TX1024 (dsl/unknown-name), or undefined when `e` is no such TypeError (then rethrow
 *   `e` as it is).
 */
export function unknownTMember(e: unknown, t = registered): TirxError | undefined {
  if (t === undefined || !(e instanceof TypeError) || typeof e.stack !== "string") return undefined;
  if (!/is not a function|Cannot read properties of undefined/.test(e.message)) return undefined;
  const at = authorSpanOfStack(e.stack);
  const text = at?.lineText;
  if (at === undefined || text === undefined) return undefined;
  for (const m of text.matchAll(T_PATH)) {
    const keys = m[1]!
      .split(".")
      .map((k) => k.trim())
      .filter((k) => k !== "");
    let obj: unknown = t;
    let owner = "T";
    // Column of each key: after the "T" and the dots before it.
    let col = m.index! + 1;
    for (const key of keys) {
      col = text.indexOf(key, col) + 1;
      if ((typeof obj !== "object" && typeof obj !== "function") || obj === null) break;
      if (!(key in obj))
        return unknownMemberError(key, owner, obj, { ...at, col, length: key.length });
      obj = (obj as Record<string, unknown>)[key];
      owner = `${owner}.${key}`;
    }
  }
  return undefined;
}
