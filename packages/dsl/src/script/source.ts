import { TirxError, nodeBuiltin, registeredSource, type Span } from "@tirx-ts/core";
import type * as TsMorph from "ts-morph";

type Ts = typeof TsMorph.ts;

let morph: { ts: Ts } | undefined;

/**
 * Give script mode its TypeScript compiler where it cannot load ts-morph itself (a browser
 * bundle: pass `{ ts }` of the `typescript` package, or ts-morph's module). On Node, ts-morph is
 * loaded on first use and this is not needed.
 */
export function provideTypeScript(m: { ts: Ts }): void {
  morph = { ts: m.ts };
}

/**
 * The TypeScript compiler that ts-morph ships, loaded on the first script-mode kernel
 * (builder-only programs never pay for it). Script mode parses with it; it reads syntax only.
 * @throws TirxError TX1021 off Node when none was provided (provideTypeScript).
 */
export function tsMorph(): { ts: Ts } {
  if (!morph) {
    const req = nodeBuiltin("module")?.createRequire(import.meta.url);
    if (req === undefined) {
      throw new TirxError(
        "TX1021",
        "script mode needs the TypeScript compiler, and this host cannot load ts-morph",
        undefined,
        [
          {
            message: "call provideTypeScript({ ts }) from @tirx-ts/dsl with the typescript module",
          },
        ],
      );
    }
    morph = { ts: (req("ts-morph") as typeof TsMorph).ts };
  }
  return morph;
}

interface Parsed {
  readonly stamp: string;
  readonly sf: TsMorph.ts.SourceFile;
}

const files = new Map<string, Parsed>();

/**
 * Script-mode source work in this process, counted so that tests can check that a warm build
 * reuses it (instead of timing the build): `parses` of a kernel file from disk (sourceFileAt: the
 * first call, and again after the file changed), `callSearches` of a parsed file for the
 * `T.prim_func` call at a call site (callAt). Both only grow; read the difference around a call.
 */
export const scriptSourceCounters = { parses: 0, callSearches: 0 };

/** `file` parsed (once per version on disk: its mtime and size are checked on every call). */
export function sourceFileAt(file: string, span?: Span): TsMorph.ts.SourceFile {
  let stamp: string;
  let text: string | undefined;
  const own = registeredSource(file);
  const fs = own === undefined ? nodeBuiltin("fs") : undefined;
  try {
    if (own !== undefined) {
      stamp = `registered ${own.version}`;
      text = own.text;
    } else {
      const st = fs!.statSync(file);
      stamp = `${st.mtimeMs}:${st.size}`;
    }
  } catch {
    throw new TirxError(
      "TX1021",
      `T.prim_func: cannot read the kernel's source file ${file}`,
      span,
      [
        {
          message: "script mode parses the file that calls T.prim_func; run it from its .ts source",
        },
      ],
    );
  }
  const hit = files.get(file);
  if (hit && hit.stamp === stamp) return hit.sf;
  scriptSourceCounters.parses++;
  const parsed = { stamp, sf: parseSource(text ?? fs!.readFileSync(file, "utf8"), file) };
  files.set(file, parsed);
  sites.clear();
  return parsed.sf;
}

/** `text` parsed as the in-memory file `file` (replacing an earlier text of that name). */
export function sourceFileOf(text: string, file: string): TsMorph.ts.SourceFile {
  files.delete(file);
  return parseSource(text, file);
}

/**
 * `text` parsed by the TypeScript compiler that ts-morph ships, with parent links (the lowering
 * walks up from nodes). A bare parse: script mode reads syntax only, so no ts-morph Project (its
 * wrapper nodes cost more than the parse, once per printed module in the round-trip tests).
 */
function parseSource(text: string, file: string): TsMorph.ts.SourceFile {
  const { ts } = tsMorph();
  const kind = /\.[cm]?jsx?$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  return ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
}

/** Every `<x>.prim_func(...)` call of `sf`, in source order (an explicit stack: any depth). */
export function primFuncCalls(sf: TsMorph.ts.SourceFile): TsMorph.ts.CallExpression[] {
  const { ts } = tsMorph();
  const out: TsMorph.ts.CallExpression[] = [];
  const work: TsMorph.ts.Node[] = [sf];
  while (work.length > 0) {
    const n = work.pop()!;
    if (
      ts.isCallExpression(n) &&
      ts.isPropertyAccessExpression(n.expression) &&
      n.expression.name.text === "prim_func"
    ) {
      out.push(n);
    }
    const kids: TsMorph.ts.Node[] = [];
    ts.forEachChild(n, (c) => void kids.push(c));
    for (let i = kids.length - 1; i >= 0; i--) work.push(kids[i]!);
  }
  return out;
}

/**
 * `f()` (parsing script-mode source, or lowering it), with an overflow of the JS stack turned
 * into TX2013: the TypeScript parser reads the syntax tree by recursion (as script mode's
 * lowering does after it), so source nested deeper than it can follow (around a thousand levels
 * of parentheses, fewer under a deep caller) cannot be read; the same kernel written with
 * `T.function`, or with the expression split into `const` steps, can.
 * @throws TirxError TX2013 (wf/expr-depth) at `span` for a stack overflow; whatever `f` throws
 *   otherwise.
 */
export function withinParser<R>(span: Span | undefined, f: () => R): R {
  try {
    return f();
  } catch (e) {
    if (!(e instanceof RangeError) || !/call stack/i.test(e.message)) throw e;
    throw new TirxError(
      "TX2013",
      "this script-mode source nests too deep for the TypeScript parser (or script mode's lowering), which read it by recursion",
      span,
      [{ message: "split the deepest expression into const steps, or build it with T.function" }],
    );
  }
}

const sites = new Map<string, TsMorph.ts.CallExpression>();

/**
 * The `T.prim_func(...)` call at the author's `site` (file:line:col of a stack frame): the call
 * whose `prim_func` name is at that position, else the one whose callee spans that line.
 * @throws TirxError TX1021 when the file has no such call.
 */
export function callAt(site: Span): { sf: TsMorph.ts.SourceFile; call: TsMorph.ts.CallExpression } {
  const sf = sourceFileAt(site.file, site);
  const key = `${site.file}:${site.line}:${site.col}`;
  const cached = sites.get(key);
  if (cached) return { sf, call: cached };
  scriptSourceCounters.callSearches++;
  const calls = primFuncCalls(sf);
  const line = (pos: number): number => sf.getLineAndCharacterOfPosition(pos).line + 1;
  const exact = calls.find((c) => {
    const p = sf.getLineAndCharacterOfPosition(
      (c.expression as TsMorph.ts.PropertyAccessExpression).name.getStart(sf),
    );
    return p.line + 1 === site.line && p.character + 1 === site.col;
  });
  const call =
    exact ??
    calls.find((c) => line(c.getStart(sf)) <= site.line && site.line <= line(c.expression.end));
  if (!call) {
    throw new TirxError(
      "TX1021",
      `T.prim_func: no T.prim_func(...) call found at ${site.file}:${site.line}`,
      site,
      [{ message: "call T.prim_func directly with the kernel function written in place" }],
    );
  }
  sites.set(key, call);
  return { sf, call };
}
