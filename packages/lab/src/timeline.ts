// The Run panel's timeline: the simulator's trace (runtime-sim's TraceEvent: per CTA `pid` and
// warp `tid`, on a logical clock of statements executed) as an SVG, one row per warp of the
// first CTAs: barrier phases, cp.async groups in flight, mbarrier phases, waits (ticks).
import type { TraceEvent } from "@tirx-ts/runtime-sim";

const COLORS: Record<string, string> = {
  barrier: "#9ec5fe",
  "cp.async": "#f4a261",
  mbarrier: "#a3cfbb",
  wait: "#d63384",
  bulk: "#6f42c1",
};
/** Rows drawn at most (CTAs in launch order, warps ascending). */
const ROWS = 24;
const esc = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** An SVG of `events` (empty text when there are none). */
export function timelineSvg(events: readonly TraceEvent[], kernel?: string): string {
  if (events.length === 0) return "";
  const keys = [...new Set(events.map((e) => `${e.pid}:${e.tid}`))]
    .map((k) => k.split(":").map(Number) as [number, number])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])
    .slice(0, ROWS);
  const row = new Map(keys.map(([p, t], i) => [`${p}:${t}`, i]));
  const end = Math.max(...events.map((e) => e.ts + (e.dur ?? 0)), 1);
  const W = 640;
  const L = 80;
  const H = 16;
  const x = (t: number): number => L + (t / end) * (W - L - 4);
  const out: string[] = [];
  out.push(
    `<text x="2" y="11">${esc(kernel ?? "")}: clock = statements executed per CTA (0..${end})</text>`,
  );
  for (const [[p, t], i] of keys.map((k, i) => [k, i] as const)) {
    out.push(`<text x="2" y="${28 + i * H + 11}">cta ${p} w${t}</text>`);
  }
  // Spans under instants; long lanes of barrier phases under copies.
  const order = (e: TraceEvent): number =>
    e.ph === "i" ? 3 : e.cat === "barrier" ? 0 : e.cat === "mbarrier" ? 1 : 2;
  for (const e of [...events].sort((a, b) => order(a) - order(b))) {
    const r = row.get(`${e.pid}:${e.tid}`);
    if (r === undefined) continue;
    const y = 28 + r * H;
    const color = COLORS[e.cat] ?? "#adb5bd";
    const title = `<title>${esc(e.name)} @${e.ts}${e.dur ? `+${e.dur}` : ""}${e.args ? " " + esc(JSON.stringify(e.args)) : ""}</title>`;
    if (e.ph === "X") {
      const inset = e.cat === "barrier" ? 1 : e.cat === "mbarrier" ? 4 : 6;
      out.push(
        `<rect class="ev ${e.cat}" x="${x(e.ts).toFixed(1)}" y="${y + inset}" width="${Math.max(x(e.ts + (e.dur ?? 1)) - x(e.ts), 1).toFixed(1)}" height="${H - 2 * inset}" fill="${color}" stroke="#0003">${title}</rect>`,
      );
    } else {
      out.push(
        `<rect class="ev ${e.cat}" x="${x(e.ts).toFixed(1)}" y="${y}" width="2" height="${H}" fill="${color}">${title}</rect>`,
      );
    }
  }
  const legendY = 28 + keys.length * H + 14;
  Object.entries(COLORS).forEach(([cat, c], i) => {
    out.push(
      `<rect x="${L + i * 100}" y="${legendY - 9}" width="10" height="10" fill="${c}"/><text x="${L + i * 100 + 14}" y="${legendY}">${cat}</text>`,
    );
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${legendY + 6}" viewBox="0 0 ${W} ${legendY + 6}">${out.join("")}</svg>`;
}
