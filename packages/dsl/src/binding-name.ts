import { fileLines, type Span } from "@tirx-ts/core";

/** A name the IR, the printers and PTX accept (T.alloc_shared's `name` rule). */
const IDENT = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * `const NAME =`, `let NAME: Type =` or `var NAME =` right before the call: the text before the
 * call's position ends with the binding, then at most a dotted receiver (`T.`, `T.cuda.`), which
 * builder-mode positions include (V8 places a method call at its property name) and script-mode
 * positions do not (a call node starts at its receiver).
 */
const BINDING =
  /(?:^|[\s;{}(])(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*(?::[^=;{}]*)?=\s*(?:[A-Za-z_$][\w$]*\s*\??\.\s*)*$/;

/** How many characters before the call are searched (a binding may end a line above it). */
const LOOKBACK = 300;

/** Names script mode declares for the value of the expression at a position (withBindingName). */
const declared = new Map<string, string>();

const siteKey = (s: Span): string => `${s.file}:${s.line}:${s.col}`;

/**
 * Run `fn` (script mode lowering the initializer of `const name = ...` that starts at `span`)
 * with `name` as what `bindingName` returns for a call at `span`: the syntax tree, not the file
 * on disk (which a parsed text need not be), says what the value is bound to.
 */
export function withBindingName<R>(span: Span, name: string, fn: () => R): R {
  const key = siteKey(span);
  const saved = declared.get(key);
  declared.set(key, name);
  try {
    return fn();
  } finally {
    if (saved === undefined) declared.delete(key);
    else declared.set(key, saved);
  }
}

/**
 * The variable the author binds the result of the call at `span` to, read from the source file:
 * `tile` for `const tile = T.alloc_shared([64, 64], "float16")` (builder or script mode), also
 * with `let`/`var`, a type annotation, or the call on a line after the `=`; in script mode, the
 * declaration being lowered (withBindingName). Undefined when the
 * call's value is not bound that way (an argument, an array element, a chained call's receiver),
 * the file cannot be read, or the name is not an identifier of letters, digits and `_`.
 */
export function bindingName(span: Span | undefined): string | undefined {
  if (span === undefined) return undefined;
  const bound = declared.get(siteKey(span));
  if (bound !== undefined) return IDENT.test(bound) ? bound : undefined;
  const lines = fileLines(span.file);
  const line = lines?.[span.line - 1];
  if (lines === undefined || line === undefined) return undefined;
  let before = line.slice(0, Math.max(0, span.col - 1));
  for (let l = span.line - 2; l >= 0 && before.length < LOOKBACK; l--) {
    before = `${lines[l]}\n${before}`;
  }
  const name = BINDING.exec(before)?.[1];
  return name !== undefined && IDENT.test(name) ? name : undefined;
}
