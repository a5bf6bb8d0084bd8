// `tirx build` of a builder kernel of N statements against running the same file under tsx
// (which builds the kernel's IR and nothing more), N = 1k, 10k, 30k by default, for two shapes:
// "straight", N statements written out one per line in one function (every T.* call is a new
// call site), and "loop", the same statements made by a JavaScript loop (one call site each).
// Each figure is the median wall time of ROUNDS runs of a fresh process (the bundle cache off).
// Run after `npm run build` (both use the built packages):
//   npx tsx bench/cli-build.ts [N ...]        ROUNDS=3 by default
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const tirx = join(root, "packages", "tirx-ts", "bin", "tirx.js");
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");
const sizes = process.argv.slice(2).map(Number);
const NS = sizes.length > 0 ? sizes : [1_000, 10_000, 30_000];
const ROUNDS = Number(process.env["ROUNDS"] ?? 3);

// A folder outside the repository whose node_modules/tirx-ts is this repository's package.
const dir = mkdtempSync(join(tmpdir(), "tirx-cli-build-"));
mkdirSync(join(dir, "node_modules"));
symlinkSync(join(root, "packages", "tirx-ts"), join(dir, "node_modules", "tirx-ts"), "dir");

const HEAD = [
  `import { T } from "tirx-ts";`,
  `export const big = T.function("big", { A: T.Tensor([32], "float32") }, ({ A }) => {`,
  `  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 32 }) });`,
  `  const t = T.cuda.thread_idx("x");`,
];

function kernel(shape: "straight" | "loop", n: number): string {
  const body =
    shape === "straight"
      ? Array.from({ length: n }, (_, i) => `  A.set([t], T.float32(${i}));`)
      : [`  for (let i = 0; i < ${n}; i++) A.set([t], T.float32(i));`];
  const file = join(dir, `${shape}_${n}.ts`);
  writeFileSync(file, [...HEAD, ...body, `});`, ``].join("\n"));
  return file;
}

/** Median wall time (s) of `rounds` runs of `node args`; exits on a failed run. */
function time(args: string[], rounds: number): number {
  const times: number[] = [];
  for (let k = 0; k < rounds; k++) {
    const t = performance.now();
    const r = spawnSync(process.execPath, args, {
      cwd: dir,
      env: { ...process.env, TIRX_CACHE: "off" },
      encoding: "utf8",
      maxBuffer: 1 << 30,
    });
    times.push((performance.now() - t) / 1000);
    if (r.status !== 0) {
      console.error(`${args.join(" ")} exited ${r.status}: ${r.stderr}`);
      process.exit(1);
    }
  }
  return times.sort((a, b) => a - b)[rounds >> 1]!;
}

try {
  console.log(`| shape | N | tirx build (s) | tsx (s) | ratio | tirx µs/statement |`);
  console.log(`|---|---|---|---|---|---|`);
  for (const shape of ["straight", "loop"] as const) {
    for (const n of NS) {
      const file = kernel(shape, n);
      const build = time([tirx, "build", file], ROUNDS);
      const run = time([tsx, file], ROUNDS);
      console.log(
        `| ${shape} | ${n} | ${build.toFixed(2)} | ${run.toFixed(2)} | ${(build / run).toFixed(2)} | ${((build * 1e6) / n).toFixed(0)} |`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
