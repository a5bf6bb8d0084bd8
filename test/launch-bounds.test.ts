// `min_ctas_per_sm` (CUDA __launch_bounds__'s second argument, PTX `.minnctapersm`): in the PTX
// header, kept by both printers, parsed back by script mode, and checked against the SM's 2048
// threads (TX2007) and as an option (TX1002).
import { describe, expect, it } from "vitest";
import { isTirxError, verify, type PrimFunc } from "@tirx-ts/core";
import { T, printFunc, printScriptModuleText, parseScript } from "@tirx-ts/dsl";
import { emitPtx } from "@tirx-ts/codegen-ptx";
import { assembleLater } from "./util/ptxas-deferred.js";

function kernel(launch: Record<string, unknown>): PrimFunc {
  return T.function("k", { X: T.Tensor([256], "float32") }, ({ X }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig(launch as never) });
    const t = T.cuda.thread_idx("x");
    X.set([t], X.get([t]).add(1));
  });
}

function code(f: () => unknown): string | undefined {
  try {
    f();
  } catch (e) {
    return isTirxError(e) ? e.code : String(e);
  }
  return undefined;
}

describe("min_ctas_per_sm", () => {
  it("is .minnctapersm after .maxntid, and ptxas takes it", () => {
    const ptx = emitPtx(verify(kernel({ grid: 1, block: 256, min_ctas_per_sm: 2 })), {
      arch: "sm_90a",
    }).text;
    const header = ptx.split("\n").filter((l) => l.startsWith(".m"));
    expect(header).toEqual([".maxntid 256, 1, 1", ".minnctapersm 2"]);
    assembleLater(ptx, "sm_90a", "min_ctas_per_sm");
    const none = emitPtx(verify(kernel({ grid: 1, block: 256 })), { arch: "sm_90a" }).text;
    expect(none).not.toContain(".minnctapersm");
  });

  it("survives both printers and the script parser", () => {
    const fn = kernel({ grid: 1, block: 256, min_ctas_per_sm: 3 });
    expect(printFunc(fn)).toContain("min_ctas_per_sm: 3");
    const src = printScriptModuleText([fn]);
    expect(src).toContain("min_ctas_per_sm: 3");
    const [back] = parseScript(src);
    expect(verify(back!).launch.minCtasPerSm).toBe(3);
  });

  it("fits the SM's 2048 threads (TX2007) and is an integer ≥ 1 (TX1002)", () => {
    expect(code(() => verify(kernel({ grid: 1, block: 256, min_ctas_per_sm: 8 })))).toBe(undefined);
    expect(code(() => verify(kernel({ grid: 1, block: 256, min_ctas_per_sm: 9 })))).toBe("TX2007");
    expect(code(() => kernel({ grid: 1, block: 256, min_ctas_per_sm: 0 }))).toBe("TX1002");
    expect(code(() => kernel({ grid: 1, block: 256, min_ctas_per_sm: 1.5 }))).toBe("TX1002");
  });
});
