// The position of a library call's errors: the user's line that called it.
import { TirxError, callSite } from "@tirx-ts/core";

/**
 * `f()`, with a TirxError it throws without a position placed at the user's line that called the
 * library function (core's `callSite`: the first stack frame outside the tirx-ts packages). The
 * library calls (`gemm`, `attention`, `attentionBackward`) wrap their checks and their launches
 * in it, so that an option's error and a launch's (a disposed tensor, TX5011; an object that
 * only passes for a tensor, TX5004) both name the call. An error that has a position keeps it.
 * @throws whatever `f` throws.
 */
export function atCaller<R>(f: () => R): R {
  try {
    return f();
  } catch (e) {
    if (e instanceof TirxError && e.span === undefined) {
      throw new TirxError(e.code, e.text, callSite(), e.notes);
    }
    throw e;
  }
}
