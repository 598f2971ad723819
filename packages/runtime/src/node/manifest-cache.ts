import { createHash } from "node:crypto";
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { formatSchemaIssues, isKbError, KbError } from "@kb/errors";
import { readUserText } from "@kb/errors/node";
import { type RunResults, RunResultsSchema } from "../results.js";

/** The largest cache entry read: 64 MiB (a run's results JSON is a few KB to a few MB). */
const CACHE_ENTRY_MAX_BYTES = 64 * 2 ** 20;

/**
 * What {@link ResultsCache.get} found: a verified entry (`text` is what the run printed with
 * `--json`, byte for byte), nothing, or an entry that is not what a run wrote (`damaged`, with
 * why): the caller warns, runs again and puts the new results over it.
 */
export type CacheLookup =
  | { readonly status: "hit"; readonly text: string; readonly results: RunResults }
  | { readonly status: "miss" }
  | { readonly status: "damaged"; readonly reason: string };

/**
 * Results JSON cached by manifest digest (`kb run --cache DIR`): `DIR/<digest>.json` holds
 * `{ "sha256": ..., "results": ... }`, the results a run printed with the sha256 of their text
 * (`JSON.stringify(results, null, 2)` and a newline), so a cached run prints the same bytes and an
 * entry edited by hand or damaged on disk is told from a true one. An entry is used only when its
 * text hashes to its sha256, it matches the results schema and its manifest has the digest it
 * is filed under. Written to a temporary file and renamed, so a reader never sees half a file
 * and two writers of one digest (which write the same bytes) do not conflict; a failed write
 * leaves no temporary file.
 */
export class ResultsCache {
  constructor(readonly dir: string) {}

  /** The file of a digest. */
  path(digest: string): string {
    if (!/^[0-9a-f]{64}$/.test(digest)) {
      throw new KbError("RUNTIME_INVALID", `not a manifest digest (64 hex digits): "${digest}".`);
    }
    return join(this.dir, `${digest}.json`);
  }

  /** The verified entry of a digest, `miss` when there is none, `damaged` when it is not true. */
  get(digest: string): CacheLookup {
    const file = this.path(digest);
    let stored: string;
    try {
      stored = readUserText(file, {
        what: "cache entry",
        maxBytes: CACHE_ENTRY_MAX_BYTES,
        code: "RUNTIME_INVALID",
      });
    } catch (error) {
      const cause = isKbError(error) ? error.cause : undefined;
      if ((cause as NodeJS.ErrnoException | undefined)?.code === "ENOENT") return { status: "miss" };
      return { status: "damaged", reason: isKbError(error) ? error.detail : String(error) };
    }
    return verifyEntry(stored, digest);
  }

  /**
   * Stores a run's results under their digest (creating the folder). Throws `OUTPUT_UNWRITABLE`
   * naming the file when it cannot be written; the temporary file is removed then.
   */
  put(digest: string, results: RunResults): void {
    const target = this.path(digest);
    const temp = `${target}.tmp-${process.pid}`;
    const text = resultsText(results);
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(temp, `${JSON.stringify({ sha256: sha256(text), results }, null, 2)}\n`);
      renameSync(temp, target);
    } catch (error) {
      try {
        rmSync(temp, { force: true });
      } catch {
        // No folder to hold it (ENOTDIR): there is no temporary file either.
      }
      throw new KbError(
        "OUTPUT_UNWRITABLE",
        `cannot write the results cache ${target}: ${(error as Error).message}. Check --cache DIR.`,
        { context: { file: target }, cause: error },
      );
    }
  }
}

/** The text `kb run --json` prints for `results` (and a cache entry's sha256 covers). */
export function resultsText(results: RunResults): string {
  return `${JSON.stringify(results, null, 2)}\n`;
}

/**
 * The results of a parsed cache entry (`{ "sha256": ..., "results": ... }`) when their text hashes
 * to the recorded sha256 (`results`, not yet checked against the schema); `damaged` with why when
 * it does not; `null` when `entry` is not shaped as a cache entry. For readers of a cache folder
 * other than {@link ResultsCache} (kb web's sweep page).
 */
export function cacheEntryResults(
  entry: unknown,
): { readonly results: unknown; readonly text: string } | { readonly damaged: string } | null {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return null;
  const { sha256: recorded, results } = entry as { sha256?: unknown; results?: unknown };
  if (typeof recorded !== "string" || results === undefined) return null;
  const text = `${JSON.stringify(results, null, 2)}\n`;
  if (sha256(text) !== recorded)
    return { damaged: "its results do not match their sha256 (edited or damaged)" };
  return { results, text };
}

function verifyEntry(stored: string, digest: string): CacheLookup {
  let entry: unknown;
  try {
    entry = JSON.parse(stored);
  } catch (error) {
    return { status: "damaged", reason: `not JSON (${(error as Error).message})` };
  }
  const checked = cacheEntryResults(entry);
  if (checked === null) return { status: "damaged", reason: "not a cache entry (no sha256 and results)" };
  if ("damaged" in checked) return { status: "damaged", reason: checked.damaged };
  const { results, text } = checked;
  const parsed = RunResultsSchema.safeParse(results);
  if (!parsed.success) {
    return {
      status: "damaged",
      reason: `its results do not match the results schema (${formatSchemaIssues(parsed.error.issues.slice(0, 1)).join("")})`,
    };
  }
  if (parsed.data.manifest?.digest !== digest) {
    return {
      status: "damaged",
      reason: `its results are of another manifest (${parsed.data.manifest?.digest})`,
    };
  }
  return { status: "hit", text, results: parsed.data };
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}
