import { readFile } from "node:fs/promises";
import { KbError } from "@kb/errors";
import { type CclConfig, type CclConfigOptions, parseCclConfig } from "./config.js";

// `@kb/ccl/node`: reading a `ccl.yaml` file (DESIGN §9). The main entry runs anywhere; it parses
// the same text with `parseCclConfig`.

/**
 * Reads and parses a `ccl.yaml` file: `parseCclConfig` with the file's name in its errors.
 *
 * Throws `RUNTIME_INVALID` when the file cannot be read, and what `parseCclConfig` throws.
 */
export async function loadCclConfig(file: string, options: CclConfigOptions = {}): Promise<CclConfig> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new KbError("RUNTIME_INVALID", `cannot read ccl config ${file}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return parseCclConfig(text, file, options);
}
