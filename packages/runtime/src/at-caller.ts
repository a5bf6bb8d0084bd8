import { isTirxError, TirxError, type Span } from "@tirx-ts/core";

/**
 * `fn`'s value; a TirxError it throws without a source span (a check with no position of its
 * own: a tensor's data or shape, a target the kernel cannot take) is thrown again at `span`, the
 * author's call, so that it prints with a file:line and a code frame. Errors with a span, and
 * anything else, pass through unchanged.
 * @param span The author's call site (core's `callSite()`, dsl's `callerSpan()`), read once.
 * @throws Whatever `fn` throws, as above.
 */
export function atCaller<R>(span: Span | undefined, fn: () => R): R {
  try {
    return fn();
  } catch (e) {
    if (span !== undefined && isTirxError(e) && e.span === undefined) {
      throw new TirxError(e.code, e.text, span, e.notes);
    }
    throw e;
  }
}
