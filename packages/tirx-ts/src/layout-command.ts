import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import {
  composeLayout,
  DTYPES,
  isDType,
  isTileLayout,
  isTirxError,
  layoutAxes,
  parseTileLayout,
  swizzleLayout,
  swizzleMode,
  TirxError,
  type DType,
  type SwizzleLayout,
} from "@tirx-ts/core";
import { checkKernelFile, checkOutDir, checkOutFile, makeOutDir, writeOut } from "./cli-paths.js";
import {
  BUILTIN_FORMS,
  builtinLayout,
  isComposeLayout,
  showDrawable as showName,
  specError,
  tileLayoutPicture,
  type DrawableLayout,
} from "./tile-picture.js";

/** The options of `tirx layout` that draw one TileLayout (beside `--out`). */
export const LAYOUT_SPEC_OPTIONS = [
  "tile",
  "builtin",
  "layout",
  "shape",
  "dtype",
  "swizzle",
] as const;

/** The `tirx --help` paragraph of the layout-drawing form. */
export const LAYOUT_SPEC_USAGE = `  layout --tile / --builtin / FILE --layout draws one TileLayout as one SVG: a grid of the
  logical tile whose cells list every physical coordinate holding the element, one line per
  replica (L laneid, W warpid, T tid_in_wg, G wgid, tid, C cta_in_cluster, P pid; r the register
  slot m), coloured per lane; a memory layout (no thread axis: shared memory) shows each
  element's offset m and bank, then the bank view: the 128-byte lines of its (swizzled) byte
  addresses over the 32 banks.
  --tile TEXT     TIRx notation, e.g. "S[(8, 4, 2) : (4@laneid, 1@laneid, 1)]" or "S[64, 64]"
  --builtin NAME  ${BUILTIN_FORMS.join(",\n                  ")}
                  (TIRx-style long names too: mma_sync_operand_layout:C:m16n8k16)
  --layout NAME   the TileLayout or ComposeLayout that <file.ts> exports as NAME
  --shape DIMS    the logical shape, e.g. 16,8 (default: the built-in's; else the shard's
                  extents folded to [all but the last, the last])
  --dtype DT      element dtype, for the bytes of the bank view and of a byte swizzle
                  (default: the built-in's, else float32)
  --swizzle SW    compose a swizzle on m (a memory layout): 32B, 64B or 128B (TMA's
                  CU_TENSOR_MAP_SWIZZLE_*, in bytes of --dtype), or P,B,S for TIRx's
                  SwizzleLayout(per_element, swizzle_len, atom_len) in elements
  --out PATH      the SVG file, or a folder (existing, or ending in /) to write NAME.svg into
                  (default: the SVG on stdout)
  e.g. tirx layout --builtin mma_sync:C:m16n8k16:float32 --out out/
       tirx layout --tile "S[64, 64]" --dtype float16 --swizzle 128B --out out/tma.svg`;

/** The parsed values `tirx layout` reads (those of node:util parseArgs). */
interface Values {
  readonly tile?: string | undefined;
  readonly builtin?: string | undefined;
  readonly layout?: string | undefined;
  readonly shape?: string | undefined;
  readonly dtype?: string | undefined;
  readonly swizzle?: string | undefined;
  readonly out?: string | undefined;
  readonly kernel?: string | undefined;
  readonly args?: string | undefined;
}

/** `e` as TX8008 when it is a TirxError of the layout (TX1xxx), else unchanged. */
function asSpec<X>(what: string, f: () => X): X {
  try {
    return f();
  } catch (e) {
    if (isTirxError(e) && e.code.startsWith("TX1")) throw specError(what, e);
    throw e;
  }
}

/**
 * `16,8` or `16x8` as dims, each a positive integer.
 * @throws TirxError TX8008 naming the first dim that is not one (its index and text: `0`, `-4`,
 *   `a`) and the range.
 */
function parseShape(text: string): number[] {
  const parts = text.split(/[,x×]/).map((p) => p.trim());
  const at = parts.findIndex(
    (p) => !/^\d+$/.test(p) || !(Number(p) >= 1 && Number.isSafeInteger(Number(p))),
  );
  if (at >= 0) {
    const p = parts[at]!;
    const what = /^[-+]?\d+$/.test(p)
      ? `dim ${at} is ${p}, and a dim is at least 1`
      : p === ""
        ? `dim ${at} is empty`
        : `dim ${at} is ${JSON.stringify(p)}, not an integer`;
    throw specError(
      `--shape ${text}: ${what}; dims are positive integers separated by commas (16,8)`,
    );
  }
  return parts.map(Number);
}

/**
 * `--swizzle`: 32B / 64B / 128B (bytes) or `P,B,S` (elements, each 0..16).
 * @throws TirxError TX8008 for another text: a number of bytes that is not a TMA swizzle (0 or
 *   less is no swizzle: leave the option out), a P,B,S count out of 0..16 (naming it), or
 *   anything else; the message lists the two forms.
 */
function parseSwizzle(text: string): SwizzleLayout {
  const t = text.trim();
  if (t === "32B" || t === "64B" || t === "128B") return swizzleMode(t);
  const forms =
    "give 32B, 64B or 128B (TMA's swizzle, in bytes), or P,B,S (TIRx SwizzleLayout(per_element, swizzle_len, atom_len), in elements, each 0..16)";
  const m = /^(-?\d+)\s*,\s*(-?\d+)\s*,\s*(-?\d+)$/.exec(t);
  if (m) {
    const names = ["per_element", "swizzle_len", "atom_len"];
    const bad = [1, 2, 3].find((i) => !(Number(m[i]) >= 0 && Number(m[i]) <= 16));
    if (bad !== undefined) {
      throw specError(
        `--swizzle ${text}: ${names[bad - 1]} is ${m[bad]}, and P,B,S are bit counts in 0..16 (SwizzleLayout(per_element, swizzle_len, atom_len))`,
      );
    }
    return asSpec(`--swizzle ${text}`, () => swizzleLayout(+m[1]!, +m[2]!, +m[3]!));
  }
  const bytes = /^(-?\d+)\s*B?$/i.exec(t);
  if (bytes) {
    const n = Number(bytes[1]);
    throw specError(
      n <= 0
        ? `--swizzle ${text}: ${n} bytes is no swizzle (leave --swizzle out for an unswizzled layout); ${forms}`
        : `--swizzle ${text}: ${n} bytes is not a TMA swizzle span (32, 64 or 128)${[32, 64, 128].includes(n) ? `; write ${n}B` : ""}; ${forms}`,
    );
  }
  throw specError(`--swizzle ${text}: ${forms}`);
}

/** Where the SVG goes: a file, a folder's NAME.svg, or stdout (undefined). */
function outPath(out: string | undefined, name: string, input?: string): string | undefined {
  if (out === undefined) return undefined;
  const isDir = out.endsWith("/") || (existsSync(out) && statSync(out).isDirectory());
  if (isDir) {
    checkOutDir(out);
    makeOutDir("--out", out);
    return join(out, `${name}.svg`);
  }
  checkOutFile(out, input);
  return out;
}

/**
 * `tirx layout --tile TEXT | --builtin NAME | FILE --layout NAME [--shape] [--dtype]
 * [--swizzle] [--out]`: draw one layout as one SVG ({@link tileLayoutPicture}); writes it to
 * `--out` (a file, or NAME.svg in a folder) and prints a summary line, or prints the SVG on
 * stdout. Returns the exit code (0).
 * @throws TirxError TX8001 for options that do not go together (two sources, --kernel or
 *   --args, a file without --layout or --layout without a file), TX8002 for the file, TX8003 for
 *   --out, TX8008 for a layout that does not parse, an unknown built-in, dtype or swizzle, a
 *   shape it does not group by, a swizzle on a register layout, or a --layout the file does not
 *   export; the loader's TX8004/TX8005.
 */
export async function drawLayoutCommand(
  values: Values,
  file: string | undefined,
  io: { readonly out: (text: string) => void },
  load: (path: string, file: string) => Promise<Record<string, unknown>>,
): Promise<number> {
  const usage = (message: string): never => {
    throw new TirxError("TX8001", message);
  };
  const sources = (["tile", "builtin", "layout"] as const).filter((o) => values[o] !== undefined);
  if (sources.length > 1) {
    usage(
      `layout draws one layout: give one of --tile, --builtin and --layout, not ${sources.map((s) => `--${s}`).join(" and ")}`,
    );
  }
  for (const o of ["kernel", "args"] as const) {
    if (values[o] !== undefined) {
      usage(
        `--${o} is for a kernel's pictures (tirx layout FILE --kernel NAME), not with --${sources[0]}`,
      );
    }
  }
  if (values.layout !== undefined && file === undefined) {
    usage(`--layout ${values.layout} names an export of a file: tirx layout FILE --layout NAME`);
  }
  if (values.layout === undefined && file !== undefined) {
    usage(
      `--${sources[0]} draws a layout given on the command line; no file goes with it (FILE --layout NAME draws an exported one)`,
    );
  }
  let dtype: DType | undefined;
  if (values.dtype !== undefined) {
    if (!isDType(values.dtype)) {
      throw specError(`--dtype ${values.dtype} is not a dtype; one of ${DTYPES.join(", ")}`);
    }
    dtype = values.dtype;
  }
  const shapeOpt = values.shape !== undefined ? parseShape(values.shape) : undefined;
  let layout: DrawableLayout;
  let name: string;
  let shape: readonly number[] | undefined = shapeOpt;
  let input: string | undefined;
  if (values.builtin !== undefined) {
    const b = builtinLayout(values.builtin);
    layout = b.layout;
    name = b.name;
    shape ??= b.shape;
    dtype ??= b.dtype;
  } else if (values.tile !== undefined) {
    const text = values.tile;
    layout = asSpec(`--tile ${JSON.stringify(text)}`, () => parseTileLayout(text));
    name = "tile";
  } else {
    const exportName = values.layout!;
    input = checkKernelFile(file!);
    const mod = await load(input, file!);
    const v = Object.hasOwn(mod, exportName) ? mod[exportName] : undefined;
    if (!isTileLayout(v) && !isComposeLayout(v)) {
      const names = Object.keys(mod).filter((k) => isTileLayout(mod[k]) || isComposeLayout(mod[k]));
      throw specError(
        `${file} exports no TileLayout or ComposeLayout named ${JSON.stringify(exportName)}; ` +
          (names.length > 0 ? `its layouts: ${names.join(", ")}` : "it exports none"),
      );
    }
    layout = v;
    name = exportName.replace(/[^\w.-]/g, "_");
  }
  if (values.swizzle !== undefined) {
    const sw = parseSwizzle(values.swizzle);
    if (layout.kind === "ComposeLayout") {
      throw specError(`--swizzle: ${name} is a ComposeLayout, which has its swizzle already`);
    }
    const threads = layoutAxes(layout).filter((a) => a !== "m" && a !== "cta_in_cluster");
    if (threads.length > 0) {
      throw specError(
        `--swizzle permutes memory offsets; this layout binds elements to ${threads.join(", ")} (a register layout)`,
      );
    }
    const tile = layout;
    const elem = dtype ?? "float32";
    layout = asSpec(`--swizzle ${values.swizzle}`, () => composeLayout(sw, tile, elem));
    name += `-swizzle${values.swizzle.replace(/[^\w]/g, "_")}`;
  }
  const drawn = layout;
  const what = values.shape !== undefined ? `--shape ${values.shape}` : "tirx layout";
  const picture = asSpec(what, () =>
    tileLayoutPicture(drawn, {
      ...(shape !== undefined ? { shape } : {}),
      ...(dtype !== undefined ? { dtype } : {}),
      name:
        values.builtin !== undefined ? `${values.builtin}: ${showName(drawn)}` : showName(drawn),
    }),
  );
  const path = outPath(values.out, name, input);
  if (path === undefined) {
    io.out(picture.svg + "\n");
    return 0;
  }
  writeOut("--out", path, picture.svg + "\n");
  io.out(`${path}: ${picture.summary}\n`);
  return 0;
}
