// TX6001 names the largest cp.async.wait_group count that would complete the copy a read (or a
// later cp.async) hits: the number of groups its thread committed after the one holding it. Each
// advice is checked by running the kernel with the advised wait (no report) and with one more
// (still reported), so the expected count is not taken from the report itself.
import { describe, expect, it } from "vitest";
import { verify } from "@tirx-ts/core";
import { T } from "@tirx-ts/dsl";
import { runSim, simTensor, simZeros } from "@tirx-ts/runtime-sim";

const THREADS = 32;

interface Case {
  /** Commit groups issued: group g copies row g of every thread's 16-byte chunk. */
  readonly groups: number;
  /** The group whose bytes are read. */
  readonly read: number;
  /** wait_group(n) before the read (undefined: no wait). */
  readonly wait?: number;
  /** The reader reads its own chunk, or the next thread's (then a cta_sync precedes the read). */
  readonly other: boolean;
  /** Leave the last group uncommitted. */
  readonly uncommitted?: boolean;
}

function kernel(c: Case) {
  return T.function(
    "wait_advice",
    {
      A: T.Tensor([c.groups, THREADS, 16], "uint8"),
      B: T.Tensor([THREADS], "uint8"),
    },
    ({ A, B }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: THREADS }) });
      const tid = T.cuda.thread_idx("x");
      const tile = T.alloc_shared([c.groups, THREADS, 16], "uint8");
      const cp = T.ptx["cp.async.cg.shared.global"]!;
      for (let g = 0; g < c.groups; g++) {
        T.cuda.tile.apply(cp, tile.sub(g, tid, ":"), A.sub(g, tid, ":"), { chunk_bytes: 16 });
        if (!(c.uncommitted && g === c.groups - 1)) T.ptx.cp.async_.commit_group();
      }
      if (c.wait !== undefined) T.ptx.cp.async_.wait_group(c.wait);
      if (c.other) T.cuda.cta_sync();
      const reader = c.other ? tid.add(1).floormod(THREADS) : tid;
      B.set([tid], tile.get([c.read, reader, 0]));
      T.ptx.cp.async_.wait_all();
      T.cuda.cta_sync();
    },
  );
}

function reports(c: Case) {
  const a = simTensor(
    Uint8Array.from({ length: c.groups * THREADS * 16 }, (_, i) => i % 251),
    { shape: [c.groups, THREADS, 16], dtype: "uint8" },
  );
  return runSim(verify(kernel(c)), [a, simZeros([THREADS], "uint8")], { hazards: "collect" })
    .reports;
}

/** The count TX6001 advises for case `c`, from its message. */
function advised(c: Case): number {
  const r = reports(c).find((e) => e.code === "TX6001");
  expect(r, "a TX6001 report").toBeDefined();
  const m = /T\.ptx\.cp\.async_\.wait_group\((\d+)\)/.exec(r!.message);
  expect(m, r!.message).not.toBeNull();
  return Number(m![1]);
}

describe("TX6001 names the wait_group count that covers the read", () => {
  // Three groups, no wait: group 2's bytes need wait_group(0), group 1's wait_group(1), group
  // 0's wait_group(2); so do two groups waited with wait_group(1) (group 0 done), read group 1.
  const cases: [Case, number][] = [
    [{ groups: 3, read: 2, other: false }, 0],
    [{ groups: 3, read: 1, other: false }, 1],
    [{ groups: 3, read: 0, other: false }, 2],
    [{ groups: 3, read: 1, wait: 2, other: false }, 1],
    [{ groups: 3, read: 0, other: true }, 2],
    [{ groups: 4, read: 1, wait: 3, other: true }, 2],
    [{ groups: 2, read: 1, wait: 1, other: true }, 0],
  ];
  it.each(cases)("%j: wait_group(%i)", (c, want) => {
    expect(advised(c)).toBe(want);
    // The advice works, and is the largest count that does.
    expect(reports({ ...c, wait: want })).toEqual([]);
    expect(reports({ ...c, wait: want + 1 }).map((e) => e.code)).toContain("TX6001");
  });

  it("a read by another thread says which thread waits and that a cta_sync follows", () => {
    const r = reports({ groups: 2, read: 0, other: true }).find((e) => e.code === "TX6001")!;
    expect(r.message).toMatch(
      /wait_group\(1\) in thread \(1, 0, 0\), then T\.cuda\.cta_sync\(\), before this read would cover it \(1 group was committed after the one holding these bytes/,
    );
    const own = reports({ groups: 2, read: 0, other: false }).find((e) => e.code === "TX6001")!;
    expect(own.message).not.toContain("cta_sync");
  });

  it("an uncommitted group: commit_group, then wait_group(0)", () => {
    const r = reports({ groups: 2, read: 1, wait: 0, other: false, uncommitted: true }).find(
      (e) => e.code === "TX6001",
    )!;
    expect(r.message).toMatch(/was never committed to a group/);
    expect(r.message).toMatch(
      /T\.ptx\.cp\.async_\.commit_group\(\) and T\.ptx\.cp\.async_\.wait_group\(0\) before this read would cover it/,
    );
  });

  it("a cp.async onto bytes an earlier one still targets gets the same advice", () => {
    const k = T.function("reissue", { A: T.Tensor([THREADS, 16], "uint8") }, ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: THREADS }) });
      const tid = T.cuda.thread_idx("x");
      const s = T.alloc_shared([THREADS, 16], "uint8");
      const other = T.alloc_shared([THREADS, 16], "uint8");
      const cp = T.ptx["cp.async.cg.shared.global"]!;
      T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 });
      T.ptx.cp.async_.commit_group();
      T.cuda.tile.apply(cp, other.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 });
      T.ptx.cp.async_.commit_group();
      T.cuda.tile.apply(cp, s.sub(tid, ":"), A.sub(tid, ":"), { chunk_bytes: 16 });
      T.ptx.cp.async_.wait_all();
    });
    const a = simTensor(new Uint8Array(THREADS * 16), { shape: [THREADS, 16], dtype: "uint8" });
    const r = runSim(verify(k), [a], { hazards: "collect" }).reports.find(
      (e) => e.code === "TX6001",
    )!;
    expect(r.message).toMatch(/which an earlier cp\.async still targets/);
    expect(r.message).toMatch(/wait_group\(1\) before this cp\.async would cover it/);
  });
});
