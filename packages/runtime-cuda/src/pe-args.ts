import {
  checkArgs,
  isDeviceTensor,
  launchArgError,
  showValue,
  type KernelArg,
  type Param,
  type PrimFunc,
} from "@tirx-ts/core";
import { cuda, CudaDevice } from "./device.js";
import { SymmetricTensor } from "./symmetric.js";

/**
 * One argument of a launch on several GPUs (`compile(fn).launchAll`), given once for every PE:
 * - a `SymmetricTensor` over the launch's GPUs, for a symmetric parameter
 *   `T.Tensor([P, ...shard])` (leading dim = the launch's PE count P): every PE's kernel takes the
 *   same pointer, PE q's copy at row q;
 * - a list of P values, PE p's at index p: one tensor per PE (on PE p's GPU) for any other
 *   tensor parameter, or one scalar per PE;
 * - a scalar (number, bigint, boolean), the same on every PE;
 * - with one PE, a plain tensor.
 */
export type PeArg = KernelArg | SymmetricTensor | readonly KernelArg[];

/**
 * True for a symmetric parameter of a launch on `pes` PEs: a tensor of rank ≥ 2 whose leading
 * dim is static and equals `pes` (docs/multi-gpu.md, "Symmetric tensors").
 */
export function isSymmetricParam(p: Param, pes: number): boolean {
  return p.kind === "buffer" && p.buffer.shape.length >= 2 && p.buffer.shape[0] === pes;
}

/**
 * The GPUs of a launch on several PEs, PE p on the p-th: CudaDevices or ordinals, each once.
 * @throws TirxError TX5015 for an empty list, a repeated GPU or an entry that is neither;
 *   TX5010 (CudaUnavailableError) from `cuda(n)` when no CUDA driver or GPU is usable.
 */
export function peDevices(
  fn: PrimFunc,
  pes: readonly (CudaDevice | number)[],
): readonly CudaDevice[] {
  if (!Array.isArray(pes) || pes.length === 0) {
    throw launchArgError(
      "TX5015",
      `kernel "${fn.name}": a launch on several GPUs takes the GPU of each PE, e.g. [cuda(0), cuda(1)] or [0, 1], got ${showValue(pes)}`,
      fn,
    );
  }
  const devices = pes.map((d, p) => {
    if (d instanceof CudaDevice) return d;
    if (typeof d === "number" && Number.isInteger(d) && d >= 0) return cuda(d);
    throw launchArgError(
      "TX5015",
      `kernel "${fn.name}": PE ${p}'s GPU must be a CudaDevice from cuda(n) or an ordinal, got ${showValue(d)} (on the simulated device, run runSim(verify(fn), args, { pes }))`,
      fn,
    );
  });
  const ordinals = devices.map((d) => d.ordinal);
  if (new Set(ordinals).size !== ordinals.length) {
    throw launchArgError(
      "TX5015",
      `kernel "${fn.name}": each PE runs on its own GPU, got cuda:${ordinals.join(", cuda:")}`,
      fn,
    );
  }
  return devices;
}

/** "cuda:0, cuda:1" */
function gpus(ordinals: readonly number[]): string {
  return ordinals.map((o) => `cuda:${o}`).join(", ");
}

/**
 * Each PE's argument list for a launch of `fn` on `devices` (PE p on devices[p]), from the
 * arguments given once for all PEs ({@link PeArg}), each list checked as a one-GPU launch is
 * (core's `checkArgs`): a SymmetricTensor becomes `sym.on(p)` (the whole range, on PE p's GPU),
 * a per-PE list its p-th entry, a scalar itself.
 * @returns P lists of `fn.params.length` arguments.
 * @throws TirxError TX5015 (at the caller's line, a note at the kernel): a symmetric parameter
 *   given something else than a SymmetricTensor over exactly these GPUs in PE order; a
 *   SymmetricTensor for a parameter whose leading dim is not the PE count (the kernel built for
 *   another count); a per-PE list whose length is not P or whose tensor p is not on PE p's GPU;
 *   one tensor for a non-symmetric parameter of a launch on 2 or more PEs. TX5001 for a wrong
 *   argument count; checkArgs' TX5001–TX5012 for each PE's list.
 */
export function peArgs(
  fn: PrimFunc,
  devices: readonly CudaDevice[],
  args: readonly PeArg[],
): KernelArg[][] {
  const P = devices.length;
  const ordinals = devices.map((d) => d.ordinal);
  if (!Array.isArray(args) || args.length !== fn.params.length) {
    throw launchArgError(
      "TX5001",
      `kernel "${fn.name}" takes ${fn.params.length} arguments (${fn.params.map((p) => p.name).join(", ")}), got ${Array.isArray(args) ? args.length : showValue(args)}`,
      fn,
    );
  }
  const lists: KernelArg[][] = devices.map(() => []);
  fn.params.forEach((param, i) => {
    const a = args[i];
    const what = `argument ${i} ("${param.name}")`;
    const fail = (message: string): never => {
      throw launchArgError("TX5015", `${what} ${message}`, fn);
    };
    if (isSymmetricParam(param, P)) {
      if (!(a instanceof SymmetricTensor)) {
        fail(
          `is a symmetric parameter (its leading dim is the launch's ${P} PEs): pass a SymmetricTensor over ${gpus(ordinals)} (SymmetricTensor.allocate), through which each PE reaches the other PEs' rows; got ${Array.isArray(a) ? `a list of ${a.length}` : showValue(a)}`,
        );
      }
      const sym = a as SymmetricTensor;
      if (sym.devices.length !== P || sym.devices.some((o, q) => o !== ordinals[q])) {
        fail(
          `is a SymmetricTensor over ${gpus(sym.devices)}, but the launch's PEs run on ${gpus(ordinals)}: PE q's row must live on PE q's GPU`,
        );
      }
      devices.forEach((_, p) => lists[p]!.push(sym.on(p)));
      return;
    }
    if (a instanceof SymmetricTensor) {
      const lead = param.kind === "buffer" ? param.buffer.shape[0] : undefined;
      fail(
        param.kind === "buffer" && lead === a.pes
          ? `is a SymmetricTensor over ${a.pes} GPUs, but the launch has ${P} PEs: the kernel was built for ${a.pes} PEs (its leading dim); launch it on ${a.pes} GPUs or build it for ${P}`
          : `is a SymmetricTensor, but "${param.name}" is not a symmetric parameter of a launch on ${P} PEs (its leading dim is not ${P}): pass one ${param.kind === "buffer" ? "tensor" : "value"} per PE in a list, or one scalar`,
      );
    }
    if (Array.isArray(a)) {
      const each = a as readonly KernelArg[];
      if (each.length !== P) {
        fail(`is a list of ${each.length}: a per-PE argument has one entry per PE (${P})`);
      }
      each.forEach((v, p) => {
        if (isDeviceTensor(v) && v.device !== devices[p]) {
          fail(
            `for PE ${p} lives on ${v.device instanceof CudaDevice ? `cuda:${v.device.ordinal}` : v.device.name}, but PE ${p} runs on cuda:${ordinals[p]}`,
          );
        }
        lists[p]!.push(v);
      });
      return;
    }
    if (isDeviceTensor(a) && P > 1) {
      fail(
        `is one tensor for ${P} PEs: a non-symmetric tensor is each PE's own, so pass one per PE, [t0, t1, ...] with PE p's on cuda:${ordinals.join(", cuda:")} in order (or make "${param.name}" symmetric: [P, ...shard] and a SymmetricTensor)`,
      );
    }
    devices.forEach((_, p) => lists[p]!.push(a as KernelArg));
  });
  lists.forEach((list, p) => {
    const dev = checkArgs(fn, list);
    if (dev !== undefined && dev !== devices[p]) {
      throw launchArgError(
        "TX5015",
        `kernel "${fn.name}": PE ${p}'s tensors live on ${dev.name}, but PE ${p} runs on cuda:${ordinals[p]}`,
        fn,
      );
    }
  });
  return lists;
}
