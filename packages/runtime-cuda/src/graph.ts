import { TirxError } from "@tirx-ts/core";
import { cuda, type CudaDevice } from "./device.js";
import type { CuHandle } from "./driver.js";
import { CudaStream, currentStream, live } from "./stream.js";

const registry = new FinalizationRegistry<() => void>((destroy) => {
  try {
    destroy();
  } catch {
    // nothing useful can be done with an error here
  }
});

/**
 * A CUDA graph captured from a sequence of launches and instantiated once (CUDA Driver API,
 * "Graph Management": cuStreamBeginCapture / cuStreamEndCapture / cuGraphInstantiateWithFlags).
 * `launch()` replays every captured kernel with the arguments it was captured with (the same
 * tensors: their contents may change between replays, their addresses may not). Disposable.
 */
export class CudaGraph implements Disposable {
  readonly device: CudaDevice;
  /** The CUgraph and its CUgraphExec. */
  readonly graph: CuHandle;
  readonly exec: CuHandle;
  /** Number of captured nodes (kernel launches and other operations). */
  readonly nodeCount: number;
  #destroyed = false;
  #generation = 0;

  /** @internal use `captureGraph`. */
  constructor(device: CudaDevice, graph: CuHandle, exec: CuHandle) {
    this.device = device;
    this.graph = graph;
    this.exec = exec;
    this.nodeCount = device.driver.graphNodeCount(graph);
    const gen = (this.#generation = device.generation);
    registry.register(
      this,
      () => {
        if (!live(device, gen)) return;
        device.driver.graphExecDestroy(exec);
        device.driver.graphDestroy(graph);
      },
      this,
    );
  }

  /** Queue one replay on `stream` (default: the current stream, else the default stream). */
  launch(stream: CudaStream | null = currentStream()): void {
    if (this.#destroyed) throw new TirxError("TX5011", "CudaGraph used after dispose()");
    this.device.driver.graphLaunch(this.exec, stream?.handle ?? 0n);
  }

  dispose(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    registry.unregister(this);
    if (!live(this.device, this.#generation)) return;
    this.device.activate();
    this.device.driver.graphExecDestroy(this.exec);
    this.device.driver.graphDestroy(this.graph);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * Capture the launches `fn` queues (with `launchAsync`, or a kernel's `launch`) into a graph:
 * `fn` runs with a fresh capturing stream as the current stream; nothing executes until the
 * graph is launched. `fn` must not synchronize (the driver refuses with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, and the capture is abandoned).
 * @throws CudaError from the driver; whatever `fn` throws (the capture is ended and dropped).
 */
export function captureGraph(fn: () => void, device: CudaDevice = cuda(0)): CudaGraph {
  const stream = new CudaStream(device);
  const d = device.driver;
  try {
    d.streamBeginCapture(stream.handle);
    try {
      stream.use(fn);
    } catch (e) {
      try {
        const g = d.streamEndCapture(stream.handle);
        if (g !== 0n) d.graphDestroy(g);
      } catch {
        // keep fn's error
      }
      throw e;
    }
    const graph = d.streamEndCapture(stream.handle);
    let exec: CuHandle;
    try {
      exec = d.graphInstantiate(graph);
    } catch (e) {
      d.graphDestroy(graph);
      throw e;
    }
    return new CudaGraph(device, graph, exec);
  } finally {
    stream.dispose();
  }
}
