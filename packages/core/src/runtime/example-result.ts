// What a runnable example reports, and the exact element-by-element check most examples end with:
// shared by the Node package's example helpers (tirx-ts) and the lab's stand-in for them.
import type { DeviceTensor } from "./tensor.js";

/**
 * What a runnable example reports: whether its numeric check passed, the raw bytes of its
 * outputs (so devices can be compared bit for bit), and a one-line summary.
 */
export interface ExampleResult {
  readonly ok: boolean;
  readonly outputs: readonly Uint8Array[];
  readonly summary: string;
  /**
   * Set when the example uses an approximate op (a `.approx` instruction whose bits the simulator
   * cannot reproduce): why devices may differ. Both are then held to the example's own check
   * against a float64 reference instead of to each other bit for bit.
   */
  readonly approximate?: string;
}

/**
 * Compare `out` with `expected` element by element (exact equality, after the tensor's dtype
 * rounding), then free `out` and every tensor in `free`. Returns the example's result, with
 * `out`'s raw bytes for bit-for-bit comparisons between devices.
 */
export function checkOutput(
  out: DeviceTensor,
  expected: ArrayLike<number>,
  free: readonly DeviceTensor[] = [],
  unit = "elements",
): ExampleResult {
  const got = out.toArray() as ArrayLike<number>;
  let equal = 0;
  for (let i = 0; i < expected.length; i++) if (got[i] === expected[i]) equal++;
  const bytes = out.toBytes();
  for (const t of [out, ...free]) t.dispose();
  return {
    ok: equal === expected.length && got.length === expected.length,
    outputs: [bytes],
    summary: `${equal} of ${expected.length} ${unit} match`,
  };
}
