import type { DType, Span } from "@tirx-ts/core";
import type { TensorShadow } from "./global-shadow.js";

/** Where a shared or local buffer lives: byte base in its memory and size in bytes. */
export interface Placed {
  readonly name: string;
  readonly span: Span | undefined;
  readonly base: number;
  readonly size: number;
  /** The buffer's element dtype and static shape (wgmma checks descriptors against them). */
  readonly dtype?: DType;
  readonly shape?: readonly number[];
}

/** A kernel parameter's tensor during one launch. */
export interface GlobalMem {
  /** Parameter index. */
  readonly index: number;
  readonly name: string;
  readonly span: Span | undefined;
  readonly bytes: Uint8Array;
  readonly dv: DataView;
  /** The tensor's shadow (writers, readers, pending reads); shared by parameters passed the same tensor. */
  readonly shadow: TensorShadow;
}

/** An mbarrier operand as compiled: its buffer (for messages and bounds). */
export interface BarBuffer {
  readonly name: string;
  readonly placed: Placed;
}
