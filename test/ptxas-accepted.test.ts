// The record of modules ptxas accepted (test/util/ptxas-accepted.ts): an accepted module is
// recorded under its text, target and ptxas; a refused one never is, so both helpers refuse it
// again on every call; TIRX_PTXAS_CACHE=off records and skips nothing.
import { afterEach, describe, expect, test } from "vitest";
import { assembleAll } from "./conformance/ptxas-pool.js";
import { assemblePtx, findPtxas } from "./util/ptxas.js";
import { acceptedKey, wasAccepted } from "./util/ptxas-accepted.js";

const module = (body: string): string =>
  `.version 8.0\n.target sm_90\n.address_size 64\n\n.visible .entry accepted_record()\n{\n${body}\n}\n`;
const GOOD = module("\tret;");
const BAD = module("\tbogus.instruction;");
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

  test("TIRX_PTXAS_CACHE=off: no record is read or written", () => {
    process.env["TIRX_PTXAS_CACHE"] = "off";
    expect(acceptedKey(ptxas, GOOD, "sm_90")).toBeUndefined();
    expect(wasAccepted(acceptedKey(ptxas, GOOD, "sm_90"))).toBe(false);
    expect(() => assemblePtx(BAD, "sm_90")).toThrow(/refused the module/);
  });
});
