import { isTirxError, TirxError, type Span } from "@tirx-ts/core";

/**
 * `fn`'s value; a TirxError it throws without a source span (a check with no position of its
 * own: a tensor's data or shape, a target the kernel cannot take) is thrown again at `where()`,
 * the author's call, so that it prints with a file:line and a code frame. Errors with a span, and
 * anything else, pass through unchanged.
 * @param where The author's call site, asked only when such an error is thrown: core's
 *   `callSite` formats a stack (tens of microseconds), which a call that succeeds must not pay.
 *   Called inside the caller's frame, so it finds the same author frame.
 * @throws Whatever `fn` throws, as above.
 */
export function atCaller<R>(where: () => Span | undefined, fn: () => R): R {
  try {
    return fn();
  } catch (e) {
    if (isTirxError(e) && e.span === undefined) {
      const span = where();
      if (span !== undefined) throw new TirxError(e.code, e.text, span, e.notes);
    }
    throw e;
  }
}
