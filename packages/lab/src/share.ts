// A shared lab link: the editor's text and file name in the URL fragment, deflated
// (CompressionStream "deflate-raw") and base64url-encoded, so nothing is sent to a server.

/** base64url of `bytes` (RFC 4648 §5, no padding). */
function base64url(bytes: Uint8Array): string {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000)
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function unbase64url(text: string): Uint8Array {
  const s = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

async function pipe(bytes: Uint8Array, stream: GenericTransformStream): Promise<Uint8Array> {
  const out = new Blob([bytes as BlobPart])
    .stream()
    .pipeThrough(stream as TransformStream<Uint8Array, Uint8Array>);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

/** The fragment (without "#") for `source` in `file`: `f=<file>&z=<deflated source>`. */
export async function encodeShare(source: string, file: string): Promise<string> {
  const z = await pipe(new TextEncoder().encode(source), new CompressionStream("deflate-raw"));
  return `f=${encodeURIComponent(file)}&z=${base64url(z)}`;
}

/** The source and file of a fragment made by encodeShare, or undefined when it is not one. */
export async function decodeShare(
  fragment: string,
): Promise<{ source: string; file: string } | undefined> {
  const p = new URLSearchParams(fragment);
  const z = p.get("z");
  if (!z) return undefined;
  try {
    const bytes = await pipe(unbase64url(z), new DecompressionStream("deflate-raw"));
    return { source: new TextDecoder().decode(bytes), file: p.get("f") ?? "kernel.ts" };
  } catch {
    return undefined;
  }
}
