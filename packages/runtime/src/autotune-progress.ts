/** Where autotune writes its progress and warnings: `process.stderr` or a look-alike. */
export interface ProgressStream {
  write(text: string): unknown;
  /** A terminal: the progress bar redraws one line in place. */
  readonly isTTY?: boolean;
}

/** Milliseconds of tuning before the progress bar appears on a terminal. */
export const PROGRESS_AFTER_MS = 1000;

const BAR = 20;

/**
 * autotune's progress on one stream: on a terminal, once tuning has taken `PROGRESS_AFTER_MS`
 * (by `clock`, milliseconds), one line redrawn in place (carriage return and erase to the end of
 * the line, ECMA-48 "EL") before each candidate: a bar, candidate i/n and the best so far. On any
 * stream, `finish` writes one final line (ending the bar's line on a terminal). Nothing is
 * written without a stream.
 */
export class Progress {
  readonly #stream: ProgressStream | undefined;
  readonly #clock: () => number;
  readonly #title: string;
  readonly #total: number;
  readonly #start: number;
  #shown = false;

  constructor(
    stream: ProgressStream | undefined,
    clock: () => number,
    title: string,
    total: number,
  ) {
    this.#stream = stream;
    this.#clock = clock;
    this.#title = title;
    this.#total = total;
    this.#start = stream?.isTTY === true ? clock() : 0;
  }

  /** Before candidate `i` (1-based) of the total; `best` describes the best so far, if any. */
  update(i: number, best: string | undefined): void {
    const s = this.#stream;
    if (s?.isTTY !== true) return;
    if (!this.#shown && this.#clock() - this.#start < PROGRESS_AFTER_MS) return;
    const done = Math.round((BAR * (i - 1)) / this.#total);
    const bar = `[${"#".repeat(done)}${" ".repeat(BAR - done)}]`;
    s.write(
      `\r\x1b[K${this.#title} ${bar} candidate ${i}/${this.#total}, best so far: ${best ?? "none yet"}`,
    );
    this.#shown = true;
  }

  /** The final line (ends the bar's line when one was drawn). */
  finish(line: string): void {
    const s = this.#stream;
    if (!s) return;
    s.write(`${this.#shown ? "\r\x1b[K" : ""}${line}\n`);
  }
}
