import {
  axisOutOfRange,
  axisOutOfRangeNote,
  TirxError,
  bufferName,
  type Note,
} from "@tirx-ts/core";
import { OOB_RECORD, OOB_RECORD_BYTES, type PtxModule } from "@tirx-ts/codegen-ptx";
import { driver } from "./driver.js";
import type { CudaKernel, LoadedModule } from "./launch.js";

/** The device address of each loaded module's out-of-range record. */
const RECORDS = new WeakMap<LoadedModule, bigint>();

/**
 * After a launch of a `checkBounds` kernel has completed: read its module's record of the first
 * out-of-range access (`tirx_oob`, see codegen-ptx `emit/bounds-check.ts`), clear it, and
 * return the report, or undefined when every guarded access was in range. The report has the
 * simulator's shape: TX6005, "thread (x, y, z) of CTA (x, y, z) reads global "A" bytes
 * b..b+n-1, outside its N bytes", at the access's source line, with a note at the buffer's
 * declaration. For an axis guard's site (`BoundsSite.axis`), the simulator's report of an index
 * past its axis: "thread (x, y, z) of CTA (x, y, z) reads axis 1 of global "B" (extent 32) at
 * index 32, outside [0, 32)" (core's `axisOutOfRange`), with its note. Synchronous
 * (cuMemcpyDtoH); call it only after the launch has finished.
 */
export function takeBoundsReport(kernel: CudaKernel, mod: PtxModule): TirxError | undefined {
  if (mod.boundsSites.length === 0 || !kernel.module) return undefined;
  const d = driver();
  let ptr = RECORDS.get(kernel.module);
  if (ptr === undefined) {
    ptr = d.moduleGetGlobal(kernel.module.handle, OOB_RECORD).ptr;
    RECORDS.set(kernel.module, ptr);
  }
  const bytes = new Uint8Array(OOB_RECORD_BYTES);
  d.memcpyDtoH(bytes, ptr);
  const report = boundsReport(mod, bytes);
  if (report) {
    d.memsetD8(ptr, 0, OOB_RECORD_BYTES);
    d.settleDefaultStream();
  }
  return report;
}

/**
 * The report in a copy of a module's out-of-range record (`OOB_RECORD_BYTES` bytes, layout in
 * codegen-ptx `emit/bounds-check.ts`), or undefined when its flag is clear. Returns the error
 * (TX6005), never throws it.
 */
export function boundsReport(mod: PtxModule, record: Uint8Array): TirxError | undefined {
  const view = new DataView(record.buffer, record.byteOffset, record.byteLength);
  if (view.getUint32(0, true) === 0) return undefined;
  const w = (i: number): number => view.getUint32(4 * i, true);
  const site = mod.boundsSites[w(1)];
  const rel = view.getBigInt64(32, true);
  if (!site) return new TirxError("TX6005", `kernel "${mod.entry}" accessed memory out of range`);
  // Named as the simulator names it (core's bufferName).
  const scope = site.space === "global" ? "global" : site.space === "local" ? "local" : "shared";
  const name = bufferName({ name: site.buffer, span: site.declared, scope });
  const notes: Note[] = site.declared
    ? [{ message: `${name} is declared here`, span: site.declared }]
    : [];
  if (site.axis) notes.push({ message: axisOutOfRangeNote(`${site.space} ${name}`) });
  notes.push({
    message:
      "found on the GPU by compile(fn, { checkBounds: true }): the access was skipped (a load reads 0); only the first out-of-range access of a launch is reported",
  });
  const who = `thread (${w(2)}, ${w(3)}, ${w(4)}) of CTA (${w(5)}, ${w(6)}, ${w(7)})`;
  if (site.axis) {
    const { extent } = site.axis;
    const message = axisOutOfRange(who, site.verb, `${site.space} ${name}`, site.axis, extent, rel);
    return new TirxError("TX6005", message, site.span, notes);
  }
  return new TirxError(
    "TX6005",
    `${who} ${site.verb} ${site.space} ${name} bytes ${rel}..${rel + BigInt(site.accessBytes - 1)}, outside its ${site.bufferBytes} bytes`,
    site.span,
    notes,
  );
}
