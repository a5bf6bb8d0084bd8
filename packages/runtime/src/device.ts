import { TirxError, callSite, showValue, type DeviceLike } from "@tirx-ts/core";
import { archForDevice, cuda, cudaAvailable, CudaDevice } from "@tirx-ts/runtime-cuda";
import { sim } from "@tirx-ts/runtime-sim";

let chosen: DeviceLike | undefined;

/**
 * The default device: `cuda(0)` when the CUDA driver (libcuda.so.1) loads and reports a GPU,
 * otherwise the simulated device `sim()`. Says once on stderr which it picked and why.
 * Set `TIRX_DEVICE=sim` or `TIRX_DEVICE=cuda` to force one.
 * @throws TirxError TX5010 (at the caller's line, with the fix in a note) when TIRX_DEVICE=cuda
 * and no CUDA driver or device is usable; TX5012 (likewise) when TIRX_DEVICE is set to anything
 * else but "sim" or "cuda" (e.g. "gpu", "CUDA").
 */
export function device(): DeviceLike {
  if (chosen) return chosen;
  const forced = process.env["TIRX_DEVICE"];
  let why: string;
  if (forced === "sim") {
    chosen = sim();
    why = "TIRX_DEVICE=sim";
  } else if (forced === "cuda") {
    const probe = cudaAvailable();
    if (!probe.ok) {
      throw new TirxError(
        "TX5010",
        `TIRX_DEVICE=cuda asks for a CUDA GPU, but ${probe.reason.replace(/^CUDA is unavailable: /, "")}`,
        callSite(),
        [{ message: "unset TIRX_DEVICE, or set TIRX_DEVICE=sim, to use the simulated device" }],
      );
    }
    chosen = cuda(0);
    why = "TIRX_DEVICE=cuda";
  } else if (forced !== undefined && forced !== "") {
    throw new TirxError(
      "TX5012",
      `TIRX_DEVICE is ${JSON.stringify(forced)}; it takes "sim" or "cuda"`,
      callSite(),
      [
        {
          message:
            "set TIRX_DEVICE=sim or TIRX_DEVICE=cuda, or unset it to take the GPU when one is usable and the simulated device otherwise",
        },
      ],
    );
  } else {
    const probe = cudaAvailable();
    if (probe.ok) {
      chosen = cuda(0);
      why = "the CUDA driver loaded";
    } else {
      chosen = sim();
      why = `no CUDA driver was found (${probe.reason.replace(/^CUDA is unavailable: /, "")})`;
    }
  }
  const where = chosen.kind === "sim" ? "the simulated device" : `${chosen.name} (cuda:0)`;
  process.stderr.write(`tirx-ts: running on ${where}; ${why}\n`);
  return chosen;
}

/**
 * The PTX target of `dev`'s GPU, as `compile` picks it by default: its own compute capability
 * ("sm_90" on an H100/H200; runtime-cuda's `archForDevice`), never an architecture-specific
 * target (`compile` raises sm_90 to sm_90a for a kernel that needs it). Undefined for the
 * simulated device, which runs every target.
 * @throws TirxError TX5012 (runtime/device) for a device that is neither `sim()` nor one from
 *   `cuda(n)`.
 */
export function deviceArch(dev: DeviceLike): string | undefined {
  if (dev === sim()) return undefined;
  if (dev instanceof CudaDevice) return archForDevice(dev);
  throw new TirxError("TX5012", `a device must be sim() or cuda(n), got ${showValue(dev)}`);
}
