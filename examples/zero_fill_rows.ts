// The seed's partial-rows example: each thread copies one 16-byte uint8 row with cp.async, and
// rows at or past `valid_rows` are zero-filled through src_size (copy a prefix of 0 bytes) rather
// than skipped: zero fill writes zeros, predication would leave shared memory untouched.
// Run: npx tsx examples/zero_fill_rows.ts
import {
  T,
  checkOutput,
  compile,
  device,
  isMain,
  runAsMain,
  tensor,
  type DeviceLike,
  type ExampleResult,
  type PrimFunc,
} from "tirx-ts";

const ROWS = 64;

export const zero_fill_rows = T.function(
  "zero_fill_rows",
  { A: T.Tensor([ROWS, 16], "uint8"), B: T.Tensor([ROWS, 16], "uint8"), valid_rows: T.int32 },
  ({ A, B, valid_rows }) => {
    T.device_entry({ launch: T.cuda.LaunchConfig({ grid: 1, block: ROWS }) });
    const tid = T.cuda.thread_idx("x");
    const shared = T.alloc_shared([ROWS, 16], "uint8", { name: "shared" });
    T.cuda.tile.apply(
      T.ptx["cp.async.cg.shared.global.L2::128B"],
      shared.sub(tid, ":"),
      A.sub(tid, ":"),
      {
        chunk_bytes: 16,
        src_size: T.if_then_else(tid.lt(valid_rows), T.uint32(16), T.uint32(0)),
      },
    );
    T.ptx.cp.async_.commit_group();
    T.ptx.cp.async_.wait_group(0);
    // Each thread reads back only its own row: its wait_group made it visible to itself.
    for (const j of T.range(16)) B.set([tid, j], shared.get([tid, j]));
  },
);

/**
 * Run with valid_rows = 37: rows 0..36 equal A, rows 37..63 are zeros (B starts as 0xFF).
 * `kernel` (default: this file's) is what runs; examples/script/zero_fill_rows.ts passes its
 * script-mode twin.
 */
export function runExample(
  dev: DeviceLike = device(),
  validRows = 37,
  kernel: PrimFunc = zero_fill_rows,
): ExampleResult {
  const run = compile(kernel, { target: "cuda" });
  const x = Uint8Array.from({ length: ROWS * 16 }, (_, i) => 1 + ((i * 13) % 255));
  const a = tensor(x, { shape: [ROWS, 16], dtype: "uint8", device: dev });
  const b = tensor(new Uint8Array(ROWS * 16).fill(0xff), {
    shape: [ROWS, 16],
    dtype: "uint8",
    device: dev,
  });
  run(a, b, validRows);
  const expected = x.map((v, i) => (Math.floor(i / 16) < validRows ? v : 0));
  const r = checkOutput(b, expected, [a], "bytes");
  return {
    ...r,
    summary: `${r.summary} (${validRows} rows copied, ${ROWS - validRows} zero-filled)`,
  };
}

if (isMain(import.meta.url)) runAsMain("zero_fill_rows", (dev) => runExample(dev));
