/**
 * A broken internal assumption of tirx-ts: a bug in tirx-ts, never a mistake in the user's
 * kernel, so it carries no TX code (model: TypeGPU's `invariant()`).
 */
export class InternalError extends Error {
  constructor(message: string) {
    super(`tirx-ts internal error: ${message}`);
    this.name = "InternalError";
  }
}

/**
 * Assert an internal invariant.
 * @throws InternalError when `cond` is false.
 */
export function invariant(cond: unknown, message: string | (() => string)): asserts cond {
  if (!cond) throw new InternalError(typeof message === "string" ? message : message());
}
