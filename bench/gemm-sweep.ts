// gemm() of @tirx-ts/kernels on the GPU beside torch, on the same inputs: D = A·Bᵀ (A [m, k],
// B [n, k], both K-major) for M ∈ {16, 128, 1024, 8192} × (N, K) ∈ {(4096, 4096), (14336, 4096),
// (4096, 14336), (8192, 8192), (28672, 8192), (8192, 28672)}:
//   bf16 → bf16 against torch.matmul; float8 e4m3 × e4m3 with per-tensor scales → bf16 against
//   torch._scaled_mm; float8 e4m3 with block scales (DeepSeek-V3's 1 × 128 / 128 × 128:
//   makeGemm's scales "block") against tirx-ts's own per-tensor float8 kernel of the same shape
//   (the cost of the promotion; target ≥ 0.9× on the large shapes); and at 8192³ the fused
//   bias + GELU (tanh) epilogue against torch's F.gelu(addmm(bias, a, b.T)), with plain bf16
//   beside it.
// The kernels are makeGemm's with the configuration gemm() takes untuned (its shipped default,
// GEMM_TUNED_DEFAULTS, else pickGemmConfig; with --tune,
// runtime's autotune over gemmTuneCandidates at the case's sizes, the choice in the table's
// config column and cached under the family name "gemm-sweep": a winner to copy into
// packages/kernels/src/gemm/config.ts's GEMM_TUNED_DEFAULTS) and the GPU's SM count as the
// persistent grid; each is checked on sampled entries against a float64
// reference (bench/gemm-sweep-cases.ts: referenceAt, boundAt) before it is timed. Inputs are
// deterministic and exact in bf16 / float8 (inputValue): a small kernel fills them here, torch
// makes the same bits in bench/gemm_peers.py (python3 subprocess). Times are medians of
// CUDA-event-timed launches (timeLaunches) after one checked launch (an fp8-block case and its
// per-tensor peer in --rounds rounds (6) alternating ABBA, each side the median of its rounds' medians:
// the ratio then holds under the GPU's clock drift); split-K configurations
// include the workspace's memset and the epilogue kernel.
// Usage: tsx -C source bench/gemm-sweep.ts [--ms 16,128] [--shapes 4096x4096]
//   [--kinds bf16,fp8,fp8-fast,fp8-block,bias-gelu] [--epilogue-size 8192] [--iters N]
//   [--rounds N] [--no-peers]
//   [--tune] [--scale-load global,tma,shared] [--out results.md] [--dry-run] [--help]
// --scale-load times each fp8-block case once per scale load of the block scales (makeGemm's
// config.scaleLoad: "global", ld.global two K-tiles ahead; "tma", A's staged by TMA with each
// K-tile, as given when ⌈k/128⌉ is a multiple of 4, else first transposed to the MN-major layout
// the kernel then reads, inside the timed launch as gemm() does, the transposition's own time in
// the row's note; "shared", as "tma" and B's copied into shared memory once per tile).
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { DType, PrimFunc } from "@tirx-ts/core";
import type { GemmConfig, GemmSizes } from "@tirx-ts/kernels";
import {
  FP8_SCALES,
  PEER,
  SCALE_BLOCK,
  SEEDS,
  blockScaleValue,
  USAGE,
  boundAt,
  describeGemmCase,
  formatGemmTable,
  gemmSweepCases,
  parseGemmArgs,
  referenceAt,
  type GemmCase,
  type GemmRow,
} from "./gemm-sweep-cases.js";
import { warmUpFor } from "./warm-up.js";

const repo = (p: string): string => fileURLToPath(new URL(`../${p}`, import.meta.url));

const opts = parseGemmArgs(process.argv.slice(2));
if (opts.help) {
  console.log(USAGE);
  process.exit(0);
}
const cases = gemmSweepCases(opts);
const command = `tsx -C source bench/gemm-sweep.ts ${process.argv.slice(2).join(" ")}`.trim();
if (opts.dryRun) {
  console.log(`${command}: ${cases.length} cases (dry run, nothing launched)`);
  cases.forEach((c, i) => console.log(describeGemmCase(c, i)));
  process.exit(0);
}

/** Rounds of an fp8-block case and its per-tensor peer, timed alternately (ABBA). */
const ROUNDS = opts.rounds;
const rows: GemmRow[] = [];
let gpu = "unknown GPU";

// ---- torch ----
if (opts.peers) {
  const work = mkdtempSync(join(tmpdir(), "gemm-sweep-"));
  const plan = join(work, "plan.json");
  writeFileSync(plan, JSON.stringify({ cases, seeds: SEEDS, scales: FP8_SCALES }));
  console.log(`peers: python3 bench/gemm_peers.py ${plan}`);
  const child = spawn("python3", [repo("bench/gemm_peers.py"), plan], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const closed = new Promise<string>((resolve) => {
    child.on("error", (e) => resolve(String(e)));
    child.on("close", (code, signal) => resolve(code === 0 ? "" : `exit ${code ?? signal}`));
  });
  for await (const line of createInterface({ input: child.stdout })) {
    let j: Record<string, unknown> | undefined;
    try {
      j = line.startsWith("{") ? (JSON.parse(line) as Record<string, unknown>) : undefined;
    } catch {
      j = undefined;
    }
    if (j === undefined) {
      if (line.trim()) console.log(line);
    } else if (j.kind === "info") {
      gpu = `${String(j.gpu)} (torch ${String(j.torch)})`;
    } else if (j.kind === "result") {
      const row: GemmRow =
        j.skipped !== undefined
          ? {
              case: Number(j.case),
              variant: String(j.variant),
              note: `skipped: ${String(j.skipped)}`,
            }
          : { case: Number(j.case), variant: String(j.variant), us: Number(j.median_us) };
      rows.push(row);
      console.log(JSON.stringify(row));
    }
  }
  const failure = await closed;
  if (failure) {
    cases.forEach((c, i) => {
      if (!rows.some((r) => r.case === i && r.variant === PEER[c.kind])) {
        rows.push({
          case: i,
          variant: PEER[c.kind],
          note: `python3 bench/gemm_peers.py: ${failure}`,
        });
      }
    });
  }
  rmSync(work, { recursive: true, force: true });
}

// ---- tirx-ts ----
const rt = await import("@tirx-ts/runtime-cuda");
const probe = rt.cudaAvailable();
const mine = (ci: number, note: string): void => {
  rows.push({ case: ci, variant: "tirx-ts", note });
};
if (!probe.ok) cases.forEach((_, ci) => mine(ci, `no CUDA driver (${probe.reason})`));
else {
  const { T } = await import("@tirx-ts/dsl");
  const { decodeHost } = await import("@tirx-ts/core");
  const {
    makeGemm,
    makeScaleTransposeA,
    blockScaleShapeMN,
    tmaScalesAsGiven,
    scalesByTma,
    pickGemmConfig,
    gemmTuneCandidates,
    gemmTuneKey,
    GEMM_TUNED_DEFAULTS,
  } = await import("@tirx-ts/kernels");
  /** gemm()'s untuned choice: the shipped default of the case's key, else pickGemmConfig's. */
  const untuned = (
    kind: GemmCase["kind"],
    c: GemmCase,
    shape: Parameters<typeof pickGemmConfig>[0],
  ) => {
    const pick = pickGemmConfig(shape);
    const key = tuneKeyText(gemmTuneKey(sizesOf(kind, c, pick.config)));
    const shipped = GEMM_TUNED_DEFAULTS[key];
    return shipped ? { config: shipped, name: `default ${JSON.stringify(shipped)}` } : pick;
  };
  const { autotune, tuneKeyText } = await import("@tirx-ts/runtime");
  const dev = rt.cuda(0);
  if (gpu === "unknown GPU") gpu = dev.name;
  const ctas = rt
    .driver()
    .deviceAttribute(rt.CU_DEVICE_ATTRIBUTE.MULTIPROCESSOR_COUNT, rt.driver().deviceGet(0));
  /** The kernel filling X ([rows, cols], or [cols] when rowsN is 0) of `dtype` with inputValue(i, seed). */
  const fillKernel = (rowsN: number, cols: number, dtype: DType, seed: number): PrimFunc =>
    T.function("fill", { X: T.Tensor(rowsN ? [rowsN, cols] : [cols], dtype) }, ({ X }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({
          grid: Math.ceil((Math.max(rowsN, 1) * cols) / 256),
          block: 256,
        }),
      });
      const i = T.let_("i", T.add(T.mul(T.cuda.block_idx("x"), 256), T.cuda.thread_idx("x")));
      T.if_(i.lt(Math.max(rowsN, 1) * cols), () => {
        const fp8 = dtype === "float8_e4m3";
        const v = fp8
          ? T.floormod(T.add(T.mul(T.floormod(i, 13), 5), seed), 16)
          : T.floormod(T.add(T.mul(T.floormod(i, 251), 37), seed), 251);
        const x = T.sub(T.div(v.cast("float32"), fp8 ? 8 : 128), 1);
        X.set(rowsN ? [T.floordiv(i, cols), T.floormod(i, cols)] : [i], x.cast(dtype));
      });
    });
  const held: { dispose(): void }[] = [];
  const filled = (shape: [number, number], dtype: DType, seed: number) => {
    const t = rt.cudaEmpty(shape[0] ? shape : [shape[1]], dtype, dev);
    held.push(t);
    rt.compileCuda(fillKernel(shape[0], shape[1], dtype, seed), { device: dev })(t);
    return t;
  };
  const scalar = (x: number) => {
    const t = rt.cudaEmpty([1], "float32", dev).copyFrom(new Uint8Array(Float32Array.of(x).buffer));
    held.push(t);
    return t;
  };
  /** Block scales [rows, cols] float32 of blockScaleValue(i, b). */
  const scaleTensor = (rows: number, cols: number, b: boolean) => {
    const host = Float32Array.from({ length: rows * cols }, (_, i) => blockScaleValue(i, b));
    const t = rt.cudaEmpty([rows, cols], "float32", dev).copyFrom(new Uint8Array(host.buffer));
    held.push(t);
    return t;
  };
  type Kernels = ReturnType<typeof makeGemm>;
  type Config = GemmConfig;
  /**
   * makeGemm's sizes of a kind at c's sizes with `config` (an fp8-block case's forced scale
   * load replacing the config's).
   */
  const sizesOf = (kind: GemmCase["kind"], c: GemmCase, config: Config): GemmSizes =>
    ({
      ...{ m: c.m, n: c.n, k: c.k, transB: true, outDtype: "bfloat16", ctas },
      config:
        kind === "fp8-block" && c.scaleLoad !== undefined
          ? { ...config, scaleLoad: c.scaleLoad }
          : config,
      dtype: kind === "bf16" || kind === "bias-gelu" ? "bfloat16" : "float8_e4m3",
      ...(kind === "bias-gelu" ? { bias: "bfloat16", activation: "gelu" } : {}),
      ...(kind === "fp8" || kind === "fp8-fast" ? { scales: true } : {}),
      ...(kind === "fp8-fast" ? { fastAccum: true } : {}),
      ...(kind === "fp8-block" ? { scales: "block" } : {}),
    }) as GemmSizes;
  /**
   * The transposition of A's block scales `sa` [m, ⌈k/128⌉] into a new MN-major tensor (what a
   * config with scaleLoad "tma" or "shared" reads), as one launch: the tensor and the launch.
   */
  const scaleTransposer = (c: GemmCase, sa: unknown): { y: unknown; run: () => void } => {
    const y = rt.cudaEmpty([...blockScaleShapeMN(c.m, c.k)], "float32", dev);
    held.push(y);
    const t = rt.compileCuda(makeScaleTransposeA(c.m, c.k), { device: dev });
    const launch = t.launchAsync as (...x: unknown[]) => void;
    return { y, run: () => launch(sa, y) };
  };
  /**
   * One run of kernels `k` (main compiled as `main`) for case `c`: D = A·Bᵀ with the epilogue's
   * `args` and the main kernel's `tail` (block scales); split-K zeroes its workspace first; with
   * scaleLoad "tma" or "shared" and a kernel that takes A's scales MN-major (⌈k/128⌉ not a multiple of 4:
   * tmaScalesAsGiven), A's scales (tail[0]) are transposed first, as gemm() does.
   */
  const launcher = (
    k: Kernels,
    main: { readonly launchAsync: (...x: never[]) => void },
    c: GemmCase,
    A: unknown,
    B: unknown,
    D: unknown,
    args: readonly unknown[],
    tail: readonly unknown[],
  ): (() => void) => {
    const run = main.launchAsync as (...x: unknown[]) => void;
    const t =
      scalesByTma(k.config.scaleLoad) && !tmaScalesAsGiven(c.k)
        ? scaleTransposer(c, tail[0])
        : undefined;
    const last = t ? [t.y, ...tail.slice(1)] : tail;
    const first = t?.run ?? (() => {});
    if (!k.finish) {
      return () => {
        first();
        run(A, B, D, ...args, ...last);
      };
    }
    const Wt = rt.cudaEmpty([c.m, c.n], "float32", dev);
    held.push(Wt);
    const finish = rt.compileCuda(k.finish, { device: dev });
    const fin = finish.launchAsync as (...x: unknown[]) => void;
    return () => {
      first();
      rt.driver().memsetD8(Wt.ptr, 0, Wt.nbytes);
      run(A, B, Wt, ...last);
      fin(Wt, D, ...args);
    };
  };
  // The GPU is warmed up before the first case is tuned or timed (clocks, caches): the first
  // case's timings ran 2-4× slow on the H200 (bf16 16 × 4096 × 4096: 61.6 µs, against 26.7 µs for
  // torch right after): 300 ms of memsets of 256 MiB first, and the first case's own kernel.
  {
    const scratch = rt.cudaEmpty([1 << 26], "float32", dev);
    warmUpFor(
      () => rt.driver().memsetD8(scratch.ptr, 0, scratch.nbytes),
      () => rt.driver().ctxSynchronize(),
      300,
      1,
    );
    scratch.dispose();
  }
  /** Launches `launch` for about 300 ms of wall time (synchronizing every 20 launches). */
  const warmUp = (launch: () => void): void =>
    warmUpFor(launch, () => rt.driver().ctxSynchronize(), 300, 20);
  cases.forEach((c: GemmCase, ci) => {
    try {
      const fp8 = c.kind === "fp8" || c.kind === "fp8-fast" || c.kind === "fp8-block";
      const inDt = fp8 ? "float8_e4m3" : "bfloat16";
      const A = filled([c.m, c.k], inDt, SEEDS.a);
      const B = filled([c.n, c.k], inDt, SEEDS.b);
      const D = rt.cudaEmpty([c.m, c.n], "bfloat16", dev);
      held.push(D);
      const perTensor = [scalar(FP8_SCALES[0]), scalar(FP8_SCALES[1])];
      const args =
        c.kind === "bias-gelu"
          ? [filled([0, c.n], "bfloat16", SEEDS.bias)]
          : c.kind === "fp8" || c.kind === "fp8-fast"
            ? perTensor
            : [];
      const kb = Math.ceil(c.k / SCALE_BLOCK);
      const tail =
        c.kind === "fp8-block"
          ? [scaleTensor(c.m, kb, false), scaleTensor(Math.ceil(c.n / SCALE_BLOCK), kb, true)]
          : [];
      const shape = {
        ...{ m: c.m, n: c.n, k: c.k, inBytes: (fp8 ? 1 : 2) as 1 | 2 },
        promoted: c.kind === "fp8" || c.kind === "fp8-block",
        // Every sweep case is A·Bᵀ (B stored [n, k]): 32-column tile steps, unless block scales.
        kMajorB: c.kind !== "fp8-block",
        // Block scales: tuning tries each candidate with both scale loads of A's scales.
        blockScales: c.kind === "fp8-block",
      } as const;
      const entry = c.config
        ? { config: c.config, name: `forced ${JSON.stringify(c.config)}` }
        : untuned(c.kind, c, shape);
      let config: Config = entry.config;
      let configNote =
        c.scaleLoad === undefined ? entry.name : `${entry.name}, scaleLoad ${c.scaleLoad}`;
      if (opts.tune) {
        const built = new Map<string, Kernels>();
        const runs = new Map<string, () => void>();
        const tuned = autotune(
          (cfg: Config) => {
            const kk = makeGemm(sizesOf(c.kind, c, cfg));
            built.set(JSON.stringify(cfg), kk);
            return kk.main;
          },
          // A forced scale load keeps that load's candidates.
          gemmTuneCandidates(shape).filter(
            (cfg) => c.scaleLoad === undefined || (cfg.scaleLoad ?? "global") === c.scaleLoad,
          ),
          {
            // A forced scale load tunes among other candidates: a key of its own.
            key: {
              ...gemmTuneKey(sizesOf(c.kind, c, config)),
              ...(c.scaleLoad !== undefined ? { scaleLoad: c.scaleLoad } : {}),
            },
            name: "gemm-sweep",
            device: dev,
            launch: (kernel, cfg) => {
              const key = JSON.stringify(cfg);
              let run = runs.get(key);
              if (run === undefined) {
                run = launcher(built.get(key)!, kernel, c, A, B, D, args, tail);
                runs.set(key, run);
              }
              run();
            },
          },
        );
        config = tuned.config;
        configNote = `${JSON.stringify(config)} (${tuned.source}; key ${tuneKeyText(gemmTuneKey(sizesOf(c.kind, c, config)))})`;
      }
      const k = makeGemm(sizesOf(c.kind, c, config));
      const main = rt.compileCuda(k.main, { device: dev });
      const launch = launcher(k, main, c, A, B, D, args, tail);
      launch();
      rt.driver().ctxSynchronize();
      if (ci === 0) warmUp(launch);
      // The check: 4 rows × 64 columns spread over D.
      const bytes = D.toBytes();
      let err = 0;
      for (const i of [0, Math.floor(c.m / 3), Math.floor((2 * c.m) / 3), c.m - 1]) {
        for (let s = 0; s < 64; s++) {
          const j = Math.floor((s * (c.n - 1)) / 63);
          const at = (i * c.n + j) * 2;
          const got = (decodeHost(bytes.subarray(at, at + 2), "bfloat16") as ArrayLike<number>)[0]!;
          const { ref, mag, tc } = referenceAt(c, i, j);
          const q = Math.abs(got - ref) / boundAt(c, ref, mag, tc);
          err = Number.isNaN(q) ? Infinity : Math.max(err, q);
        }
      }
      // fp8-block: the peer, tirx-ts's per-tensor float8 kernel at the same sizes in the
      // configuration gemm() picks for it (block scaling keeps to 128-column tiles: the cost is
      // the promotion and the tile choice together), timed in rounds alternating with the
      // block-scaled kernel (ABBA), each side's median of its rounds' medians: the H200's clocks
      // drift over a long float8 sweep (the same kernel ran 2688-3259 µs at 8192 × 8192 × 28672
      // in successive runs), and timing one side after the other put that drift into the ratio.
      let t: { medianUs: number };
      let peerUs: number | undefined;
      if (c.kind === "fp8-block") {
        const pk = makeGemm(
          sizesOf("fp8", c, untuned("fp8", c, { ...shape, promoted: true }).config),
        );
        const pmain = rt.compileCuda(pk.main, { device: dev });
        const plaunch = launcher(pk, pmain, c, A, B, D, perTensor, []);
        const per = Math.max(1, Math.ceil(c.iters / ROUNDS));
        const own: number[] = [];
        const peer: number[] = [];
        const time = (f: () => void, into: number[]): void => {
          into.push(rt.timeLaunches(f, { iters: per, device: dev }).medianUs);
        };
        for (let r = 0; r < ROUNDS; r++) {
          if (r % 2 === 0) {
            time(launch, own);
            time(plaunch, peer);
          } else {
            time(plaunch, peer);
            time(launch, own);
          }
        }
        t = { medianUs: rt.median(own) };
        peerUs = rt.median(peer);
      } else t = rt.timeLaunches(launch, { iters: c.iters, device: dev });
      // scaleLoad "tma" or "shared" with A's scales MN-major: their transposition alone (its share of the
      // row's time).
      let tNote = "";
      if (scalesByTma(k.config.scaleLoad) && !tmaScalesAsGiven(c.k)) {
        const tr = scaleTransposer(c, tail[0]);
        tNote = `; A's scale transposition alone ${rt.timeLaunches(tr.run, { iters: c.iters, device: dev }).medianUs.toFixed(1)} µs`;
      }
      const row: GemmRow = {
        case: ci,
        variant: "tirx-ts",
        us: t.medianUs,
        err,
        ...(opts.tune
          ? { config: `${configNote}${tNote}` }
          : { note: `config ${configNote}${tNote}` }),
      };
      rows.push(row);
      console.log(JSON.stringify(row));
      if (peerUs !== undefined) {
        const prow: GemmRow = { case: ci, variant: PEER[c.kind], us: peerUs };
        rows.push(prow);
        console.log(JSON.stringify(prow));
      }
    } catch (e) {
      mine(ci, String(e).split("\n")[0]!.slice(0, 240));
    } finally {
      for (const t of held.splice(0)) t.dispose();
    }
  });
}

const table = formatGemmTable(cases, rows, {
  gpu,
  command,
  date: new Date().toISOString(),
  rounds: ROUNDS,
});
console.log(table);
if (opts.out) writeFileSync(opts.out, table);
