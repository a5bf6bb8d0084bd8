// Packaging (issue 13, item 6). SLOW (about 10-20 s, once per `npm test`): every package is
// packed with `npm pack`, the tarballs are installed into a fresh directory outside the
// repository (from the npm cache: --prefer-offline), and a `.ts` script there that imports
// `tirx-ts` runs with `npx tsx` on the simulated device. Also: each package declares exactly
// the packages its source imports.
import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const PACKAGES = ["core", "dsl", "codegen-ptx", "runtime-sim", "runtime-cuda", "tirx-ts"];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Package names a source file imports (static, dynamic, and createRequire(...)("x")). */
function importsOf(text: string): string[] {
  const specs = [
    ...text.matchAll(/^(?:import|export)\b[^;"]*?\bfrom\s+"([^"]+)"/gm),
    ...text.matchAll(/^\}\s*from\s+"([^"]+)"/gm),
    ...text.matchAll(/^import\s+"([^"]+)"/gm),
    ...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g),
    ...text.matchAll(/createRequire\([^)]*\)\(\s*"([^"]+)"\s*\)/g),
  ].map((m) => m[1]!);
  return specs
    .filter((s) => !s.startsWith(".") && !s.startsWith("node:"))
    .map((s) => (s.startsWith("@") ? s.split("/").slice(0, 2).join("/") : s.split("/")[0]!));
}

test("each package declares the packages its source imports, and only those", () => {
  for (const name of PACKAGES) {
    const dir = join(root, "packages", name);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    const declared = Object.keys(pkg.dependencies ?? {}).filter((d) => !d.startsWith("@types/"));
    const imported = new Set(
      sources(join(dir, "src")).flatMap((f) => importsOf(readFileSync(f, "utf8"))),
    );
    for (const i of imported) expect(declared, `${name} imports ${i}`).toContain(i);
    // ts-morph: dsl's script-mode parser (DESIGN.md) is its importer; it lands separately.
    const unused = declared.filter(
      (d) => !imported.has(d) && !(name === "dsl" && d === "ts-morph"),
    );
    expect(unused, `${name} declares dependencies it does not import`).toEqual([]);
  }
});

test("the packed tarballs install outside the repository, and a .ts script importing tirx-ts runs with npx tsx on the simulator (slow: npm pack + install)", () => {
  const dir = mkdtempSync(join(tmpdir(), "tirx-pack-"));
  try {
    const tgz = join(dir, "tgz");
    mkdirSync(tgz);
    const npm = (args: string[], cwd: string): string =>
      execFileSync("npm", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    npm(
      [
        "pack",
        ...PACKAGES.flatMap((p) => ["-w", `packages/${p}`]),
        "--pack-destination",
        tgz,
        "--silent",
        "--ignore-scripts",
      ],
      root,
    );
    const tarballs = readdirSync(tgz).map((f) => join(tgz, f));
    expect(tarballs.length).toBe(PACKAGES.length);
    const app = join(dir, "app");
    mkdirSync(app);
    writeFileSync(
      join(app, "package.json"),
      '{ "name": "app", "private": true, "type": "module" }\n',
    );
    const tsxVersion = (
      JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies["tsx"]!;
    npm(
      ["install", ...tarballs, `tsx@${tsxVersion}`, "--prefer-offline", "--no-audit", "--no-fund"],
      app,
    );
    writeFileSync(
      join(app, "run.ts"),
      `import { T, compile, tensor, sim } from "tirx-ts";
const inc = T.function("inc", { A: T.Tensor([64], "float32") }, ({ A }) => {
  T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: 64 }) });
  const tid = T.cuda.thread_idx("x");
  A.set([tid], A.get([tid]).add(tid.cast("float32")));
});
const a = tensor.zeros([64], "float32", sim());
compile(inc)(a);
console.log("sum", (a.toArray() as Float32Array).reduce((x, y) => x + y, 0));
`,
    );
    const out = execFileSync("npx", ["tsx", "run.ts"], {
      cwd: app,
      encoding: "utf8",
      env: { ...process.env, TIRX_DEVICE: "sim" },
    });
    expect(out.trim()).toBe(`sum ${(63 * 64) / 2}`);
    const version = execFileSync("npx", ["tirx", "--version"], { cwd: app, encoding: "utf8" });
    expect(version.trim()).toMatch(/^tirx-ts \d+\.\d+\.\d+/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
