// The shared::cta → shared::cluster bulk copy (T.ptx.cp.async_.bulk.shared_cluster; PTX ISA
// cp.async.bulk, core ops/bulk-dsmem.ts): its PTX (inline snapshot, ptxas for sm_90a), the ring
// kernels of test/kernels/dsmem.ts on the simulator against their JS model on several schedules,
// the hazards of each broken protocol step (TX6015, TX6007, TX6030, TX6021, TX6025, TX6005), and
// the verifier's refusals (TX4030, TX4003, TX4004, TX4005, TX4006, TX4011, TX4007).
// test/gpu/dsmem-copy.test.ts runs the rings on a GPU.
import { describe, expect, it } from "vitest";
import { verify, type PrimFunc } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";
import { assemblePtx } from "./util/ptxas.js";
import { errorOf } from "./util/error-of.js";
import { dsmemRing, dsmemRingExpected, type DsmemMutation } from "./kernels/dsmem.js";

const input = (n: number): Float32Array => Float32Array.from({ length: n }, (_, i) => i * 0.5 - 7);

/** Run `fn` (X, Y of `n` float32) on the simulator: its reports' codes and messages, and Y. */
function simRing(fn: PrimFunc, n: number, simSeed?: number): { msgs: string[]; y: Float32Array } {
  const x = simTensor(input(n), { shape: [n], dtype: "float32" });
  const y = simZeros([n], "float32");
  const r = runSim(verify(fn), [x, y], {
    hazards: "collect",
    ...(simSeed !== undefined ? { simSeed } : {}),
  });
  return {
    msgs: r.reports.map((e) => `${(e as { code?: string }).code ?? "?"}: ${(e as Error).message}`),
    y: y.toArray() as Float32Array,
  };
}

describe("cp.async.bulk.shared::cluster.shared::cta: PTX", () => {
  it("takes the mapa addresses of dst and mbar and the source's shared address", () => {
    const ptx = compileToPtx(dsmemRing(2), { arch: "sm_90a" }).text;
    const lines = ptx
      .split("\n")
      .map((l) => l.trim())
      .filter((l) =>
        /^(\.version|mapa|cp\.async\.bulk|\.reqntid|\.explicitcluster|\.reqnctapercluster)/.test(l),
      );
    expect(lines.join("\n")).toMatchInlineSnapshot(`
      ".version 8.0
      .explicitcluster
      .reqnctapercluster 2, 1, 1
      mapa.shared::cluster.u32 %r12, %r3, %r11;
      mapa.shared::cluster.u32 %r16, %r4, %r15;
      cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [%r12], [%r2], 256, [%r16];"
    `);
    assemblePtx(ptx, "sm_90a");
    assemblePtx(compileToPtx(dsmemRing(4, 4), { arch: "sm_90" }).text, "sm_90");
  });
});

describe("cp.async.bulk.shared::cluster.shared::cta: simulator", () => {
  it.each([
    [2, 1],
    [4, 1],
    [4, 4],
    [8, 2],
  ])(
    "a ring of %i CTAs (%i float32 per thread) equals its JS model on every schedule",
    (ctas, per) => {
      const n = ctas * 64 * per;
      for (const seed of [1, 2, 3]) {
        const r = simRing(dsmemRing(ctas, per), n, seed);
        expect(r.msgs).toEqual([]);
        expect(r.y).toEqual(dsmemRingExpected(input(n), ctas, per));
      }
    },
  );

  // Each broken step of the protocol and the code it must be reported with.
  const mutations: [DsmemMutation, string, RegExp][] = [
    ["no-proxy-fence", "TX6015", /issues a bulk copy \(async proxy\) reading shared "S" byte 0/],
    ["no-wait", "TX6007", /reads shared "R" byte \d+, the destination of a bulk copy/],
    [
      "rewrite-source",
      "TX6007",
      /writes shared "S" byte 0, which a shared::cta → shared::cluster bulk copy in flight has not read yet/,
    ],
    [
      "own-mbarrier",
      "TX6030",
      /into the CTA of rank 1 completing on an mbarrier of the CTA of rank 0/,
    ],
    [
      "misaligned",
      "TX6021",
      /to shared byte 260 of the CTA of rank 1; both addresses must be 16-byte aligned/,
    ],
    [
      "no-exit-sync",
      "TX6025",
      /CTA \(0, 0, 0\) exits while thread \(0, 0, 0\) of CTA \(0, 0, 0\) copies shared "S" into the CTA of rank 1/,
    ],
  ];
  it.each(mutations)("%s is %s", (mutation, code, message) => {
    const r = simRing(dsmemRing(2, 1, mutation), 128);
    const mine = r.msgs.filter((m) => m.startsWith(code));
    expect(mine.length, r.msgs.join("\n")).toBeGreaterThan(0);
    expect(mine[0]).toMatch(message);
  });

  it("TX6005 for a destination rank outside the cluster", () => {
    const fn = T.function("dsmem_rank", { Y: T.Tensor([2], "float32") }, ({ Y }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [2, 1], block: 32, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const S = T.alloc_shared([64], "float32", { name: "S" });
      const bar = T.alloc_shared([1], "uint64", { name: "bar" });
      S.set([tid], T.float32(1));
      T.ptx.fence.proxy_async();
      T.cuda.cta_sync();
      const far = T.cuda.cluster_ctarank().add(2);
      T.if_(tid.eq(0), () =>
        T.ptx.cp.async_.bulk.shared_cluster(
          T.ptx.mapa(S.ptr([0]), far),
          S.ptr([0]),
          64,
          T.ptx.mapa(bar.ptr([0]), far),
        ),
      );
      Y.set([T.cuda.cluster_ctarank()], S.get([0]));
    });
    const y = simZeros([2], "float32");
    const r = runSim(verify(fn), [y], { hazards: "collect" });
    const msgs = r.reports.map((e) => String(e));
    expect(
      msgs.some((m) => /TX6005.*into the CTA of rank 2, but its cluster has 2 CTAs/.test(m)),
    ).toBe(true);
  });
});

describe("cp.async.bulk.shared::cluster.shared::cta: refusals", () => {
  /**
   * One thread of CTA rank 0 copies into rank 1: `opts` replaces one operand or the launch.
   */
  const kernel =
    (opts: {
      cluster?: boolean;
      size?: number;
      srcAt?: number;
      dstAt?: number;
      global?: boolean;
      mbarRank?: number;
      mbarOfS?: boolean;
    }) =>
    (): PrimFunc =>
      T.function("dsmem_refuse", { G: T.Tensor([64], "float32") }, ({ G }) => {
        T.device_entry({
          launch: T.cuda.LaunchConfig({
            grid: [2, 1],
            block: 32,
            ...(opts.cluster === false ? {} : { cluster: [2, 1, 1] as [number, number, number] }),
          }),
        });
        const S = T.alloc_shared([64], "float32", { name: "S" });
        const R = T.alloc_shared([64], "float32", { name: "R" });
        const bar = T.alloc_shared([1], "uint64", { name: "bar" });
        T.ptx.cp.async_.bulk.shared_cluster(
          T.ptx.mapa(R.ptr([opts.dstAt ?? 0]), T.int32(1)),
          opts.global ? G.ptr([0]) : S.ptr([opts.srcAt ?? 0]),
          opts.size ?? 64,
          opts.mbarOfS
            ? T.ptx.mapa(S.ptr([0]), T.int32(1))
            : T.ptx.mapa(bar.ptr([0]), T.int32(opts.mbarRank ?? 1)),
        );
      });
  const codeMsg = (f: () => unknown): string => {
    const e = errorOf(f);
    return `${e.code}: ${e.message.replace(/ \(at [^)]*\)$/, "")}`;
  };

  it("TX4030 without a cluster launch", () => {
    expect(codeMsg(() => verify(kernel({ cluster: false })()))).toMatchInlineSnapshot(
      `"TX4030: TX4030 [bulk/cluster-launch] cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes writes shared memory of a CTA of the cluster: the kernel needs a cluster launch (T.cuda.LaunchConfig({ ..., cluster: [x, y, z] }))"`,
    );
  });

  it("TX4003 for a size that is not a positive multiple of 16", () => {
    expect(codeMsg(kernel({ size: 24 }))).toMatchInlineSnapshot(
      `"TX4003: TX4003 [bulk/chunk-bytes] the size of cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes must be a multiple of 16 bytes, got 24"`,
    );
    expect(errorOf(kernel({ size: 0 })).code).toBe("TX4003");
  });

  it("TX4004 for a source or destination not provably 16-byte aligned", () => {
    expect(codeMsg(kernel({ srcAt: 1 }))).toMatchInlineSnapshot(
      `"TX4004: TX4004 [bulk/contiguous] the source "S" is only provably 4-byte aligned; a bulk copy needs 16-byte aligned addresses"`,
    );
    expect(errorOf(kernel({ dstAt: 2 })).message).toMatch(
      /the destination "R" is only provably 8-byte/,
    );
  });

  it("TX4005 for a source in global memory", () => {
    expect(errorOf(kernel({ global: true })).code).toBe("TX4005");
  });

  it("TX4006 for an mbarrier in another CTA than the destination; TX4011 for one that is no mbarrier", () => {
    expect(codeMsg(kernel({ mbarRank: 0 }))).toMatchInlineSnapshot(
      `"TX4006: TX4006 [bulk/mbarrier] cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes completes on the mbarrier of its destination CTA, but the destination is in the CTA of rank 1 and the mbarrier in the CTA of rank 0"`,
    );
    expect(errorOf(kernel({ mbarOfS: true })).code).toBe("TX4011");
  });

  it("TX4007 below sm_90", () => {
    expect(errorOf(() => compileToPtx(dsmemRing(2), { arch: "sm_80" })).code).toBe("TX4007");
  });
});
