import { TirxError, type DType } from "@tirx-ts/core";
import { koffi, type CuHandle } from "./driver.js";
import type { CudaTensor } from "./tensor.js";

/**
 * A koffi binding of NCCL (libnccl.so.2; NCCL API, "Communicator Creation and Management",
 * "Collective Communication Operations", "Window Registration" (NCCL 2.28)): communicators and
 * the host collectives all-reduce, all-gather and reduce-scatter on CUDA tensors. Loaded on first
 * use; `TIRX_LIBNCCL` overrides the path. Every process that loads it must keep NVLink SHARP
 * (multicast objects) off: `ncclEnvironment()` sets NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1
 * and TORCH_SYMM_MEM_DISABLE_MULTICAST=1 in `process.env` before the library loads (and the
 * bench passes them to its subprocesses); nothing here calls cuMulticastCreate.
 */

type Fn = (...args: unknown[]) => number;
type Koffi = ReturnType<typeof koffi>;

/** The default library name; `process.env.TIRX_LIBNCCL` replaces it. */
export const LIBNCCL = "libnccl.so.2";

/**
 * The environment every multi-GPU process of tirx-ts runs under: NVLink SHARP / multicast off
 * for NCCL, NVSHMEM and PyTorch's symmetric memory (the machines these run on must not create
 * multicast objects).
 */
export const MULTI_GPU_ENV: Readonly<Record<string, string>> = Object.freeze({
  NCCL_NVLS_ENABLE: "0",
  NVSHMEM_DISABLE_NVLS: "1",
  TORCH_SYMM_MEM_DISABLE_MULTICAST: "1",
});

/** Set MULTI_GPU_ENV in `process.env` (before NCCL loads; also for subprocesses started after). */
export function ncclEnvironment(): void {
  for (const [k, v] of Object.entries(MULTI_GPU_ENV)) process.env[k] = v;
}

/** ncclDataType_t (nccl.h). */
export const NCCL_DTYPE: Partial<Record<DType, number>> = {
  int8: 0,
  uint8: 1,
  int32: 2,
  uint32: 3,
  int64: 4,
  uint64: 5,
  float16: 6,
  float32: 7,
  float64: 8,
  bfloat16: 9,
};

/** ncclRedOp_t (nccl.h). */
export const NCCL_OP = { sum: 0, prod: 1, max: 2, min: 3, avg: 4 } as const;

/** A reduction of the collectives. */
export type NcclOp = keyof typeof NCCL_OP;

/** Bytes of ncclUniqueId (NCCL_UNIQUE_ID_BYTES). */
export const NCCL_UNIQUE_ID_BYTES = 128;

/** The library's functions, unchecked (ncclResult_t results). */
interface NcclRaw {
  readonly ncclGetVersion: Fn;
  readonly ncclGetUniqueId: Fn;
  readonly ncclCommInitRank: Fn;
  readonly ncclCommInitAll: Fn;
  readonly ncclCommDestroy: Fn;
  readonly ncclAllReduce: Fn;
  readonly ncclAllGather: Fn;
  readonly ncclReduceScatter: Fn;
  readonly ncclGroupStart: Fn;
  readonly ncclGroupEnd: Fn;
  readonly ncclGetErrorString: (code: number) => string;
  /** NCCL ≥ 2.28 only. */
  readonly ncclCommWindowRegister?: Fn;
  readonly ncclCommWindowDeregister?: Fn;
}

let loaded: { raw: NcclRaw; library: string; version: number } | undefined;

/** The library path: `TIRX_LIBNCCL` when set, else libnccl.so.2. */
export function ncclLibraryPath(): string {
  const p = process.env["TIRX_LIBNCCL"];
  return p && p.length > 0 ? p : LIBNCCL;
}

/**
 * NCCL, loaded on first call (after ncclEnvironment()).
 * @throws TirxError TX5014 when the library (or koffi) cannot be loaded, naming the path and the
 *   loader's reason: a test's skip reason.
 */
export function nccl(): { raw: NcclRaw; library: string; version: number } {
  if (loaded) return loaded;
  ncclEnvironment();
  const library = ncclLibraryPath();
  let k: Koffi;
  let lib: ReturnType<Koffi["load"]>;
  try {
    k = koffi();
    lib = k.load(library);
  } catch (e) {
    throw new TirxError(
      "TX5014",
      `NCCL is unavailable: cannot load ${library}: ${(e as { message?: string }).message ?? String(e)}`,
      undefined,
      [{ message: "install NCCL (libnccl.so.2) or point TIRX_LIBNCCL at it" }],
    );
  }
  const fn = (name: string, args: string[]): Fn => lib.func(name, "int", args) as Fn;
  const opt = (name: string, args: string[]): Fn | undefined => {
    try {
      return fn(name, args);
    } catch {
      return undefined;
    }
  };
  // ncclUniqueId is passed by value to ncclCommInitRank: a struct of 128 bytes.
  const uid = k.struct("tirx_ncclUniqueId", { internal: k.array("char", NCCL_UNIQUE_ID_BYTES) });
  const errorString = lib.func("ncclGetErrorString", "const char *", ["int"]) as (
    c: number,
  ) => string;
  const windowRegister = opt("ncclCommWindowRegister", [
    "void *",
    "void *",
    "size_t",
    "void *",
    "int",
  ]);
  const windowDeregister = opt("ncclCommWindowDeregister", ["void *", "void *"]);
  const raw: NcclRaw = {
    ncclGetVersion: fn("ncclGetVersion", ["void *"]),
    ncclGetUniqueId: fn("ncclGetUniqueId", ["void *"]),
    ncclCommInitRank: lib.func("ncclCommInitRank", "int", ["void *", "int", uid, "int"]) as Fn,
    ncclCommInitAll: fn("ncclCommInitAll", ["void *", "int", "void *"]),
    ncclCommDestroy: fn("ncclCommDestroy", ["void *"]),
    ncclAllReduce: fn("ncclAllReduce", [
      "uint64_t",
      "uint64_t",
      "size_t",
      "int",
      "int",
      "void *",
      "void *",
    ]),
    ncclAllGather: fn("ncclAllGather", [
      "uint64_t",
      "uint64_t",
      "size_t",
      "int",
      "void *",
      "void *",
    ]),
    ncclReduceScatter: fn("ncclReduceScatter", [
      "uint64_t",
      "uint64_t",
      "size_t",
      "int",
      "int",
      "void *",
      "void *",
    ]),
    ncclGroupStart: fn("ncclGroupStart", []),
    ncclGroupEnd: fn("ncclGroupEnd", []),
    ncclGetErrorString: errorString,
    ...(windowRegister ? { ncclCommWindowRegister: windowRegister } : {}),
    ...(windowDeregister ? { ncclCommWindowDeregister: windowDeregister } : {}),
  };
  const v = new Int32Array(1);
  check(raw, "ncclGetVersion", raw.ncclGetVersion(v));
  loaded = { raw, library, version: v[0]! };
  return loaded;
}

/** TX5014 naming the call and NCCL's message unless `code` is ncclSuccess. */
function check(raw: NcclRaw, call: string, code: number): void {
  if (code === 0) return;
  throw new TirxError(
    "TX5014",
    `${call} failed: NCCL error ${code} (${raw.ncclGetErrorString(code)})`,
  );
}

/** NCCL's version as NCCL_VERSION_CODE (e.g. 22803 for 2.28.3). @throws TirxError TX5014. */
export function ncclVersion(): number {
  return nccl().version;
}

/** A fresh ncclUniqueId (128 bytes), to hand to every rank. @throws TirxError TX5014. */
export function ncclUniqueId(): Uint8Array {
  const { raw } = nccl();
  const id = new Uint8Array(NCCL_UNIQUE_ID_BYTES);
  check(raw, "ncclGetUniqueId", raw.ncclGetUniqueId(id));
  return id;
}

/** The dtype's ncclDataType_t. @throws TirxError TX5014 for one NCCL has no type for. */
function ncclType(dt: DType): number {
  const t = NCCL_DTYPE[dt];
  if (t === undefined) throw new TirxError("TX5014", `NCCL has no data type for ${dt}`);
  return t;
}

/** What the collectives need of a tensor: its device pointer, dtype and element count. */
type Buf = Pick<CudaTensor, "ptr" | "dtype" | "nbytes">;

/** Elements of `t`. */
const count = (t: Buf): number =>
  t.nbytes / (NCCL_DTYPE[t.dtype] === undefined ? 1 : bytesOf(t.dtype));

function bytesOf(dt: DType): number {
  return dt === "int8" || dt === "uint8"
    ? 1
    : dt === "float16" || dt === "bfloat16"
      ? 2
      : dt === "int64" || dt === "uint64" || dt === "float64"
        ? 8
        : 4;
}

/**
 * One rank's NCCL communicator (ncclComm_t): made by `ncclCommInitRank(nranks, id, rank)` (one
 * process or thread per GPU) or all at once by {@link NcclComm.initAll} (one process driving
 * every GPU). The collectives are enqueued on `stream` (a CUstream; 0n the legacy default) of the
 * communicator's device, which must be current.
 */
export class NcclComm {
  readonly #raw: NcclRaw;
  #comm: CuHandle;
  /** This communicator's rank and the ranks in all. */
  readonly rank: number;
  readonly nranks: number;

  private constructor(raw: NcclRaw, comm: CuHandle, rank: number, nranks: number) {
    this.#raw = raw;
    this.#comm = comm;
    this.rank = rank;
    this.nranks = nranks;
  }

  /**
   * ncclCommInitRank: rank `rank` of `nranks` joins the communicator of `id` (ncclUniqueId()
   * on one rank, shared with the others). The rank's GPU must be current.
   * @throws TirxError TX5014 (NCCL missing or failing).
   */
  static initRank(nranks: number, id: Uint8Array, rank: number): NcclComm {
    const { raw } = nccl();
    const out = new BigUint64Array(1);
    check(
      raw,
      "ncclCommInitRank",
      raw.ncclCommInitRank(out, nranks, { internal: Array.from(id) }, rank),
    );
    return new NcclComm(raw, out[0]!, rank, nranks);
  }

  /**
   * ncclCommInitAll: one communicator per device ordinal of `devices` in this process, rank i
   * on devices[i].
   * @throws TirxError TX5014.
   */
  static initAll(devices: readonly number[]): NcclComm[] {
    const { raw } = nccl();
    const out = new BigUint64Array(devices.length);
    check(
      raw,
      "ncclCommInitAll",
      raw.ncclCommInitAll(out, devices.length, Int32Array.from(devices)),
    );
    return Array.from(out, (c, i) => new NcclComm(raw, c, i, devices.length));
  }

  /** The live ncclComm_t. @throws TirxError TX5011 after destroy(). */
  get handle(): CuHandle {
    if (this.#comm === 0n) throw new TirxError("TX5011", "this NCCL communicator was destroyed");
    return this.#comm;
  }

  /**
   * ncclAllReduce of `send` into `recv` (same dtype and size; may be the same tensor: in place)
   * with `op`, on `stream`.
   * @throws TirxError TX5014 (sizes or dtypes differ, or NCCL fails).
   */
  allReduce(send: Buf, recv: Buf, op: NcclOp = "sum", stream: CuHandle = 0n): void {
    sameKind(send, recv, send.nbytes, "ncclAllReduce");
    const r = this.#raw;
    check(
      r,
      "ncclAllReduce",
      r.ncclAllReduce(
        send.ptr,
        recv.ptr,
        count(send),
        ncclType(send.dtype),
        NCCL_OP[op],
        this.handle,
        stream,
      ),
    );
  }

  /**
   * ncclAllGather: every rank's `send` (n elements) into `recv` (nranks · n elements, rank r's at
   * [r · n, (r + 1) · n)).
   * @throws TirxError TX5014.
   */
  allGather(send: Buf, recv: Buf, stream: CuHandle = 0n): void {
    sameKind(send, recv, send.nbytes * this.nranks, "ncclAllGather");
    const r = this.#raw;
    check(
      r,
      "ncclAllGather",
      r.ncclAllGather(send.ptr, recv.ptr, count(send), ncclType(send.dtype), this.handle, stream),
    );
  }

  /**
   * ncclReduceScatter: `send` (nranks · n elements) reduced over ranks with `op`; rank r's `recv`
   * (n elements) gets block r.
   * @throws TirxError TX5014.
   */
  reduceScatter(send: Buf, recv: Buf, op: NcclOp = "sum", stream: CuHandle = 0n): void {
    sameKind(recv, send, recv.nbytes * this.nranks, "ncclReduceScatter");
    const r = this.#raw;
    check(
      r,
      "ncclReduceScatter",
      r.ncclReduceScatter(
        send.ptr,
        recv.ptr,
        count(recv),
        ncclType(recv.dtype),
        NCCL_OP[op],
        this.handle,
        stream,
      ),
    );
  }

  /**
   * ncclCommWindowRegister (NCCL ≥ 2.28): register `bytes` at `ptr` as a symmetric window
   * (NCCL_WIN_COLL_SYMMETRIC = 1), collectively on every rank; returns the ncclWindow_t.
   * @throws TirxError TX5014 when this NCCL has no windows (before 2.28) or fails.
   */
  windowRegister(ptr: CuHandle, bytes: number, flags = 1): CuHandle {
    const r = this.#raw;
    if (!r.ncclCommWindowRegister) {
      throw new TirxError(
        "TX5014",
        `ncclCommWindowRegister needs NCCL 2.28 or later; this is ${ncclVersion()}`,
      );
    }
    const out = new BigUint64Array(1);
    check(
      r,
      "ncclCommWindowRegister",
      r.ncclCommWindowRegister(this.handle, ptr, bytes, out, flags),
    );
    return out[0]!;
  }

  /** ncclCommWindowDeregister. @throws TirxError TX5014. */
  windowDeregister(win: CuHandle): void {
    const r = this.#raw;
    if (!r.ncclCommWindowDeregister) return;
    check(r, "ncclCommWindowDeregister", r.ncclCommWindowDeregister(this.handle, win));
  }

  /** ncclGroupStart / ncclGroupEnd around `f` (one process driving several ranks). */
  static group(f: () => void): void {
    const { raw } = nccl();
    check(raw, "ncclGroupStart", raw.ncclGroupStart());
    try {
      f();
    } finally {
      check(raw, "ncclGroupEnd", raw.ncclGroupEnd());
    }
  }

  /** ncclCommDestroy (once; later calls do nothing). @throws TirxError TX5014. */
  destroy(): void {
    if (this.#comm === 0n) return;
    const c = this.#comm;
    this.#comm = 0n;
    check(this.#raw, "ncclCommDestroy", this.#raw.ncclCommDestroy(c));
  }
}

/** TX5014 unless `a` and `b` share a dtype and `b` holds `bytes`. */
function sameKind(a: Buf, b: Buf, bytes: number, call: string): void {
  if (a.dtype !== b.dtype || b.nbytes !== bytes) {
    throw new TirxError(
      "TX5014",
      `${call}: the tensors are ${a.dtype} (${a.nbytes} bytes) and ${b.dtype} (${b.nbytes} bytes); it needs one dtype and ${bytes} bytes in the second`,
    );
  }
}
