import {
  constInt,
  MAX_EXPR_DEPTH,
  seq,
  SharedScratch,
  TirxError,
  type LaunchConfig,
  type PrimFunc,
  type Span,
  type Stmt,
} from "@tirx-ts/core";

/** One tile primitive call as traced: where the author wrote it, its surface, and its choice. */
export interface TileNote {
  readonly span?: Span;
  /** `T.tile.cta.sum` */
  readonly surface: string;
  /** The record's explanation: the instructions chosen and why. */
  readonly explain: string;
}

const tileNotes = new WeakMap<PrimFunc, readonly TileNote[]>();

/** The tile primitive calls traced into `fn`, in program order (empty for none). */
export function tileNotesOf(fn: PrimFunc): readonly TileNote[] {
  return tileNotes.get(fn) ?? [];
}

/** Record the tile calls `notes` as `fn`'s (`T.function` does, once the body is traced). */
export function setTileNotes(fn: PrimFunc, notes: readonly TileNote[]): void {
  if (notes.length > 0) tileNotes.set(fn, notes);
}

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
  /** The launch of `T.device_entry`, once called (tile primitives read it). */
  launch: LaunchConfig | undefined;
  /** The sm of `T.device_entry`'s `arch`, when given (tile primitives dispatch for it). */
  sm: number | undefined;
  /** The tile primitive calls traced so far. */
  readonly tileNotes: TileNote[] = [];
  /** The shared scratch of the kernel's tile primitives (one region per scope; core SharedScratch). */
  readonly scratch = new SharedScratch();
  /** How many statements the device body's top level held after the last call that took scratch. */
  private scratchMark = 0;

  /** After a tile call that took shared scratch: a barrier traced from here on follows its reads. */
  markScratch(): void {
    this.scratchMark = this.deviceStmts().length;
  }

  /**
   * True when a barrier of every thread of the CTA (`bar.sync id`, or `bar.sync id, count` with
   * count the CTA's threads; PTX ISA, bar.sync) was traced at the device body's top level since
   * the last call that took shared scratch: every thread has finished that call's reads.
   * Barriers inside loops and branches are not counted (they may not run).
   */
  ctaBarrierSinceScratch(): boolean {
    const threads = this.launch ? this.launch.block.reduce((a, b) => a * b, 1) : 0;
    return this.deviceStmts()
      .slice(this.scratchMark)
      .some(
        (s) =>
          s.kind === "Call" &&
          (s.op === "bar.sync" ||
            (s.op === "bar.sync.named" && s.args[1] && constInt(s.args[1]) === threads)),
      );
  }

  /** The device body's top-level statements traced so far (none before T.device_entry). */
  private deviceStmts(): readonly Stmt[] {
    return this.frames.find((f) => f.kind === "device")?.stmts ?? [];
  }

  emit(s: Stmt): void {
    this.frames[this.frames.length - 1]!.stmts.push(s);
  }

  /**
   * Refuse to open `n` more blocks past MAX_EXPR_DEPTH nested statements, at the author's
   * `span`: deeper nesting could not pass the verifier (TX2013), and stopping here keeps a
   * runaway recursion of T.if_ bodies from overflowing the stack first.
   * @throws TirxError TX2013 (wf/expr-depth).
   */
  private checkNesting(n: number, span?: Span): void {
    if (this.frames.length + n > MAX_EXPR_DEPTH) {
      throw new TirxError(
        "TX2013",
        `statements nest ${this.frames.length + n} blocks deep here; at most ${MAX_EXPR_DEPTH} levels of statements and expressions are allowed`,
        span,
      );
    }
  }

  /**
   * Open `n` frames that stay open until `close` (for-of loops; T.if_ and T.while_ bodies).
   * @throws TirxError TX2013 past MAX_EXPR_DEPTH nested blocks, at `span`.
   */
  open(span?: Span, n = 1): void {
    this.checkNesting(n, span);
    for (let k = 0; k < n; k++) this.frames.push({ stmts: [], kind: "block" });
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

/**
 * Refuse `value`, what a kernel body or block body returned, when it is a promise or another
 * thenable: an `async` body runs only up to its first `await` while the builder records it, and
 * every statement after that would be lost (recorded nowhere, or refused later as TX1001 in an
 * unhandled rejection). The rejection of a promise is observed here so that it is not reported
 * again as unhandled.
 * @throws TirxError TX1025 (dsl/async-body) at `span`.
 */
export function refuseThenable(value: unknown, span?: Span): void {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return;
  let then: unknown;
  try {
    then = (value as { then?: unknown }).then;
  } catch {
    return;
  }
  if (typeof then !== "function") return;
  if (value instanceof Promise) value.catch(() => undefined);
  throw new TirxError(
    "TX1025",
    "this body returned a promise (an async function): a kernel is traced synchronously, so every statement after its first await would be lost; remove async and await",
    span,
  );
}
