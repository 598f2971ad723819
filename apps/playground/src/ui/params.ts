import { KbError } from "@kb/errors";

// The params field: `key=value` pairs as `kb run --param key=value` takes them, separated by
// spaces, commas or new lines.

/**
 * The params of `text`, values as strings (the worker parses them as `kb run` does: JSON where it
 * parses). Throws a `KbError` naming the pair that has no `key=`.
 */
export function parseParams(text: string): Record<string, string> {
  const params: Record<string, string> = {};
  for (const pair of text.split(/[\s,]+/)) {
    if (pair === "") continue;
    const equals = pair.indexOf("=");
    if (equals <= 0) {
      throw new KbError(
        "CLI_USAGE",
        `params: "${pair}" is not key=value. Write the params as key=value pairs separated by spaces (n=65536 dtype=f32).`,
      );
    }
    params[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return params;
}
