// Multi-GPU benchmark, one command on a machine with 2+ GPUs (NVLink): each row's tirx-ts side
// against its peer, all from one process driving every GPU (the peer of the GEMM row in
// torchrun's processes):
// - all-reduce of bfloat16, 256 KiB .. 4 MiB and 256 MiB per GPU: tirx-ts's one-shot and
//   two-shot kernels (bench/multi-gpu-kernels.ts: T.nvshmem on symmetric tensors, barrier_all)
//   against NCCL's ncclAllReduce (runtime-cuda's NcclComm) on the same GPUs; time per
//   all-reduce (µs, CUDA events around `iters` back-to-back launches on each GPU, the slowest
//   GPU's mean) and bus bandwidth 2(P − 1)/P · bytes / time;
// - all-gather + GEMM, M = N = K = 8192 (A sharded by rows over P GPUs, bfloat16): tirx-ts's
//   pulls of each peer's row block (gather_block on a copy stream) overlapped with kernels'
//   Hopper GEMM of each block as it lands (a compute stream waiting on an event per block)
//   against PyTorch's NCCL all-gather then torch.matmul (bench/multi_gpu_peers.py under
//   torchrun).
// Every result is checked against the host's exact values (all of it for the all-reduce, a
// sample of C for the GEMM) before it is timed. Every process gets MULTI_GPU_ENV
// (NCCL_NVLS_ENABLE=0, NVSHMEM_DISABLE_NVLS=1, TORCH_SYMM_MEM_DISABLE_MULTICAST=1): the
// machines must not create multicast objects, and nothing here calls cuMulticastCreate.
// Usage: npx tsx -C source bench/multi-gpu.ts [--gpus N] [--dry-run] [--iters N] [--warmup N]
//   [--ctas N] [--no-torch] [--out FILE]
// --dry-run prints the plan and builds every kernel's PTX (sm_90a), touching no GPU.
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { bf16Bits, bf16Value, type KernelArg, type PrimFunc } from "@tirx-ts/core";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import {
  CU_DEVICE_ATTRIBUTE,
  CudaEvent,
  CudaStream,
  MULTI_GPU_ENV,
  NcclComm,
  SYMMETRIC_GRANULARITY,
  SymmetricTensor,
  compileCuda,
  cuda,
  cudaEmpty,
  driver,
  launchPes,
  ncclEnvironment,
  symmetricGranularity,
  type CudaDevice,
  type CudaTensor,
  type PeArg,
} from "@tirx-ts/runtime-cuda";
import { gemmChoice, makeGemm } from "@tirx-ts/kernels";
import {
  allreduceCtas,
  allreduceSum,
  allreduceValue,
  caseKernels,
  formatMultiGpuTable,
  gemmA,
  gemmB,
  multiGpuPlan,
  parseMultiGpuArgs,
  sizeText,
  type MultiGpuCase,
  type MultiGpuOptions,
  type MultiGpuRow,
} from "./multi-gpu-cases.js";
import {
  allreduceShard,
  gatherShard,
  makeGatherBlock,
  makeOneShot,
  makeTwoShot,
} from "./multi-gpu-kernels.js";

export { multiGpuPlan, type MultiGpuCase } from "./multi-gpu-cases.js";

/** The environment of every process the bench starts. */
export function benchEnv(): NodeJS.ProcessEnv {
  return { ...process.env, ...MULTI_GPU_ENV };
}

/** The PTX target of the dry run's kernels (the H100/H200's). */
const DRY_ARCH = "sm_90a";

/**
 * The dry run: the plan, each row's kernels built and emitted as PTX for `gpus` GPUs (shards
 * padded to the 2 MiB granularity, grids of at most `ctas` CTAs), and the commands it would run.
 * Touches no GPU. @returns the lines printed.
 */
export function dryRun(o: MultiGpuOptions): string[] {
  const lines: string[] = [];
  const ctas = o.ctas ?? 132;
  for (const c of multiGpuPlan(o.gpus)) {
    lines.push(`${c.kind} ${c.dtype} ${caseSize(c)}`);
    for (const fn of caseKernels(c, o.gpus, ctas, SYMMETRIC_GRANULARITY)) {
      const m = compileToPtx(fn, { arch: DRY_ARCH });
      lines.push(
        `  tirx-ts kernel ${fn.name}: grid ${m.launch.grid.join("×")}, block ${m.launch.block[0]}, ${m.text.length} bytes of ${DRY_ARCH} PTX`,
      );
    }
    lines.push(`  tirx-ts: ${c.tirx}`, `  peer:    ${c.peer}`);
  }
  lines.push(
    `would run the peer as: ${torchCommand(o.gpus).join(" ")} (environment ${envText()})`,
    "dry run: nothing was launched",
  );
  return lines;
}

function caseSize(c: MultiGpuCase): string {
  return c.kind === "allreduce" ? `${sizeText(c.size)}/GPU` : `M=N=K=${c.size}`;
}

function envText(): string {
  return Object.entries(MULTI_GPU_ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
}

/** The torchrun command of the GEMM row's peer. */
function torchCommand(gpus: number, iters = 20): string[] {
  const script = fileURLToPath(new URL("./multi_gpu_peers.py", import.meta.url));
  return [
    "python3",
    "-m",
    "torch.distributed.run",
    "--standalone",
    `--nproc-per-node=${gpus}`,
    script,
    "--size",
    "8192",
    "--iters",
    String(iters),
  ];
}

/** bfloat16 bits of `n` values `f(i)`, as bytes for copyFrom. */
function bf16Bytes(n: number, f: (i: number) => number): Uint8Array {
  const u = new Uint16Array(n);
  for (let i = 0; i < n; i++) u[i] = bf16Bits(f(i));
  return new Uint8Array(u.buffer);
}

/**
 * Time `step` (which only queues work on every GPU of `devices`, on their default streams or
 * streams waited for by them) over `iters` calls after `warmup`: CUDA events on each GPU's
 * default stream around the calls; µs per call on the slowest GPU.
 */
function timeOnGpus(
  devices: readonly CudaDevice[],
  step: () => void,
  o: MultiGpuOptions,
  streams?: readonly CudaStream[],
): number {
  for (let i = 0; i < o.warmup; i++) step();
  for (const d of devices) d.synchronize();
  const start = devices.map((d) => new CudaEvent(d));
  const end = devices.map((d) => new CudaEvent(d));
  devices.forEach((d, p) => {
    d.activate();
    start[p]!.record(streams?.[p] ?? null);
  });
  for (let i = 0; i < o.iters; i++) step();
  devices.forEach((d, p) => {
    d.activate();
    end[p]!.record(streams?.[p] ?? null);
  });
  for (const d of devices) d.synchronize();
  const us = devices.map((_, p) => (end[p]!.elapsedMsSince(start[p]!) * 1000) / o.iters);
  for (const e of [...start, ...end]) e.dispose();
  return Math.max(...us);
}

/**
 * One launch of `fn` on every GPU through launchPes (which writes the PE state), then a step
 * that queues the same launches through each GPU's bound launcher (no argument planning per
 * call: the arguments and the state are those of the first launch).
 */
function boundPes(
  fn: PrimFunc,
  devices: readonly CudaDevice[],
  args: readonly PeArg[],
  streams: readonly (CudaStream | null)[] = [],
): () => void {
  const compiled = compileCuda(fn);
  const plans = launchPes(fn, () => compiled, devices, args, streams);
  const bound = plans.map((p) => p.compiled.launcher(p.device));
  return () => plans.forEach((p, i) => bound[i]!(p.args, streams[i] ?? null));
}

/** The all-reduce row: tirx-ts one-shot and two-shot, checked, timed; NCCL timed. */
function allreduceRow(
  c: MultiGpuCase,
  devices: readonly CudaDevice[],
  o: MultiGpuOptions,
  comms: readonly NcclComm[] | string,
): MultiGpuRow {
  const P = devices.length;
  const n = c.size / 2;
  const ordinals = devices.map((d) => d.ordinal);
  const granularity = Math.max(...ordinals.map((d) => symmetricGranularity(d)));
  const s = { pes: P, n, ctas: allreduceCtas(n, o.ctas ?? smCount(devices[0]!)), granularity };
  const shard = allreduceShard(s);
  const X = SymmetricTensor.allocate(ordinals, [shard], "bfloat16");
  const Y = SymmetricTensor.allocate(ordinals, [shard], "bfloat16").zero();
  const outs = devices.map((d) => cudaEmpty([n], "bfloat16", d));
  try {
    devices.forEach((_, p) =>
      X.slice(p, 0, [n]).copyFrom(bf16Bytes(n, (i) => allreduceValue(p, i))),
    );
    const want = bf16Bytes(n, (i) => bf16Value(bf16Bits(allreduceSum(P, i))));
    const same = (t: CudaTensor): boolean => Buffer.from(t.toBytes()).equals(want);
    const oneShot = boundPes(makeOneShot(s), devices, [X, outs]);
    const twoShot = boundPes(makeTwoShot(s), devices, [X, Y]);
    for (const d of devices) d.synchronize();
    const correct = outs.every(same) && devices.every((_, p) => same(Y.slice(p, 0, [n])));
    const tirxUs = {
      "one-shot": timeOnGpus(devices, oneShot, o),
      "two-shot": timeOnGpus(devices, twoShot, o),
    };
    let peerUs: number | string = typeof comms === "string" ? comms : 0;
    if (typeof comms !== "string") {
      const send = devices.map((_, p) => X.slice(p, 0, [n]));
      peerUs = timeOnGpus(
        devices,
        () => NcclComm.group(() => comms.forEach((k, r) => k.allReduce(send[r]!, outs[r]!, "sum"))),
        o,
      );
    }
    return { case: c, tirxUs, peerUs, correct };
  } finally {
    for (const t of [X, Y, ...outs]) t.dispose();
  }
}

/** SMs of `d` (CTAs per GPU of the bench's grids). */
function smCount(d: CudaDevice): number {
  const drv = driver();
  return drv.deviceAttribute(CU_DEVICE_ATTRIBUTE.MULTIPROCESSOR_COUNT, drv.deviceGet(d.ordinal));
}

/**
 * The all-gather + GEMM row: per GPU, the own block's GEMM at once on a compute stream; each
 * peer's block pulled on a copy stream (gather_block), an event, the compute stream waiting for
 * it, then that block's GEMM. A sample of C checked against the host; timed per iteration.
 */
function allgatherGemmRow(
  c: MultiGpuCase,
  devices: readonly CudaDevice[],
  o: MultiGpuOptions,
): MultiGpuRow {
  const P = devices.length;
  const M = c.size;
  const K = c.size;
  const N = c.size;
  const mp = M / P;
  const ordinals = devices.map((d) => d.ordinal);
  const granularity = Math.max(...ordinals.map((d) => symmetricGranularity(d)));
  const g = { pes: P, m: M, k: K, ctas: o.ctas ?? smCount(devices[0]!), granularity };
  const A = SymmetricTensor.allocate(ordinals, [gatherShard(g)], "bfloat16");
  const C = SymmetricTensor.allocate(ordinals, [M * N], "bfloat16");
  const B = devices.map((d) => cudaEmpty([K, N], "bfloat16", d));
  const compute = devices.map((d) => new CudaStream(d));
  const copy = devices.map((d) => new CudaStream(d));
  try {
    devices.forEach((_, p) => {
      A.slice(p, p * mp * K, [mp * K]).copyFrom(
        bf16Bytes(mp * K, (i) => gemmA(p * mp + Math.floor(i / K), i % K)),
      );
      B[p]!.copyFrom(bf16Bytes(K * N, (i) => gemmB(Math.floor(i / N), i % N)));
    });
    const block = (p: number, src: number) => A.slice(p, src * mp * K, [mp, K]);
    const out = (p: number, src: number) => C.slice(p, src * mp * N, [mp, N]);
    let config = gemmChoice(block(0, 0), B[0]!).config;
    if ((config.splitK ?? 1) > 1) config = { ...config, splitK: 1 };
    const gemmFn = makeGemm({ m: mp, n: N, k: K, dtype: "bfloat16", config }).main;
    const gemmC = compileCuda(gemmFn);
    const gather = makeGatherBlock(g);
    // Every PE's gather of the block t steps ahead, bound once per t (srcs differ per PE).
    const gathers = Array.from({ length: P - 1 }, (_, t) =>
      boundPes(gather, devices, [A, devices.map((_, p) => (p + t + 1) % P) as KernelArg[]], copy),
    );
    const events = devices.map((d) => Array.from({ length: P }, () => new CudaEvent(d, false)));
    const step = (): void => {
      devices.forEach((_, p) => gemmC.launchOn(compute[p]!, block(p, p), B[p]!, out(p, p)));
      gathers.forEach((launch, t) => {
        launch();
        devices.forEach((d, p) => {
          d.activate();
          events[p]![t]!.record(copy[p]!);
          compute[p]!.wait(events[p]![t]!);
          const src = (p + t + 1) % P;
          gemmC.launchOn(compute[p]!, block(p, src), B[p]!, out(p, src));
        });
      });
    };
    // The first gathers ran in boundPes; one full step, then check a sample of C.
    step();
    for (const d of devices) d.synchronize();
    let correct = true;
    for (let p = 0; p < P; p++) {
      const got = C.slice(p, 0, [M * N]).toArray() as ArrayLike<number>;
      for (let j = 0; j < 64; j++) {
        const r = (j * 2654435761) % M;
        const col = (j * 40503) % N;
        let want = 0;
        for (let k = 0; k < K; k++) want += gemmA(r, k) * gemmB(k, col);
        if (got[r * N + col] !== bf16Value(bf16Bits(want))) correct = false;
      }
    }
    // Each iteration on a GPU starts when its compute stream is free; the copy stream waits for
    // it, so a block's pull never overlaps the previous iteration's GEMM of the same block.
    const iter = (): void => {
      devices.forEach((d, p) => {
        d.activate();
        events[p]![P - 1]!.record(compute[p]!);
        copy[p]!.wait(events[p]![P - 1]!);
      });
      step();
    };
    const tirxUs = { "gather + GEMM overlapped": timeOnGpus(devices, iter, o, compute) };
    return { case: c, tirxUs, peerUs: o.noTorch ? "not run (--no-torch)" : torchPeer(P), correct };
  } finally {
    for (const t of [A, C, ...B, ...compute, ...copy]) t.dispose();
  }
}

/** The PyTorch peer's µs per iteration, or why there is none. */
function torchPeer(gpus: number): number | string {
  const [cmd, ...args] = torchCommand(gpus);
  const r = spawnSync(cmd!, args, { env: benchEnv(), encoding: "utf8", timeout: 600_000 });
  const line = (r.stdout ?? "").split("\n").find((l) => l.startsWith("{"));
  if (r.status !== 0 || !line) {
    return `failed (${r.status ?? r.signal}): ${(r.stderr ?? "").trim().split("\n").at(-1) ?? ""}`;
  }
  return (JSON.parse(line) as { ms: number }).ms * 1000;
}

/** Run the bench (or the dry run) for `argv`; prints as it goes. @returns the exit code. */
export function main(argv: readonly string[]): number {
  const o = parseMultiGpuArgs(argv);
  ncclEnvironment();
  console.log(`multi-GPU bench on ${o.gpus} GPUs (environment: ${envText()})`);
  if (o.dryRun) {
    for (const l of dryRun(o)) console.log(l);
    return 0;
  }
  const count = driver().deviceCount();
  if (count < o.gpus) {
    console.log(`${count} GPUs here, ${o.gpus} asked for (--gpus)`);
    return 1;
  }
  const devices = Array.from({ length: o.gpus }, (_, d) => cuda(d));
  let comms: NcclComm[] | string;
  try {
    comms = NcclComm.initAll(devices.map((d) => d.ordinal));
  } catch (e) {
    console.log(`no NCCL peer: ${(e as Error).message}`);
    comms = "n/a (no NCCL)";
  }
  const rows: MultiGpuRow[] = [];
  try {
    for (const c of multiGpuPlan(o.gpus)) {
      console.log(`${c.kind} ${caseSize(c)} ...`);
      const row =
        c.kind === "allreduce"
          ? allreduceRow(c, devices, o, comms)
          : allgatherGemmRow(c, devices, o);
      rows.push(row);
      for (const l of formatMultiGpuTable([row], o.gpus).split("\n").slice(2)) console.log(l);
    }
  } finally {
    if (typeof comms !== "string") for (const k of comms) k.destroy();
  }
  const table = formatMultiGpuTable(rows, o.gpus);
  console.log(`\n${table}`);
  if (o.out) writeFileSync(o.out, `${table}\n`);
  return rows.every((r) => r.correct) ? 0 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
