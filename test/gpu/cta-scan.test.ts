// T.cuda.cta_scan (float32 sum, inclusive and exclusive; int32 max) and cta_argmax over a CTA of
// 8 warps on the GPU and on the simulated device: bit for bit equal to each other and to the
// documented order of operations computed on the host (per-warp Hillis–Steele, the warp totals'
// exclusive scan, offset ⊕ own). The warp scans and argmax themselves are in the ops
// differential test. Skipped, with the reason printed, where no CUDA driver loads.
import { describe, expect, it } from "vitest";
import { T, compile, cuda, cudaAvailable, sim, tensor } from "tirx-ts";

const probe = cudaAvailable();
if (!probe.ok) console.log(`test/gpu/cta-scan: skipped, no CUDA driver (${probe.reason})`);

const N = 256;
const W = N / 32;
const f = Math.fround;

function hs(a: number[], w: number, op: (x: number, y: number) => number): number[] {
  let cur = [...a];
  for (let d = 1; d < w; d *= 2) {
    const prev = cur;
    cur = prev.map((v, i) => ((i & (w - 1)) >= d ? op(prev[i - d]!, v) : v));
  }
  return cur;
}

function hostScan(a: number[], op: (x: number, y: number) => number, id: number, excl: boolean) {
  const inc = hs(a, 32, op);
  const own = excl ? inc.map((_, i) => ((i & 31) === 0 ? id : inc[i - 1]!)) : inc;
  const t = hs(
    Array.from({ length: W }, (_, w) => inc[w * 32 + 31]!),
    W,
    op,
  );
  return own.map((v, i) => (i < 32 ? v : op(t[(i >> 5) - 1]!, v)));
}

type Dev = ReturnType<typeof sim> | ReturnType<typeof cuda>;

function scanOn(dev: Dev, dt: "float32" | "int32", kind: "sum" | "max", ex: boolean, a: number[]) {
  const fn = T.function(
    `gpu_cta_scan_${dt}_${kind}_${ex ? "ex" : "in"}`,
    { A: T.Tensor([N], dt), Y: T.Tensor([N], dt) },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
      const s = T.alloc_shared([W], dt);
      const i = T.let_("i", T.cuda.thread_idx("x"));
      p.Y.set([i], T.cuda.cta_scan(p.A.get([i]), kind, W, s, { exclusive: ex }));
    },
  );
  const x = tensor(a, { shape: [N], dtype: dt, device: dev });
  const y = tensor.zeros([N], dt, dev);
  compile(fn, { target: "cuda" })(x, y);
  const out = Array.from(y.toArray() as ArrayLike<number>);
  x.dispose();
  y.dispose();
  return out;
}

function argmaxOn(dev: Dev, a: number[]): number[] {
  const fn = T.function(
    "gpu_cta_argmax",
    { A: T.Tensor([N], "float32"), Y: T.Tensor([N], "int32") },
    (p) => {
      T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: N }) });
      const sv = T.alloc_shared([W], "float32");
      const si = T.alloc_shared([W], "int32");
      const i = T.let_("i", T.cuda.thread_idx("x"));
      p.Y.set([i], T.cuda.cta_argmax(p.A.get([i]), i.cast("int32"), W, sv, si));
    },
  );
  const x = tensor(Float32Array.from(a), { shape: [N], dtype: "float32", device: dev });
  const y = tensor.zeros([N], "int32", dev);
  compile(fn, { target: "cuda" })(x, y);
  const out = Array.from(y.toArray() as Int32Array);
  x.dispose();
  y.dispose();
  return out;
}

describe.skipIf(!probe.ok)("CTA scans and argmax: GPU, simulator, host order", () => {
  const a = Array.from({ length: N }, (_, i) => f(Math.sin(i * 1.3) * 5 + 0.01 * (i % 7)));
  const add = (x: number, y: number): number => f(x + y);

  it.each([false, true])("float32 sum, exclusive %s", (ex) => {
    const want = hostScan(a, add, 0, ex);
    expect(scanOn(cuda(0), "float32", "sum", ex, a)).toEqual(want);
    expect(scanOn(sim(), "float32", "sum", ex, a)).toEqual(want);
  });

  it("int32 max, exclusive", () => {
    const b = a.map((v) => Math.trunc(v * 1000));
    const want = hostScan(b, Math.max, -(2 ** 31), true);
    expect(scanOn(cuda(0), "int32", "max", true, b)).toEqual(want);
    expect(scanOn(sim(), "int32", "max", true, b)).toEqual(want);
  });

  it("argmax with NaNs and ties", () => {
    const v = Array.from({ length: N }, (_, i) => (i % 11 === 0 ? NaN : (i * 7) % 9));
    let best = -1;
    v.forEach((x, k) => {
      if (x === x && (best < 0 || x > v[best]!)) best = k;
    });
    expect(argmaxOn(cuda(0), v)).toEqual(v.map(() => best));
    expect(argmaxOn(sim(), v)).toEqual(v.map(() => best));
  });
});
