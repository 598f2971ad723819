import { rememberTagged, sourceColumn, taggedSeen } from "./site-tags.js";

/**
 * Where a tl call was made in the kernel's source. Captured synchronously when the call is made
 * (an `Error`'s stack, formatted only if an error message needs it), so a message can name both
 * calls of an unawaited pair and the line of a call that failed.
 *
 * Frames of @kb/tl itself (`TLContext.*`, `TensorHandle.*`) are skipped: the location is the
 * first frame of the code that called tl (a kernel, or a library such as @kb/ccl that kernels
 * call). In an engine whose stacks do not parse (or with `Error.stackTraceLimit = 0`) the location
 * is unknown and messages name the call only.
 */
export class CallSite {
  private parsed: SourceLocation | null | undefined;
  /** Captured inside a call: the location is below its `TLContext._located` frame. */
  private belowCallEntry = false;
  /** The call's key arguments as source text (`"west"`), set by {@link withArguments}; null if none. */
  private shownArguments: string | null = null;

  constructor(
    /** The tl method: `load`, `store`, `exp`, ... */
    readonly call: string,
    private readonly stack: Error | null,
  ) {}

  /** Captures the current call's site (call it synchronously at the tl call's entry). */
  static capture(call: string): CallSite {
    return new CallSite(call, new Error());
  }

  /**
   * Captures the site of the tl call `call` from inside it, at any depth (an argument check of a
   * helper): the location is the first frame outside @kb/tl below the call's `TLContext._located`
   * frame, so helpers of other modules (validate.ts, shapes.ts) are never taken for the kernel.
   */
  static captureInCall(call: string): CallSite {
    // Deep enough for the checks' helpers, the call and the kernel frame below them.
    const limit = Error.stackTraceLimit;
    if (limit > 0) Error.stackTraceLimit = Math.max(limit, IN_CALL_FRAMES);
    const site = new CallSite(call, new Error());
    Error.stackTraceLimit = limit;
    site.belowCallEntry = true;
    return site;
  }

  /**
   * Captures the current call's site and finds its location at once, cheaply: the stack's frames
   * are read as V8 keeps them (no text), and each frame's raw position (script, character offset)
   * is looked up in `cache`, which holds what the frame was the first time it was seen: a frame
   * to skip (of @kb/tl) or the kernel-side location, read then from the stack's text. A kernel's
   * loop pays a lookup per frame, not a stack's formatting.
   *
   * With `entry`, the public tl method the kernel called (still on the stack), V8 keeps one frame,
   * the one below it (its caller's), looked up the same way: when it is code that calls tl, that
   * is the location. Otherwise (no entry, a caller inside @kb/tl) the whole stack is read as
   * above. With `tag`, the call's site tag (site-tags.ts: its source was tagged when loaded), the
   * one frame is read on the tag's first use only. Where stacks are text only
   * (not V8), this is {@link capture} with the location parsed now.
   */
  static captureLocated(
    call: string,
    cache: SiteCache,
    entry: EntryFunction | null = null,
    tag = -1,
  ): CallSite {
    if (entry !== null) {
      const site = CallSite.captureCaller(call, cache, entry, tag);
      if (site !== null) return site;
    }
    const site = new CallSite(call, new Error());
    const stack = structuredFrames(site.stack as Error);
    if (stack === null) {
      site.parsed = userFrame(site.stack?.stack, false);
      return site;
    }
    // The stack's text, made only when a frame is new: line `index + 1` is frame `index`.
    let text: string[] | null = null;
    site.parsed = null;
    for (let index = 0; index < stack.length; index++) {
      const frame = stack[index] as V8Frame;
      let seen = lookup(cache, frame);
      if (seen === undefined) {
        text ??= stackLines(new Error());
        seen = remember(cache, frame, frameSeen(text[index + 1]));
      }
      if (seen !== SKIP) {
        site.parsed = seen;
        break;
      }
    }
    return site;
  }

  /**
   * The site of the tl call `call` made through the public method `entry` (still on the stack),
   * from the one frame below it, as {@link captureLocated} finds it; null when that frame is not
   * code that calls tl (a caller inside @kb/tl) or stacks cannot be read. With `tag` (>= 0, the
   * call's site tag), that frame is read on the tag's first use only.
   */
  static captureCaller(call: string, cache: SiteCache, entry: EntryFunction, tag = -1): CallSite | null {
    let seen: FrameSeen | undefined = tag >= 0 ? taggedSeen(tag) : undefined;
    if (seen === undefined) {
      seen = callerSeen(cache, entry);
      if (tag >= 0 && seen !== undefined && seen !== SKIP) rememberTagged(tag, seen);
    }
    if (seen === undefined || seen === SKIP) return null;
    const site = new CallSite(call, null);
    site.parsed = seen;
    return site;
  }

  /** `file:line` of the location (the key of a line in reports), or null when unknown. */
  get line(): string | null {
    const location = this.location;
    if (location === null) return null;
    // Made once per location: the locations of captureLocated are shared by a path's calls.
    let line = LINES.get(location);
    if (line === undefined) {
      line = `${location.file}:${location.line}`;
      LINES.set(location, line);
    }
    return line;
  }

  /** The kernel-side location, or null when unknown. */
  get location(): SourceLocation | null {
    if (this.parsed === undefined) this.parsed = userFrame(this.stack?.stack, this.belowCallEntry);
    return this.parsed;
  }

  /**
   * Records the arguments that tell this call from others of its kind (a direction, a handle),
   * as they read in source (`"west"`), for {@link describe}. Returns this site.
   */
  withArguments(text: string): this {
    this.shownArguments = text;
    return this;
  }

  /**
   * `tl.load at my-kernel.ts:12:5`, `tl.recv("west") at k.ts:8:11` when the call's key arguments
   * were recorded (or are given: `shownArguments`), or without ` at ...` when the location is
   * unknown.
   */
  describe(shownArguments: string | null = this.shownArguments): string {
    const location = this.location;
    const call = shownArguments === null ? `tl.${this.call}` : `tl.${this.call}(${shownArguments})`;
    return location === null ? call : `${call} at ${formatLocation(location)}`;
  }
}

/** A source position: a file path (relative to the working directory when inside it), 1-based line and column. */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly col: number;
}

/**
 * What {@link CallSite.captureLocated} found each stack frame to be, by its script and character
 * offset: a frame to skip ({@link SKIP}: of @kb/tl, of node, or one whose text names no file) or
 * the location of code that calls tl, read once from the frame's line in a stack's text (so as
 * source maps show it). One per run: a kernel edited between runs may keep its raw positions and
 * map to other lines.
 */
export type SiteCache = Map<string, Map<number, FrameSeen>>;

/** A frame of {@link SiteCache}: one to skip, or the location of code that calls tl. */
type FrameSeen = SourceLocation | typeof SKIP;

/** The {@link SiteCache} mark of a frame that is not the kernel's: of @kb/tl, of node, or without a file. */
const SKIP = 0;

/** The `file:line` of each location {@link CallSite.line} was asked for. */
const LINES = new WeakMap<SourceLocation, string>();

/** `file:line:col`. */
export function formatLocation(location: SourceLocation): string {
  return `${location.file}:${location.line}:${location.col}`;
}

/** Frames of this package: its classes' methods and the capture itself. */
const INTERNAL = /^(?:async )?(?:new )?(?:TLContext|TensorHandle|CallSite)\b/;
/** Frames a site captured inside a call keeps (an error's path, so their cost does not matter). */
const IN_CALL_FRAMES = 64;
/** The frame of `TLContext._located`, which every public tl call runs through. */
const CALL_ENTRY = /^TLContext\._located\b/;
/** `    at fn (file:line:col)` or `    at file:line:col` (V8's format). */
const FRAME = /^\s*at (?:(.+?) \()?(.+?):(\d+):(\d+)\)?$/;

/** This module's own file (in a bundle, the bundle: every frame of @kb/tl). */
const OWN_FILE = frames(new Error().stack)[0]?.file ?? null;

/** A function whose caller {@link CallSite.captureLocated} can find by walking no frame above it. */
// biome-ignore lint/complexity/noBannedTypes: V8's Error.captureStackTrace takes any function.
export type EntryFunction = Function;

/** `Error.captureStackTrace` of V8 (absent elsewhere). */
const captureStackTrace = (Error as { captureStackTrace?: (target: object, entry: EntryFunction) => void })
  .captureStackTrace;

/**
 * What the frame below `entry` (the code that called it) is, by `cache` (read from its line of a
 * stack's text the first time: {@link SKIP} when it is of @kb/tl too); undefined when it cannot be
 * read (no V8 stack, no such frame, or stacks turned off with `Error.stackTraceLimit = 0`).
 */
function callerSeen(cache: SiteCache, entry: EntryFunction): FrameSeen | undefined {
  const limit = Error.stackTraceLimit;
  if (captureStackTrace === undefined || !(limit > 0)) return undefined;
  const holder: { stack?: unknown } = {};
  Error.stackTraceLimit = 1;
  captureStackTrace(holder, entry);
  Error.stackTraceLimit = limit;
  const frame = structuredFrames(holder)?.[0];
  if (frame === undefined) return undefined;
  const seen = lookup(cache, frame);
  if (seen !== undefined) return seen;
  const text = new Error();
  Error.stackTraceLimit = 1;
  captureStackTrace(text, entry);
  Error.stackTraceLimit = limit;
  return remember(cache, frame, frameSeen(stackLines(text)[1]));
}

/** What `cache` holds for `frame` (by its script and character offset), or undefined. */
function lookup(cache: SiteCache, frame: V8Frame): FrameSeen | undefined {
  const file = frame.getFileName();
  return file == null ? undefined : cache.get(file)?.get(frame.getPosition());
}

/**
 * Keeps `seen` in `cache` for `frame` and returns it; a script without a name (an eval's) has no
 * key, so its frames are read from a stack's text each time.
 */
function remember(cache: SiteCache, frame: V8Frame, seen: FrameSeen): FrameSeen {
  const file = frame.getFileName();
  if (file == null) return seen;
  let positions = cache.get(file);
  if (positions === undefined) {
    positions = new Map();
    cache.set(file, positions);
  }
  positions.set(frame.getPosition(), seen);
  return seen;
}

/** A V8 stack frame, as `Error.prepareStackTrace` receives it (the parts used here). */
interface V8Frame {
  getFileName(): string | null | undefined;
  /** The character offset in its script of the frame's current call. */
  getPosition(): number;
}

type PrepareStackTrace = (error: Error, frames: V8Frame[]) => unknown;

/**
 * `error`'s frames as V8 keeps them (no text formatted, no source map applied), or null where the
 * engine gives text only. Reads `stack`, so call it on an error whose stack nobody needs as text.
 */
function structuredFrames(error: { readonly stack?: unknown }): V8Frame[] | null {
  const holder = Error as unknown as { prepareStackTrace?: PrepareStackTrace | undefined };
  const previous = holder.prepareStackTrace;
  holder.prepareStackTrace = (_error, frames) => frames;
  let stack: unknown;
  try {
    stack = error.stack;
  } finally {
    holder.prepareStackTrace = previous;
  }
  if (!Array.isArray(stack) || (stack.length > 0 && typeof stack[0]?.getPosition !== "function")) return null;
  return stack as V8Frame[];
}

/** The lines of `error`'s stack as text (the first is its message). */
function stackLines(error: Error): string[] {
  const stack: unknown = error.stack;
  return typeof stack === "string" ? stack.split("\n") : [];
}

/** What a frame is ({@link FrameSeen}), read from its line of a stack's text as {@link userFrame} reads it. */
function frameSeen(line: string | undefined): FrameSeen {
  const match = line === undefined ? null : FRAME.exec(line);
  if (match === null) return SKIP;
  const name = match[1] ?? "";
  const file = match[2] as string;
  if (INTERNAL.test(name) || file === OWN_FILE || file.startsWith("node:")) return SKIP;
  const row = Number(match[3]);
  return { file: shortPath(file), line: row, col: sourceColumn(file, row, Number(match[4])) };
}

function frames(stack: string | undefined): { name: string; file: string; line: string; col: string }[] {
  const found: { name: string; file: string; line: string; col: string }[] = [];
  for (const line of stack?.split("\n") ?? []) {
    const match = FRAME.exec(line);
    if (match !== null)
      found.push({
        name: match[1] ?? "",
        file: match[2] as string,
        line: match[3] as string,
        col: match[4] as string,
      });
  }
  return found;
}

function userFrame(stack: string | undefined, belowCallEntry: boolean): SourceLocation | null {
  const all = frames(stack);
  const entry = belowCallEntry ? all.findIndex((frame) => CALL_ENTRY.test(frame.name)) : -1;
  for (const { name, file, line, col } of all.slice(entry + 1)) {
    if (INTERNAL.test(name) || file === OWN_FILE || file.startsWith("node:")) continue;
    return { file: shortPath(file), line: Number(line), col: sourceColumn(file, Number(line), Number(col)) };
  }
  return null;
}

/** A file URL or path, relative to the working directory when it lies inside it. */
function shortPath(file: string): string {
  let path = file.startsWith("file://") ? decodeURIComponent(file.slice("file://".length)) : file;
  const cwd = (globalThis as { process?: { cwd?: () => string } }).process?.cwd?.();
  if (cwd !== undefined && path.startsWith(`${cwd}/`)) path = path.slice(cwd.length + 1);
  return path;
}
