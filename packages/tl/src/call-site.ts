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
   * as V8 keeps them (no text) are the key of `cache`, which holds the location found the first
   * time that path of calls was seen (a full stack's text, parsed). A kernel's loop pays a lookup
   * per call, not a stack's formatting. Where stacks are text only (not V8), this is
   * {@link capture} with the location parsed now.
   */
  static captureLocated(call: string, cache: SiteCache): CallSite {
    const site = new CallSite(call, new Error());
    const key = frameKey(site.stack as Error);
    if (key === null) {
      site.parsed = userFrame(site.stack?.stack, false);
      return site;
    }
    let location = cache.get(key);
    if (location === undefined) {
      location = userFrame(new Error().stack, false);
      cache.set(key, location);
    }
    site.parsed = location;
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
 * The locations {@link CallSite.captureLocated} found, by the raw positions of the stack's frames
 * (one per path of calls that reached a tl call). One per run: a kernel edited between runs may
 * keep its raw positions and map to other lines.
 */
export type SiteCache = Map<string, SourceLocation | null>;

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

/** A V8 stack frame, as `Error.prepareStackTrace` receives it (the parts used here). */
interface V8Frame {
  getFileName(): string | null | undefined;
  getLineNumber(): number | null;
  getColumnNumber(): number | null;
}

type PrepareStackTrace = (error: Error, frames: V8Frame[]) => unknown;

/**
 * The raw positions of `error`'s frames as one string (V8: read as frame objects, no text
 * formatted, no source map applied), or null where the engine gives text only. Reads `stack`,
 * so call it on an error whose stack nobody needs as text.
 */
function frameKey(error: Error): string | null {
  const holder = Error as unknown as { prepareStackTrace?: PrepareStackTrace | undefined };
  const previous = holder.prepareStackTrace;
  holder.prepareStackTrace = (_error, frames) => frames;
  let stack: unknown;
  try {
    stack = error.stack;
  } finally {
    holder.prepareStackTrace = previous;
  }
  if (!Array.isArray(stack)) return null;
  let key = "";
  for (const frame of stack as V8Frame[]) {
    key += `${frame.getFileName() ?? "?"}:${frame.getLineNumber() ?? 0}:${frame.getColumnNumber() ?? 0};`;
  }
  return key;
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
    return { file: shortPath(file), line: Number(line), col: Number(col) };
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
