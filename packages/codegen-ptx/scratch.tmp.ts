import { compileToPtx } from "@tirx-ts/codegen-ptx";
import { bulk_copy } from "../../examples/bulk_copy.ts";
import { bulk_pipeline } from "../../examples/bulk_pipeline.ts";
for (const f of [bulk_copy, bulk_pipeline]) {
  try {
    console.log(compileToPtx(f, { arch: process.argv[2] ?? "sm_90" }).text);
  } catch (e) {
    console.log(String(e));
  }
}
