// The TirxError a call throws, for tests of diagnostics.
import { isTirxError, type TirxError } from "@tirx-ts/core";

/**
 * The TirxError that `f` throws.
 * @throws the error itself when `f` throws something other than a TirxError, and an Error when
 *   `f` returns normally (the test expected a diagnostic).
 */
export function errorOf(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("no error");
}
