// The fenced code blocks of the repository's READMEs, and the shell commands of their ```sh
// blocks, for the tests that run them as written (test/readme-commands.test.ts,
// test/packaging.test.ts).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

export const root = fileURLToPath(new URL("../..", import.meta.url));

/** One fenced block of a Markdown file. */
export interface CodeBlock {
  /** The Markdown file, relative to the repository root. */
  readonly file: string;
  /** The info string after the opening fence ("sh", "ts", or "" for a plain block). */
  readonly lang: string;
  /** 1-based line of the block's first line of content. */
  readonly line: number;
  readonly text: string;
}

/** The fenced blocks of `file` (relative to the repository root), in order. */
export function codeBlocks(file: string): CodeBlock[] {
  const lines = readFileSync(`${root}${file}`, "utf8").split("\n");
  const out: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l));
    if (end < 0) throw new Error(`${file}:${i + 1}: unclosed code block`);
    out.push({ file, lang: open[1]!, line: i + 2, text: lines.slice(i + 1, end).join("\n") });
    i = end;
  }
  return out;
}

/** One top-level command of a sh block, with its 1-based line in the Markdown file. */
export interface ShCommand {
  readonly line: number;
  readonly text: string;
}

/**
 * The top-level commands of a sh block: comment lines dropped, a `for`/`while`/`if` kept whole up
 * to its `done`/`fi`, a line ending in `\` joined with the next.
 */
export function shCommands(block: CodeBlock): ShCommand[] {
  const lines = block.text.split("\n");
  const out: ShCommand[] = [];
  let cur: string[] = [];
  let start = 0;
  let depth = 0;
  lines.forEach((l, i) => {
    const t = l.trim();
    if (cur.length === 0 && (t === "" || t.startsWith("#"))) return;
    if (cur.length === 0) start = block.line + i;
    cur.push(l);
    if (/^(for|while|until|if)\b/.test(t)) depth++;
    if (/^(done|fi)\b/.test(t)) depth--;
    if (depth === 0 && !t.endsWith("\\")) {
      out.push({ line: start, text: cur.join("\n") });
      cur = [];
    }
  });
  if (cur.length > 0) throw new Error(`${block.file}:${start}: unfinished command`);
  return out;
}

/** What one command did. */
export interface ShRun {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Run `command` with bash (pipefail) in `cwd`, with `env` added to this process's environment. */
export function runSh(command: string, cwd: string, env: Record<string, string> = {}): ShRun {
  const r = spawnSync("bash", ["-o", "pipefail", "-c", command], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The README's packaging block: the one that packs the workspaces with `npm pack`. */
export function packagingBlock(): CodeBlock {
  const blocks = codeBlocks("README.md").filter((b) => b.lang === "sh" && /npm pack/.test(b.text));
  if (blocks.length !== 1) throw new Error(`README.md has ${blocks.length} npm pack blocks`);
  return blocks[0]!;
}
