import {
  checkArgs,
  invariant,
  launchArgError,
  launchGrid,
  DEFAULT_PASSES,
  runPipeline,
  showValue,
  TirxError,
  type KernelArg,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { AsyncUnit } from "./exec/async-copy.js";
import { Machine } from "./exec/machine.js";
import { launchOptions, type HazardMode } from "./exec/launch-options.js";
import { ExprCompiler } from "./compile/expr.js";
import { affineVars } from "./compile/affine.js";
import { layoutOf } from "./compile/layout.js";
import type { Exec } from "./compile/stmt.js";
import { compileRoot } from "./compile/blocking.js";
import { checkTensorMapsAtLaunch } from "./compile/tensor-maps.js";
import { hostScalar } from "./numeric/cast.js";
import { sim } from "./device.js";
import { SimTensor } from "./tensor.js";
import { Tracer, type TraceEvent } from "./exec/trace.js";
import { seedOf } from "./compile/schedule.js";
import { AccessLog, type SiteAccesses } from "./exec/access-log.js";
import { writtenParams } from "./compile/written.js";
import { JIT_AFTER_LANES } from "./compile/jit.js";
import { simCounters } from "./counters.js";

/** Options of `runSim`. */
export interface SimOptions {
  /**
   * `"throw"` (default): the first hazard throws its TirxError and the launch stops.
   * `"collect"`: every hazard is recorded (the first of each code at each pair of source sites)
   * and the launch runs to the end.
   * `"off"`: like "collect", but the per-byte bookkeeping of races and pending copies is skipped
   * (only bounds, deadlocks and runtime contracts report); for measuring what tracking costs.
   */
  readonly hazards?: HazardMode;
  /**
   * The schedule (compile/schedule.ts): 0 is lockstep; another seed runs each stretch of
   * statements between barriers warp by warp in a seeded order. Default: TIRX_SIM_SEED when set,
   * else 0. Every hazard report carries the seed as its last note.
   */
  readonly simSeed?: number;
  /** Record a trace of the launch (SimResult.trace; see Tracer). */
  readonly trace?: boolean;
  /**
   * Log shared-memory accesses of cp.async tile instructions and ldmatrix/stmatrix per access
   * site (SimResult.accesses): bank-conflict wavefronts, and every lane's moves of each site's
   * first execution in CTA 0 (the pictures of `tirx layout`).
   */
  readonly accesses?: boolean;
  /**
   * Whether element accesses of consecutive threads at consecutive addresses are checked and
   * recorded as ranges (default true; see exec/access-batch.ts). False checks every access as it
   * is made: slower, with the same reports. (In "throw" mode the tensors' bytes after a report are
   * unspecified: with range checks the reporting statement's other lanes have stored already.)
   */
  readonly rangeChecks?: boolean;
  /**
   * Lanes a plain Store or Let statement runs on closures before it moves to a generated
   * JavaScript function (compile/jit.ts; default 4096). 0 generates at the first execution,
   * Infinity never: both compute the same values and report the same hazards. The count runs
   * over every launch of the VerifiedFunc, and a statement that moved stays moved.
   */
  readonly jitAfter?: number;
  /**
   * PEs (simulated GPUs) of the launch, 1 to 8 (default 1): every PE runs the same kernel over the
   * same grid, `T.nvshmem.my_pe()` differing. The CTAs of one index on the P PEs run together, as
   * one group whose warps the scheduler interleaves as it interleaves a CTA's (so cross-PE
   * interleavings are explored as warps' are, with any seed). Global memory is shared by the PEs:
   * a symmetric tensor is passed as one tensor whose leading dim is the PE (TIRx's device axis
   * `pid`), PE p's copy at index p, so a remote access is an ordinary access with the usual
   * checks (races across PEs, TX6003/TX6013/TX6014 naming both lines and both PEs; out of bounds,
   * TX6005; a signal no PE sends, TX6006 naming it). A cluster launch cannot have several PEs.
   */
  readonly pes?: number;
}

/** What a simulated launch reports. */
export interface SimResult {
  /** Hazards found, in the order they happened (always empty in "throw" mode). */
  readonly reports: readonly TirxError[];
  /** The launch's trace events (Chrome / Perfetto `traceEvents`), when `trace` was set. */
  readonly trace?: readonly TraceEvent[];
  /** Per access site, in source order of first execution, when `accesses` was set. */
  readonly accesses?: readonly SiteAccesses[];
}

interface Compiled {
  readonly m: Machine;
  readonly body: Exec;
  readonly scalars: readonly {
    index: number;
    slot: number;
    wide: boolean;
    dtype: Parameters<typeof hostScalar>[1];
  }[];
}

const cache = new WeakMap<VerifiedFunc, Map<number, Compiled>>();

function compile(vf: VerifiedFunc, pes: number): Compiled {
  const hit = cache.get(vf)?.get(pes);
  if (hit) return hit;
  const original = vf;
  // The stages code generation runs after verify, except upcast-half: the simulator rounds
  // 16-bit results once from the exact value (numeric/float.ts), so it needs no float32 detour.
  vf = runPipeline(
    vf,
    DEFAULT_PASSES.filter((p) => p.name !== "upcast-half"),
  );
  const layout = layoutOf(vf);
  const [bx, by, bz] = vf.launch.block;
  const clusterCtas = (vf.launch.cluster ?? [1, 1, 1]).reduce((a, b) => a * b, 1);
  if (pes > 1 && clusterCtas > 1) {
    throw new TirxError(
      "TX2010",
      `a cluster launch of ${clusterCtas} CTAs on ${pes} PEs is not supported by the simulator: it runs the PEs' CTAs of one index together as a cluster's`,
      vf.fn.span,
    );
  }
  const ctas = pes > 1 ? pes : clusterCtas;
  if (pes > 1 && ((bx * by * bz) % 32 !== 0 || bx * by * bz * ctas > 1024)) {
    throw new TirxError(
      "TX2010",
      `${pes} PEs of CTAs of ${bx * by * bz} threads are not supported by the simulator: it runs the PEs' CTAs of one index together, at most 1024 threads in all, each CTA a whole number of warps`,
      vf.fn.span,
    );
  }
  if (ctas > 1 && ((bx * by * bz) % 32 !== 0 || bx * by * bz * ctas > 1024)) {
    // Threads are numbered across the cluster in 10 bits (race records), warps must not straddle CTAs.
    throw new TirxError(
      "TX2010",
      `a cluster of ${ctas} CTAs of ${bx * by * bz} threads is not supported by the simulator: it runs a cluster's CTAs together, at most 1024 threads in all, each CTA a whole number of warps`,
      vf.fn.span,
    );
  }
  const m = new Machine(
    vf.launch,
    { num: layout.numSlots, big: layout.bigSlots },
    layout.sharedBytes,
    layout.localStride,
    (n) => new AsyncUnit(n),
    pes,
  );
  m.written = writtenParams(vf.entry.body, layout);
  m.exitSite = m.site(vf.fn.span);
  const ec = new ExprCompiler(m, layout);
  const vars = affineVars(
    vf.entry.body,
    vf.fn.params.flatMap((p) => (p.kind === "scalar" ? [p.var.id] : [])),
  );
  ec.letValues = vars.values;
  ec.uniformVars = vars.uniform;
  ec.loopVarsOnce = vars.loops;
  const body = compileRoot(ec, vf, vf.entry.body);
  const scalars = vf.fn.params.flatMap((p, index) => {
    if (p.kind !== "scalar") return [];
    const s = layout.slots.get(p.var.id)!;
    return [{ index, slot: s.slot, wide: s.wide, dtype: p.var.dtype }];
  });
  const c = { m, body, scalars };
  let byPes = cache.get(original);
  if (!byPes) cache.set(original, (byPes = new Map()));
  byPes.set(pes, c);
  simCounters.compiles++;
  return c;
}

/** runSim's options and what each takes. */
const SIM_OPTIONS: Record<keyof SimOptions, (v: unknown) => boolean> = {
  hazards: (v) => v === "throw" || v === "collect" || v === "off",
  simSeed: (v) => typeof v === "number" && Number.isInteger(v),
  trace: (v) => typeof v === "boolean",
  accesses: (v) => typeof v === "boolean",
  rangeChecks: (v) => typeof v === "boolean",
  jitAfter: (v) => typeof v === "number" && v >= 0,
  pes: (v) => typeof v === "number" && Number.isInteger(v) && v >= 1 && v <= 8,
};

/**
 * runSim's own arguments: a verified function and options it knows, each of its type.
 * @throws TirxError TX1002 naming what is wrong.
 */
function checkSimCall(vf: unknown, opts: unknown): void {
  const f = vf as Partial<VerifiedFunc> | null | undefined;
  if (typeof f !== "object" || f === null || f.fn?.kind !== "PrimFunc" || !f.entry) {
    throw new TirxError("TX1002", `runSim needs the result of verify(fn), got ${showValue(vf)}`);
  }
  if (typeof opts !== "object" || opts === null || Array.isArray(opts)) {
    throw new TirxError("TX1002", `runSim options must be an object, got ${showValue(opts)}`);
  }
  for (const [k, v] of Object.entries(opts)) {
    const ok = (SIM_OPTIONS as Record<string, (v: unknown) => boolean>)[k];
    if (v === undefined || (ok && ok(v))) continue;
    throw new TirxError(
      "TX1002",
      ok
        ? `runSim option ${k} cannot be ${showValue(v)}`
        : `runSim has no option "${k}" (options: ${Object.keys(SIM_OPTIONS).join(", ")})`,
    );
  }
}

/**
 * Run a verified kernel on the simulated device: every CTA of the grid in turn (x fastest), the
 * threads of a CTA in lockstep statement by statement, with GPU numerics, the cp.async group
 * semantics of the PTX ISA, mbarriers and cp.async.bulk (see exec/mbarrier.ts and exec/bulk.ts
 * for the timing model). A cluster launch runs the CTAs of each cluster together, as one group
 * of threads with a shared window per CTA (see Machine and exec/cluster.ts): barrier.cluster,
 * mapa and remote mbarrier arrives, TMA multicast into every CTA of its cta_mask.
 * Tensor arguments are updated in place. The kernel is compiled into closures once per
 * VerifiedFunc and cached. A kernel with mbarrier wait loops runs under a scheduler: a wait that
 * fails yields, divergent branches of an `if` take turns, and bulk copies in flight land when
 * every thread is blocked.
 *
 * Hazards (TirxError, span = the offending access, a note with the other access): TX6001 shared
 * bytes accessed while a cp.async targeting them is pending; TX6002 global bytes written while a
 * pending cp.async reads them; TX6003 a read of another thread's write not ordered before it by
 * happens-before (cta_sync, named barriers, warp collectives, mbarrier phases; see
 * exec/clocks.ts and exec/shared-shadow.ts), or of a global write by another CTA of the launch
 * (also an mbarrier used by another thread than its initialiser without ordering);
 * TX6004 a read of never-written shared memory (also an mbarrier used before mbarrier.init);
 * TX6005 out of bounds (also a load in the arm of an if_then_else that is not selected), or an
 * author index outside its axis that the verifier left to the run because it reads data
 * (compile/axis-check.ts: the access is skipped); TX6006
 * an mbarrier wait that can never complete (every thread blocked, no bulk copy in flight), or a
 * spin loop that never ends; TX6007 shared bytes of a global → shared bulk copy accessed before
 * the thread observed its mbarrier phase, shared bytes written before a pending shared → global
 * bulk copy read them, global bytes accessed that a pending shared → global bulk copy writes;
 * TX6008 two cp.async of one group writing the same bytes; TX6009 a cta_sync not reached by
 * every thread of the CTA; TX6013 a write (store, atomic, cp.async or bulk-copy issue) after
 * another thread's unordered read (on global memory also another CTA's read; reads are recorded
 * for tensors the kernel may write); TX6014 a write after another thread's (or another CTA's)
 * unordered write (atomics do not race with atomics, nor the lanes of one warp storing to the
 * same bytes in one instance of one store instruction: exec/store-instances.ts); TX6015 a bulk
 * copy reading shared bytes a generic-proxy write left without fence.proxy.async; TX6016 a bulk
 * copy completing on an mbarrier whose init had no fence.mbarrier_init; TX6017 a CTA exiting
 * with cp.async or bulk copies not waited for, or an mbarrier phase with transaction bytes
 * outstanding; TX6025 a CTA exiting while a remote mbarrier arrive from another CTA of its
 * cluster is not ordered before its exit, or a multicast into it landed in a phase none of its
 * threads observed (PTX ISA, distributed shared memory); TX6006 also a cluster barrier some
 * threads never arrive at; TX6028 a read of a register (an element of a local array) that its
 * thread has not written since its CTA started (exec/local-written.ts).
 * Runtime contracts (the verifier's static range checks, applied to runtime values at their
 * line): TX6010 src_size above chunk_bytes; TX6020 an mbarrier.init count outside
 * [1, 2^20 - 1]; TX6021 a cp.async / bulk-copy address not aligned to its chunk (16 bytes for
 * bulk); TX6022 bulk copies completing more bytes on an mbarrier phase than expect_tx announced.
 * @throws TirxError TX1002 for a `vf` that is not verify's result or an unknown or mistyped
 *   option; TX4027 (a tensor map's tensor not 16-byte aligned) and TX4017, TX4024, TX4028,
 *   TX4029 for a tensor map the driver would refuse at this launch (compile/tensor-maps.ts);
 *   TX5001-TX5005, TX5008, TX5011 and TX5012 from core's checkArgs; TX5009 for a runtime grid
 *   extent out of range; TX5004 when a tensor is not a sim
 *   tensor; TX2010 for an intrinsic the simulator does not support, or a cluster of more than
 *   1024 threads or of CTAs that are not whole warps (also P PEs' CTAs of one index), a
 *   cluster launch with `pes` > 1; the first hazard in "throw" mode.
 * @example const { reports } = runSim(verify(fn), [a, b], { hazards: "collect" });
 */
export function runSim(
  vf: VerifiedFunc,
  args: readonly KernelArg[],
  opts: SimOptions = {},
): SimResult {
  checkSimCall(vf, opts);
  const dev = checkArgs(vf.fn, args);
  if (dev !== undefined && dev !== sim()) {
    throw launchArgError(
      "TX5004",
      `kernel "${vf.fn.name}" runs on the sim device, but its tensors live on ${dev.name}`,
      vf.fn,
    );
  }
  const tensors = args.map((a, i) => {
    if (vf.fn.params[i]!.kind !== "buffer") return undefined;
    if (!SimTensor.is(a)) {
      throw launchArgError(
        "TX5004",
        `argument ${i} ("${vf.fn.params[i]!.name}") is not a tensor of the simulated device; make it with tensor(x, { device: sim() }) (or simTensor())`,
        vf.fn,
      );
    }
    return a;
  });
  // Tensor maps the driver would refuse at this launch (address, launch dims): refused here too.
  checkTensorMapsAtLaunch(vf, tensors);
  const { m, body, scalars } = compile(vf, opts.pes ?? 1);
  const names = vf.fn.params.map((p) => ({
    name: p.name,
    ...(p.kind === "buffer" && p.buffer.span ? { span: p.buffer.span } : {}),
  }));
  const [gx, gy, gz] = launchGrid(vf.fn, vf.launch, args);
  const [kx, ky, kz] = m.cluster;
  // The verifier requires a static grid that is a multiple of the cluster dims (TX4025).
  invariant(gx % kx === 0 && gy % ky === 0 && gz % kz === 0, "the clusters tile the grid");
  const T = m.threads;
  const tracer = opts.trace ? new Tracer(T) : undefined;
  const log = opts.accesses ? new AccessLog() : undefined;
  const mode = opts.hazards ?? "throw";
  m.beginLaunch(
    tensors,
    names,
    launchOptions({
      mode,
      track: mode !== "off",
      seed: seedOf(opts.simSeed),
      jitAfter: opts.jitAfter ?? JIT_AFTER_LANES,
      rangeChecks: opts.rangeChecks ?? true,
      grid: [gx, gy, gz],
      tracer,
      accesses: log,
    }),
  );
  for (const s of scalars) {
    const v = hostScalar(args[s.index] as number | bigint | boolean, s.dtype);
    if (s.wide) m.big.fill(v as bigint, s.slot * T, (s.slot + 1) * T);
    else m.num.fill(v as number, s.slot * T, (s.slot + 1) * T);
  }
  try {
    // A cluster of several CTAs runs as one group of threads (see Machine).
    for (let z = 0; z < gz; z += kz) {
      for (let y = 0; y < gy; y += ky) {
        for (let x = 0; x < gx; x += kx) {
          m.beginCta(x, y, z);
          m.signals.reset();
          body(m.allLanes, T);
          m.flushHeld();
          if (!m.bars.deadlocked) m.wgmma.aligned.settle(m, "by the end of the CTA");
          m.async.reportPending(m);
          m.bars.reportIncomplete(m);
          m.clusterUnit.reportExit(m);
          tracer?.endCta();
          m.async.dropAll(m);
          m.bulk.finishCta(m);
        }
      }
    }
  } finally {
    simCounters.loopIterations += m.loopIterations;
    m.loopIterations = 0;
    m.async.dropAll(m);
    m.bulk.dropAll(m);
    m.endLaunch();
  }
  return {
    reports: m.reports,
    ...(tracer ? { trace: tracer.events } : {}),
    ...(log ? { accesses: [...log.sites.values()] } : {}),
  };
}
