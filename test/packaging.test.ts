// Packaging (issue 13, item 6). SLOW (about 10-15 s, once per `npm test`): the README's packaging
// block runs as written (test/util/readme.ts takes it from README.md): every package is packed
// with `npm pack`, the tarballs are installed into a fresh project outside the repository (from
// the npm cache where it can), and there the README's kernel runs with `npx tsx` on the simulated
// device and `npx tirx build` prints its PTX (npx finding the project's installed bins, as npx
// does, without npm's start-up), and the README's attention() program runs there on the
// simulated device. Also: each package declares exactly the packages its source imports.
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
import { codeBlocks, packagingBlock, runSh, shCommands } from "./util/readme.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const PACKAGES = [
  "core",
  "dsl",
  "codegen-ptx",
  "runtime-sim",
  "runtime-cuda",
  "runtime",
  "kernels",
  "tirx-ts",
];

/**
 * Appended to the README's attention() program (q, k, v, o, lse; shape [1, 128, 1, 64],
 * causal): causal row 1 sees keys 0 and 1, O's row and LSE from the host's float64 within
 * 2^-9 (2 ulp of float16 at 1, inputs in [0, 1)) and 2^-18 · max(1, |LSE|).
 */
const ATTENTION_CHECK = `
const [Q, K, V, O, L] = [q, k, v, o, lse].map((t) => t.toArray());
const dot = (i: number, j: number) => {
  let s = 0;
  for (let x = 0; x < 64; x++) s += Q[i * 64 + x]! * K[j * 64 + x]!;
  return s / 8;
};
const [s0, s1] = [dot(1, 0), dot(1, 1)];
const m = Math.max(s0, s1);
const [p0, p1] = [Math.exp(s0 - m), Math.exp(s1 - m)];
let worst = 0;
for (let x = 0; x < 64; x++) {
  const ref = (p0 * V[x]! + p1 * V[64 + x]!) / (p0 + p1);
  worst = Math.max(worst, Math.abs(O[64 + x]! - ref));
}
const lseRef = m + Math.log(p0 + p1);
const ok = worst <= 2 ** -9 && Math.abs(L[1]! - lseRef) <= 2 ** -18 * Math.max(1, lseRef);
console.log(\`attention row 1: \${ok ? "ok" : "WRONG"} (O \${worst}, LSE \${L[1]} vs \${lseRef})\`);
`;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith(".ts") ? [p] : [];
  });
}

/** Package names a source file imports (static, dynamic, and createRequire(...)("x")). */
function importsOf(text: string): string[] {
  const specs = [
    // One line: an import that spans lines ends with a line `} from "x"` (the next pattern), and a
    // pattern crossing lines took `export function f() { return ['import … from "x"` for one.
    ...text.matchAll(/^(?:import|export)\b[^;"\n]*?\bfrom\s+"([^"]+)"/gm),
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

test("the README's packaging commands as written: tarballs packed here install into a fresh project outside the repository, where npx tsx runs the README's kernel and npx tirx build prints its PTX (slow: npm pack + install)", () => {
  const block = packagingBlock();
  const lines = block.text.split("\n");
  const split = lines.findIndex((l) => l.trim().startsWith("# in your project"));
  expect(split, "the block says where its second part runs").toBeGreaterThan(0);
  const inRepo = { ...block, text: lines.slice(0, split).join("\n") };
  const inProject = { ...block, line: block.line + split, text: lines.slice(split).join("\n") };
  // The README's program: the first ts block that launches its kernel.
  const kernel = codeBlocks("README.md").find(
    (b) => b.lang === "ts" && /\brun\(a, b\)/.test(b.text),
  );
  expect(kernel, "README.md's kernel program").toBeDefined();
  const dir = mkdtempSync(join(tmpdir(), "tirx-pack-"));
  // The README packs into /tmp/tirx-tgz; each run takes its own folder, so that runs side by
  // side do not share one. npm takes packages from its cache where it can (CI's npm ci filled it).
  const tgz = join(dir, "tgz");
  // `npx X` in the project runs its node_modules/.bin/X, as npx does for an installed bin,
  // without npm's start-up (a second or two of CPU per command); test/readme-commands.test.ts
  // runs the real npx.
  const shim = join(dir, "bin");
  mkdirSync(shim);
  const npx = runSh("command -v npx", root).stdout.trim();
  writeFileSync(
    join(shim, "npx"),
    [
      "#!/usr/bin/env bash",
      'bin="$PWD/node_modules/.bin/$1"',
      'if [[ -x "$bin" ]]; then shift; exec "$bin" "$@"; fi',
      `exec ${JSON.stringify(npx)} "$@"`,
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
  const env = {
    TIRX_DEVICE: "sim",
    PATH: `${shim}:${process.env["PATH"] ?? ""}`,
    npm_config_prefer_offline: "true",
    npm_config_audit: "false",
    npm_config_fund: "false",
  };
  const run = (c: { line: number; text: string }, cwd: string) => {
    const r = runSh(c.text.replaceAll("/tmp/tirx-tgz", tgz), cwd, env);
    expect(r.status, `README.md:${c.line}: ${c.text}\n${r.stderr}`).toBe(0);
    return r;
  };
  try {
    for (const c of shCommands(inRepo)) run(c, root);
    expect(readdirSync(tgz).length).toBe(PACKAGES.length);
    const app = join(dir, "app");
    mkdirSync(app);
    // A project without "type": "module" (the README: with or without it).
    writeFileSync(join(app, "package.json"), '{ "name": "app", "private": true }\n');
    writeFileSync(join(app, "my_kernel.ts"), `${kernel!.text}\n`);
    const out = shCommands(inProject).map((c) => ({ c, r: run(c, app) }));
    const build = out.find((o) => o.c.text.startsWith("npx tirx build my_kernel.ts"));
    expect(build?.r.stdout).toMatch(/^\.visible \.entry copy_async\(/m);
    // The installed bin itself (npx would find the same file, after a second of npm's start-up).
    const bin = join(app, "node_modules", ".bin", "tirx");
    const version = execFileSync(bin, ["--version"], { cwd: app, encoding: "utf8" });
    expect(version.trim()).toMatch(/^tirx-ts \d+\.\d+\.\d+/);
    // The README's attention() program, installed: on the simulated device, its causal row 1
    // (keys 0 and 1) against the host's float64, within examples/flash_attention.ts's bounds.
    const attn = codeBlocks("README.md").find(
      (b) => b.lang === "ts" && /\battention\(q, k, v\b/.test(b.text),
    );
    expect(attn, "README.md's attention() program").toBeDefined();
    writeFileSync(join(app, "attention.ts"), `${attn!.text}\n${ATTENTION_CHECK}`);
    const tsx = join(app, "node_modules", ".bin", "tsx");
    const checked = execFileSync(tsx, ["attention.ts"], {
      cwd: app,
      encoding: "utf8",
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    expect(checked).toMatch(/^attention row 1: ok/m);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
