// The house rules that a reader of the sources can check mechanically (issue 21, "rules that hold
// themselves"): internal failures go through invariant(), never a plain Error; code generation
// throws no user code (the verifier refuses what it cannot emit); every project type-checks with
// noUncheckedIndexedAccess.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, test } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));

/** Every `.ts` file under `dir`, recursively, sorted. */
function tsFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...tsFiles(p));
    else if (e.isFile() && e.name.endsWith(".ts")) out.push(p);
  }
  return out.sort();
}

const packageSources = readdirSync(join(root, "packages"), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .flatMap((e) => tsFiles(join(root, "packages", e.name, "src")));

/** The spelling looked for, in pieces so that this file's own text does not hold it. */
const NEW_ERROR = ["new", "Error("].join(" ");

/**
 * Where `text` makes a plain `Error`: the spelling `new Error(` on a line (what a grep finds), and,
 * from the syntax tree, each `new Error` or `Error(...)` however it is spaced. 1-based lines.
 */
function plainErrors(text: string, file = "sample.ts"): number[] {
  const lines = new Set<number>();
  text.split("\n").forEach((l, i) => {
    if (l.includes(NEW_ERROR)) lines.add(i + 1);
  });
  // Only a file that spells `Error` followed by `(` (spaces between allowed) can make one.
  if (!/(?:^|[^\w$.])Error\s*\(/m.test(text)) return [...lines].sort((a, b) => a - b);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (n: ts.Node): void => {
    if (
      (ts.isNewExpression(n) || ts.isCallExpression(n)) &&
      ts.isIdentifier(n.expression) &&
      n.expression.text === "Error"
    ) {
      lines.add(sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return [...lines].sort((a, b) => a - b);
}

describe("no plain Error in packages/*/src", () => {
  test("the scanner finds each way of making one, and not the others", () => {
    const sample = [
      `throw ${NEW_ERROR}"a");`,
      `const e = new Error\n("b");`,
      `throw Error("c");`,
      `throw new TirxError("TX1002", "d");`,
      `invariant(false, "e");`,
      `throw new InternalError("f");`,
      `const s: { stack?: string } = {}; Error.captureStackTrace(s);`,
    ].join("\n");
    expect(plainErrors(sample)).toEqual([1, 2, 4]); // line 2 spans two lines
  });

  test("sources throw TirxError for users and invariant() for internal failures", () => {
    expect(packageSources.length).toBeGreaterThan(100);
    const found = packageSources.flatMap((f) =>
      plainErrors(readFileSync(f, "utf8"), f).map((line) => `${relative(root, f)}:${line}`),
    );
    expect(found).toEqual([]);
  });
});

describe("codegen-ptx throws no user code", () => {
  /**
   * The files of codegen-ptx/src that construct a TirxError. The verifier refuses every kernel
   * codegen cannot emit (codegen checks invariants); only the public entry's own input is
   * checked here: `emitPtx`/`compileToPtx` options and arguments (module.ts) and the target they
   * name against the verified requirements (target.ts).
   */
  const OPTION_CHECKS = ["module.ts", "target.ts"];
  const src = join(root, "packages", "codegen-ptx", "src");

  /** The lines of `text` that construct a TirxError or name a TX code outside a comment. */
  const userCodes = (text: string): number[] => {
    const sf = ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, true);
    const lines: number[] = [];
    const visit = (n: ts.Node): void => {
      const code = ts.isStringLiteralLike(n) && /^TX\d{4}$/.test(n.text);
      const made =
        ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === "TirxError";
      if (code || made) lines.push(sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1);
      ts.forEachChild(n, visit);
    };
    visit(sf);
    return lines;
  };

  test("the scanner finds a TirxError and a code, not comments", () => {
    const sample = [
      "// throws TirxError TX2001",
      'throw new TirxError("TX2001", "x");',
      'const c: DiagnosticCode = "TX2005";',
      'invariant(ok, "TX is not a code here");',
    ].join("\n");
    expect(userCodes(sample)).toEqual([2, 2, 3]);
  });

  test("only the option checks of its public entry make one", () => {
    const files = tsFiles(src).map((f) => relative(src, f));
    for (const f of OPTION_CHECKS) expect(files).toContain(f);
    const found = files
      .filter((f) => !OPTION_CHECKS.includes(f))
      .flatMap((f) => userCodes(readFileSync(join(src, f), "utf8")).map((l) => `${f}:${l}`));
    expect(found).toEqual([]);
  });
});

describe("noUncheckedIndexedAccess", () => {
  /** The compiler options `file` sets itself (not those it extends). */
  const own = (file: string): Record<string, unknown> => {
    const { config, error } = ts.readConfigFile(join(root, file), ts.sys.readFile);
    expect(error).toBeUndefined();
    return (config as { compilerOptions?: Record<string, unknown> }).compilerOptions ?? {};
  };

  test("tsconfig.base.json turns it on, and no project turns it off", () => {
    expect(own("tsconfig.base.json")["noUncheckedIndexedAccess"]).toBe(true);
    const projects = [
      "tsconfig.check.json",
      ...readdirSync(join(root, "packages")).map((p) => `packages/${p}/tsconfig.json`),
    ];
    for (const p of projects) {
      const { config } = ts.readConfigFile(join(root, p), ts.sys.readFile);
      expect((config as { extends?: string }).extends, p).toMatch(/tsconfig\.base\.json$/);
      expect(own(p)["noUncheckedIndexedAccess"], p).not.toBe(false);
    }
  });
});
