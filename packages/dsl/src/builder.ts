import { seq, TirxError, type Span, type Stmt } from "@tirx-ts/core";

/** A block of statements being recorded, with what closes it. */
interface Frame {
  readonly stmts: Stmt[];
  readonly kind: "function" | "device" | "block";
}

/**
 * The tracing builder: T.* calls inside a `T.function` body append statements to the innermost
 * open frame. One builder is active at a time (kernels are built synchronously).
 */
export class Builder {
  private readonly frames: Frame[] = [{ stmts: [], kind: "function" }];
  deviceEntered = false;

  emit(s: Stmt): void {
    this.frames[this.frames.length - 1]!.stmts.push(s);
  }

  /** Record `body` into a fresh frame and return its statements as one statement. */
  block(body: () => void): Stmt {
    this.frames.push({ stmts: [], kind: "block" });
    try {
      body();
    } finally {
      const f = this.frames.pop()!;
      this.lastBlock = f.stmts;
    }
    return seq(this.lastBlock);
  }
  private lastBlock: Stmt[] = [];

  /** Open a frame that stays open until `close` (used by for-of loops). */
  open(): void {
    this.frames.push({ stmts: [], kind: "block" });
  }

  close(): Stmt {
    const f = this.frames.pop();
    if (!f || f.kind !== "block") {
      throw new TirxError(
        "TX1002",
        "a T.range/T.unroll loop was closed outside the block that opened it; iterate loops with for-of",
      );
    }
    return seq(f.stmts);
  }

  /** Start the device entry: the rest of the function body goes into it. */
  openDevice(): void {
    this.frames.push({ stmts: [], kind: "device" });
    this.deviceEntered = true;
  }

  /** Close every frame and return the function body's top-level statements and device body. */
  finish(): { top: Stmt[]; device: Stmt | undefined } {
    let device: Stmt | undefined;
    while (this.frames.length > 1) {
      const f = this.frames.pop()!;
      if (f.kind === "device") device = seq(f.stmts);
      else {
        throw new TirxError(
          "TX1002",
          "a T.range/T.unroll loop was left open when the T.function body returned; iterate loops with for-of to the end",
        );
      }
    }
    return { top: this.frames[0]!.stmts, device };
  }

  get depth(): number {
    return this.frames.length;
  }
}

let current: Builder | undefined;

/** The active builder; T.* statements outside a T.function body are an error. */
export function builder(what: string, span?: Span): Builder {
  if (!current) {
    throw new TirxError(
      "TX1001",
      `${what} records a statement, so it must be called inside a T.function body`,
      span,
    );
  }
  return current;
}

/** True while a T.function body is being traced. */
export function tracing(): boolean {
  return current !== undefined;
}

/** Run `fn` with `b` as the active builder. */
export function withBuilder<R>(b: Builder, fn: () => R): R {
  const saved = current;
  current = b;
  try {
    return fn();
  } finally {
    current = saved;
  }
}
