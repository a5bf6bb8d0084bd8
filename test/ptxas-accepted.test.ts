// The record of modules ptxas accepted (test/util/ptxas-accepted.ts): an accepted module is
// recorded under its text, target and ptxas; a refused one never is, so both helpers refuse it
// again on every call; ptxas -v's report of an accepted module is recorded with it, and read
// back as ptxas printed it; TIRX_PTXAS_CACHE=off records and skips nothing.
import { afterEach, describe, expect, test } from "vitest";
import { assembleAll } from "./conformance/ptxas-pool.js";
import { assemblePtx, findPtxas } from "./util/ptxas.js";
import { acceptedKey, recordedReport, reportKey, wasAccepted } from "./util/ptxas-accepted.js";
import { ptxasVerbose } from "./util/flash-attention-sim.js";

const module = (body: string, target = "sm_90"): string =>
  `.version 8.0\n.target ${target}\n.address_size 64\n\n.visible .entry accepted_record()\n{\n${body}\n}\n`;
const GOOD = module("\tret;");
const BAD = module("\tbogus.instruction;");
/** ptxasVerbose's options (-v, sm_90a) and modules for them. */
const VERBOSE = ["-v", "-arch=sm_90a"];
const GOOD_90A = module("\tret;", "sm_90a");
const BAD_90A = module("\tbogus.instruction;", "sm_90a");
const ptxas = findPtxas()!;

describe("modules ptxas accepted", () => {
  const saved = process.env["TIRX_PTXAS_CACHE"];
  afterEach(() => {
    if (saved === undefined) delete process.env["TIRX_PTXAS_CACHE"];
    else process.env["TIRX_PTXAS_CACHE"] = saved;
  });

  test("an accepted module is recorded for its own text and target only", () => {
    delete process.env["TIRX_PTXAS_CACHE"];
    assemblePtx(GOOD, "sm_90");
    expect(wasAccepted(acceptedKey(ptxas, GOOD, "sm_90"))).toBe(true);
    expect(acceptedKey(ptxas, GOOD, "sm_90a")).not.toBe(acceptedKey(ptxas, GOOD, "sm_90"));
    expect(acceptedKey(ptxas, `${GOOD}\n`, "sm_90")).not.toBe(acceptedKey(ptxas, GOOD, "sm_90"));
  });

  test("a refused module is refused by both helpers on every call, and never recorded", async () => {
    delete process.env["TIRX_PTXAS_CACHE"];
    for (let i = 0; i < 2; i++) {
      expect(() => assemblePtx(BAD, "sm_90")).toThrow(/refused the module/);
      const failures = await assembleAll([
        { name: "bad", text: BAD, arch: "sm_90" },
        { name: "good", text: GOOD, arch: "sm_90" },
      ]);
      expect(failures.map((f) => f.name)).toEqual(["bad"]);
    }
    expect(wasAccepted(acceptedKey(ptxas, BAD, "sm_90"))).toBe(false);
  });

  test("ptxas -v: an accepted module's report is recorded as printed, and the module as accepted for sm_90a; a refused one's never", () => {
    delete process.env["TIRX_PTXAS_CACHE"];
    const report = ptxasVerbose(ptxas, GOOD_90A);
    expect(report).toMatch(/Compiling entry function 'accepted_record' for 'sm_90a'/);
    expect(report).toMatch(/Used \d+ registers/);
    expect(recordedReport(reportKey(ptxas, GOOD_90A, VERBOSE))).toBe(report);
    expect(ptxasVerbose(ptxas, GOOD_90A)).toBe(report);
    expect(wasAccepted(acceptedKey(ptxas, GOOD_90A, "sm_90a"))).toBe(true);
    expect(reportKey(ptxas, GOOD_90A, ["-arch=sm_90a"])).not.toBe(
      reportKey(ptxas, GOOD_90A, VERBOSE),
    );
    for (let i = 0; i < 2; i++) expect(() => ptxasVerbose(ptxas, BAD_90A)).toThrow();
    expect(recordedReport(reportKey(ptxas, BAD_90A, VERBOSE))).toBeUndefined();
    expect(wasAccepted(acceptedKey(ptxas, BAD_90A, "sm_90a"))).toBe(false);
  });

  test("TIRX_PTXAS_CACHE=off: no record is read or written", () => {
    process.env["TIRX_PTXAS_CACHE"] = "off";
    expect(acceptedKey(ptxas, GOOD, "sm_90")).toBeUndefined();
    expect(wasAccepted(acceptedKey(ptxas, GOOD, "sm_90"))).toBe(false);
    expect(() => assemblePtx(BAD, "sm_90")).toThrow(/refused the module/);
    expect(reportKey(ptxas, GOOD_90A, VERBOSE)).toBeUndefined();
    expect(ptxasVerbose(ptxas, GOOD_90A)).toMatch(/Used \d+ registers/);
  });
});
