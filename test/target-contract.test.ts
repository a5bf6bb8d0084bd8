// The target contract (core/src/target.ts): target names parsed once, the requirements the
// verifier records from the op and tile-op records, and codegen comparing targets against them.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  archForSm,
  ARCHS,
  findOp,
  isTirxError,
  maxVersion,
  parseArch,
  stmtExprs,
  tileOpOf,
  verify,
  walkExpr,
  walkStmt,
  type PrimFunc,
  type PtxVersion,
  type VerifiedFunc,
} from "@tirx-ts/core";
import { emitPtx, requiredArch } from "@tirx-ts/codegen-ptx";
import { T } from "@tirx-ts/dsl";
import { bulk_copy } from "../examples/bulk_copy.js";
import { copy_async } from "../examples/copy_async.js";
import { gemm_hopper, makeGemmHopper } from "../examples/gemm_hopper.js";
import { gemm_mma } from "../examples/gemm_mma.js";
import { tma_transpose } from "../examples/tma_transpose.js";
import { tmaMulticast } from "./kernels/tma.js";
import { assembleLater } from "./util/ptxas-deferred.js";

const MULTICAST =
  "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster";

/** A TMA multicast load into a cluster of two, then (`setmaxnreg`) a register-limit change. */
function multicastThen(setmaxnreg: boolean): PrimFunc {
  return T.function(
    setmaxnreg ? "multicast_setmaxnreg" : "multicast_only",
    { A: T.Tensor([32, 64], "float16") },
    ({ A }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 128, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const rank = T.cuda.cluster_ctarank();
      const tile = T.alloc_shared([2, 16, 64], "float16", { name: "tile", align: 1024 });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      const map = T.tensormap_encode_tiled(A, { box: [16, 64] });
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.init(bar.sub(0), 1);
        T.ptx.fence.mbarrier_init();
      });
      T.ptx.barrier.cluster.arrive();
      T.ptx.barrier.cluster.wait();
      T.if_(tid.eq(0), () => {
        T.ptx.mbarrier.arrive.expect_tx(bar.sub(0), 32 * 64 * 2);
        T.cuda.tile.apply(T.ptx[MULTICAST], tile.sub(rank), A, {
          tensor_map: map,
          coords: [rank.mul(16), 0],
          mbar: bar.sub(0),
          cta_mask: T.uint16(3),
        });
      });
      T.ptx.mbarrier.try_wait(bar.sub(0), 0);
      if (setmaxnreg) T.ptx.setmaxnreg(false, 240);
      T.ptx.barrier.cluster.arrive();
      T.ptx.barrier.cluster.wait();
    },
  );
}

/** A cluster launch and nothing else newer than sm_80: B[i] = 1. */
const clusterOnly = T.function("cluster_only", { B: T.Tensor([256], "float32") }, ({ B }) => {
  T.device_entry({
    launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 128, cluster: [2, 1, 1] }),
  });
  B.set([T.cuda.block_idx("x").mul(128).add(T.cuda.thread_idx("x"))], T.float32(1));
});

function thrown(f: () => unknown): { code: string; text: string } {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return { code: e.code, text: e.text };
    throw e;
  }
  return { code: "none", text: "" };
}

/**
 * The instructions of `vf`, found by walking its IR: per statement (program order) its tile
 * opcode, its `Call` op, then the ops of its expressions.
 */
function instructionsByWalk(vf: VerifiedFunc): string[] {
  const out: string[] = [];
  walkStmt(vf.entry.body, (s) => {
    if (s.kind === "TileApply") out.push(s.opcode);
    if (s.kind === "Call") out.push(s.op);
    for (const e of stmtExprs(s)) {
      walkExpr(e, (x) => {
        if (x.kind === "CallExpr") out.push(x.op);
      });
    }
  });
  return out;
}

const KERNELS: readonly PrimFunc[] = [
  copy_async,
  gemm_mma,
  bulk_copy,
  tma_transpose,
  gemm_hopper,
  makeGemmHopper({ m: 256, n: 256, k: 128, ctas: 2, cluster: 2 }),
  tmaMulticast("mc"),
  multicastThen(true),
  clusterOnly,
];

describe("target names", () => {
  it("parseArch takes sm_<n>[a] apart and nothing else", () => {
    fc.assert(
      fc.property(fc.nat(999), fc.boolean(), (sm, a) => {
        const name = `sm_${sm}${a ? "a" : ""}`;
        expect(parseArch(name)).toEqual({ name, sm, archSpecific: a });
      }),
      { seed: 42, numRuns: 200 },
    );
    fc.assert(
      fc.property(fc.string(), (s) => {
        const ok = /^sm_[0-9]+a?$/.test(s);
        expect(parseArch(s) !== undefined).toBe(ok);
      }),
      { seed: 42, numRuns: 500 },
    );
    for (const bad of ["sm_90b", "compute_90", "sm90", "", "sm_", "sm_90aa", " sm_90"]) {
      expect(parseArch(bad), bad).toBeUndefined();
    }
  });

  it("every target of the table is its parsed name", () => {
    for (const a of ARCHS) {
      expect(`sm_${a.sm}${a.archSpecific ? "a" : ""}`).toBe(a.name);
      expect(parseArch(a.name)).toEqual({ name: a.name, sm: a.sm, archSpecific: a.archSpecific });
    }
  });

  it("a device gets its own portable target, or the newest one below it", () => {
    const portable = ARCHS.filter((a) => !a.archSpecific);
    for (let sm = 0; sm <= 120; sm++) {
      const got = archForSm(sm);
      expect(got.archSpecific).toBe(false);
      const below = portable.filter((a) => a.sm <= sm);
      expect(got.name).toBe((below.at(-1) ?? portable[0]!).name);
    }
  });
});

describe("requirements recorded by the verifier", () => {
  it("hold every instruction of the kernel, in program order, with its record's facts", () => {
    for (const fn of KERNELS) {
      const vf = verify(fn);
      const instrs = vf.requirements.filter((r) => r.kind === "instruction");
      expect(
        instrs.map((r) => r.instr),
        fn.name,
      ).toEqual(instructionsByWalk(vf));
      for (const r of instrs) {
        const op = findOp(r.instr);
        const tile = tileOpOf(r.instr);
        if (op) {
          expect(r).toMatchObject({
            sm: op.sm,
            ptx: op.ptx,
            archSpecific: op.archSpecific === true,
            code: op.archCode ?? "TX5006",
          });
          expect(r.registerCap === true, r.instr).toBe(
            op.sim.kind === "machine" && op.sim.effect.unit === "regs",
          );
        } else {
          expect(tile, r.instr).toBeDefined();
          expect(r).toMatchObject({ sm: tile!.sm, code: tile!.archCode, archSpecific: false });
        }
      }
      const qualifiers = vf.requirements.filter((r) => r.kind === "qualifier");
      const multicasts = instrs.filter((r) => r.instr.split(".").includes("multicast::cluster"));
      expect(qualifiers.map((r) => r.instr)).toEqual(multicasts.map((r) => r.instr));
      for (const q of qualifiers) expect(q).toMatchObject({ archSpecific: true, code: "TX4022" });
      const launch = vf.requirements.filter((r) => r.kind === "launch");
      expect(launch.length).toBe(vf.launch.cluster ? 1 : 0);
      // The summaries are the requirements folded.
      let v: PtxVersion = [7, 0];
      for (const r of vf.requirements) v = maxVersion(v, r.ptx);
      expect(vf.ptxVersion).toEqual(v);
      expect(vf.minSm).toBe(Math.max(75, ...vf.requirements.map((r) => r.sm)));
    }
  });

  it("a register cap at entry exactly where setmaxnreg is used", () => {
    for (const fn of KERNELS) {
      const vf = verify(fn);
      const mod = emitPtx(vf);
      const uses = instructionsByWalk(vf).some((i) => findOp(i)?.registerCap === true);
      expect(mod.text.includes(".minnctapersm 1\n"), fn.name).toBe(uses);
      assembleLater(mod.text, mod.target, fn.name);
    }
  });
});

describe("targets compared against the requirements", () => {
  it("an instruction the target lacks is reported before an arch-specific qualifier", () => {
    const both = verify(multicastThen(true));
    const setmaxnreg = findOp("setmaxnreg.dec.sync.aligned.u32")!;
    const e = thrown(() => emitPtx(both, { arch: "sm_90" }));
    expect(e.code).toBe(setmaxnreg.archCode);
    expect(e.text).toBe(
      `${setmaxnreg.name} needs the architecture-specific target sm_${setmaxnreg.sm}a, but the target is sm_90`,
    );
    const alone = thrown(() => emitPtx(verify(multicastThen(false)), { arch: "sm_90" }));
    expect(alone.code).toBe(tileOpOf(MULTICAST)!.archSpecific!.code);
    expect(alone.text).toBe(
      `${MULTICAST} needs the architecture-specific target sm_90a, but the target is sm_90`,
    );
    for (const fn of [multicastThen(true), multicastThen(false)]) {
      const mod = emitPtx(verify(fn));
      expect(mod.target).toBe("sm_90a");
      assembleLater(mod.text, mod.target, fn.name);
    }
  });

  it("a cluster launch needs sm_90 even without a cluster instruction", () => {
    const vf = verify(clusterOnly);
    expect(requiredArch(vf).name).toBe("sm_90");
    for (const a of ARCHS.filter((x) => x.sm < 90)) {
      expect(thrown(() => emitPtx(vf, { arch: a.name }))).toEqual({
        code: "TX5006",
        text: `kernel "cluster_only" needs sm_90 or newer, but the target is ${a.name}`,
      });
    }
    const mod = emitPtx(vf);
    expect(mod.target).toBe("sm_90");
    assembleLater(mod.text, mod.target, "cluster_only");
  });

  it("no source tests an instruction's or a target's spelling", () => {
    const root = join(import.meta.dirname, "..", "packages");
    const spelled = /\.includes\("\.multicast|startsWith\("setmaxnreg|endsWith\("a"\)/;
    const hits: string[] = [];
    for (const pkg of readdirSync(root)) {
      const src = join(root, pkg, "src");
      let files: string[];
      try {
        files = readdirSync(src, { recursive: true, encoding: "utf8" });
      } catch {
        continue;
      }
      for (const f of files.filter((x) => x.endsWith(".ts"))) {
        const text = readFileSync(join(src, f), "utf8");
        if (spelled.test(text)) hits.push(join(pkg, "src", f));
      }
    }
    expect(hits).toEqual([]);
  });
});
