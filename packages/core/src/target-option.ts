import { TirxError } from "./diagnostics.js";
import { showValue } from "./show.js";
import type { Span } from "./span.js";

/**
 * Check the `arch` field of an options object (`compile`'s, `emitPtx`'s): absent or a string.
 * Which strings name a target is decided against the kernel (`resolveArch` in codegen-ptx), which
 * refuses an unknown one with the same code.
 * @throws TirxError TX5006 when `arch` is present and not a string, at `span`.
 */
export function checkArchOption(arch: unknown, span?: Span): asserts arch is string | undefined {
  if (arch !== undefined && typeof arch !== "string") {
    throw new TirxError(
      "TX5006",
      `arch must be a string such as "sm_90", got ${showValue(arch)}`,
      span,
    );
  }
}
