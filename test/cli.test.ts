// The `tirx` command as a user runs it (from the built package; `npm test` builds first).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { assemblePtx } from "./util/ptxas.js";
import { lineOf } from "./kernels/seed.js";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = fileURLToPath(new URL("../packages/tirx-ts/bin/tirx.js", import.meta.url));

function tirx(...args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: root, encoding: "utf8" });
  return { code: r.status, out: r.stdout, err: r.stderr };
}
const count = (text: string, re: RegExp) => text.split("\n").filter((l) => re.test(l)).length;

describe("tirx build", () => {
  test("prints the seed kernel's PTX, which ptxas assembles for sm_80 and sm_90", () => {
    const { code, out, err } = tirx("build", "examples/copy_async.ts", "--emit", "ptx");
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(count(out, /^\s*cp\.async\.cg\.shared\.global \[[^\]]+\], \[[^\]]+\], 16;$/)).toBe(4);
    expect(count(out, /^\s*cp\.async\.commit_group;$/)).toBe(1);
    expect(count(out, /^\s*cp\.async\.wait_group 0;$/)).toBe(1);
    expect(count(out, /^\s*bar\.sync 0;$/)).toBe(1);
    assemblePtx(out, "sm_80");
    assemblePtx(out, "sm_90");
  });

  test("--arch sm_90 sets the target; --emit ir prints the IR; --kernel selects", () => {
    expect(tirx("build", "examples/copy_async.ts", "--arch", "sm_90").out).toContain(
      ".target sm_90",
    );
    const ir = tirx("build", "examples/copy_async.ts", "--emit", "ir", "--kernel", "copy_async");
    expect(ir.code).toBe(0);
    expect(ir.out).toMatch(/export const copy_async = T\.function\(\s*"copy_async"/);
    expect(tirx("build", "examples/copy_async.ts", "--kernel", "nope").code).toBe(1);
  });

  test("a contract violation exits 1 with the code, the rule and a code frame of the author's line", async () => {
    const { code, err } = tirx("build", "test/fixtures/bad_chunk.ts");
    const line = await lineOf(
      fileURLToPath(new URL("./fixtures/bad_chunk.ts", import.meta.url)),
      "// BAD",
    );
    expect(code).toBe(1);
    expect(err).toContain(`test/fixtures/bad_chunk.ts:${line}:`);
    expect(err).toContain("error TX3007 [cp-async/cg-16]");
    expect(err).toMatch(new RegExp(`^> +${line} \\| .*// BAD$`, "m"));
  });

  test("a file that does not parse exits 1 with its location, not a stack trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "tirx-cli-"));
    const file = join(dir, "broken.ts");
    writeFileSync(file, "export const x = ;\n");
    const { code, err } = tirx("build", file);
    expect(code).toBe(1);
    expect(err).toContain("error: cannot load the file");
    expect(err).toContain(':1:17: ERROR: Unexpected ";"');
    expect(err).not.toContain("    at ");
  });

  test("usage errors exit 2", () => {
    expect(tirx().code).toBe(2);
    expect(tirx("build", "no/such/file.ts").code).toBe(2);
    expect(tirx("build", "examples/copy_async.ts", "--emit", "sass").code).toBe(2);
  });

  test("--emit ir --after PASS prints that stage; an unknown pass is a usage error", () => {
    const tiles = tirx("build", "examples/copy_async.ts", "--emit", "ir", "--after", "lower-tile");
    expect(tiles.code).toBe(0);
    expect(tiles.out).toMatch(/^\/\/ IR of "copy_async" after lower-tile$/m);
    expect(count(tiles.out, /\/\/ TileOp: cp\.async, chunk 16 bytes/)).toBe(1);
    const storage = tirx("build", "examples/copy_async.ts", "--emit", "ir", "--after", "storage");
    expect(storage.out).toMatch(/^\/\/ shared: \.shared smem_shared \(8192 bytes/m);
    const bad = tirx("build", "examples/copy_async.ts", "--emit", "ir", "--after", "unrol");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(
      'unknown pass "unrol"; --after takes one of: verify, lower-tile, unroll, simplify, upcast-half, storage',
    );
    expect(tirx("build", "examples/copy_async.ts", "--after", "unroll").code).toBe(2);
  });

  test("the printed IR is a T module: built again, it gives the same PTX instructions", () => {
    // Inside the repository (so that `tirx-ts` resolves), in a gitignored folder.
    const dir = join(root, "test", ".printed", "cli");
    mkdirSync(dir, { recursive: true });
    const instructions = (ptx: string): string[] =>
      ptx
        .split("\n")
        .map((l) => l.replace(/\/\/.*$/, "").trim())
        .filter((l) => l !== "");
    const original = tirx("build", "examples/copy_async.ts", "--emit", "ptx");
    expect(original.code).toBe(0);
    expect(instructions(original.out).filter((l) => l.startsWith("cp.async")).length).toBe(6);
    try {
      for (const after of [
        [],
        ["--after", "verify"],
        ["--after", "lower-tile"],
        ["--after", "storage"],
      ]) {
        const ir = tirx("build", "examples/copy_async.ts", "--emit", "ir", ...after);
        expect(ir.code, ir.err).toBe(0);
        const file = join(dir, `cli_copy_async_${after[1] ?? "written"}.ts`);
        writeFileSync(file, ir.out);
        const again = tirx("build", file, "--emit", "ptx");
        expect(again.err).toBe("");
        expect(instructions(again.out)).toEqual(instructions(original.out));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
