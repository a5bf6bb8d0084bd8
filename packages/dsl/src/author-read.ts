// Who read a member that a strict namespace of T lacks: the author's code (an error there) or a
// library probing the object (undefined, as on a plain object).

/**
 * Keys that libraries read off any object to learn what it is (promise adoption, JSON, module
 * interop, inspectors, test matchers, pretty-printers): a strict namespace of T yields undefined
 * for them, whoever reads them (a promise's `then` is read from no frame of the author's).
 */
export const PROBE_KEYS: ReadonlySet<string> = new Set([
  "then",
  "toJSON",
  "default",
  "__esModule",
  "$$typeof",
  "asymmetricMatch",
  "nodeType",
  "nodeName",
  "tagName",
  "inspect",
  "_isMockFunction",
  "@@__IMMUTABLE_ITERABLE__@@",
  "@@__IMMUTABLE_RECORD__@@",
  "@@__IMMUTABLE_KEYED__@@",
  "@@__IMMUTABLE_ORDERED__@@",
]);

/** Where tirx-ts's packages live (this file is `<root>/dsl/{dist,src}/…`), as URL and as path. */
const OWN = ((): string[] => {
  try {
    const root = new URL("../../", import.meta.url);
    return [root.href, decodeURIComponent(root.pathname)];
  } catch {
    return []; // a bundle whose import.meta.url is no URL: its frames name the bundle only
  }
})();

/**
 * A frame of a reader that is not the author's: Node's own modules (util.inspect, console.log),
 * installed libraries (test matchers, printers, bundlers) and tirx-ts's packages themselves.
 */
function libraryFrame(frame: string): boolean {
  if (/\(node:|at node:|[\\/]node_modules[\\/]/.test(frame)) return true;
  // A package's own code (<root>/<package>/dist or src), not its tests.
  return OWN.some((o) => {
    const at = frame.indexOf(o);
    return at >= 0 && /^[^\\/]+[\\/](?:dist|src)[\\/]/.test(frame.slice(at + o.length));
  });
}

/**
 * Whether the code that read a missing member is the author's: the first frame above the proxy's
 * get trap that calls this, past the engine's and strict-namespace.ts's (V8's stack). Libraries read members
 * an object may lack to learn what it is (util.inspect reads "0"); for them a strict namespace
 * yields undefined, as a plain object does. False where the stack has no V8 frames.
 * @returns Whether to report the read (TX1024, TX1002). Never throws.
 */
export function readByAuthor(): boolean {
  // V8's stack text (Error.captureStackTrace); none elsewhere, then no read is reported.
  const holder: { stack?: string } = {};
  if (typeof Error.captureStackTrace !== "function") return false;
  Error.captureStackTrace(holder);
  const frames = (holder.stack ?? "").split("\n").filter((l) => l.trimStart().startsWith("at "));
  // frames[0]: this function; [1]: the trap that asks. The reader is the next frame past the
  // engine's own (Reflect.get) and the traps of strict-namespace.ts, which read through to the
  // namespace a T.ptx or T.ptx.cvt proxy wraps.
  for (const f of frames.slice(2)) {
    if (/\((?:<anonymous>|native)\)$/.test(f.trim()) || /strict-namespace\.[jt]s:/.test(f))
      continue;
    return !libraryFrame(f);
  }
  return false;
}
