import {
  checkDepth,
  type Buffer,
  type Expr,
  type PrimFunc,
  type Stmt,
  type TileParam,
  type Var,
  type View,
} from "@tirx-ts/core";

const BIN: Record<string, string> = {
  add: "+",
  sub: "-",
  mul: "*",
  div: "/",
  mod: "%",
  bitand: "&",
  bitor: "|",
  bitxor: "^",
  shl: "<<",
  shr: ">>",
};
const CMP: Record<string, string> = { eq: "==", ne: "!=", lt: "<", le: "<=", gt: ">", ge: ">=" };

/**
 * Print a PrimFunc as readable TIRx-like script text (for `tirx build --emit ir` and
 * diagnostics). Variables and buffers get unique names (`i`, `i_1`, ...). A `TileOp` (after the
 * lower-tile pass) prints as a comment with its plan's kind, chunk and repeat shape, then the
 * tile.apply it came from.
 * @throws TirxError TX2013 when `fn` nests deeper than MAX_EXPR_DEPTH (checked before printing).
 */
export function printFunc(fn: PrimFunc): string {
  checkDepth(fn);
  const names = new Map<number, string>();
  const used = new Map<string, number>();
  const nameOf = (kind: "v" | "b", id: number, base: string): string => {
    const key = kind === "v" ? id : -id;
    let n = names.get(key);
    if (!n) {
      const k = used.get(base) ?? 0;
      used.set(base, k + 1);
      n = k === 0 ? base : `${base}_${k}`;
      names.set(key, n);
    }
    return n;
  };
  const v = (x: Var): string => nameOf("v", x.id, x.name);
  const buf = (b: Buffer): string => nameOf("b", b.id, b.name);
  const e = (x: Expr): string => {
    switch (x.kind) {
      case "IntImm":
        return x.dtype === "int32"
          ? String(x.value)
          : x.dtype === "bool"
            ? String(x.value !== 0 && x.value !== 0n)
            : `T.${x.dtype}(${x.value})`;
      case "FloatImm":
        return `T.${x.dtype}(${x.value})`;
      case "Var":
        return v(x);
      case "Special":
        return `%${x.name}`;
      case "Binary":
        return BIN[x.op] ? `(${e(x.a)} ${BIN[x.op]} ${e(x.b)})` : `T.${x.op}(${e(x.a)}, ${e(x.b)})`;
      case "Compare":
        return `(${e(x.a)} ${CMP[x.op]} ${e(x.b)})`;
      case "Logical":
        return `(${e(x.a)} ${x.op === "and" ? "&&" : "||"} ${e(x.b)})`;
      case "Not":
        return `!${e(x.a)}`;
      case "Cast":
        return `T.${x.dtype}(${e(x.value)})`;
      case "IfThenElse":
        return `T.if_then_else(${e(x.cond)}, ${e(x.t)}, ${e(x.f)})`;
      case "BufferLoad":
        return `${buf(x.buffer)}.flat<${x.dtype}>[${e(x.offset)}]`;
      case "BufferPtr":
        return `&${buf(x.buffer)}.flat[${e(x.offset)}]`;
      case "CallExpr":
        return `T.call("${x.op}", ${x.args.map(e).join(", ")}): ${x.dtype}`;
    }
  };
  const view = (w: View): string =>
    `view(${buf(w.buffer)}, ${w.dtype}, offset=${e(w.offset)}, shape=[${w.shape.join(", ")}], strides=[${w.strides.join(", ")}])`;
  const param = (p: TileParam): string =>
    typeof p === "object"
      ? (p as { kind: string }).kind === "View"
        ? view(p as View)
        : e(p as Expr)
      : JSON.stringify(p);
  const lines: string[] = [];
  const s = (x: Stmt, ind: string): void => {
    switch (x.kind) {
      case "Seq":
        x.stmts.forEach((c) => s(c, ind));
        return;
      case "DeviceEntry": {
        const l = x.launch;
        lines.push(
          `${ind}T.device_entry({ grid: [${l.grid.map((g) => (typeof g === "number" ? String(g) : e(g))).join(", ")}], block: [${l.block.join(", ")}], dynamic_shared_bytes: ${l.dynamicSharedBytes} });`,
        );
        s(x.body, ind);
        return;
      }
      case "For":
        lines.push(
          `${ind}for (const ${v(x.var)} of T.${x.annotation === "serial" ? "range" : x.annotation}(${e(x.min)}, ${e(x.min)} + ${e(x.extent)})) {`,
        );
        s(x.body, ind + "  ");
        lines.push(`${ind}}`);
        return;
      case "While":
        lines.push(`${ind}while (${e(x.cond)}) {`);
        s(x.body, ind + "  ");
        lines.push(`${ind}}`);
        return;
      case "If":
        lines.push(`${ind}if (${e(x.cond)}) {`);
        s(x.then, ind + "  ");
        if (x.else) {
          lines.push(`${ind}} else {`);
          s(x.else, ind + "  ");
        }
        lines.push(`${ind}}`);
        return;
      case "Let":
        lines.push(`${ind}const ${v(x.var)}: ${x.var.dtype} = ${e(x.value)};`);
        return;
      case "Store":
        lines.push(`${ind}${buf(x.buffer)}.flat<${x.dtype}>[${e(x.offset)}] = ${e(x.value)};`);
        return;
      case "Alloc":
        lines.push(
          `${ind}const ${buf(x.buffer)} = T.alloc_${x.buffer.scope === "local" ? "local" : "shared"}([${x.buffer.shape.join(", ")}], "${x.buffer.dtype}"); // ${x.buffer.scope}, align ${x.buffer.align}`,
        );
        return;
      case "Call":
        lines.push(`${ind}T.call("${x.op}"${x.args.map((a) => ", " + e(a)).join("")});`);
        return;
      case "TileOp":
        lines.push(
          `${ind}// TileOp: ${x.plan.kind}, chunk ${x.plan.chunkBytes} bytes, repeat [${x.plan.repeatShape.join(", ")}], base bytes dst ${e(x.plan.dst.baseBytes)}, src ${e(x.plan.src.baseBytes)}`,
        );
        s(x.source, ind);
        return;
      case "TileApply": {
        const ps = Object.entries(x.params).map(([k, p]) => `${k}: ${param(p)}`);
        lines.push(`${ind}T.cuda.tile.apply(T.ptx["${x.opcode}"],`);
        lines.push(`${ind}  ${view(x.dst)},`);
        lines.push(`${ind}  ${view(x.src)},`);
        lines.push(`${ind}  { ${ps.join(", ")} });`);
        return;
      }
    }
  };
  const params = fn.params.map((p) =>
    p.kind === "buffer"
      ? `${buf(p.buffer)}: T.Tensor([${p.buffer.shape.map((d) => (typeof d === "number" ? String(d) : JSON.stringify(v(d)))).join(", ")}], "${p.buffer.dtype}")`
      : `${v(p.var)}: T.${p.var.dtype}`,
  );
  lines.push(`T.function("${fn.name}", { ${params.join(", ")} }, () => {`);
  s(fn.body, "  ");
  lines.push("});");
  return lines.join("\n") + "\n";
}
