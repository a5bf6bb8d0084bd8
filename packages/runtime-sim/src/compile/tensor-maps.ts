import {
  callSite,
  checkTensorMapEncoding,
  isTensorMap,
  tensorMapEncoding,
  tilePlanRecord,
  walkStmt,
  type Note,
  type TensorMap,
  type VerifiedFunc,
} from "@tirx-ts/core";
import type { SimTensor } from "../tensor.js";

/** A tensor map of a kernel's TMA copies and the parameter whose tensor it describes. */
interface MapParam {
  readonly map: TensorMap;
  readonly param: number;
}

const MAPS = new WeakMap<VerifiedFunc, readonly MapParam[]>();

/**
 * The tensor maps `vf`'s TMA copies read (a tile.apply's `tensor_map`, or a planned tile op's,
 * core `TilePlanRecord.tensorMap`), once each.
 */
function mapsOf(vf: VerifiedFunc): readonly MapParam[] {
  const hit = MAPS.get(vf);
  if (hit) return hit;
  const out: MapParam[] = [];
  const seen = new Set<number>();
  walkStmt(vf.entry.body, (s) => {
    // Before the lower-tile pass a TMA copy is a tile.apply with its map among its parameters.
    const map =
      s.kind === "TileOp"
        ? tilePlanRecord(s.plan).tensorMap(s.plan)
        : s.kind === "TileApply" && isTensorMap(s.params["tensor_map"])
          ? s.params["tensor_map"]
          : undefined;
    if (!map || seen.has(map.id)) return;
    seen.add(map.id);
    const param = vf.fn.params.findIndex(
      (p) => p.kind === "buffer" && p.buffer.id === map.buffer.id,
    );
    if (param >= 0) out.push({ map, param });
  });
  MAPS.set(vf, out);
  return out;
}

/**
 * The device address a sim tensor stands for: each ArrayBuffer is one allocation, placed as the
 * driver places them at a 256-byte-aligned address (CUDA C++ Programming Guide, "Device Memory
 * Accesses": an address returned by the allocation routines is aligned to at least 256 bytes),
 * so a tensor whose storage starts `byteOffset` bytes into its ArrayBuffer (a SimTensor made over
 * a subarray) lies that many bytes past an aligned address; `byteOffset` itself stands for it.
 */
export function simAddress(t: SimTensor): bigint {
  return BigInt(t.storage.byteOffset);
}

/**
 * Check each tensor map of `vf`'s TMA copies against cuTensorMapEncodeTiled's contract for this
 * launch, as the CUDA runtime does before it encodes the map (core checkTensorMapEncoding, the
 * one check both runtimes and the verifier share): the tensor's launch shape and its address
 * ({@link simAddress}). `tensors[i]` is argument i when it is a tensor. The simulator so never
 * runs a map the driver would refuse.
 * @throws TirxError TX4027 for a tensor whose address is not 16-byte aligned, TX4017, TX4024,
 *   TX4028, TX4029 for the rest of the contract (launch dims and strides), at the launching call
 *   with a note at the map. Source: CUDA Driver API, cuTensorMapEncodeTiled.
 */
export function checkTensorMapsAtLaunch(
  vf: VerifiedFunc,
  tensors: readonly (SimTensor | undefined)[],
): void {
  const maps = mapsOf(vf);
  for (const { map, param } of maps) {
    const t = tensors[param];
    if (!t) continue;
    const address = simAddress(t);
    const notes: Note[] = [
      ...(map.span ? [{ message: `tensor map "${map.name}" is made here`, span: map.span }] : []),
      {
        message: `argument ${param} ("${vf.fn.params[param]!.name}") is the tensor it describes; a sim tensor's address is the byte offset of its storage in its ArrayBuffer (${address}), each ArrayBuffer an allocation aligned to 256 bytes`,
      },
    ];
    checkTensorMapEncoding(
      map.name,
      tensorMapEncoding(map, { shape: t.shape, globalAddress: address }),
      callSite(),
      notes,
    );
  }
}
