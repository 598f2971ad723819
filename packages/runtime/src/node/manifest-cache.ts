import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KbError } from "@kb/errors";

/**
 * Results JSON cached by manifest digest (`kb run --cache DIR`): `DIR/<digest>.json` holds the
 * exact text a run printed, so a cached run prints the same bytes. Written to a temporary file
 * and renamed, so a reader never sees half a file and two writers of one digest (which write the
 * same bytes) do not conflict.
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

  /** The cached results text of a digest, or null when there is none. */
  get(digest: string): string | null {
    try {
      return readFileSync(this.path(digest), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw new KbError(
        "RUNTIME_INVALID",
        `cannot read the results cache ${this.path(digest)}: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    }
  }

  /** Stores a run's results text under its digest (creating the folder). */
  put(digest: string, text: string): void {
    const target = this.path(digest);
    try {
      mkdirSync(this.dir, { recursive: true });
      const temp = `${target}.tmp-${process.pid}`;
      writeFileSync(temp, text);
      renameSync(temp, target);
    } catch (error) {
      throw new KbError(
        "RUNTIME_INVALID",
        `cannot write the results cache ${target}: ${(error as Error).message}. Check --cache DIR.`,
        {
          cause: error,
        },
      );
    }
  }
}
