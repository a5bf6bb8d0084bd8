import type { DeviceLike, KernelArg, PrimFunc } from "@tirx-ts/core";

/**
 * A per-kernel argument check for the launch fast path, built once: the common case (tensors of
 * the declared dtype and static shape, all on one device, and scalars that are numbers) is
 * accepted with plain loops and no allocation. It returns the device (undefined when the kernel
 * takes no tensors), or null when the arguments need core's full `checkArgs` (symbolic shapes,
 * anything unusual, and every error, so that errors are reported by one function).
 */
export function fastArgCheck(
  fn: PrimFunc,
): (args: readonly KernelArg[]) => DeviceLike | undefined | null {
  const n = fn.params.length;
  const isTensor = new Uint8Array(n);
  const dtypes: string[] = [];
  const shapes: (readonly number[])[] = [];
  for (let i = 0; i < n; i++) {
    const p = fn.params[i]!;
    if (p.kind === "buffer") {
      if (!p.buffer.shape.every((d) => typeof d === "number")) return () => null;
      isTensor[i] = 1;
      dtypes.push(p.buffer.dtype);
      shapes.push(p.buffer.shape as readonly number[]);
    } else {
      dtypes.push(p.var.dtype);
      shapes.push([]);
    }
  }
  return (args) => {
    if (args.length !== n) return null;
    let device: DeviceLike | undefined;
    for (let i = 0; i < n; i++) {
      const a = args[i] as unknown;
      if (isTensor[i] === 1) {
        if (typeof a !== "object" || a === null) return null;
        const t = a as { dtype?: unknown; shape?: unknown; device?: DeviceLike };
        if (t.dtype !== dtypes[i] || t.device === undefined) return null;
        const shape = t.shape as readonly number[] | undefined;
        const want = shapes[i]!;
        if (!Array.isArray(shape) || shape.length !== want.length) return null;
        for (let k = 0; k < want.length; k++) if (shape[k] !== want[k]) return null;
        if (device !== undefined && device !== t.device) return null;
        device = t.device;
      } else if (typeof a !== "number" && typeof a !== "bigint" && typeof a !== "boolean") {
        return null;
      }
    }
    return device;
  };
}
