import { isVector, laneRegisters, vectorOperand, type DType } from "@tirx-ts/core";
import { REG_DECL, regClass, type RegClass } from "./types.js";

/**
 * Virtual registers, numbered per class from 1 (`%r1`, `%r2`, ...) as nvcc does; ptxas does the
 * real allocation. Each class is declared once at the top of the entry as `%r<N>`, which names
 * `%r0` .. `%r(N-1)`.
 */
export class Registers {
  private readonly counts = new Map<RegClass, number>();

  /** A fresh register of class `cls`. */
  fresh(cls: RegClass): string {
    const n = (this.counts.get(cls) ?? 0) + 1;
    this.counts.set(cls, n);
    return `%${cls}${n}`;
  }

  /**
   * A fresh register able to hold a value of `dt`; for a vector, fresh registers of its lane
   * class as one vector operand `{%f1, %f2, %f3, %f4}` (PTX ISA, "Vectors").
   */
  of(dt: DType): string {
    if (isVector(dt)) {
      const cls = regClass(dt);
      return vectorOperand(Array.from({ length: laneRegisters(dt) }, () => this.fresh(cls)));
    }
    return this.fresh(regClass(dt));
  }

  /** Number of registers used per class. */
  used(cls: RegClass): number {
    return this.counts.get(cls) ?? 0;
  }

  /** `.reg` declarations of every class used, in a fixed order. */
  declarations(): string[] {
    return (Object.keys(REG_DECL) as RegClass[])
      .filter((c) => this.used(c) > 0)
      .map((c) => `.reg ${REG_DECL[c]} %${c}<${this.used(c) + 1}>;`);
  }
}
