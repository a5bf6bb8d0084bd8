import { walkStmt, type Pass } from "@tirx-ts/core";
import { planStorage } from "./storage.js";

/**
 * Storage planning as a named stage (`--emit ir --after storage`): it changes no IR; its
 * decisions (where each allocated buffer lives: a `.shared`/`.local` array or a range of the
 * dynamic shared window) are shown as notes. `emitEntry` computes the same plan from the IR.
 */
export const storagePass: Pass = {
  name: "storage",
  description: "place each allocated buffer: .shared/.local arrays or dyn_smem ranges",
  run: (vf) => vf,
  notes: (vf) => {
    const plan = planStorage(vf.entry.body);
    const lines: string[] = [];
    const names = new Map<number, string>();
    walkStmt(vf.entry.body, (s) => {
      if (s.kind === "Alloc") names.set(s.buffer.id, s.buffer.name);
    });
    for (const [id, st] of plan.buffers) {
      const name = names.get(id) ?? `#${id}`;
      lines.push(
        st.kind === "static"
          ? `${name}: .${st.space} ${st.symbol} (${st.bytes} bytes, align ${st.align})`
          : st.kind === "registers"
            ? `${name}: ${st.count} registers`
            : `${name}: dyn_smem[${st.offset}, ${st.offset + st.bytes})`,
      );
    }
    if (plan.dynamicBytes > 0)
      lines.push(`dyn_smem: ${plan.dynamicBytes} bytes, align ${plan.dynamicAlign}`);
    return lines;
  },
};
