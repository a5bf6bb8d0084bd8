import type { Span } from "@tirx-ts/core";

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
}
