/** Options of {@link SpillFile}. */
export interface SpillFileOptions {
    /** The directory the file is created in. Default `os.tmpdir()` (`TMPDIR` on Linux and macOS). */
    readonly directory?: string;
    /** Says what the file holds in error messages, e.g. `"the op log"`. Default `"spilled data"`. */
    readonly what?: string;
}
/**
 * An append-only temporary file of bytes, for data a run must keep but not in memory (the op log
 * of a long run, the host's writes that phase 2 replays). `append` returns the offset the bytes
 * went to; `read(offset, length)` gives them back.
 *
 * **Nothing is left behind**: the file is created in a private directory under `os.tmpdir()`
 * and removed from it right away where the platform allows (Linux, macOS: the open descriptor
 * keeps the data until {@link close}), else on {@link close}, when the object is garbage
 * collected, or when the process exits; a run that fails or is interrupted leaves no file.
 * Node only (`@kb/oplog/node`).
 *
 * Throws `OPLOG_MISUSE` when the file cannot be created, written or read (naming it and what it
 * holds), and for any use after {@link close}.
 */
export declare class SpillFile {
    /** What the file holds, for messages. */
    readonly what: string;
    private readonly handle;
    private readonly shownPath;
    private length;
    constructor(options?: SpillFileOptions);
    /** Where the file was created (it may already be gone from the directory: see the class notes). */
    get path(): string;
    /** Bytes appended so far. */
    get size(): number;
    /** True after {@link close}. */
    get closed(): boolean;
    /** Appends a copy of `bytes` (written before it returns) and returns the offset they start at. */
    append(bytes: Uint8Array): number;
    /** A new array with the `length` bytes at `offset` (they must have been appended). */
    read(offset: number, length: number): Uint8Array;
    /** Fills `target` with the bytes at [offset, offset + target.length) and returns it. */
    readInto(offset: number, target: Uint8Array): Uint8Array;
    /** Closes the file and removes it if it is still there. A second call does nothing. */
    close(): void;
    private open;
    private failed;
}
