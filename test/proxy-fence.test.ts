// T.ptx.fence.proxy_async(space): the three state-space forms of fence.proxy.async (PTX ISA,
// fence.proxy.async: proxykind .async.shared::cta, .async.global, .async), their PTX, and that
// ptxas accepts them for sm_90.
import { describe, expect, it } from "vitest";
import { T } from "@tirx-ts/dsl";
import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { assembleMerged } from "./util/ptx-merge.js";

const kernel = (space?: "shared::cta" | "global" | "all") =>
  T.function(
    `fence_${space ?? "default"}`.replace(/\W/g, "_"),
    { A: T.Tensor([32], "float32") },
    ({ A }) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });
      const tid = T.cuda.thread_idx("x");
      A.set([tid], 1);
      if (space === undefined) T.ptx.fence.proxy_async();
      else T.ptx.fence.proxy_async(space);
    },
  );

const fenceLines = (text: string): string =>
  text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.startsWith("fence."))
    .join("\n");

describe("T.ptx.fence.proxy_async", () => {
  const mods = [undefined, "shared::cta", "global", "all"].map((s) => {
    const fn = kernel(s as "global" | undefined);
    return { name: fn.name, text: compileToPtx(fn, { arch: "sm_90" }).text };
  });

  it("emits fence.proxy.async of the state space asked for (shared::cta by default)", () => {
    expect(mods.map((m) => fenceLines(m.text)).join("\n")).toMatchInlineSnapshot(`
      "fence.proxy.async.shared::cta;
      fence.proxy.async.shared::cta;
      fence.proxy.async.global;
      fence.proxy.async;"
    `);
  });

  it("assembles for sm_90", async () => {
    expect(await assembleMerged(mods, "sm_90")).toEqual([]);
  });

  it("is refused below sm_90 (TX4007)", () => {
    expect(() => compileToPtx(kernel("global"), { arch: "sm_80" })).toThrow(
      expect.objectContaining({ code: "TX4007" }),
    );
  });
});
