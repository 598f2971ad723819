import { KbError } from "@kb/errors";

// The params field: `key=value` pairs as `kb run --param key=value` takes them, separated by
// spaces, commas or new lines. A comma-separated part without `=` continues the value before it,
// so a list value reads as on the command line (`sizes=256x128x64,128x64x128`).

/**
 * The params of `text`, values as strings (the worker parses them as `kb run` does: JSON where it
 * parses). Throws a `KbError` naming the pair that has no `key=`.
 */
export function parseParams(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const token of text.split(/\s+/)) {
    let key: string | undefined;
    for (const pair of token.split(",")) {
      if (pair === "") continue;
      const equals = pair.indexOf("=");
      if (equals > 0) {
        key = pair.slice(0, equals);
        params[key] = pair.slice(equals + 1);
      } else if (key !== undefined) {
        params[key] = `${params[key]},${pair}`;
      } else {
        throw new KbError(
          "CLI_USAGE",
          `params: "${pair}" is not key=value. Write the params as key=value pairs separated by spaces (n=65536 dtype=f32).`,
        );
      }
    }
  }
  return params;
}
