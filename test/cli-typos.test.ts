// A mistyped option or command on the tirx command line is one usage line (TX8001, exit 2) that
// names it and the nearest known one, not parseArgs' message about positional arguments.
import { describe, expect, test } from "vitest";
import { main } from "../packages/tirx-ts/src/cli.js";

async function tirx(...argv: string[]): Promise<{ code: number; first: string }> {
  let err = "";
  const code = await main(argv, { out: () => {}, err: (t) => void (err += t), color: false });
  return { code, first: err.split("\n")[0]! };
}

describe("tirx: typos", () => {
  test("an unknown option names the nearest one, or lists them", async () => {
    const cases: [string[], string][] = [
      [["build", "x.ts", "--emti", "ptx"], 'unknown option "--emti"; did you mean "--emit"?'],
      [["build", "x.ts", "--kernal=k"], 'unknown option "--kernal"; did you mean "--kernel"?'],
      [
        ["build", "x.ts", "--zzzzzz"],
        'unknown option "--zzzzzz"; the options are --kernel, --emit,',
      ],
    ];
    for (const [args, reason] of cases) {
      const r = await tirx(...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(r.first).toContain(`tirx: error TX8001 [cli/usage]: ${reason}`);
    }
  });
  test("an unknown command near a known one suggests it", async () => {
    const r = await tirx("bild", "x.ts");
    expect(r.code).toBe(2);
    expect(r.first).toBe(
      'tirx: error TX8001 [cli/usage]: unknown command "bild"; expected build, trace or layout (did you mean "build"?)',
    );
  });
});
