/**
 * A broken internal assumption of tirx-ts (a bug in tirx-ts, not in the kernel): its own error
 * class, never a TirxError, so it is never mistaken for a user mistake (TypeGPU's `invariant`).
 */
export class InvariantError extends Error {
  constructor(message: string) {
    super(`tirx-ts internal error: ${message}`);
    this.name = "InvariantError";
  }
}

/** Throw an {@link InvariantError} with `message` unless `cond` holds. */
export function invariant(cond: unknown, message: string): asserts cond {
  if (!cond) throw new InvariantError(message);
}
