import { verify, type PrimFunc, type TirxError } from "@tirx-ts/core";
import { runSim, type LaneMove, type MovePiece, type SiteAccesses } from "@tirx-ts/runtime-sim";
import { patternArgs } from "./pattern-args.js";

/** One picture of `tirx layout`: an access site of the kernel and its SVG text. */
export interface LayoutPicture {
  /** `gemm_mma-L96-cp.async` style: kernel, source line, op family. */
  readonly name: string;
  readonly op: string;
  readonly line?: number;
  /** Warp instructions of the site in the launch, their phases and bank wavefronts. */
  readonly warpInstructions: number;
  readonly phases: number;
  readonly wavefronts: number;
  readonly svg: string;
}

const CELL = 22;
const LEFT = 92;

const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** A warp's hue; lanes go from dark to light within it. */
const fill = (warp: number, lane: number): string =>
  `hsl(${(warp * 47) % 360},65%,${Math.round(38 + (lane / 31) * 40)}%)`;

/**
 * One panel: the 128-byte lines that `pieces` touch (32 columns of 4 bytes: the 32 banks for
 * shared memory), each 4-byte cell filled by the (warp, lane) that moves it and labelled with
 * the lane; a cell of a move whose phase has a bank conflict has a red border.
 */
function panel(
  title: string,
  items: readonly { piece: MovePiece; mv: LaneMove }[],
  y0: number,
): { svg: string[]; height: number } {
  const at = (p: MovePiece): number => (p.space === "shared" ? (p.addr ?? p.byte) : p.byte);
  const lines = [
    ...new Set(
      items.flatMap(({ piece: p }) => {
        const out: number[] = [];
        for (let l = Math.floor(at(p) / 128); l <= Math.floor((at(p) + p.bytes - 1) / 128); l++)
          out.push(l);
        return out;
      }),
    ),
  ].sort((a, b) => a - b);
  const svg: string[] = [`<text x="4" y="${y0 + 14}" class="t">${esc(title)}</text>`];
  const top = y0 + 22;
  for (let b = 0; b < 32; b += 4) {
    svg.push(`<text x="${LEFT + b * CELL + 2}" y="${top + 8}" class="s">${b}</text>`);
  }
  const row = new Map(lines.map((l, i) => [l, i]));
  lines.forEach((l, i) => {
    const y = top + 12 + i * CELL;
    svg.push(`<text x="4" y="${y + 15}" class="s">+${l * 128}</text>`);
    svg.push(`<rect x="${LEFT}" y="${y}" width="${32 * CELL}" height="${CELL}" class="e"/>`);
  });
  for (const { piece: p, mv } of items) {
    for (let w = Math.floor(at(p) / 4); w < Math.ceil((at(p) + p.bytes) / 4); w++) {
      const y = top + 12 + row.get(Math.floor(w / 32))! * CELL;
      const x = LEFT + (w % 32) * CELL;
      const cls = mv.conflict ? ' class="c"' : "";
      svg.push(
        `<rect x="${x}" y="${y}" width="${CELL}" height="${CELL}" fill="${fill(mv.warp, mv.lane)}"${cls}><title>warp ${mv.warp} lane ${mv.lane}: ${esc(p.name)} bytes ${p.byte}..${p.byte + p.bytes - 1}</title></rect>`,
        `<text x="${x + 3}" y="${y + 15}" class="l">${mv.lane}</text>`,
      );
    }
  }
  return { svg, height: 34 + lines.length * CELL + 8 };
}

/** Register panel of ldmatrix/stmatrix: one row per fragment register, one cell per matrix row. */
function registers(items: readonly LaneMove[], y0: number): { svg: string[]; height: number } {
  const regs = [...new Set(items.map((m) => (m.dst.space === "register" ? m.dst : m.src).name))];
  const svg: string[] = [
    `<text x="4" y="${y0 + 14}" class="t">registers: row r of matrix j is lane 8j + r's address; every lane receives its part of it</text>`,
  ];
  const warps = [...new Set(items.map((m) => m.warp))];
  items.forEach((mv) => {
    const name = (mv.dst.space === "register" ? mv.dst : mv.src).name;
    const y = y0 + 22 + (warps.indexOf(mv.warp) * regs.length + regs.indexOf(name)) * CELL;
    const x = LEFT + (mv.lane % 8) * CELL;
    svg.push(
      `<rect x="${x}" y="${y}" width="${CELL}" height="${CELL}" fill="${fill(mv.warp, mv.lane)}"/>`,
      `<text x="${x + 3}" y="${y + 15}" class="l">${mv.lane}</text>`,
    );
  });
  warps.forEach((w, i) =>
    regs.forEach((r, k) =>
      svg.push(
        `<text x="4" y="${y0 + 37 + (i * regs.length + k) * CELL}" class="s">w${w} ${esc(r)}</text>`,
      ),
    ),
  );
  return { svg, height: 30 + warps.length * regs.length * CELL };
}

/** The SVG of one access site's first execution in CTA 0. */
export function siteSvg(kernel: string, s: SiteAccesses): string {
  const title = `${kernel}: ${s.op}${s.span ? ` at line ${s.span.line}` : ""} — ${s.warpInstructions} warp instructions, ${s.wavefronts} shared wavefronts for ${s.phases} phases (${s.wavefronts - s.phases} from bank conflicts)`;
  const body: string[] = [`<text x="4" y="16" class="t">${esc(title)}</text>`];
  let y = 24;
  const sharedSide = s.first.some((m) => m.dst.space === "shared") ? "dst" : "src";
  const other = sharedSide === "dst" ? "src" : "dst";
  const groups = new Map<string, { piece: MovePiece; mv: LaneMove }[]>();
  for (const side of [sharedSide, other] as const) {
    for (const mv of s.first) {
      const p = mv[side];
      if (p.space === "register") continue;
      const key = `${side} ${p.space} "${p.name}"`;
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key)!.push({ piece: p, mv });
    }
  }
  for (const [key, items] of groups) {
    const unit = key.includes("shared")
      ? "shared-window bytes, 32 banks × 4 B per line"
      : "bytes from the tensor's start, 128 per line";
    const p = panel(`${key} (${unit})`, items, y);
    body.push(...p.svg);
    y += p.height;
  }
  if (s.first.some((m) => m.dst.space === "register" || m.src.space === "register")) {
    const r = registers(s.first, y);
    body.push(...r.svg);
    y += r.height;
  }
  const width = LEFT + 32 * CELL + 8;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" font-family="monospace">`,
    `<style>.t{font-size:12px}.s{font-size:9px;fill:#555}.l{font-size:9px;fill:#fff}.e{fill:#f4f4f4;stroke:#ccc}.c{stroke:#e00;stroke-width:2}</style>`,
    ...body,
    `</svg>`,
  ].join("\n");
}

/**
 * Run `fn` on the simulator (arguments as `tirx trace` makes them: scalars from `scalars` or 1,
 * tensors holding `i % 251`) logging shared accesses, and draw one picture per source-level
 * cp.async `tile.apply` and ldmatrix/stmatrix (unrolled copies of one statement share it: the
 * first copy is drawn, the counts are summed).
 * @throws TirxError from verify, TX5003 and TX5007 from patternArgs (a symbolic dim that is no
 *   non-negative integer, a tensor too large to simulate), and TX5001-TX5009 when the arguments
 *   do not fit the kernel.
 */
export function layoutPictures(
  fn: PrimFunc,
  scalars: Readonly<Record<string, number>> = {},
): LayoutPicture[] {
  return layoutRun(fn, scalars).pictures;
}

/**
 * {@link layoutPictures} and the simulator's hazard reports of the same launch (collected, not
 * thrown), for `tirx layout`, which prints them as `tirx trace` does.
 * @throws TirxError as layoutPictures.
 */
export function layoutRun(
  fn: PrimFunc,
  scalars: Readonly<Record<string, number>> = {},
): { pictures: LayoutPicture[]; reports: readonly TirxError[] } {
  const vf = verify(fn);
  const args = patternArgs(fn, scalars);
  const { accesses, reports } = runSim(vf, args, { hazards: "collect", accesses: true });
  const bySource = new Map<string, SiteAccesses>();
  for (const s of accesses ?? []) {
    const key = `${s.op} ${s.span ? `${s.span.file}:${s.span.line}:${s.span.col}` : s.site}`;
    const seen = bySource.get(key);
    if (!seen) bySource.set(key, { ...s, first: [...s.first] });
    else {
      seen.warpInstructions += s.warpInstructions;
      seen.phases += s.phases;
      seen.wavefronts += s.wavefronts;
    }
  }
  const pictures = [...bySource.values()].map((s) => ({
    name: `${fn.name}-L${s.span?.line ?? s.site}-${s.op.split(".")[0]}`,
    op: s.op,
    ...(s.span ? { line: s.span.line } : {}),
    warpInstructions: s.warpInstructions,
    phases: s.phases,
    wavefronts: s.wavefronts,
    svg: siteSvg(fn.name, s),
  }));
  return { pictures, reports };
}
