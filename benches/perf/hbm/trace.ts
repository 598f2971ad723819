// Memory-fidelity traces: reading the `kb-fidelity-trace v1` format, generating the suite's
// patterns with `patterns.mjs` into a cache folder, and finding the fidelity folder
// (`patterns.mjs`, `reference.json`) beside the repository.
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** One trace: every requester's requests in file order. */
export interface Trace {
  /** `pattern=` of the header (the file name when absent). */
  readonly pattern: string;
  /** `mix=` of the header (`read`, `rw21`, or what the file says). */
  readonly mix: string;
  readonly requesters: number;
  /** Reads a requester may have outstanding. */
  readonly window: number;
  /** Bytes of every request (`line_bytes=`, 64). */
  readonly lineBytes: number;
  /** Requests of each requester: byte offsets into the stack, in file order. */
  readonly addresses: readonly Float64Array[];
  /** Per request: 1 for a write, 0 for a read. */
  readonly writes: readonly Uint8Array[];
  /** Requests in all. */
  readonly requests: number;
  /** Reads in all. */
  readonly reads: number;
  /** Where it came from (a path). */
  readonly source: string;
}

const MAGIC = "# kb-fidelity-trace v1";

/**
 * Parses a trace in the `kb-fidelity-trace v1` format: the magic line, a `# key=value ...`
 * header (`pattern`, `mix`, `requesters`, `window`, `line_bytes`, `requests`), then one
 * request a line, `<requester> 0x<address> R|W`. Blank lines and further `#` lines are skipped.
 * Throws an Error naming the file and line for anything else.
 */
export function parseTrace(text: string, source = "<trace>"): Trace {
  const lines = text.split("\n");
  if ((lines[0] ?? "").trim() !== MAGIC) {
    throw new Error(`${source}:1: not a kb-fidelity trace: the first line must be "${MAGIC}".`);
  }
  const header: Record<string, string> = {};
  let first = 1;
  for (; first < lines.length; first++) {
    const line = (lines[first] as string).trim();
    if (!line.startsWith("#")) break;
    for (const field of line.slice(1).trim().split(/\s+/)) {
      const eq = field.indexOf("=");
      if (eq > 0) header[field.slice(0, eq)] = field.slice(eq + 1);
    }
  }
  const number = (key: string, fallback?: number): number => {
    const raw = header[key];
    if (raw === undefined) {
      if (fallback !== undefined) return fallback;
      throw new Error(`${source}: the header has no ${key}= (need requesters=R window=W).`);
    }
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1)
      throw new Error(`${source}: header ${key}=${raw} is not a positive integer.`);
    return value;
  };
  const requesters = number("requesters");
  const window = number("window");
  const lineBytes = number("line_bytes", 64);
  // First pass: count per requester, so the arrays are allocated once.
  const counts = new Int32Array(requesters);
  const parsed: { r: number; a: number; w: number }[] = [];
  let reads = 0;
  for (let i = first; i < lines.length; i++) {
    const line = lines[i] as string;
    if (line.length === 0 || line.charCodeAt(0) === 35 /* # */) continue;
    const fields = line.trim().split(/\s+/);
    if (fields.length === 1 && fields[0] === "") continue;
    const [who, where, op] = fields;
    const r = Number(who);
    const a =
      where !== undefined && /^0x[0-9a-f]+$/i.test(where) ? Number.parseInt(where.slice(2), 16) : Number.NaN;
    if (fields.length !== 3 || !Number.isInteger(r) || r < 0 || r >= requesters || !Number.isSafeInteger(a)) {
      throw new Error(
        `${source}:${i + 1}: expected "<requester 0..${requesters - 1}> 0x<address> R|W", got "${line.trim()}".`,
      );
    }
    if (op !== "R" && op !== "W")
      throw new Error(`${source}:${i + 1}: the operation must be R or W, got "${op}".`);
    const w = op === "W" ? 1 : 0;
    if (w === 0) reads++;
    counts[r] = (counts[r] as number) + 1;
    parsed.push({ r, a, w });
  }
  if (header.requests !== undefined && Number(header.requests) !== parsed.length) {
    throw new Error(`${source}: the header says requests=${header.requests}, the file has ${parsed.length}.`);
  }
  const addresses = Array.from(counts, (n) => new Float64Array(n));
  const writes = Array.from(counts, (n) => new Uint8Array(n));
  const fill = new Int32Array(requesters);
  for (const { r, a, w } of parsed) {
    const j = fill[r] as number;
    (addresses[r] as Float64Array)[j] = a;
    (writes[r] as Uint8Array)[j] = w;
    fill[r] = j + 1;
  }
  return {
    pattern: header.pattern ?? source.replace(/^.*[\\/]/, ""),
    mix: header.mix ?? "?",
    requesters,
    window,
    lineBytes,
    addresses,
    writes,
    requests: parsed.length,
    reads,
    source,
  };
}

/** Reads and parses a trace file. */
export function readTrace(file: string): Trace {
  return parseTrace(readFileSync(file, "utf8"), file);
}

/** The first existing `join(dir, ...rel)` walking up from `start`, or undefined. */
export function findUp(start: string, ...rel: string[]): string | undefined {
  let dir = resolve(start);
  for (;;) {
    const candidate = join(dir, ...rel);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The memory-fidelity folder (`patterns.mjs`, `reference.json`, `hbm-reference.md`): `explicit`
 * (`--fidelity DIR`), else `$KB_FIDELITY_DIR`, else `shared/fidelity` found walking up from this
 * module (the repository's sibling `../shared/fidelity`). Undefined when there is none.
 */
export function fidelityDir(explicit?: string): string | undefined {
  const given = explicit ?? process.env.KB_FIDELITY_DIR;
  if (given !== undefined && given !== "") {
    if (!existsSync(join(given, "patterns.mjs")))
      throw new Error(`${given} has no patterns.mjs (--fidelity DIR).`);
    return resolve(given);
  }
  const here = dirname(fileURLToPath(import.meta.url));
  const found = findUp(here, "shared", "fidelity", "patterns.mjs");
  return found === undefined ? undefined : dirname(found);
}

/** The patterns `patterns.mjs --list` names, in its order. */
export function listPatterns(dir: string): string[] {
  const out = execFileSync(process.execPath, [join(dir, "patterns.mjs"), "--list"], { encoding: "utf8" });
  return out
    .split("\n")
    .map((line) => line.split("\t")[0]?.trim() ?? "")
    .filter((name) => name !== "");
}

/**
 * The trace of `pattern` / `mix`, written by `patterns.mjs` into a cache folder keyed by the
 * script's content (`$TMPDIR/kb-bench-hbm/<hash>/<pattern>.<mix>.trace`) on first use.
 */
export function patternTrace(
  dir: string,
  pattern: string,
  mix: string,
  cacheRoot = join(tmpdir(), "kb-bench-hbm"),
): string {
  const script = join(dir, "patterns.mjs");
  const hash = createHash("sha256").update(readFileSync(script)).digest("hex").slice(0, 16);
  const folder = join(cacheRoot, hash);
  const file = join(folder, `${pattern}.${mix}.trace`);
  if (existsSync(file)) return file;
  mkdirSync(folder, { recursive: true });
  const partial = `${file}.${process.pid}.tmp`;
  execFileSync(process.execPath, [script, pattern, "--mix", mix, "--out", partial], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  renameSync(partial, file);
  return file;
}
