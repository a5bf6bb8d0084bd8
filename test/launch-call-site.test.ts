// Launch-time errors about arguments (TX5001-TX5005, TX5008, TX5009) stand at the author's line
// that launched the kernel, with a note at the kernel's declaration: through tirx-ts's compile
// (synchronous, launchAsync, launchOn), runtime-sim's runSim and runtime-cuda's compileCuda.
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { isTirxError, verify, type TirxError } from "@tirx-ts/core";
import { compileCuda } from "@tirx-ts/runtime-cuda";
import { runSim, simZeros } from "@tirx-ts/runtime-sim";
import { T, compile, sim, tensor } from "tirx-ts";
import { markers } from "./util/markers.js";

const file = fileURLToPath(import.meta.url);
const line = markers(import.meta.url).at;

const copy = T.function(
  "copy",
  { A: T.Tensor([64], "float32"), B: T.Tensor([64], "float32") },
  ({ A, B }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
    const t = T.cuda.thread_idx("x");
    B.set([t], A.get([t]));
  },
); // @copy-end

const scaled = T.function("scaled", { n: T.int32, A: T.Tensor(["n"], "float32") }, ({ n, A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: [T.ceildiv(n, 64)], block: 64 }) }); // @grid
  const i = T.cuda.block_idx("x").mul(64).add(T.cuda.thread_idx("x"));
  T.if_(i.lt(n), () => A.set([i], A.get([i]).mul(2)));
});

function thrown(f: () => unknown): TirxError {
  try {
    f();
  } catch (e) {
    if (isTirxError(e)) return e;
    throw e;
  }
  throw new Error("expected a TirxError");
}

/** The error stands at `marker`'s line of this file, and its first note at the declaration. */
function atCall(e: TirxError, code: string, marker: string, declaredAt: number): void {
  expect(e.code, e.message).toBe(code);
  expect(e.span?.file).toBe(file);
  expect(e.span?.line).toBe(line(marker));
  expect(e.notes[0]?.message).toMatch(/^kernel "\w+" is declared here$/);
  expect(e.notes[0]?.span?.file).toBe(file);
  expect(e.notes[0]?.span?.line).toBe(declaredAt);
  // The rendered diagnostic frames the call, not the declaration.
  expect(e.render()).toMatch(new RegExp(`^> +${line(marker)} \\|`, "m"));
}

// `T.function(` is on the line after `const copy =`, and so for `scaled`.
const copyDeclared = copy.span!.line;
const scaledDeclared = scaled.span!.line;

describe("launch errors point at the call", () => {
  const dev = sim();
  const f32 = (n: number) => tensor.zeros([n], "float32", dev);

  test("the declarations' spans are the T.function lines", () => {
    expect(copy.span?.file).toBe(file);
    expect(copyDeclared).toBeLessThan(line("copy-end"));
  });

  test("compile(fn)(...): count, dtype, shape, kind", () => {
    const run = compile(copy);
    atCall(
      thrown(() => run(f32(64))), // @count
      "TX5001",
      "count",
      copyDeclared,
    );
    atCall(
      thrown(() => run(f32(64), tensor.zeros([64], "float16", dev))), // @dtype
      "TX5002",
      "dtype",
      copyDeclared,
    );
    atCall(
      thrown(() => run(f32(64), f32(32))), // @shape
      "TX5003",
      "shape",
      copyDeclared,
    );
    atCall(
      thrown(() => run(f32(64), 3)), // @kind
      "TX5005",
      "kind",
      copyDeclared,
    );
  });

  test("launchAsync and launchOn", () => {
    const run = compile(copy);
    atCall(
      thrown(() => run.launchAsync(f32(64), f32(16))), // @async
      "TX5003",
      "async",
      copyDeclared,
    );
    atCall(
      thrown(() => run.launchOn(null, f32(64))), // @on
      "TX5001",
      "on",
      copyDeclared,
    );
  });

  test("a symbolic dim that differs from its scalar (TX5008), a grid extent of 0 (TX5009)", () => {
    const run = compile(scaled);
    atCall(
      thrown(() => run(100, f32(99))), // @dim
      "TX5008",
      "dim",
      scaledDeclared,
    );
    const e = thrown(() => run(0, f32(0))); // @grid0
    atCall(e, "TX5009", "grid0", scaledDeclared);
    expect(e.notes[1]?.message).toBe("the grid extent is written here");
    expect(e.notes[1]?.span?.line).toBe(line("grid"));
  });

  test("runSim, the simulator's own entry", () => {
    const vf = verify(copy);
    atCall(
      thrown(() => runSim(vf, [simZeros([64], "float32"), simZeros([64], "int32")])), // @runsim
      "TX5002",
      "runsim",
      copyDeclared,
    );
  });

  test("compileCuda, with tensors of the simulated device (TX5004), needs no GPU", () => {
    const run = compileCuda(copy);
    atCall(
      thrown(() => run(f32(64), f32(64))), // @cuda
      "TX5004",
      "cuda",
      copyDeclared,
    );
  });
});
