import { cuda, type CudaDevice } from "./device.js";
import type { CuHandle } from "./driver.js";

/** Streams and events that were garbage-collected without `dispose()`. */
const registry = new FinalizationRegistry<() => void>((destroy) => {
  try {
    destroy();
  } catch {
    // nothing useful can be done with an error here
  }
});

/** Whether handles made in `generation` still exist (no reset since, context not lost). */
export function live(device: CudaDevice, generation: number): boolean {
  return device.generation === generation && device.lost === undefined;
}

/**
 * Resolve once `ready()` is true, polling with a growing delay (from 0 up to 1 ms), so that
 * awaiting GPU work never blocks the event loop.
 */
function poll(ready: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    let delay = 0;
    const tick = (): void => {
      try {
        if (ready()) return resolve();
      } catch (e) {
        return reject(e);
      }
      delay = Math.min(1, delay + 0.05);
      if (delay < 0.1) setImmediate(tick);
      else setTimeout(tick, delay);
    };
    tick();
  });
}

/**
 * A CUDA event (cuEventCreate): marks a point in a stream. `done()` is a promise that resolves
 * when the work before the mark has completed; `elapsedMs` times two recorded events.
 * Disposable (`using`); destroyed by the collector otherwise.
 */
export class CudaEvent implements Disposable {
  readonly device: CudaDevice;
  /** The CUevent. */
  readonly handle: CuHandle;
  #destroyed = false;
  #generation = 0;

  /** @param timing false creates the event with CU_EVENT_DISABLE_TIMING (cheaper to record). */
  constructor(device: CudaDevice = cuda(0), timing = true) {
    this.device = device;
    device.activate();
    this.handle = device.driver.eventCreate(timing ? 0 : 2);
    const h = this.handle;
    const gen = (this.#generation = device.generation);
    registry.register(this, () => live(device, gen) && device.driver.eventDestroy(h), this);
  }

  /** Record the event on `stream` (default: the current stream). */
  record(stream: CudaStream | null = currentStream()): this {
    this.device.driver.eventRecord(this.handle, stream?.handle ?? 0n);
    return this;
  }

  /** Whether the recorded work has completed. */
  query(): boolean {
    return this.device.driver.eventQuery(this.handle);
  }

  /** Block until the recorded work has completed. */
  synchronize(): void {
    this.device.driver.eventSynchronize(this.handle);
  }

  /** A promise resolved when the recorded work has completed (polls; never blocks the thread). */
  done(): Promise<void> {
    return poll(() => this.query());
  }

  /** Milliseconds from `start` to this event, both recorded and completed (resolution ~0.5 µs). */
  elapsedMsSince(start: CudaEvent): number {
    return this.device.driver.eventElapsedMs(start.handle, this.handle);
  }

  dispose(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    registry.unregister(this);
    if (live(this.device, this.#generation)) this.device.driver.eventDestroy(this.handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

/**
 * A CUDA stream (cuStreamCreate, non-blocking by default): launches queued on it run in order,
 * concurrently with other streams. `done()` awaits the queued work; `use(fn)` makes it the
 * current stream (the one `launchAsync` queues on) while `fn` runs. Disposable (`using`).
 */
export class CudaStream implements Disposable {
  readonly device: CudaDevice;
  /** The CUstream. */
  readonly handle: CuHandle;
  #destroyed = false;
  #generation = 0;

  /** @param blocking true: synchronizes with the legacy default stream (flags 0); default false. */
  constructor(device: CudaDevice = cuda(0), blocking = false) {
    this.device = device;
    device.activate();
    this.handle = device.driver.streamCreate(blocking ? 0 : 1);
    const h = this.handle;
    const gen = (this.#generation = device.generation);
    registry.register(this, () => live(device, gen) && device.driver.streamDestroy(h), this);
  }

  /** Block until every launch queued on the stream has completed. @throws CudaError of a failed kernel. */
  synchronize(): void {
    this.device.activate();
    this.device.driver.streamSynchronize(this.handle);
  }

  /** Whether every launch queued on the stream has completed. */
  query(): boolean {
    return this.device.driver.streamQuery(this.handle);
  }

  /** A promise resolved when the work queued so far has completed (an event recorded now, polled). */
  done(): Promise<void> {
    const ev = new CudaEvent(this.device, false).record(this);
    return poll(() => ev.query()).finally(() => ev.dispose());
  }

  /**
   * Make the work queued on this stream from now on wait for `event`'s recorded work, without
   * blocking the host (cuStreamWaitEvent; the event may belong to another stream or GPU): how a
   * compute stream waits for a copy stream's transfer.
   */
  wait(event: CudaEvent): this {
    this.device.activate();
    this.device.driver.streamWaitEvent(this.handle, event.handle);
    return this;
  }

  /** Run `fn` with this stream as the current stream; launches inside it queue here. */
  use<R>(fn: () => R): R {
    const saved = current;
    current = this;
    try {
      return fn();
    } finally {
      current = saved;
    }
  }

  dispose(): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    registry.unregister(this);
    if (!live(this.device, this.#generation)) return;
    this.device.activate();
    this.device.driver.streamDestroy(this.handle);
  }

  [Symbol.dispose](): void {
    this.dispose();
  }
}

let current: CudaStream | null = null;

/** The stream launches queue on now: the one of the innermost `stream.use(...)`, or null (the default stream). */
export function currentStream(): CudaStream | null {
  return current;
}
