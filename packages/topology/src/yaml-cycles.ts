/**
 * The path to the first value of `value` that contains itself (a YAML alias inside its own
 * anchor, `a: &x [1, *x]`), or `undefined` when `value` is a tree. An alias used twice side by
 * side is not a cycle. Data that contains itself has no JSON form: hashing, cloning it for a
 * run or writing it out would recurse for ever.
 */
export function cyclePath(value: unknown): (string | number)[] | undefined {
  return search(value, new Set(), new Set());
}

function search(value: unknown, open: Set<object>, done: Set<object>): (string | number)[] | undefined {
  if (value === null || typeof value !== "object" || done.has(value)) return undefined;
  if (open.has(value)) return [];
  open.add(value);
  const entries: [string | number, unknown][] = Array.isArray(value)
    ? [...value.entries()]
    : Object.keys(value).map((key) => [key, (value as Record<string, unknown>)[key]]);
  for (const [key, item] of entries) {
    const inner = search(item, open, done);
    if (inner !== undefined) return [key, ...inner];
  }
  open.delete(value);
  done.add(value);
  return undefined;
}
