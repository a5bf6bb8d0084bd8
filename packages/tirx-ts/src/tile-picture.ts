import {
  applySwizzle,
  dtypeBytes,
  checkLayoutShape,
  isDType,
  isTileLayout,
  isTirxError,
  layoutAxes,
  layoutAxisExtent,
  layoutAxisRange,
  layoutCoordinates,
  layoutSize,
  mmaSyncOperandLayout,
  mmaSyncOperandShape,
  showComposeLayout,
  showTileLayout,
  TirxError,
  wgLocalLayout,
  wgmmaOperandLayout,
  wgmmaOperandShape,
  type ComposeLayout,
  type DType,
  type LaunchConfig,
  type LayoutAxis,
  type LayoutCoord,
  type MmaOperand,
  type MmaSyncShape,
  type TileLayout,
} from "@tirx-ts/core";

/*
 * `tirx layout`'s pictures of a TileLayout (TIRx's layout model, core/layout/tile-layout.ts):
 * a grid of the logical tile where each cell lists every physical coordinate that holds the
 * element (`layoutCoordinates`: the base coordinate, then one per replica), and for a memory
 * layout (no thread axis) the shared-memory bank view of the (swizzled) offsets.
 */

/** A layout `tirx layout` draws: a TileLayout, or a ComposeLayout (a swizzle on its `m`). */
export type DrawableLayout = TileLayout | ComposeLayout;

/** True for a ComposeLayout value (an object of kind "ComposeLayout"). */
export function isComposeLayout(x: unknown): x is ComposeLayout {
  return typeof x === "object" && x !== null && (x as { kind?: unknown }).kind === "ComposeLayout";
}

/** The TIRx notation of a drawable layout (`S[...]`, or `ComposeLayout(swizzle, S[...])`). */
export function showDrawable(l: DrawableLayout): string {
  return l.kind === "ComposeLayout" ? showComposeLayout(l) : showTileLayout(l);
}

/** A built-in layout resolved from its command-line name (see {@link builtinLayout}). */
export interface BuiltinLayout {
  /** File-name form of the name, e.g. `mma_sync-C-m16n8k16-float32`. */
  readonly name: string;
  readonly layout: TileLayout;
  /** The operand's logical [rows, cols]. */
  readonly shape: readonly [number, number];
  /** The element dtype of the register array. */
  readonly dtype: DType;
}

/** The forms `--builtin` takes, for messages and `tirx --help`. */
export const BUILTIN_FORMS: readonly string[] = [
  "mma_sync:A|B|C:m16n8k16|m16n8k8|m16n8k32[:DTYPE]",
  "wgmma:A|D:N[:DTYPE]",
  "wg_local:COLS[:ROWS]",
];

const MMA_SHAPES: readonly MmaSyncShape[] = ["m16n8k16", "m16n8k8", "m16n8k32"];

/** Default dtype of an mma.sync operand: float16 A/B of k16, tf32 (float32) of k8, int8 of k32. */
function mmaDefaultDtype(operand: MmaOperand, shape: MmaSyncShape): DType {
  if (shape === "m16n8k32") return operand === "C" ? "int32" : "int8";
  if (shape === "m16n8k8" || operand === "C") return "float32";
  return "float16";
}

/**
 * TX8008 (cli/layout-spec) for a layout given on the command line that cannot be drawn: the
 * message, with the reason of `cause` (a TirxError such as TX1026) appended and its notes kept.
 */
export const specError = (message: string, cause?: unknown): TirxError =>
  new TirxError(
    "TX8008",
    isTirxError(cause) ? `${message}: ${cause.text}` : message,
    undefined,
    isTirxError(cause) ? cause.notes : [],
  );

const posInt = (s: string | undefined): number | undefined =>
  s !== undefined && /^\d+$/.test(s) && Number(s) > 0 ? Number(s) : undefined;

/**
 * The built-in layout a `--builtin` name gives, its parts separated by `:`:
 * - `mma_sync:OPERAND:SHAPE[:DTYPE]` (also `mma_sync_operand_layout:...`): the warp's mma.sync
 *   fragment (`mmaSyncOperandLayout`; PTX ISA, "Matrix Fragments for mma.m16n8k16 / m16n8k8 /
 *   m16n8k32"); OPERAND A, B or C; DTYPE defaults to float16 (A, B of m16n8k16), float32 (C,
 *   and tf32 A, B of m16n8k8), int8 / int32 (m16n8k32 A, B / C);
 * - `wgmma:OPERAND:N[:DTYPE]` (also `wgmma_operand_layout:...`): the warpgroup's
 *   `wgmma.mma_async.m64nNk16` register fragment (`wgmmaOperandLayout`; PTX ISA, wgmma "Register
 *   Fragments"): D (64 × N float32, the default) or A (64 × 16 float16, the default; N is ignored
 *   but required);
 * - `wg_local:COLS[:ROWS]` (also `wg_local_layout:...`): TIRx `wg_local_layout(cols, rows=128)`,
 *   float32.
 * @example builtinLayout("mma_sync:C:m16n8k16:float32").shape // [16, 8]
 * @throws TirxError TX8008 for another form, an unknown operand, shape or dtype, or one the
 *   fragment does not take (the message carries the TX1026 reason).
 */
export function builtinLayout(text: string): BuiltinLayout {
  const parts = text.split(":").map((p) => p.trim());
  const [kind, a, b, c, ...rest] = parts;
  const forms = `; the built-ins are ${BUILTIN_FORMS.join(", ")}`;
  const dtypeOf = (s: string | undefined, dflt: DType): DType => {
    if (s === undefined || s === "") return dflt;
    if (!isDType(s)) throw specError(`--builtin ${text}: ${JSON.stringify(s)} is not a dtype`);
    return s;
  };
  const build = <X>(f: () => X): X => {
    try {
      return f();
    } catch (e) {
      if (isTirxError(e)) throw specError(`--builtin ${text}`, e);
      throw e;
    }
  };
  if (rest.length > 0) throw specError(`--builtin ${text}: too many ":" parts${forms}`);
  if (kind === "mma_sync" || kind === "mma_sync_operand_layout") {
    if (a !== "A" && a !== "B" && a !== "C") {
      throw specError(`--builtin ${text}: the mma.sync operand is A, B or C${forms}`);
    }
    const shape = MMA_SHAPES.find((s) => s === b);
    if (!shape) {
      throw specError(`--builtin ${text}: the mma.sync shape is one of ${MMA_SHAPES.join(", ")}`);
    }
    const dtype = dtypeOf(c, mmaDefaultDtype(a, shape));
    const layout = build(() => mmaSyncOperandLayout(a, shape, dtype));
    return {
      name: `mma_sync-${a}-${shape}-${dtype}`,
      layout,
      shape: mmaSyncOperandShape(a, shape),
      dtype,
    };
  }
  if (kind === "wgmma" || kind === "wgmma_operand_layout") {
    if (a !== "A" && a !== "D") {
      throw specError(`--builtin ${text}: the wgmma register operand is A or D${forms}`);
    }
    const n = posInt(b);
    if (n === undefined) {
      throw specError(`--builtin ${text}: N of m64nNk16 must be a positive integer${forms}`);
    }
    const dtype = dtypeOf(c, a === "D" ? "float32" : "float16");
    const layout = build(() => wgmmaOperandLayout(a, n, dtype));
    return {
      name: a === "D" ? `wgmma-D-m64n${n}k16-${dtype}` : `wgmma-A-m64k16-${dtype}`,
      layout,
      shape: wgmmaOperandShape(a, n),
      dtype,
    };
  }
  if (kind === "wg_local" || kind === "wg_local_layout") {
    const cols = posInt(a);
    const rows = b === undefined ? 128 : posInt(b);
    if (cols === undefined || rows === undefined || c !== undefined) {
      throw specError(`--builtin ${text}: wg_local takes COLS[:ROWS], positive integers`);
    }
    return {
      name: `wg_local-${cols}x${rows}`,
      layout: build(() => wgLocalLayout(cols, rows)),
      shape: [rows, cols],
      dtype: "float32",
    };
  }
  throw specError(`--builtin ${text}: unknown built-in layout ${JSON.stringify(kind)}${forms}`);
}

/** Options of {@link tileLayoutPicture}. */
export interface TilePictureOptions {
  /**
   * The logical shape the grid draws (positive integer dims the layout groups by). Default: the
   * shard's extents folded into two dims, [product of all but the last, the last].
   */
  readonly shape?: readonly number[];
  /** Element dtype: its size turns `m` into bytes for the bank view (default float32). */
  readonly dtype?: DType;
  /** What the title calls the layout (default: its notation). */
  readonly name?: string;
}

/** One picture of a layout: the SVG text and what it drew. */
export interface TilePicture {
  readonly svg: string;
  /** The logical shape drawn. */
  readonly shape: readonly number[];
  /** True for a memory layout (no thread axis): the cells show offsets and banks. */
  readonly memory: boolean;
  /** Physical coordinates per element (1 without a replica). */
  readonly owners: number;
  /** One line for the command line: notation, shape, dtype, owners. */
  readonly summary: string;
}

/** Axes that pick a thread; a layout without any of them is a memory layout. */
const THREAD_AXES: readonly LayoutAxis[] = ["laneid", "warpid", "tid_in_wg", "wgid", "tid"];

/**
 * The short names of the axes in a cell: `L` laneid, `W` warpid, `T` tid_in_wg, `G` wgid, `tid`,
 * `C` cta_in_cluster, `P` pid; `m` is `r` (register slot) in a register layout, `m` in memory.
 */
const ABBR: Readonly<Record<LayoutAxis, string>> = {
  m: "m",
  laneid: "L",
  warpid: "W",
  tid_in_wg: "T",
  wgid: "G",
  tid: "tid",
  cta_in_cluster: "C",
  pid: "P",
};

/** The order of the axes in a cell: coarse to fine, `m` last. */
const CELL_ORDER: readonly LayoutAxis[] = [
  "pid",
  "cta_in_cluster",
  "wgid",
  "warpid",
  "tid",
  "tid_in_wg",
  "laneid",
];

/**
 * The text of one physical coordinate in a cell: every axis the layout names other than `m`,
 * coarse to fine (pid, cta_in_cluster, wgid, warpid, tid, tid_in_wg, laneid), then `m` (`r` in a
 * register layout), each as its short name and value with no space, separated by spaces:
 * `L5 r2`, `W1 L5 r2`, `T37 r12`, `m130`.
 */
export function ownerText(c: LayoutCoord, axes: readonly LayoutAxis[], memory: boolean): string {
  const parts = CELL_ORDER.filter((a) => axes.includes(a)).map((a) => `${ABBR[a]}${c[a] ?? 0}`);
  parts.push(`${memory ? "m" : "r"}${c.m ?? 0}`);
  return parts.join(" ");
}

const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** The lane and warp of a thread coordinate, from laneid/warpid or tid_in_wg/wgid or tid. */
function threadOf(c: LayoutCoord): { lane: number; warp: number } {
  const t = c.tid_in_wg ?? c.tid;
  const lane = c.laneid ?? (t !== undefined ? ((t % 32) + 32) % 32 : 0);
  const warp =
    c.warpid ??
    (c.tid_in_wg !== undefined
      ? Math.floor(c.tid_in_wg / 32) + 4 * (c.wgid ?? 0)
      : c.tid !== undefined
        ? Math.floor(c.tid / 32)
        : 0);
  return { lane, warp };
}

/** A lane's hue (32 around the circle), lighter for even warps. */
const threadFill = (lane: number, warp: number): string =>
  `hsl(${Math.round((lane * 360) / 32)},70%,${warp % 2 === 0 ? 80 : 68}%)`;

/** A bank's hue (32 around the circle). */
const bankFill = (bank: number): string => `hsl(${Math.round((bank * 360) / 32)},60%,80%)`;

/** A logical 16-byte chunk's hue (8 per 128 bytes). */
const chunkFill = (chunk: number): string => `hsl(${(chunk % 8) * 45},65%,78%)`;

const STYLE =
  "<style>.t{font-size:12px}.s{font-size:9px;fill:#555}.o{font-size:9px;fill:#000}.b{font-size:8px;fill:#444}.e{fill:#f4f4f4;stroke:#ccc}.g{stroke:#fff}</style>";

/**
 * The most cells (logical elements) a picture draws: 16384, a 128 × 128 tile. Each cell is an
 * SVG group of its owners' text; beyond this the file is unreadable and its construction runs
 * out of memory or stack (`tirx layout --tile "S[2048, 2048]"`).
 */
export const PICTURE_CELL_LIMIT = 16384;

/**
 * The most physical coordinates (cells × replica combinations) a picture lists: 65536.
 */
export const PICTURE_OWNER_LIMIT = 65536;

/**
 * The largest CTA: 1024 threads (CUDA C++ Programming Guide, "Features and Technical
 * Specifications"), no cluster. A picture drawn without a launch bounds each thread axis by the
 * verifier's `layoutAxisExtent` (TX2021) for it: 32 lanes, 32 warps, 128 threads of a warpgroup,
 * 8 warpgroups, 1024 tids.
 */
const LARGEST_CTA: LaunchConfig = { grid: [1, 1, 1], block: [1024, 1, 1], dynamicSharedBytes: 0 };

/**
 * A layout the picture can draw: at most {@link PICTURE_CELL_LIMIT} logical elements and
 * {@link PICTURE_OWNER_LIMIT} physical coordinates, and every thread axis within its hardware
 * range (`layoutAxisExtent` of the largest CTA: coordinates, replicas and offset in 0..extent - 1), as the
 * verifier's TX2021 requires of a register tile inside a kernel.
 * @throws TirxError TX8008 (cli/layout-spec) naming the limit or the axis and its range.
 */
export function checkDrawable(layout: DrawableLayout): void {
  const tile = layout.kind === "ComposeLayout" ? layout.tile : layout;
  const text = showDrawable(layout);
  const cells = layoutSize(tile);
  if (cells > PICTURE_CELL_LIMIT) {
    throw specError(
      `${text} has ${cells} elements; a picture draws at most ${PICTURE_CELL_LIMIT} (128 × 128)`,
    );
  }
  const owners = cells * tile.replica.reduce((a, x) => a * x.extent, 1);
  if (owners > PICTURE_OWNER_LIMIT) {
    throw specError(
      `${text} has ${owners} physical coordinates (elements × replicas); a picture lists at most ${PICTURE_OWNER_LIMIT}`,
    );
  }
  for (const axis of layoutAxes(tile)) {
    if (!THREAD_AXES.includes(axis)) continue;
    const extent = layoutAxisExtent(axis, LARGEST_CTA)!;
    const r = layoutAxisRange(tile, axis);
    if (r.min >= 0 && r.max < extent) continue;
    throw specError(
      `${text} binds ${axis} ${r.min}..${r.max}, but ${axis} takes 0..${extent - 1} (a CTA has at most 1024 threads)`,
    );
  }
}

const CHAR = 5.5;
const LINE = 11;

/**
 * The SVG of `layout` over a logical tile of shape `opts.shape`: one cell per logical element
 * (rows: the product of all dims but the last, row-major; columns: the last dim), listing on one
 * line each every physical coordinate that holds it ({@link ownerText} of `layoutCoordinates`,
 * the replicas in its order; for a ComposeLayout, `m` swizzled), coloured per lane and warp (a
 * register layout) or per bank (a memory layout: bank = ⌊m · bytes(dtype) / 4⌋ mod 32, shown as
 * `bN` under the offsets). A memory layout also gets the bank view: the 128-byte lines its
 * (swizzled) byte addresses touch, 32 banks × 4 bytes each, a word labelled with the logical
 * `row,col` of its first element and coloured by that element's logical 16-byte chunk.
 * Each cell is `<g data-at="i,j">` with a `<text class="o">` of one `<tspan>` per owner.
 * @throws TirxError TX8008 for a layout {@link checkDrawable} refuses (too many cells, a thread
 *   axis past its hardware range); TX1026 when the shape's size is not the layout's (or a dim
 *   is no positive integer); TX1016 when a ComposeLayout's swizzle meets a negative `m`.
 */
export function tileLayoutPicture(
  layout: DrawableLayout,
  opts: TilePictureOptions = {},
): TilePicture {
  checkDrawable(layout);
  const tile = layout.kind === "ComposeLayout" ? layout.tile : layout;
  const swizzle = layout.kind === "ComposeLayout" ? layout.swizzle : undefined;
  const extents = tile.shard.map((x) => x.extent);
  const shape =
    opts.shape !== undefined
      ? [...opts.shape]
      : extents.length <= 1
        ? [1, extents[0] ?? 1]
        : [extents.slice(0, -1).reduce((a, b) => a * b, 1), extents[extents.length - 1]!];
  checkLayoutShape(tile, shape);
  const dtype = opts.dtype ?? "float32";
  const eb = dtypeBytes(dtype);
  const axes = layoutAxes(tile);
  const memory = !axes.some((a) => THREAD_AXES.includes(a));
  const cols = shape.length === 0 ? 1 : shape[shape.length - 1]!;
  const total = layoutSize(tile);
  const rows = total / cols;
  const ownersOf = (i: number): LayoutCoord[] =>
    layoutCoordinates(tile, i).map((c) => {
      if (!swizzle) return c;
      const m = c.m ?? 0;
      if (m < 0) {
        throw new TirxError(
          "TX1016",
          `${showDrawable(layout)}: a swizzle needs m ≥ 0, element ${i} has m = ${m}`,
        );
      }
      return { ...c, m: applySwizzle(swizzle, m) };
    });
  const owners: LayoutCoord[][] = Array.from({ length: total }, (_, i) => ownersOf(i));
  const perElement = owners[0]?.length ?? 1;
  const texts = owners.map((os) => os.map((c) => ownerText(c, axes, memory)));
  const bankOf = (c: LayoutCoord): number => Math.floor(((c.m ?? 0) * eb) / 4) % 32;
  const longest = Math.max(
    3,
    ...texts.flatMap((ts) => ts.map((t) => t.length)),
    String(cols - 1).length,
  );
  const cw = Math.max(22, Math.ceil(longest * CHAR) + 6);
  const lines = perElement + (memory ? 1 : 0);
  const ch = lines * LINE + 6;
  const rowLabel = (r: number): string => {
    if (shape.length <= 2) return String(r);
    const lead = shape.slice(0, -1);
    const idx: number[] = [];
    let x = r;
    for (let d = lead.length - 1; d >= 0; d--) {
      idx.unshift(x % lead[d]!);
      x = Math.floor(x / lead[d]!);
    }
    return `(${idx.join(",")})`;
  };
  const left = Math.max(30, Math.ceil(rowLabel(rows - 1).length * CHAR) + 12);
  const name = opts.name ?? showDrawable(layout);
  const legend = memory
    ? `cell: the element's offset m in ${dtype} elements${swizzle ? " (swizzled)" : ""}, then its bank b = (m·${eb} B / 4) mod 32; coloured by bank`
    : `cell: the thread (${CELL_ORDER.filter((a) => axes.includes(a))
        .map((a) => `${ABBR[a]} = ${a}`)
        .join(
          ", ",
        )}) and register slot r (m) holding the element; coloured by lane, lighter for even warps`;
  const titleText = `${name} — logical shape [${shape.join(", ")}], ${dtype}${perElement > 1 ? `, ${perElement} owners per element (replicas)` : ""}`;
  const body: string[] = [
    `<text x="4" y="16" class="t">${esc(titleText)}</text>`,
    `<text x="4" y="32" class="s">${esc(legend)}</text>`,
  ];
  const top = 40;
  for (let j = 0; j < cols; j++) {
    body.push(`<text x="${left + j * cw + 3}" y="${top + 9}" class="s">${j}</text>`);
  }
  const gy = top + 14;
  for (let r = 0; r < rows; r++) {
    body.push(`<text x="4" y="${gy + r * ch + LINE + 2}" class="s">${esc(rowLabel(r))}</text>`);
  }
  const coordOf = (i: number): number[] => {
    const out: number[] = [];
    let x = i;
    for (let d = shape.length - 1; d >= 0; d--) {
      out.unshift(x % shape[d]!);
      x = Math.floor(x / shape[d]!);
    }
    return out;
  };
  for (let i = 0; i < total; i++) {
    const r = Math.floor(i / cols);
    const j = i % cols;
    const x = left + j * cw;
    const y = gy + r * ch;
    const os = owners[i]!;
    const first = os[0] ?? {};
    const th = threadOf(first);
    const fillColour = memory ? bankFill(bankOf(first)) : threadFill(th.lane, th.warp);
    const at = coordOf(i);
    const tip = os
      .map((c, k) => {
        const t = texts[i]![k]!;
        if (memory) return `${t} (byte ${(c.m ?? 0) * eb}, bank ${bankOf(c)})`;
        const w = threadOf(c);
        return `${t} (warp ${w.warp}, lane ${w.lane})`;
      })
      .join("; ");
    const spans = texts[i]!.map(
      (t, k) => `<tspan x="${x + 3}" y="${y + (k + 1) * LINE}">${esc(t)}</tspan>`,
    );
    body.push(
      `<g data-at="${at.join(",")}"><rect x="${x}" y="${y}" width="${cw}" height="${ch}" fill="${fillColour}" class="g"/>` +
        `<text class="o">${spans.join("")}</text>` +
        (memory
          ? `<text x="${x + 3}" y="${y + lines * LINE}" class="b">b${os.map(bankOf).join("/")}</text>`
          : "") +
        `<title>[${at.join(", ")}]: ${esc(tip)}</title></g>`,
    );
  }
  let y = gy + rows * ch + 8;
  // Wide enough for the title (12px: about 7.3 px a character) and the legend.
  let width = Math.max(
    left + cols * cw + 8,
    Math.ceil(titleText.length * 7.3) + 8,
    Math.ceil(legend.length * CHAR) + 8,
  );
  if (memory) {
    const bank = bankView(owners, coordOf, eb, dtype, swizzle !== undefined, y);
    body.push(...bank.svg);
    y += bank.height;
    width = Math.max(width, bank.width);
  }
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" font-family="monospace">`,
    STYLE,
    ...body,
    `</svg>`,
  ].join("\n");
  const summary = `${showDrawable(layout)} over [${shape.join(", ")}] ${dtype}: ${total} elements${perElement > 1 ? `, ${perElement} owners each` : ""}${
    memory
      ? `, ${new Set(owners.flat().map((c) => c.m ?? 0)).size} offsets`
      : `, ${
          new Set(
            owners.flat().map((c) =>
              axes
                .filter((a) => a !== "m")
                .map((a) => c[a] ?? 0)
                .join(","),
            ),
          ).size
        } threads`
  }`;
  return { svg, shape, memory, owners: perElement, summary };
}

/**
 * The bank view of a memory layout: the 128-byte lines that the elements' byte addresses
 * (m · bytes) touch, 32 words of 4 bytes (the 32 banks) each; a word shows the logical `row,col`
 * of its first element (the last two dims of its coordinate) and is coloured by that element's
 * logical 16-byte chunk along the last dim, so a swizzle shows as permuted colours per line.
 */
function bankView(
  owners: readonly LayoutCoord[][],
  coordOf: (i: number) => number[],
  eb: number,
  dtype: DType,
  swizzled: boolean,
  y0: number,
): { svg: string[]; height: number; width: number } {
  const words = new Map<number, number[]>();
  owners.forEach((os, i) => {
    for (const c of os) {
      const b = (c.m ?? 0) * eb;
      for (let w = Math.floor(b / 4); w <= Math.floor((b + eb - 1) / 4); w++) {
        const list = words.get(w);
        if (list) {
          if (!list.includes(i)) list.push(i);
        } else words.set(w, [i]);
      }
    }
  });
  const lineIds = [...new Set([...words.keys()].map((w) => Math.floor(w / 32)))].sort(
    (a, b) => a - b,
  );
  const rc = (i: number): number[] => coordOf(i).slice(-2);
  const label = (i: number): string => rc(i).join(",");
  const longest = Math.max(2, ...[...words.values()].map((l) => label(l[0]!).length));
  const cw = Math.max(22, Math.ceil(longest * CHAR) + 6);
  const ch = 16;
  const left = Math.max(
    46,
    Math.ceil(String(`+${(lineIds.at(-1) ?? 0) * 128}`).length * CHAR) + 10,
  );
  const heading = `banks: byte address = m × ${eb} B (${dtype}${swizzled ? ", m swizzled" : ""}), 128-byte lines of 32 banks × 4 B; a word shows the logical row,col of its first element, coloured by its logical 16-byte chunk`;
  const svg: string[] = [`<text x="4" y="${y0 + 14}" class="t">${esc(heading)}</text>`];
  const top = y0 + 22;
  for (let b = 0; b < 32; b += 4) {
    svg.push(`<text x="${left + b * cw + 2}" y="${top + 8}" class="s">${b}</text>`);
  }
  const row = new Map(lineIds.map((l, k) => [l, k]));
  lineIds.forEach((l, k) => {
    const y = top + 12 + k * ch;
    svg.push(`<text x="4" y="${y + 12}" class="s">+${l * 128}</text>`);
    svg.push(`<rect x="${left}" y="${y}" width="${32 * cw}" height="${ch}" class="e"/>`);
  });
  for (const [w, list] of [...words].sort((a, b) => a[0] - b[0])) {
    const y = top + 12 + row.get(Math.floor(w / 32))! * ch;
    const x = left + (w % 32) * cw;
    const i = list[0]!;
    const [, col = 0] = rc(i).length === 2 ? rc(i) : [0, rc(i)[0] ?? 0];
    const tip = list.map((e) => `[${coordOf(e).join(", ")}]`).join(" ");
    svg.push(
      `<g><rect x="${x}" y="${y}" width="${cw}" height="${ch}" fill="${chunkFill(Math.floor((col * eb) / 16))}" class="g"/>` +
        `<text x="${x + 2}" y="${y + 12}" class="b">${label(i)}</text>` +
        `<title>bank ${w % 32}, bytes ${w * 4}..${w * 4 + 3}: ${tip}</title></g>`,
    );
  }
  return {
    svg,
    height: 34 + lineIds.length * ch + 8,
    width: Math.max(left + 32 * cw + 8, Math.ceil(heading.length * 7.3) + 8),
  };
}
