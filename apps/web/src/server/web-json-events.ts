// A streaming reader of a Chrome trace's JSON, in bounded memory whatever its layout: the events of
// `[ev, ev, ...]` (Chrome's array form) or of the `"traceEvents": [...]` member of an object are
// handed over one by one as their JSON text, each parsed on its own; everything else (the
// "frame": a results file whole, or a trace object with its events array left empty) is kept for
// one JSON.parse at the end. So a trace on one line of gigabytes, a large array-form trace or a
// gzip that inflates to one long line never becomes one string: the largest string is one event
// (at most `maxEventBytes`) or the frame (at most `maxFrameBytes`).

const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const NEWLINE = 0x0a;
const COLON = 0x3a;

/** The object member whose array holds the events. */
const EVENTS_KEY = Buffer.from('"traceEvents"');

/** What {@link JsonEventSplitter} reports a structural problem with, besides the message. */
export interface SplitterProblem {
  /** 1-based line of the byte where the problem was seen. */
  readonly line: number;
  /** Number of the event concerned (0-based), when it is about one. */
  readonly event?: number;
}

/** Thrown by {@link JsonEventSplitter} for input it cannot split; the caller words it for the user. */
export class SplitterError extends Error {
  constructor(
    message: string,
    readonly where: SplitterProblem,
    readonly kind: "syntax" | "event-size" | "frame-size" | "not-object-or-array",
  ) {
    super(message);
  }
}

/** Limits of {@link JsonEventSplitter}, bytes. */
export interface SplitterLimits {
  /** Largest JSON text of one event. */
  readonly maxEventBytes: number;
  /** Largest text outside the events array (all of a results file). */
  readonly maxFrameBytes: number;
}

/**
 * Splits a JSON text pushed in chunks: each element of the events array (see the file comment)
 * goes to `onEvent` with its index and line, the rest is kept as the frame ({@link finish}).
 * Elements are not parsed here: `onEvent` parses them (JSON.parse names what is wrong with one).
 *
 * Throws a {@link SplitterError} from {@link push} or {@link finish} on text that cannot be a JSON
 * object or array, an element or a frame over its limit, or brackets that do not balance.
 */
export class JsonEventSplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private line = 1;
  /** Depth of the events array's elements (1: top-level array, 2: a member's); 0 outside it. */
  private eventsDepth = 0;
  /** Whether the events have been read (only the first events array is one). */
  private eventsDone = false;
  private started = false;
  private ended = false;
  /** In an object at depth 1, the bytes of the key last read (only as long as EVENTS_KEY). */
  private key: number[] = [];
  private keyTooLong = false;
  private inKey = false;
  private expectKey = false;
  private keyIsEvents = false;
  // The element being read: its pieces from earlier chunks, where it starts in this one.
  private element: Buffer[] = [];
  private elementBytes = 0;
  private elementStart = -1;
  private elementLine = 1;
  private elementHasContent = false;
  private eventIndex = 0;
  // The frame: pieces of text outside the events array.
  private frame: Buffer[] = [];
  private frameBytes = 0;
  private frameStart = 0;

  constructor(
    private readonly limits: SplitterLimits,
    private readonly onEvent: (text: string, index: number, line: number) => void,
  ) {}

  /** Whether an events array was found (the input is a trace). */
  get hasEvents(): boolean {
    return this.eventsDone || this.eventsDepth > 0;
  }

  /** Number of events handed over so far. */
  get events(): number {
    return this.eventIndex;
  }

  /** Reads the next chunk of the text. */
  push(chunk: Buffer): void {
    this.frameStart = this.eventsDepth > 0 ? -1 : 0;
    if (this.eventsDepth > 0 && this.elementStart < 0) this.elementStart = 0;
    const length = chunk.length;
    for (let i = 0; i < length; i++) {
      if (this.inString) {
        if (this.inKey) {
          this.keyByte(chunk[i] as number);
          continue;
        }
        // The bulk of a trace is strings: jump to their closing quote.
        const end = this.stringEnd(chunk, i);
        if (end < 0) break;
        this.inString = false;
        i = end;
        continue;
      }
      const byte = chunk[i] as number;
      if (byte === NEWLINE) this.line++;
      if (byte === 0x20 || byte === NEWLINE || byte === 0x0d || byte === 0x09) continue;
      if (this.ended) throw this.syntax("more text after the end of the JSON value");
      if (!this.started) this.start(byte);
      // Only a `:`, then the `[` of its value, may follow the key "traceEvents".
      if (this.keyIsEvents && byte !== COLON && byte !== OPEN_BRACKET) this.keyIsEvents = false;
      if (this.eventsDepth > 0 && this.depth === this.eventsDepth) {
        if (byte === COMMA || byte === CLOSE_BRACKET) {
          this.endElement(chunk, i, byte === CLOSE_BRACKET);
          if (byte === CLOSE_BRACKET) this.endEvents(i);
          continue;
        }
        if (byte === CLOSE_BRACE) throw this.syntax("a } closes the events array, ] expected");
        if (!this.elementHasContent) {
          // The element starts here: blanks before it are no part of it.
          this.elementHasContent = true;
          this.elementLine = this.line;
          this.elementStart = i;
        }
      }
      switch (byte) {
        case QUOTE:
          this.inString = true;
          if (this.eventsDepth === 0 && this.depth === 1 && this.expectKey) this.startKey();
          break;
        case OPEN_BRACE:
        case OPEN_BRACKET:
          this.depth++;
          if (byte === OPEN_BRACE && this.depth === 1) this.expectKey = true;
          else if (byte === OPEN_BRACKET) this.maybeStartEvents(chunk, i);
          break;
        case CLOSE_BRACE:
        case CLOSE_BRACKET:
          // Back at depth 0 the value has ended: a closing bracket more is "more text" above.
          this.depth--;
          if (this.depth === 0) this.ended = true;
          break;
        case COMMA:
          if (this.depth === 1 && this.eventsDepth === 0) this.expectKey = true;
          break;
      }
    }
    if (this.eventsDepth > 0) {
      if (this.elementHasContent && this.elementStart >= 0 && this.elementStart < length) {
        this.addToElement(chunk.subarray(this.elementStart));
      }
      this.elementStart = -1;
    } else if (this.frameStart >= 0) this.addToFrame(chunk.subarray(this.frameStart));
  }

  /**
   * The frame's text once the input has ended: all of it when it holds no events array, else with
   * the events array empty (`{"traceEvents":[],...}`, `[]`). Throws a {@link SplitterError} when the
   * input ended inside the events array.
   */
  finish(): string {
    if (this.eventsDepth > 0) {
      throw this.syntax(
        `the text ends inside the events array, after ${this.eventIndex} event(s): cut short (a run still writing it, or a disk that filled up)?`,
      );
    }
    return Buffer.concat(this.frame).toString("utf8");
  }

  private start(byte: number): void {
    this.started = true;
    if (byte !== OPEN_BRACE && byte !== OPEN_BRACKET) {
      throw new SplitterError("not a JSON object or array", { line: this.line }, "not-object-or-array");
    }
  }

  private startKey(): void {
    this.inKey = true;
    this.key = [QUOTE];
    this.keyTooLong = false;
  }

  private keyByte(byte: number): void {
    if (this.escaped) this.escaped = false;
    else if (byte === BACKSLASH) this.escaped = true;
    else if (byte === QUOTE) {
      this.inString = false;
      this.endKey();
      return;
    }
    if (this.key.length < EVENTS_KEY.length) this.key.push(byte);
    else this.keyTooLong = true;
  }

  /**
   * Where the string `chunk` is in at `from` ends (its closing quote), or -1 when it goes on past
   * the chunk; `escaped` says whether the chunk's first byte is escaped, and is left saying whether
   * the next chunk's is.
   */
  private stringEnd(chunk: Buffer, from: number): number {
    let start = from;
    if (this.escaped) {
      this.escaped = false;
      start++;
    }
    for (;;) {
      const quote = chunk.indexOf(QUOTE, start);
      const end = quote < 0 ? chunk.length : quote;
      // A quote after an odd run of backslashes is escaped; so is the next chunk's first byte.
      let before = end - 1;
      while (before >= start && chunk[before] === BACKSLASH) before--;
      const odd = (end - 1 - before) % 2 === 1;
      if (quote < 0) {
        this.escaped = odd;
        return -1;
      }
      if (!odd) return quote;
      start = quote + 1;
    }
  }

  private endKey(): void {
    this.inKey = false;
    this.expectKey = false;
    this.key.push(QUOTE);
    this.keyIsEvents = !this.keyTooLong && !this.eventsDone && EVENTS_KEY.equals(Buffer.from(this.key));
  }

  /** At a `[` just opened: the events array when it is the top level's or the traceEvents member's. */
  private maybeStartEvents(chunk: Buffer, at: number): void {
    const top = this.depth === 1;
    const member = this.depth === 2 && this.keyIsEvents;
    this.keyIsEvents = false;
    if (!top && !member) return;
    // The frame keeps the `[`; the elements start after it.
    this.addToFrame(chunk.subarray(this.frameStart, at + 1));
    this.frameStart = -1;
    this.eventsDepth = this.depth;
    this.elementStart = at + 1;
    this.elementHasContent = false;
  }

  private endElement(chunk: Buffer, at: number, last: boolean): void {
    let text: string;
    if (this.element.length === 0) {
      // Within this chunk: decoded where it is, not copied first.
      this.checkElementSize(at - this.elementStart);
      text = chunk.toString("utf8", this.elementStart, at);
    } else {
      this.addToElement(chunk.subarray(this.elementStart, at));
      text = Buffer.concat(this.element).toString("utf8");
    }
    this.elementStart = at + 1;
    const hadContent = this.elementHasContent;
    this.element = [];
    this.elementBytes = 0;
    this.elementHasContent = false;
    if (!hadContent) {
      // `[]` and `[ ]` are empty arrays; an empty element elsewhere is a stray comma.
      if (last && this.eventIndex === 0) return;
      throw this.syntax("an empty element in the events array (a comma too many?)", this.eventIndex);
    }
    this.onEvent(text, this.eventIndex++, this.elementLine);
  }

  /** At the events array's `]`: the frame resumes with it. */
  private endEvents(at: number): void {
    this.eventsDepth = 0;
    this.eventsDone = true;
    this.elementStart = -1;
    this.frameStart = at;
    this.depth--;
    if (this.depth === 0) this.ended = true;
  }

  private addToElement(piece: Buffer): void {
    if (piece.length === 0) return;
    this.elementBytes += piece.length;
    this.checkElementSize(this.elementBytes);
    this.element.push(piece);
  }

  private checkElementSize(bytes: number): void {
    if (bytes > this.limits.maxEventBytes) {
      throw new SplitterError(
        `event ${this.eventIndex} is longer than ${this.limits.maxEventBytes} bytes`,
        { line: this.elementLine, event: this.eventIndex },
        "event-size",
      );
    }
  }

  private addToFrame(piece: Buffer): void {
    if (piece.length === 0) return;
    this.frameBytes += piece.length;
    if (this.frameBytes > this.limits.maxFrameBytes) {
      throw new SplitterError(
        `more than ${this.limits.maxFrameBytes} bytes of JSON outside a trace's events`,
        { line: this.line },
        "frame-size",
      );
    }
    this.frame.push(piece);
  }

  private syntax(message: string, event?: number): SplitterError {
    return new SplitterError(
      message,
      event === undefined ? { line: this.line } : { line: this.line, event },
      "syntax",
    );
  }
}
