import { closeSync, mkdtempSync, openSync, readSync, rmdirSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KbError } from "@kb/errors";
/** Handles whose file is still in the file system: removed when the process exits. */
const lingering = new Set();
let exitHook = false;
/** Closes (and removes) the file of a SpillFile the program dropped without closing it. */
const dropped = new FinalizationRegistry((handle) => release(handle));
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
export class SpillFile {
    constructor(options = {}) {
        this.length = 0;
        this.what = options.what ?? "spilled data";
        const base = options.directory ?? tmpdir();
        let directory;
        try {
            directory = mkdtempSync(join(base, "kb-spill-"));
        }
        catch (error) {
            throw new KbError("OPLOG_MISUSE", `cannot create a temporary file for ${this.what} in ${base}: ${error.message}. Free disk space there or point TMPDIR at a writable directory.`, { context: { file: base }, cause: error });
        }
        const path = join(directory, "data");
        this.shownPath = path;
        let fd;
        try {
            fd = openSync(path, "w+");
        }
        catch (error) {
            rmSync(directory, { recursive: true, force: true });
            throw new KbError("OPLOG_MISUSE", `cannot create a temporary file for ${this.what} at ${path}: ${error.message}. Free disk space there or point TMPDIR at a writable directory.`, { context: { file: path }, cause: error });
        }
        this.handle = { fd, path, directory };
        unlink(this.handle);
        if (this.handle.path !== null)
            watchExit(this.handle);
        dropped.register(this, this.handle, this);
    }
    /** Where the file was created (it may already be gone from the directory: see the class notes). */
    get path() {
        return this.shownPath;
    }
    /** Bytes appended so far. */
    get size() {
        return this.length;
    }
    /** True after {@link close}. */
    get closed() {
        return this.handle.fd === null;
    }
    /** Appends a copy of `bytes` (written before it returns) and returns the offset they start at. */
    append(bytes) {
        const fd = this.open("append to");
        const offset = this.length;
        let done = 0;
        try {
            while (done < bytes.length)
                done += writeSync(fd, bytes, done, bytes.length - done, offset + done);
        }
        catch (error) {
            throw this.failed("write", error);
        }
        this.length += bytes.length;
        return offset;
    }
    /** A new array with the `length` bytes at `offset` (they must have been appended). */
    read(offset, length) {
        return this.readInto(offset, new Uint8Array(length));
    }
    /** Fills `target` with the bytes at [offset, offset + target.length) and returns it. */
    readInto(offset, target) {
        const fd = this.open("read");
        if (!Number.isSafeInteger(offset) || offset < 0 || offset + target.length > this.length) {
            throw new KbError("OPLOG_MISUSE", `read of ${target.length} bytes at offset ${String(offset)} of the temporary file for ${this.what}, which holds ${this.length} bytes; read only what append() returned.`);
        }
        let done = 0;
        try {
            while (done < target.length) {
                const got = readSync(fd, target, done, target.length - done, offset + done);
                if (got === 0)
                    throw new Error("unexpected end of file");
                done += got;
            }
        }
        catch (error) {
            throw this.failed("read", error);
        }
        return target;
    }
    /** Closes the file and removes it if it is still there. A second call does nothing. */
    close() {
        dropped.unregister(this);
        release(this.handle);
    }
    open(doing) {
        const fd = this.handle.fd;
        if (fd === null) {
            throw new KbError("OPLOG_MISUSE", `cannot ${doing} the temporary file for ${this.what}: it was closed (and removed); nothing can be read or appended after close().`);
        }
        return fd;
    }
    failed(doing, error) {
        return new KbError("OPLOG_MISUSE", `cannot ${doing} the temporary file for ${this.what} (${this.shownPath}): ${error.message}. Free disk space in ${tmpdir()} or point TMPDIR elsewhere.`, { context: { file: this.shownPath }, cause: error });
    }
}
/** Removes the file and its directory from the file system, if the platform lets an open file go. */
function unlink(handle) {
    if (handle.path === null)
        return;
    try {
        rmSync(handle.path);
        handle.path = null;
        if (handle.directory !== null)
            rmdirSync(handle.directory);
        handle.directory = null;
    }
    catch {
        // Windows keeps an open file's name: close() or the exit hook removes it.
    }
}
function release(handle) {
    if (handle.fd !== null) {
        const fd = handle.fd;
        handle.fd = null;
        try {
            closeSync(fd);
        }
        catch {
            // already closed: nothing to release
        }
    }
    if (handle.path !== null)
        rmSync(handle.path, { force: true });
    if (handle.directory !== null)
        rmSync(handle.directory, { recursive: true, force: true });
    handle.path = null;
    handle.directory = null;
    lingering.delete(handle);
}
function watchExit(handle) {
    lingering.add(handle);
    if (exitHook)
        return;
    exitHook = true;
    process.once("exit", () => {
        for (const each of [...lingering])
            release(each);
    });
}
//# sourceMappingURL=spill-file.js.map