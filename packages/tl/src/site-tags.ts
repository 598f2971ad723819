/**
 * Call sites known without a stack walk: a kernel module whose source was tagged when it was
 * loaded (`tagCallSites` of `@kb/runtime/node`, what `kb run` loads bench files with) makes each
 * `tl.name(...)` call as `tl.name(..., ...tag(i, tl))`. The tag, evaluated after the call's
 * arguments and just before the call, says which call of the module's source this is; the tl call
 * entered next (the same context, a call of the same name) takes it, and its site is found once
 * per tag, the first time, exactly as without tags (the one frame below the tl method, read from
 * a stack's text), then remembered. A call without a tag (a library's, a `TensorHandle` method's)
 * walks the stack as before.
 *
 * The tag's text moves what follows it on its line: the module says where it put each tag
 * (`shifts`), and a frame of that module read from a stack's text is moved back
 * ({@link sourceColumn}), so a location reads the same with or without tags.
 */

/** What a tag's first use found: a location, as the site cache holds it. */
export type TaggedSeen = { readonly file: string; readonly line: number; readonly col: number };

/** The tagged call made last and not yet entered: its tag, context and call name. */
let pendingTag = -1;
let pendingReceiver: unknown = null;
/** Each tag's call name (`load`), by tag. */
const TAG_NAMES: string[] = [];
/** Each tag's site, found on its first use. */
const TAG_SEEN: (TaggedSeen | undefined)[] = [];
/** Per file (as its frames name it): per line, the generated columns of tags and their lengths. */
const SHIFTS = new Map<string, Map<number, readonly number[]>>();
const NOTHING: readonly never[] = Object.freeze([]);

/**
 * The tag function of one loaded module (called by its tagged source; not for kernels to call).
 * `names` are the call names of the module's tags in order; `shifts` maps a line (1-based) to
 * pairs of (1-based column in the tagged text where a tag's text starts, its length), in order.
 * Returns `tag(i, receiver)`, which notes the module's tag `i` for the tl call about to be made on
 * `receiver` and returns an empty array (spread into the call: no argument).
 */
export function siteTags(
  file: string,
  names: readonly string[],
  shifts: Readonly<Record<string, readonly number[]>>,
): (index: number, receiver: unknown) => readonly never[] {
  const base = TAG_NAMES.length;
  for (const name of names) {
    TAG_NAMES.push(name);
    TAG_SEEN.push(undefined);
  }
  const lines = new Map<number, readonly number[]>();
  for (const [line, pairs] of Object.entries(shifts)) lines.set(Number(line), pairs);
  if (lines.size > 0) SHIFTS.set(plainPath(file), lines);
  return (index, receiver) => {
    pendingTag = base + index;
    pendingReceiver = receiver;
    return NOTHING;
  };
}

/**
 * The tag of the tagged call `name` about to run on `receiver` (-1 when the call is not tagged or
 * the pending tag is another call's). Clears the pending tag: a tag is taken by the next call
 * entered or by none.
 */
export function takeSiteTag(receiver: unknown, name: string): number {
  if (pendingReceiver === null) return -1;
  const tag = pendingReceiver === receiver && TAG_NAMES[pendingTag] === name ? pendingTag : -1;
  pendingReceiver = null;
  pendingTag = -1;
  return tag;
}

/** The site found for `tag` on its first use, or undefined. */
export function taggedSeen(tag: number): TaggedSeen | undefined {
  return TAG_SEEN[tag];
}

/** Remembers the site found for `tag`. */
export function rememberTagged(tag: number, seen: TaggedSeen): void {
  TAG_SEEN[tag] = seen;
}

/**
 * The column a frame at `line`:`col` (1-based) of `file` (as a stack's text names it) has in the
 * module's source as loaded, before tags were added to it: `col` less the length of the tags that
 * start before it on its line.
 */
export function sourceColumn(file: string, line: number, col: number): number {
  if (SHIFTS.size === 0) return col;
  const pairs = SHIFTS.get(plainPath(file))?.get(line);
  if (pairs === undefined) return col;
  let shift = 0;
  for (let index = 0; index + 1 < pairs.length; index += 2) {
    if ((pairs[index] as number) >= col) break;
    shift += pairs[index + 1] as number;
  }
  return col - shift;
}

/** A file URL or path as a path. */
function plainPath(file: string): string {
  return file.startsWith("file://") ? decodeURIComponent(file.slice("file://".length)) : file;
}
