/**
 * The keys that reach into JavaScript's objects instead of naming data: `__proto__` (an object's
 * prototype), `constructor` and `prototype` (the way from an object to its class and to
 * Function). A path writer that follows one of them from user data writes into
 * `Object.prototype`, where every object of the process (a child process's environment
 * included) inherits it; a reader that follows one reads the class, not the data.
 *
 * **When to use**: before any key taken from user data (a YAML or JSON key, a dotted path of a
 * sweep spec, a `--param` name, a constraint's field) is written or read; {@link isPrototypeKey}
 * is the one check, the error that names the place is the caller's.
 */
export const PROTOTYPE_KEYS: readonly string[] = Object.freeze(["__proto__", "constructor", "prototype"]);

/** True when `key` is one of {@link PROTOTYPE_KEYS}: a key no data of kb may use. */
export function isPrototypeKey(key: PropertyKey): boolean {
  return typeof key === "string" && PROTOTYPE_KEYS.includes(key);
}

/**
 * The path of the first key of `value` (walked depth first through arrays and objects, own keys
 * only) that {@link isPrototypeKey} refuses, the key last; `undefined` when there is none. A
 * parsed YAML or JSON file holds `__proto__` as an own key, so this finds it.
 */
export function prototypeKeyPath(value: unknown): (string | number)[] | undefined {
  return searchKeys(value, new Set());
}

function searchKeys(value: unknown, seen: Set<object>): (string | number)[] | undefined {
  // A YAML alias may name an object twice (or inside itself): each is searched once.
  if (value === null || typeof value !== "object" || seen.has(value)) return undefined;
  seen.add(value);
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? [...value.entries()]
    : Object.keys(value).map((key) => [key, (value as Record<string, unknown>)[key]]);
  for (const [key, item] of entries) {
    if (isPrototypeKey(key)) return [key];
    const inner = searchKeys(item, seen);
    if (inner !== undefined) return [key, ...inner];
  }
  return undefined;
}

/** The sentence that says why a prototype key is refused, for every message that refuses one. */
export function prototypeKeyMessage(key: string): string {
  return `"${key}" cannot be a key: ${PROTOTYPE_KEYS.join(", ")} reach into JavaScript's objects instead of naming data, so kb refuses them everywhere; rename it.`;
}
