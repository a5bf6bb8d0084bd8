// The library calls' refusal of a disposed tensor, by the role the caller gave it. A launch
// refuses one too (TX5011), but names the kernel's parameter ("X", "D"), which the caller of
// gemm() or attention() never saw: a transposition's input, an output's internal name.
import { TirxError, type DeviceTensor } from "@tirx-ts/core";

/**
 * Refuse a tensor whose memory is gone: each (role name, tensor) whose `disposed` is true (set
 * by `dispose()` or the end of its `using` block; a runtime's tensor without the property counts
 * as live) is TX5011, as a launch would refuse it, but naming the role.
 * @param who the call's name for the message, e.g. "gemm".
 * @throws TirxError TX5011 (runtime/disposed) naming the first disposed role.
 */
export function refuseDisposed(
  who: string,
  tensors: readonly (readonly [string, DeviceTensor | undefined])[],
): void {
  for (const [name, t] of tensors) {
    if ((t as { disposed?: unknown } | undefined)?.disposed !== true) continue;
    throw new TirxError(
      "TX5011",
      `${who}: ${name} was disposed (dispose() or the end of its \`using\` block); make the tensor again, or dispose it after the call`,
    );
  }
}
