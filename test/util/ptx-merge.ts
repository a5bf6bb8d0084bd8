// Assemble many single-entry PTX modules in a few ptxas runs: modules of one target are merged
// into one module (the highest .version, every entry once), which ptxas checks entry by entry.
import { assembleAll, type PtxFailure } from "../conformance/ptxas-pool.js";

/** A module to assemble, with a name for messages. */
export interface NamedPtx {
  readonly name: string;
  readonly text: string;
}

const HEADER = /^\s*(\.version|\.target|\.address_size)\b.*$/gm;

/** Merge single-entry modules into modules of at most `per` entries each. */
export function mergeModules(mods: readonly NamedPtx[], per = 200): NamedPtx[] {
  const out: NamedPtx[] = [];
  for (let k = 0; k < mods.length; k += per) {
    const chunk = mods.slice(k, k + per);
    let major = 0;
    let minor = 0;
    let target = "";
    const bodies: string[] = [];
    for (const m of chunk) {
      const v = /\.version (\d+)\.(\d+)/.exec(m.text);
      if (v && (Number(v[1]) > major || (Number(v[1]) === major && Number(v[2]) > minor))) {
        major = Number(v[1]);
        minor = Number(v[2]);
      }
      target = /\.target (\S+)/.exec(m.text)?.[1] ?? target;
      bodies.push(m.text.replace(HEADER, ""));
    }
    out.push({
      name: `${chunk[0]!.name} … ${chunk[chunk.length - 1]!.name}`,
      text: [`.version ${major}.${minor}`, `.target ${target}`, ".address_size 64", ...bodies].join(
        "\n",
      ),
    });
  }
  return out;
}

/** Assemble `mods` for `arch` in merged batches; resolves with the failures (empty when all pass). */
export function assembleMerged(mods: readonly NamedPtx[], arch: string): Promise<PtxFailure[]> {
  return assembleAll(
    mergeModules(mods).map((m) => ({ ...m, arch })),
    2,
  );
}
