import { scalarAccepts, type DeviceLike, type KernelArg, type PrimFunc } from "@tirx-ts/core";

/**
 * A per-kernel argument check for the launch fast path, built once: the common case (tensors of
 * the declared dtype and static shape, live, all on one device, and scalars their dtype holds) is
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
  const scalars: ((a: unknown) => boolean)[] = [];
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
    scalars.push(p.kind === "scalar" ? scalarAccepts(p.var.dtype) : () => false);
  }
  return (args) => {
    if (args.length !== n) return null;
    let device: DeviceLike | undefined;
    for (let i = 0; i < n; i++) {
      const a = args[i] as unknown;
      if (isTensor[i] === 1) {
        if (typeof a !== "object" || a === null) return null;
        const t = a as {
          dtype?: unknown;
          shape?: unknown;
          device?: DeviceLike;
          disposed?: boolean;
        };
        if (t.dtype !== dtypes[i] || t.device === undefined || t.disposed === true) return null;
        const shape = t.shape as readonly number[] | undefined;
        const want = shapes[i]!;
        if (!Array.isArray(shape) || shape.length !== want.length) return null;
        for (let k = 0; k < want.length; k++) if (shape[k] !== want[k]) return null;
        if (device !== undefined && device !== t.device) return null;
        device = t.device;
      } else if (!scalars[i]!(a)) {
        return null;
      }
    }
    return device;
  };
}
