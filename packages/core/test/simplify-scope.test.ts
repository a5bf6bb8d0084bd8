// simplify divides exactly only where the scope proves the dividend non-negative and bounded: the
// facts of the loop around it, narrowed by the guard in the then arm and by the guard's negation
// in the else arm (the scope walkScoped keeps, as the verifier's and codegen's).
import { describe, expect, it } from "vitest";
import { intImm, mkBuffer, simplifyStmt, type Expr, type Stmt, type Var } from "../src/index.js";

const B = mkBuffer("B", [8], "int32", "global");
const v: Var = { kind: "Var", name: "v", id: 4242, dtype: "int32" };
const bin = (op: "add" | "mul" | "div", a: Expr, b: Expr): Expr => ({
  kind: "Binary",
  op,
  a,
  b,
  dtype: "int32",
});
/** (v·4 + 8) / 4, which is v + 2 wherever v·4 + 8 is provably in [0, 2^31). */
const quotient = bin("div", bin("add", bin("mul", v, intImm(4)), intImm(8)), intImm(4));
const store = (k: number): Stmt => ({
  kind: "Store",
  buffer: B,
  dtype: "int32",
  offset: intImm(k),
  value: quotient,
});

/** The stored values of `s`'s stores, by offset. */
function stored(s: Stmt): Map<number, Expr> {
  const out = new Map<number, Expr>();
  const work = [s];
  while (work.length > 0) {
    const x = work.pop()!;
    if (x.kind === "Store") out.set(Number((x.offset as { value: number }).value), x.value);
    if (x.kind === "Seq") work.push(...x.stmts);
    if (x.kind === "For") work.push(x.body);
    if (x.kind === "If") work.push(x.then, ...(x.else ? [x.else] : []));
  }
  return out;
}

describe("simplify under the scope's facts", () => {
  it("divides exactly in the arm whose guard makes v non-negative, then or else", () => {
    // for v in -10 .. 9: if (v < 0) B[0] = q else B[1] = q; if (v >= 0) B[2] = q else B[3] = q; B[4] = q
    const lt = (a: Expr, b: Expr): Expr => ({ kind: "Compare", op: "lt", a, b, dtype: "bool" });
    const ge = (a: Expr, b: Expr): Expr => ({ kind: "Compare", op: "ge", a, b, dtype: "bool" });
    const root: Stmt = {
      kind: "For",
      var: v,
      min: intImm(-10),
      extent: intImm(20),
      annotation: "serial",
      body: {
        kind: "Seq",
        stmts: [
          { kind: "If", cond: lt(v, intImm(0)), then: store(0), else: store(1) },
          { kind: "If", cond: ge(v, intImm(0)), then: store(2), else: store(3) },
          store(4),
        ],
      },
    };
    const out = stored(simplifyStmt(root));
    const vPlus2 = bin("add", v, intImm(2));
    expect(out.get(0)).toBe(quotient);
    expect(out.get(1)).toEqual(vPlus2);
    expect(out.get(2)).toEqual(vPlus2);
    expect(out.get(3)).toBe(quotient);
    expect(out.get(4)).toBe(quotient);
  });
});
