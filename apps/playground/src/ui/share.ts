// A run in the URL fragment: the bench, the topology (its text, or a reference's name when
// unchanged), the params, the verify flag and the run limits, as JSON compressed with the browser's own
// CompressionStream ("deflate-raw") and written in base64url. Nothing leaves the browser: the
// fragment is never sent to a server. Browsers without CompressionStream write and read the JSON
// uncompressed (`#j=` instead of `#z=`).

/** What a shared link carries. */
export interface SharedRun {
  /** The bench's virtual path (which library files it may import). */
  readonly main: string;
  /** The bench's text. */
  readonly bench: string;
  /** A reference topology's name when its text is unchanged, else the text (under `name`). */
  readonly topology: { readonly ref: string } | { readonly name: string; readonly text: string };
  /** The params field as typed. */
  readonly params: string;
  readonly verify: boolean;
  /** The Max events and Max sim time (ns) fields as typed ("" for no limit; links made before they were shared have none). */
  readonly limits: { readonly maxEvents: string; readonly maxSimTimeNs: string };
}

const VERSION = 1;

/** The URL fragment (with its `#`) that carries `run`. */
export async function encodeShared(run: SharedRun): Promise<string> {
  const json = new TextEncoder().encode(JSON.stringify({ v: VERSION, ...run }));
  if (typeof CompressionStream === "undefined") return `#j=${base64Url(json)}`;
  const packed = await transform(json, new CompressionStream("deflate-raw"));
  return `#z=${base64Url(packed)}`;
}

/**
 * The run a URL fragment carries, or null when the fragment is not a shared run. Throws an Error
 * saying what is wrong with a fragment that looks like one but cannot be read.
 */
export async function decodeShared(hash: string): Promise<SharedRun | null> {
  const match = /^#([jz])=([A-Za-z0-9_-]*)$/.exec(hash);
  if (match === null) return null;
  const bytes = fromBase64Url(match[2] as string);
  let json: Uint8Array;
  if (match[1] === "z") {
    if (typeof DecompressionStream === "undefined") {
      throw new Error(
        "this browser cannot decompress the link (no DecompressionStream); open it in a current browser",
      );
    }
    json = await transform(bytes, new DecompressionStream("deflate-raw"));
  } else {
    json = bytes;
  }
  const value = JSON.parse(new TextDecoder().decode(json)) as Record<string, unknown>;
  if (value.v !== VERSION || typeof value.main !== "string" || typeof value.bench !== "string") {
    throw new Error("the link does not carry a playground run (version, bench)");
  }
  const topology = value.topology as Record<string, unknown> | undefined;
  const limits = value.limits as Record<string, unknown> | undefined;
  const shared: SharedRun = {
    main: value.main,
    bench: value.bench,
    topology:
      typeof topology?.ref === "string"
        ? { ref: topology.ref }
        : { name: String(topology?.name ?? "topology.yaml"), text: String(topology?.text ?? "") },
    params: typeof value.params === "string" ? value.params : "",
    verify: value.verify === true,
    limits: {
      maxEvents: typeof limits?.maxEvents === "string" ? limits.maxEvents : "",
      maxSimTimeNs: typeof limits?.maxSimTimeNs === "string" ? limits.maxSimTimeNs : "",
    },
  };
  return shared;
}

async function transform(
  bytes: Uint8Array,
  stream: CompressionStream | DecompressionStream,
): Promise<Uint8Array> {
  const output = new Blob([bytes as BlobPart]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(output).arrayBuffer());
}

/** `bytes` in base64url without padding. */
export function base64Url(bytes: Uint8Array): string {
  let text = "";
  for (let at = 0; at < bytes.length; at += 0x8000) {
    text += String.fromCharCode(...bytes.subarray(at, at + 0x8000));
  }
  return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The bytes of base64url `text` (padding optional). */
export function fromBase64Url(text: string): Uint8Array {
  const binary = atob(text.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}
