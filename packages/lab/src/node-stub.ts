// What the lab gives for the Node built-ins a package imports where the browser has none
// (kernels' gemm() reads autotune's cache folder through node:fs and node:path): no file exists,
// folders are empty, paths join with "/". The lab's autotuneCacheDir() is undefined, so gemm()
// never asks.

/** No file exists in the lab. */
export function existsSync(_path: string): boolean {
  return false;
}

/** Every folder is empty in the lab. */
export function readdirSync(_path: string): string[] {
  return [];
}

/** `parts` joined with "/" (node:path's join without normalisation). */
export function join(...parts: string[]): string {
  return parts.filter((p) => p !== "").join("/");
}

export default { existsSync, readdirSync, join };
