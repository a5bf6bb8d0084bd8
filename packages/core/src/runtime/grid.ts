import type { Span } from "../span.js";
import { launchArgError } from "./call-site.js";
import type { Expr } from "../ir/expr.js";
import type { PrimFunc } from "../ir/func.js";
import type { LaunchConfig } from "../ir/stmt.js";
import type { KernelArg } from "./args.js";

/** CUDA grid limits per axis (CUDA C Programming Guide, "Compute Capabilities", table 21). */
const GRID_LIMITS = [2 ** 31 - 1, 65535, 65535] as const;

/**
 * Evaluate an integer expression of scalar parameters on the host with int32 semantics (wrap
 * on overflow, `div`/`mod` truncate, `floordiv`/`floormod` floor), as the device would.
 * `values` maps `Var.id` to the launch argument.
 * @throws TirxError TX5009 (at the launching call, launchArgError) for a division by zero or a
 * node the host cannot evaluate.
 */
export function evalHostInt(
  e: Expr,
  values: ReadonlyMap<number, number>,
  kernel: { readonly name: string; readonly span?: Span | undefined },
): number {
  const bad = (why: string): never => {
    throw launchArgError(
      "TX5009",
      `kernel "${kernel.name}": cannot compute a runtime grid extent: ${why}`,
      kernel,
      e.span ? [{ message: "the grid extent is written here", span: e.span }] : [],
    );
  };
  const ev = (x: Expr): number => evalHostInt(x, values, kernel);
  if (e.kind === "IntImm") return Number(e.value) | 0;
  if (e.kind === "Var") {
    const v = values.get(e.id);
    return v === undefined ? bad(`"${e.name}" is not a scalar argument`) : v | 0;
  }
  if (e.kind === "Cast") return ev(e.value) | 0;
  if (e.kind === "Compare") {
    const a = ev(e.a);
    const b = ev(e.b);
    const r = { eq: a === b, ne: a !== b, lt: a < b, le: a <= b, gt: a > b, ge: a >= b }[e.op];
    return r ? 1 : 0;
  }
  if (e.kind === "Logical")
    return (e.op === "and" ? ev(e.a) && ev(e.b) : ev(e.a) || ev(e.b)) ? 1 : 0;
  if (e.kind === "Not") return ev(e.a) ? 0 : 1;
  if (e.kind === "IfThenElse") return ev(e.cond) ? ev(e.t) : ev(e.f);
  if (e.kind !== "Binary")
    return bad(`a ${e.kind} is not an integer expression of scalar parameters`);
  const a = ev(e.a);
  const b = ev(e.b);
  const nonzero = (): void => {
    if (b === 0) bad("division by zero");
  };
  switch (e.op) {
    case "add":
      return (a + b) | 0;
    case "sub":
      return (a - b) | 0;
    case "mul":
      return Math.imul(a, b);
    case "div":
      nonzero();
      return Math.trunc(a / b) | 0;
    case "mod":
      nonzero();
      return (a % b) | 0;
    case "floordiv":
      nonzero();
      return Math.floor(a / b) | 0;
    case "floormod":
      nonzero();
      return (a - Math.floor(a / b) * b) | 0;
    case "min":
      return Math.min(a, b);
    case "max":
      return Math.max(a, b);
    case "bitand":
      return a & b;
    case "bitor":
      return a | b;
    case "bitxor":
      return a ^ b;
    case "shl":
      return a << b;
    case "shr":
      return a >> b;
  }
}

/**
 * The grid of one launch of `fn`: static extents as written, runtime extents (`T.ceildiv(n, 256)`)
 * evaluated from the scalar arguments. Call after `checkArgs`.
 * @throws TirxError TX5009 (at the launching call, launchArgError) when an extent is below 1 or
 * above the CUDA limit of its axis (x ≤ 2^31 - 1, y and z ≤ 65535), naming the kernel and the value.
 */
export function launchGrid(
  fn: Pick<PrimFunc, "name" | "params" | "span">,
  launch: LaunchConfig,
  args: readonly KernelArg[],
): [number, number, number] {
  if (launch.grid.every((g) => typeof g === "number")) {
    return [launch.grid[0] as number, launch.grid[1] as number, launch.grid[2] as number];
  }
  const values = new Map<number, number>();
  fn.params.forEach((p, i) => {
    const a = args[i];
    if (
      p.kind === "scalar" &&
      (typeof a === "number" || typeof a === "bigint" || typeof a === "boolean")
    ) {
      values.set(p.var.id, Number(a));
    }
  });
  const grid = launch.grid.map((g, axis) => {
    const n = typeof g === "number" ? g : evalHostInt(g, values, fn);
    if (n < 1 || n > GRID_LIMITS[axis]!) {
      const written = typeof g === "number" ? undefined : g.span;
      throw launchArgError(
        "TX5009",
        `kernel "${fn.name}": grid extent ${"xyz"[axis]} evaluates to ${n} for these arguments; it must be in 1..${GRID_LIMITS[axis]}`,
        fn,
        written ? [{ message: "the grid extent is written here", span: written }] : [],
      );
    }
    return n;
  });
  return [grid[0]!, grid[1]!, grid[2]!];
}
