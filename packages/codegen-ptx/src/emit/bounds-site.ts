import type { AxisLabel, Span } from "@tirx-ts/core";

/**
 * The axis a `checkBounds` axis guard checks (core's `AxisIndex` less its index): its position,
 * `rearrange` name, whether it is a view's or fixed by `sub`, and its extent (a number, or a
 * symbolic dim's name).
 */
export interface AxisSite extends AxisLabel {
  readonly extent: number | string;
}

/** One guarded access of a `checkBounds` kernel: what a report names. */
export interface BoundsSite {
  /** The buffer's name. */
  readonly buffer: string;
  readonly space: "global" | "shared" | "local";
  readonly verb: "reads" | "writes" | "atomically updates";
  /** Bytes one access touches. */
  readonly accessBytes: number;
  /** The buffer's size, bytes. */
  readonly bufferBytes: number;
  /** The access in the author's source. */
  readonly span?: Span;
  /** Where the buffer is declared. */
  readonly declared?: Span;
  /**
   * For the guard of one author index (not the flat offset): its axis. The record's 64-bit
   * value is then the index, not a byte offset.
   */
  readonly axis?: AxisSite;
}
