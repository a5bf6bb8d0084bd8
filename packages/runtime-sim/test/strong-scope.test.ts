import { describe, expect, it } from "vitest";
import { verify, type KernelArg, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { T, type ParamHandles } from "@tirx-ts/dsl";
import { runSim, SimTensor, simZeros } from "@tirx-ts/runtime-sim";
import { lineOf } from "./helpers.js";

/**
 * Strong accesses race unless they are morally strong (PTX ISA, Memory Consistency Model,
 * "Morally strong operations", "Data races"; exec/strong-sites.ts): each is strong and specifies
 * a scope that includes the other's thread, and they overlap completely. So `atom.cta` / `red.cta`
 * / `st.relaxed.cta` of two CTAs on one word race (TX6014, TX6003) like plain accesses, as do a
 * cta-scope and a gpu-scope atomic of two CTAs; gpu-scope atomics never do, nor any scope within
 * one CTA; cluster scope covers the CTAs of one cluster. A strong load is a reader: a later write
 * not ordered after it races with it (TX6013) when plain, or strong but not morally strong with it.
 */
const here = import.meta.url;
const seeds = [0, 1, 2, 3];

type Scope = "cta" | "cluster" | "gpu";

/** The reports (hazards collected) of `fn` on `args()` under each seed. */
function reports(fn: PrimFunc, args: () => KernelArg[]): TirxError[][] {
  const vf = verify(fn);
  return seeds.map((simSeed) => [...runSim(vf, args(), { hazards: "collect", simSeed }).reports]);
}

/** No report under any seed. */
function expectClean(fn: PrimFunc, args: () => KernelArg[]): void {
  reports(fn, args).forEach((r, seed) => expect(r.map(String), `seed ${seed}`).toEqual([]));
}

/**
 * Under every seed a race `code` at the line of `at` with its note at the line of `other`, the
 * message saying why the two strong accesses are not morally strong (`why`); returns one message.
 */
function expectRace(
  fn: PrimFunc,
  args: () => KernelArg[],
  code: string,
  at: string,
  other: string,
  why: RegExp,
): string {
  let message = "";
  reports(fn, args).forEach((r, seed) => {
    const e = r.find((x) => x.code === code);
    expect(e, `seed ${seed}: ${r.map(String).join("\n")}`).toBeDefined();
    expect(e!.span?.line, `seed ${seed}`).toBe(lineOf(here, at));
    expect(e!.notes[0]?.span?.line, `seed ${seed}`).toBe(lineOf(here, other));
    expect(e!.message).toMatch(why);
    expect(e!.message).toContain("Morally strong operations");
    message = e!.message;
  });
  return message;
}

const word = () => [simZeros([4], "int32")];

const INT4 = { A: T.Tensor([4], "int32") };
type IntTensor = ParamHandles<typeof INT4>["A"];

/**
 * `name`: two CTAs of 32 threads over A int32 [4]; thread 0 of CTA 0 runs `first(A)`, thread 0
 * of CTA 1 runs `second(A)`.
 */
function twoCtas(
  name: string,
  first: (A: IntTensor) => void,
  second: (A: IntTensor) => void,
): PrimFunc {
  return T.function(name, INT4, ({ A }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
    const tid = T.cuda.thread_idx("x");
    const cta = T.cuda.block_idx("x");
    T.if_(tid.eq(0), () => {
      T.if_(
        cta.eq(0),
        () => first(A),
        () => second(A),
      );
    });
  });
}

/** Two CTAs: thread 0 of CTA 0 adds to A[0] with scope `first`, thread 0 of CTA 1 with `second`. */
function twoCtaAdds(first: Scope | "default", second: Scope | "default", red: boolean): PrimFunc {
  const opt = (scope: Scope | "default") =>
    scope === "default" ? undefined : { sem: "relaxed" as const, scope };
  return twoCtas(
    `adds_${first}_${second}_${red}`,
    (A) => {
      if (red)
        T.cuda.red_add(A.ptr([0]), 1, opt(first)); // @first-red
      else T.cuda.atomic_add(A.ptr([0]), 1, opt(first)); // @first-atom
    },
    (A) => {
      if (red)
        T.cuda.red_add(A.ptr([0]), 1, opt(second)); // @second-red
      else T.cuda.atomic_add(A.ptr([0]), 1, opt(second)); // @second-atom
    },
  );
}

describe("atomics of two CTAs on one word", () => {
  it("cta scope on both: TX6014, the cta scope does not include the other CTA's thread", () => {
    for (const red of [false, true]) {
      const op = red ? "red" : "atom";
      const msg = expectRace(
        twoCtaAdds("cta", "cta", red),
        word,
        "TX6014",
        `// @second-${op}`,
        `// @first-${op}`,
        /both are strong, but not morally strong/,
      );
      expect(msg).toContain(
        `the scope of this ${op}.relaxed.cta.add does not include thread (0, 0, 0) of CTA (0, 0, 0)`,
      );
      expect(msg).toContain(
        `that of the ${op}.relaxed.cta.add does not include thread (0, 0, 0) of CTA (1, 0, 0)`,
      );
    }
  });

  it("gpu scope on both (explicit or the default): clean", () => {
    expectClean(twoCtaAdds("gpu", "gpu", false), word);
    expectClean(twoCtaAdds("default", "default", true), word);
    expectClean(twoCtaAdds("gpu", "default", true), word);
  });

  it("cta scope and gpu scope: TX6014 naming the cta-scope one", () => {
    const msg = expectRace(
      twoCtaAdds("cta", "gpu", true),
      word,
      "TX6014",
      "// @second-red",
      "// @first-red",
      /the scope of the red\.relaxed\.cta\.add does not include thread \(0, 0, 0\) of CTA \(1, 0, 0\)/,
    );
    expect(msg).not.toMatch(/the scope of this/);
    expectRace(
      twoCtaAdds("gpu", "cta", false),
      word,
      "TX6014",
      "// @second-atom",
      "// @first-atom",
      /the scope of this atom\.relaxed\.cta\.add does not include thread \(0, 0, 0\) of CTA \(0, 0, 0\)/,
    );
  });

  it("atom.cas of cta scope: TX6014", () => {
    const o = { sem: "relaxed" as const, scope: "cta" as const };
    const k = twoCtas(
      "cas_cta",
      (A) => A.set([1], T.cuda.atomic_cas(A.ptr([0]), 0, 1, o)), // @cas-0
      (A) => A.set([2], T.cuda.atomic_cas(A.ptr([0]), 0, 2, o)), // @cas-1
    );
    expectRace(k, word, "TX6014", "// @cas-1", "// @cas-0", /atom\.relaxed\.cta\.cas/);
  });

  it("a thread's cta-scope atomic, then its gpu-scope one, then another CTA's: TX6014", () => {
    // The gpu-scope atomic replaces the cta-scope one as the word's last write; another CTA's
    // gpu-scope atomic is morally strong with it but not with the cta-scope one before it.
    const k = twoCtas(
      "cta_then_gpu",
      (A) => {
        T.cuda.red_add(A.ptr([0]), 1, { sem: "relaxed", scope: "cta" }); // @narrow
        T.cuda.red_add(A.ptr([0]), 1);
      },
      (A) => T.cuda.red_add(A.ptr([0]), 1), // @wide
    );
    expectRace(k, word, "TX6014", "// @wide", "// @narrow", /red\.relaxed\.cta\.add/);
  });

  it("a 4-byte and an 8-byte atomic of one word do not overlap completely: TX6014", () => {
    const k = T.function(
      "sizes",
      { A: T.Tensor([2], "uint32"), B: T.Tensor([1], "uint64") },
      ({ A, B }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 32 }) });
        const tid = T.cuda.thread_idx("x");
        const cta = T.cuda.block_idx("x");
        T.if_(tid.eq(0), () => {
          T.if_(
            cta.eq(0),
            () => T.cuda.red_add(A.ptr([0]), 1), // @narrow-add
            () => T.cuda.red_add(B.ptr([0]), T.uint64(1)), // @wide-add
          );
        });
      },
    );
    const args = () => {
      const a = simZeros([2], "uint32");
      return [a, new SimTensor(a.storage, [1], "uint64")];
    };
    expectRace(
      k,
      args,
      "TX6014",
      "// @wide-add",
      "// @narrow-add",
      /this red\.relaxed\.gpu\.add of 8 bytes and the red\.relaxed\.gpu\.add of 4 bytes do not overlap completely/,
    );
  });
});

describe("strong loads and stores of two CTAs", () => {
  const storeLoad = (scope: Scope) =>
    twoCtas(
      `st_ld_${scope}`,
      (A) => T.ptx.st(A.ptr([0]), 1, { sem: "relaxed", scope }), // @st
      (A) => A.set([1], T.ptx.ld(A.ptr([0]), { sem: "relaxed", scope })), // @ld
    );

  it("st.relaxed.cta then ld.relaxed.cta of another CTA: TX6003", () => {
    expectRace(
      storeLoad("cta"),
      word,
      "TX6003",
      "// @ld",
      "// @st",
      /the scope of this ld\.relaxed\.cta does not include thread \(0, 0, 0\) of CTA \(0, 0, 0\), and that of the st\.relaxed\.cta does not include thread \(0, 0, 0\) of CTA \(1, 0, 0\)/,
    );
  });

  it("st.relaxed.gpu then ld.relaxed.gpu of another CTA: clean", () => {
    expectClean(storeLoad("gpu"), word);
  });

  it("a cta-scope atomic, then a gpu-scope load of another CTA: TX6003", () => {
    const k = twoCtas(
      "atom_cta_ld_gpu",
      (A) => T.cuda.red_add(A.ptr([0]), 1, { sem: "relaxed", scope: "cta" }), // @red-cta
      (A) => A.set([1], T.ptx.ld(A.ptr([0]), { sem: "relaxed", scope: "gpu" })), // @ld-gpu
    );
    expectRace(k, word, "TX6003", "// @ld-gpu", "// @red-cta", /red\.relaxed\.cta\.add/);
  });
});

describe("within one CTA any scope includes both threads", () => {
  /** Two CTAs: one thread of each warp adds with cta scope, with nothing ordering the warps. */
  const warps = (space: "global" | "shared") =>
    T.function(`warps_${space}`, { A: T.Tensor([4], "int32") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 2, block: 128 }) });
      const tid = T.cuda.thread_idx("x");
      const cta = T.cuda.block_idx("x");
      const s = T.alloc_shared([1], "int32");
      T.if_(tid.eq(0), () => s.set([0], 0));
      T.cuda.cta_sync();
      // CTA 0 works on A[0], CTA 1 on A[1]; shared memory is each CTA's own.
      const at = space === "shared" ? s.ptr([0]) : A.ptr([cta]);
      const o = { sem: "relaxed" as const, scope: "cta" as const };
      T.if_(tid.mod(32).eq(0), () => T.cuda.red_add(at, 1, o));
      T.cuda.cta_sync();
      if (space === "shared") T.if_(tid.eq(0), () => A.set([cta], s.get([0])));
    });

  it("cta-scope atomics of four warps: clean, global and shared, the exact sums", () => {
    for (const space of ["global", "shared"] as const) {
      expectClean(warps(space), word);
      const a = simZeros([4], "int32");
      runSim(verify(warps(space)), [a], { hazards: "throw" });
      expect(Array.from(a.toArray() as Int32Array)).toEqual([4, 4, 0, 0]);
    }
  });

  it("cta-scope atomics, a cta-scope load and store of several warps: clean", () => {
    // One CTA: warps 0..3 add, thread 1 loads, thread 33 stores, nothing ordering them.
    const one = (space: "global" | "shared") =>
      T.function(`one_cta_${space}`, { A: T.Tensor([4], "int32") }, ({ A }) => {
        T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 128 }) });
        const tid = T.cuda.thread_idx("x");
        const s = T.alloc_shared([1], "int32");
        T.if_(tid.eq(0), () => s.set([0], 0));
        T.cuda.cta_sync();
        const at = space === "shared" ? s.ptr([0]) : A.ptr([0]);
        const o = { sem: "relaxed" as const, scope: "cta" as const };
        T.if_(tid.mod(32).eq(0), () => T.cuda.red_add(at, 1, o));
        T.if_(tid.eq(1), () => A.set([2], T.ptx.ld(at, o)));
        T.if_(tid.eq(33), () => T.ptx.st(at, 7, o));
      });
    for (const space of ["global", "shared"] as const) expectClean(one(space), word);
  });
});

describe("cluster scope covers the CTAs of one cluster", () => {
  /**
   * A grid of 4 CTAs in clusters of 2: thread 0 of each CTA adds to A[w] with scope `scope`,
   * w its cluster (`own`) or 0 for every CTA (two clusters on one word).
   */
  const clusterAdds = (scope: Scope, own: boolean) =>
    T.function(`cluster_${scope}_${own}`, { A: T.Tensor([4], "int32") }, ({ A }) => {
      T.device_entry({
        launch: T.cuda.LaunchConfig({ grid: [4, 1], block: 32, cluster: [2, 1, 1] }),
      });
      const tid = T.cuda.thread_idx("x");
      const c = T.cuda.cluster_idx("x");
      const w = own ? c : T.int32(0);
      T.if_(tid.eq(0), () => T.cuda.red_add(A.ptr([w]), 1, { sem: "relaxed", scope })); // @cl-add
    });
  const sums = (fn: PrimFunc): { reports: string[]; a: number[] } => {
    const a = simZeros([4], "int32");
    const r = runSim(verify(fn), [a], { hazards: "collect" });
    return { reports: r.reports.map(String), a: Array.from(a.toArray() as Int32Array) };
  };

  it("cluster scope within a cluster: clean; across clusters: TX6014", () => {
    expect(sums(clusterAdds("cluster", true))).toEqual({ reports: [], a: [2, 2, 0, 0] });
    expectClean(clusterAdds("cluster", true), word);
    const msg = expectRace(
      clusterAdds("cluster", false),
      word,
      "TX6014",
      "// @cl-add",
      "// @cl-add",
      /red\.relaxed\.cluster\.add does not include .*\.gpu or wider here/,
    );
    expect(msg).toMatch(/no release\/acquire or fence orders the cluster of CTA/);
  });

  it("cta scope across the CTAs of one cluster: TX6014; gpu scope: clean", () => {
    expectRace(
      clusterAdds("cta", true),
      word,
      "TX6014",
      "// @cl-add",
      "// @cl-add",
      /red\.relaxed\.cta\.add does not include thread \(0, 0, 0\) of CTA \(\d, 0, 0\).*\.cluster or wider here/,
    );
    expectClean(clusterAdds("gpu", false), word);
  });
});

describe("strong loads are readers: a later write races with them unless morally strong", () => {
  /** Thread 0 of CTA 0 loads A[0] (ld.relaxed.gpu); thread 0 of CTA 1 then runs `write(A)`. */
  const loadThen = (name: string, write: (A: IntTensor) => void) =>
    twoCtas(
      name,
      (A) => A.set([1], T.ptx.ld(A.ptr([0]), { sem: "relaxed", scope: "gpu" })), // @war-ld
      write,
    );
  /** Both accesses, as a write-after-read report names them (`verb`: the write's). */
  const names = (verb: string) =>
    `thread (0, 0, 0) of CTA (1, 0, 0) ${verb} global "A" bytes 0..3, which thread (0, 0, 0) of CTA (0, 0, 0) read`;

  it("ld.relaxed.gpu, then a plain store of another CTA: TX6013 naming the load", () => {
    const k = loadThen("ld_then_plain", (A) => A.set([0], 5)); // @war-plain
    const msg = expectRace(
      k,
      word,
      "TX6013",
      "// @war-plain",
      "// @war-ld",
      /the ld\.relaxed\.gpu is strong, but this write is not a strong operation of the generic proxy/,
    );
    expect(msg).toContain(names("writes"));
    expect(msg).toContain(
      "no release/acquire or fence orders CTA (0, 0, 0)'s read before this write",
    );
  });

  it("ld.relaxed.gpu, then st.relaxed.gpu, st.release.gpu or an atomic of another CTA: clean", () => {
    expectClean(
      loadThen("ld_then_st_gpu", (A) => T.ptx.st(A.ptr([0]), 5, { sem: "relaxed", scope: "gpu" })),
      word,
    );
    expectClean(
      loadThen("ld_then_rel_gpu", (A) => T.ptx.st(A.ptr([0]), 5, { sem: "release", scope: "gpu" })),
      word,
    );
    expectClean(
      loadThen("ld_then_atom", (A) => A.set([2], T.cuda.atomic_add(A.ptr([0]), 1))),
      word,
    );
  });

  it("ld.relaxed.gpu, then st.relaxed.cta of another CTA: TX6013, the cta scope misses the load", () => {
    const k = loadThen(
      "ld_then_st_cta",
      (A) => T.ptx.st(A.ptr([0]), 5, { sem: "relaxed", scope: "cta" }), // @war-st-cta
    );
    const msg = expectRace(
      k,
      word,
      "TX6013",
      "// @war-st-cta",
      "// @war-ld",
      /both are strong, but not morally strong: the scope of this st\.relaxed\.cta does not include thread \(0, 0, 0\) of CTA \(0, 0, 0\) \(/,
    );
    expect(msg).toContain(names("atomically updates"));
    // The load's gpu scope includes the writer: only the store's scope is named.
    expect(msg).not.toMatch(/that of the ld/);
  });

  it("ld.relaxed.cta, then red.relaxed.gpu of another CTA: TX6013 naming the load's scope", () => {
    const k = twoCtas(
      "ld_cta_then_red",
      (A) => A.set([1], T.ptx.ld(A.ptr([0]), { sem: "relaxed", scope: "cta" })), // @war-ld-cta
      (A) => T.cuda.red_add(A.ptr([0]), 1), // @war-red
    );
    expectRace(
      k,
      word,
      "TX6013",
      "// @war-red",
      "// @war-ld-cta",
      /the scope of the ld\.relaxed\.cta does not include thread \(0, 0, 0\) of CTA \(1, 0, 0\)/,
    );
  });

  it("a load the writer's acquire orders before it (st.release then ld.acquire of a flag): clean", () => {
    // CTA 0 loads A[0] then releases A[3]; CTA 1 acquires A[3] and stores A[0] only if it saw 1.
    const k = twoCtas(
      "ld_release_acquire_plain",
      (A) => {
        A.set([1], T.ptx.ld(A.ptr([0]), { sem: "relaxed", scope: "gpu" }));
        T.ptx.st(A.ptr([3]), 1, { sem: "release", scope: "gpu" });
      },
      (A) => {
        const f = T.ptx.ld(A.ptr([3]), { sem: "acquire", scope: "gpu" });
        T.if_(f.eq(1), () => A.set([0], 5));
      },
    );
    expectClean(k, word);
  });

  it("a thread's ld.relaxed.cta, then its ld.relaxed.gpu, then st.relaxed.gpu of another CTA: TX6013", () => {
    // The gpu-scope load does not stand for the cta-scope one before it: the store is morally
    // strong with the later load only.
    const k = twoCtas(
      "ld_cta_then_gpu",
      (A) => {
        A.set([1], T.ptx.ld(A.ptr([0]), { sem: "relaxed", scope: "cta" })); // @ld-narrow
        A.set([2], T.ptx.ld(A.ptr([0]), { sem: "relaxed", scope: "gpu" }));
      },
      (A) => T.ptx.st(A.ptr([0]), 5, { sem: "relaxed", scope: "gpu" }), // @st-wide
    );
    expectRace(
      k,
      word,
      "TX6013",
      "// @st-wide",
      "// @ld-narrow",
      /the scope of the ld\.relaxed\.cta does not include thread \(0, 0, 0\) of CTA \(1, 0, 0\)/,
    );
  });

  it("a spin of many strong loads, then another CTA's plain store: TX6013", () => {
    // Thread 0 of CTA 0 loads A[0] 100 times (its own loads stand for each other: one record).
    const k = twoCtas(
      "ld_spin_then_plain",
      (A) => {
        for (const i of T.range(100)) {
          A.set([1], T.ptx.ld(A.ptr([0]), { sem: "acquire", scope: "gpu" }).add(i)); // @spin-ld
        }
      },
      (A) => A.set([0], 5), // @spin-plain
    );
    expectRace(k, word, "TX6013", "// @spin-plain", "// @spin-ld", /ld\.acquire\.gpu is strong/);
  });
});

describe("strong loads of shared memory within one CTA", () => {
  /**
   * One CTA of 64 threads: thread 0 (warp 0) loads s[0] with ld.relaxed.cta, thread 32 (warp 1)
   * then runs `write(s)`, nothing ordering the two unless `sync`; then s[0] goes to A[0].
   */
  const sharedLoadThen = (
    name: string,
    write: (s: ReturnType<typeof T.alloc_shared>) => void,
    sync = false,
  ) =>
    T.function(name, INT4, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([1], "int32", { name: "s" });
      T.if_(tid.eq(0), () => s.set([0], 0));
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => A.set([1], T.ptx.ld(s.ptr([0]), { sem: "relaxed", scope: "cta" }))); // @sh-ld
      if (sync) T.cuda.cta_sync();
      T.if_(tid.eq(32), () => write(s));
      T.cuda.cta_sync();
      T.if_(tid.eq(0), () => A.set([0], s.get([0])));
    });

  it("warp 0's ld.relaxed.cta, then warp 1's plain store: TX6013 (lockstep), both lines on every schedule", () => {
    const k = sharedLoadThen("sh_ld_then_plain", (s) => s.set([0], 7)); // @sh-plain
    const store = lineOf(here, "// @sh-plain");
    const load = lineOf(here, "// @sh-ld");
    const codes = new Set<string>();
    reports(k, word).forEach((r, seed) => {
      const e = r.find((x) => x.code === "TX6013" || x.code === "TX6003");
      expect(e, `seed ${seed}: ${r.map(String).join("\n")}`).toBeDefined();
      codes.add(e!.code);
      // Lockstep (seed 0) runs the load's statement first: the store finds it (TX6013). Another
      // schedule may run warp 1 first: the load finds the store (TX6003), as before.
      if (seed === 0) expect(e!.code).toBe("TX6013");
      const [at, other] = e!.code === "TX6013" ? [store, load] : [load, store];
      expect(e!.span?.line, `seed ${seed}`).toBe(at);
      expect(e!.notes[0]?.span?.line, `seed ${seed}`).toBe(other);
      if (e!.code === "TX6013") {
        expect(e!.message).toContain(
          'thread (32, 0, 0) of CTA (0, 0, 0) writes shared "s" bytes 0..3, which thread (0, 0, 0) read',
        );
        expect(e!.message).toMatch(/the ld\.relaxed\.cta is strong, but this write is not/);
      }
    });
    expect(codes.has("TX6013")).toBe(true);
  });

  it("warp 1's st.relaxed.cta or atomic instead (morally strong in one CTA), or a cta_sync between: clean", () => {
    expectClean(
      sharedLoadThen("sh_ld_then_st", (s) =>
        T.ptx.st(s.ptr([0]), 7, { sem: "relaxed", scope: "cta" }),
      ),
      word,
    );
    expectClean(
      sharedLoadThen("sh_ld_then_red", (s) =>
        T.cuda.red_add(s.ptr([0]), 1, { sem: "relaxed", scope: "cta" }),
      ),
      word,
    );
    expectClean(
      sharedLoadThen("sh_ld_sync_plain", (s) => s.set([0], 7), true),
      word,
    );
  });
});
