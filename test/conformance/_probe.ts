import { T, compile, tensor, sim, TirxError, verify } from "tirx-ts";
import { assemblePtx } from "../util/ptxas.js";

function k(
  params: Record<string, unknown>,
  opcode = "cp.async.ca.shared.global",
  opts: { dtype?: any; n?: number; rows?: number } = {},
) {
  return T.function(
    "k",
    {
      A: T.Tensor([opts.rows ?? 32, 16], "uint8"),
      B: T.Tensor([32, 16], "uint8"),
      flag: T.int32,
      pol: T.uint64,
    },
    ({ A, B, flag, pol }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([32, 16], "uint8");
      const p: Record<string, unknown> = {};
      for (const [key, v] of Object.entries(params))
        p[key] = v === "$pol" ? pol : v === "$flag" ? flag.ne(0) : v;
      T.cuda.tile.apply(
        T.ptx[opcode],
        s.sub(tid, ":").rearrange("(r v) -> r v", { v: 16 }),
        A.sub(tid, ":").rearrange("(r v) -> r v", { v: 16 }),
        p,
      );
      T.ptx.cp.async_.wait_all();
      for (const j of T.range(16)) B.set([tid, j], s.get([tid, j]));
    },
  );
}
function tryIt(name: string, f: () => unknown) {
  try {
    const r = f();
    console.log("OK  ", name, typeof r === "string" ? r : "");
  } catch (e) {
    console.log(e instanceof TirxError ? "TX  " : "BAD ", name, (e as Error).message.slice(0, 200));
  }
}
const ptx = (fn: any) => {
  const c = compile(fn);
  assemblePtx(c.ptx, "sm_80");
  return c.ptx
    .split("\n")
    .filter((l: string) => l.includes("cp.async"))
    .join(" | ");
};
tryIt("unknown param", () => verify(k({ chunk_bytes: 16, chunk_byte: 3 })));
tryIt("qualifier param", () => verify(k({ chunk_bytes: 16, "L2::128B": true })));
tryIt("cache_hint param", () => verify(k({ chunk_bytes: 16, cache_hint: true })));
tryIt("misspelled q", () => verify(k({ chunk_bytes: 16 }, "cp.async.ca.shared.global.L2::128b")));
tryIt("misspelled ca", () => verify(k({ chunk_bytes: 16 }, "cp.async.cs.shared.global")));
tryIt("cp.asyn", () => verify(k({ chunk_bytes: 16 }, "cp.asyn.ca.shared.global")));
tryIt("empty", () => verify(k({ chunk_bytes: 16 }, "")));
tryIt("trailing dot", () => verify(k({ chunk_bytes: 16 }, "cp.async.ca.shared.global.")));
tryIt("cluster", () => verify(k({ chunk_bytes: 16 }, "cp.async.ca.shared::cluster.global")));
tryIt("global.shared", () => verify(k({ chunk_bytes: 16 }, "cp.async.ca.global.shared")));
tryIt("shared.local", () => verify(k({ chunk_bytes: 16 }, "cp.async.ca.shared.local")));
tryIt("shared.global.extra", () =>
  verify(k({ chunk_bytes: 16 }, "cp.async.ca.shared.global.shared")),
);
tryIt("src_size -1", () => verify(k({ chunk_bytes: 16, src_size: -1 })));
tryIt("src_size 17", () => verify(k({ chunk_bytes: 16, src_size: 17 })));
tryIt("src_size 2.5", () => verify(k({ chunk_bytes: 16, src_size: 2.5 })));
tryIt("src_size NaN", () => verify(k({ chunk_bytes: 16, src_size: NaN })));
tryIt("src_size 16n", () => verify(k({ chunk_bytes: 16, src_size: 16n })));
tryIt("src_size uint32(17)", () => verify(k({ chunk_bytes: 16, src_size: T.uint32(17) })));
tryIt("src_size int32(-3)", () => verify(k({ chunk_bytes: 16, src_size: T.int32(-3) })));
tryIt("src_size uint32(2**32+1)", () =>
  verify(k({ chunk_bytes: 16, src_size: T.uint32(2 ** 32 + 1) })),
);
tryIt("src_size int64", () => verify(k({ chunk_bytes: 16, src_size: T.int64(3) })));
tryIt("src_size true", () => verify(k({ chunk_bytes: 16, src_size: true })));
tryIt("src_size string", () => verify(k({ chunk_bytes: 16, src_size: "8" })));
tryIt("ignore_src 1", () => verify(k({ chunk_bytes: 16, ignore_src: 1 })));
tryIt("pred int", () => verify(k({ chunk_bytes: 16, pred: T.int32(1) })));
tryIt("pred {}", () => verify(k({ chunk_bytes: 16, pred: {} })));
tryIt("pred []", () => verify(k({ chunk_bytes: 16, pred: [] })));
tryIt("pred fn", () => verify(k({ chunk_bytes: 16, pred: () => 1 })));
tryIt("pred symbol", () => verify(k({ chunk_bytes: 16, pred: Symbol("x") })));
tryIt("chunk '16'", () => verify(k({ chunk_bytes: "16" })));
tryIt("chunk 16.5", () => verify(k({ chunk_bytes: 16.5 })));
tryIt("chunk 16n", () => verify(k({ chunk_bytes: 16n })));
tryIt("chunk expr", () => verify(k({ chunk_bytes: T.int32(16) })));
tryIt("scope 5", () => verify(k({ chunk_bytes: 16, scope: 5 })));
tryIt("scope warp", () => verify(k({ chunk_bytes: 16, scope: "warp" })));
tryIt("scope THREAD", () => verify(k({ chunk_bytes: 16, scope: "Thread" })));
tryIt("pol -1n", () =>
  ptx(k({ chunk_bytes: 16, cache_policy: -1n }, "cp.async.ca.shared.global.L2::cache_hint")),
);
tryIt("pol 2^70", () =>
  ptx(k({ chunk_bytes: 16, cache_policy: 2n ** 70n }, "cp.async.ca.shared.global.L2::cache_hint")),
);
tryIt("pol 0x14F..", () =>
  ptx(
    k(
      { chunk_bytes: 16, cache_policy: 0x14f0000000000000n },
      "cp.async.ca.shared.global.L2::cache_hint",
    ),
  ),
);
tryIt("pol number", () =>
  ptx(k({ chunk_bytes: 16, cache_policy: 5 }, "cp.async.ca.shared.global.L2::cache_hint")),
);
tryIt("pol 2.5", () =>
  ptx(k({ chunk_bytes: 16, cache_policy: 2.5 }, "cp.async.ca.shared.global.L2::cache_hint")),
);
tryIt("pol param", () =>
  ptx(
    k(
      { chunk_bytes: 16, cache_policy: "$pol" },
      "cp.async.ca.shared.global.L2::256B.L2::cache_hint",
    ),
  ),
);
tryIt("pol w/o hint", () => verify(k({ chunk_bytes: 16, cache_policy: "$pol" })));
tryIt("hint w/o pol", () =>
  verify(k({ chunk_bytes: 16 }, "cp.async.ca.shared.global.L2::cache_hint")),
);
tryIt("src_size+ignore", () => verify(k({ chunk_bytes: 16, src_size: 3, ignore_src: true })));
tryIt("oob rows", () => verify(k({ chunk_bytes: 16, src_size: 0 }, undefined, { rows: 16 })));
tryIt("pred false const", () => ptx(k({ chunk_bytes: 16, pred: false })));
tryIt("src_size uint32 expr cast", () =>
  ptx(k({ chunk_bytes: 16, src_size: T.uint32(T.cuda.thread_idx as any) })),
);
