import { readUserText } from "@kb/errors/node";
import { type CclConfig, type CclConfigOptions, parseCclConfig } from "./config.js";

// `@kb/ccl/node`: reading a `ccl.yaml` file (DESIGN §9). The main entry runs anywhere; it parses
// the same text with `parseCclConfig`.

/** The largest ccl.yaml read: 1 MiB (a config is a few rules and defaults, about 1 KB). */
export const CCL_CONFIG_MAX_BYTES = 2 ** 20;

/**
 * Reads and parses a `ccl.yaml` file: `parseCclConfig` with the file's name in its errors.
 *
 * Throws `RUNTIME_INVALID` when the file cannot be read, is not a regular file or is above
 * {@link CCL_CONFIG_MAX_BYTES}, and what `parseCclConfig` throws.
 */
export async function loadCclConfig(file: string, options: CclConfigOptions = {}): Promise<CclConfig> {
  const text = readUserText(file, {
    what: "ccl config",
    maxBytes: CCL_CONFIG_MAX_BYTES,
    code: "RUNTIME_INVALID",
  });
  return parseCclConfig(text, file, options);
}
