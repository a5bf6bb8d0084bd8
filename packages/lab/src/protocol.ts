// Messages between the lab's page and its workers (one builds as you type, one runs).
import type { TraceEvent } from "@tirx-ts/runtime-sim";

/** A position in a source: the editor's file ("kernel.ts" for the editor) or an example's path. */
export interface Where {
  readonly file: string;
  readonly line: number;
  readonly col: number;
  readonly length?: number;
}

/** A diagnostic as the page shows it: a TirxError (code, message, notes) or another error. */
export interface Diag {
  readonly code: string;
  readonly message: string;
  readonly severity: "error" | "warning";
  readonly at?: Where;
  readonly notes: readonly { readonly message: string; readonly at?: Where }[];
}

/** Build the editor's text: exported kernels, the chosen kernel's PTX and IR after `after`. */
export interface BuildRequest {
  readonly kind: "build";
  readonly id: number;
  readonly file: string;
  readonly source: string;
  readonly kernel?: string;
  readonly after?: string;
}

/** Run the editor's text: its `runExample`, else the chosen kernel on pattern arguments. */
export interface RunRequest {
  readonly kind: "run";
  readonly id: number;
  readonly file: string;
  readonly source: string;
  readonly kernel?: string;
}

/** Draw the chosen kernel's access-site pictures (`tirx layout`). */
export interface LayoutRequest {
  readonly kind: "layouts";
  readonly id: number;
  readonly file: string;
  readonly source: string;
  readonly kernel?: string;
}

/** What the page asks a worker. */
export type Request = BuildRequest | RunRequest | LayoutRequest;

/**
 * A build's answer: the exported kernels in source order, the one built (`kernel`), its PTX and
 * IR (after the stage asked, one of `stages`), explainTile's lines, and the diagnostics.
 */
export interface BuildReply {
  readonly kind: "build";
  readonly id: number;
  readonly kernels: readonly string[];
  readonly kernel?: string;
  readonly ptx?: string;
  readonly ir?: string;
  readonly stages: readonly string[];
  readonly explain: readonly string[];
  readonly diagnostics: readonly Diag[];
  /** Milliseconds of the build's phases in the worker (load = transform + evaluate, verify …). */
  readonly phases: Readonly<Record<string, number>>;
}

/**
 * A run's answer: the verdict and summary of the example's check, the simulator's hazard
 * reports of every launch, errors the run threw (`diagnostics`), and the first traced launch's
 * trace events (at most 20,000).
 */
export interface RunReply {
  readonly kind: "run";
  readonly id: number;
  /** True when the example's check passed (or, without runExample, the run had no hazard). */
  readonly ok: boolean;
  readonly summary: string;
  readonly reports: readonly Diag[];
  readonly diagnostics: readonly Diag[];
  readonly launches: number;
  readonly trace: readonly TraceEvent[];
  readonly traceKernel?: string;
}

/** The pictures of `tirx layout` for the chosen kernel (SVG text), or why there are none. */
export interface LayoutReply {
  readonly kind: "layouts";
  readonly id: number;
  readonly pictures: readonly { readonly name: string; readonly svg: string }[];
  readonly diagnostics: readonly Diag[];
}

/** What a worker answers (the request's `id` and `kind`). */
export type Reply = BuildReply | RunReply | LayoutReply;
