import { TirxError } from "../diagnostics.js";
import { MAX_PTX_IDENT } from "../limits.js";
import type { Span } from "../span.js";

/**
 * A PTX identifier from an author's name: letters, digits and `_` (others become `_`), never
 * starting with a digit (a `_` is put first). The result is a valid identifier unless
 * {@link checkKernelName} says otherwise.
 */
export function ptxIdent(name: string): string {
  const s = name.replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z_]/.test(s) ? s : `_${s}`;
}

/**
 * PTX ISA, "Identifiers": `followsym: [a-zA-Z0-9_$]`, `identifier: [a-zA-Z]{followsym}* |
 * {[_$%]{followsym}+}`: one leading `_` must be followed by more.
 */
const PTX_IDENTIFIER = /^(?:[A-Za-z][A-Za-z0-9_$]*|[_$%][A-Za-z0-9_$]+)$/;

/**
 * Names PTX predefines (PTX ISA, "Identifiers", predefined identifiers): the constant `WARP_SZ`;
 * the special registers all start with `%`, which {@link ptxIdent} never gives.
 */
const RESERVED = new Set(["WARP_SZ"]);

/**
 * Refuse a kernel name whose PTX entry name ({@link ptxIdent}) is no PTX identifier: `_` alone
 * (or any name that maps to it), a predefined name (`WARP_SZ`), or more than MAX_PTX_IDENT
 * characters (PTX ISA, "Identifiers"). ptxas would reject the module; this says so at the
 * declaration.
 * @throws TirxError TX2019 (wf/kernel-name) at `span`.
 */
export function checkKernelName(name: string, span?: Span): void {
  const id = ptxIdent(name);
  let why: string | undefined;
  if (id.length > MAX_PTX_IDENT) why = `it has ${id.length} characters, more than ${MAX_PTX_IDENT}`;
  else if (!PTX_IDENTIFIER.test(id)) why = `"${id}" is no PTX identifier (a lone _ is not one)`;
  else if (RESERVED.has(id)) why = `"${id}" is a name PTX predefines`;
  if (why === undefined) return;
  throw new TirxError(
    "TX2019",
    `kernel name ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)} cannot name a PTX entry: ${why}`,
    span,
    [{ message: 'name it with a letter first, such as "k" or "copy_rows"' }],
  );
}
