/** Row-major list of every repeat index of `shape` (one empty index for a scalar repeat). */
export function repeatIndices(shape: readonly number[]): number[][] {
  let out: number[][] = [[]];
  for (const n of shape) {
    const next: number[][] = [];
    for (const prefix of out) for (let i = 0; i < n; i++) next.push([...prefix, i]);
    out = next;
  }
  return out;
}
