import type { MemoryStore } from "@kb/data-executor";

/**
 * Host data written to the device: phase 2 starts from these (ADR-0020 D7, host injection), in
 * order, each before the ops that started at or after its time.
 */
export interface HostWrite {
  /** First device address written. */
  readonly address: number;
  /**
   * The bytes written. Empty for a write of zeros (see {@link zeroBytes}). When host writes were
   * spilled to a temporary file (see `SimulatorOptions.hostWriteMemoryBytes`) each read of this
   * property reads them back from it: keep the array rather than reading it twice.
   */
  readonly bytes: Uint8Array;
  /** Simulated time of the write (phase 2 applies it before the ops that started later). */
  readonly atNs: number;
  /**
   * Set for a write of this many zeros from `address`, recorded without the zeros: a freed
   * tensor's memory (`sim.free`) and a new tensor over memory used before (`sim.empty`). Phase 2
   * forgets the bytes there (`MemoryStore.discard`), so they read as zeros and hold no memory.
   */
  readonly zeroBytes?: number;
}

/**
 * Where host writes past `SimulatorOptions.hostWriteMemoryBytes` go: an append-only byte file
 * (`SpillFile` of `@kb/oplog/node` is one; `loadSimulator` of `@kb/runtime/node` opens it).
 */
export interface HostWriteFile {
  /** Appends a copy of `bytes`; returns the offset they start at. */
  append(bytes: Uint8Array): number;
  /** Reads `length` bytes from `offset` into a new array. */
  read(offset: number, length: number): Uint8Array;
  /** Reads `target.length` bytes from `offset` into `target`; returns `target`. */
  readInto(offset: number, target: Uint8Array): Uint8Array;
}

const NO_BYTES = new Uint8Array(0);
/** Bytes a spilled write is copied into a store with at a time. */
const COPY_CHUNK = 4 * 2 ** 20;
let copyBuffer: Uint8Array | null = null;

/** A host write whose bytes are in the temporary file. */
class SpilledHostWrite implements HostWrite {
  constructor(
    readonly address: number,
    readonly atNs: number,
    private readonly file: HostWriteFile,
    private readonly offset: number,
    private readonly length: number,
  ) {}

  get bytes(): Uint8Array {
    return this.file.read(this.offset, this.length);
  }

  /** Writes the bytes into `store` a chunk at a time, through one reused buffer. */
  copyTo(store: MemoryStore): void {
    copyBuffer ??= new Uint8Array(COPY_CHUNK);
    for (let done = 0; done < this.length; done += COPY_CHUNK) {
      const chunk = copyBuffer.subarray(0, Math.min(COPY_CHUNK, this.length - done));
      store.write(this.address + done, this.file.readInto(this.offset + done, chunk));
    }
  }
}

/**
 * Applies a host write to phase 2's store: its bytes (a spilled write is read back a chunk at a
 * time, never whole), or, for a write of zeros, `discard` (the store forgets the range).
 */
export function applyHostWrite(store: MemoryStore, write: HostWrite): void {
  if (write.zeroBytes !== undefined) store.discard(write.address, write.zeroBytes);
  else if (write instanceof SpilledHostWrite) write.copyTo(store);
  else store.write(write.address, write.bytes);
}

/**
 * The simulator's host writes, in order ({@link entries} is `Simulator.hostWrites`). Their bytes
 * are kept in memory up to `memoryBytes`; past that, when an `openFile` is given (on Node,
 * `@kb/runtime/node` gives a temporary `SpillFile`: never left behind), they all go to the file it
 * opens, those held so far and every later one, so a sweep that copies gigabytes of inputs in
 * costs phase 1 disk rather than memory. Without one they all stay in memory.
 */
export class HostWriteLog {
  /** The writes in order. */
  readonly entries: HostWrite[] = [];
  private heldBytes = 0;
  private file: HostWriteFile | null = null;

  constructor(
    private readonly memoryBytes: number,
    private readonly openFile: (() => HostWriteFile) | null = null,
  ) {}

  /**
   * Records a write of a copy of `bytes` (taken now: the caller may change its array after this
   * returns). The first write past `memoryBytes` opens the file (when there is an `openFile`).
   */
  write(address: number, bytes: Uint8Array, atNs: number): void {
    if (this.file !== null) {
      this.entries.push(
        new SpilledHostWrite(address, atNs, this.file, this.file.append(bytes), bytes.length),
      );
      return;
    }
    this.entries.push({ address, bytes: bytes.slice(), atNs });
    this.heldBytes += bytes.length;
    if (this.heldBytes <= this.memoryBytes || this.openFile === null) return;
    this.file = this.openFile();
    this.spillHeld(this.file);
  }

  /** Records a write of `length` zeros at `address` (no bytes are kept). */
  zero(address: number, length: number, atNs: number): void {
    this.entries.push({ address, bytes: NO_BYTES, atNs, zeroBytes: length });
  }

  /** Moves the writes held in memory to the file, each keeping its place in the order. */
  private spillHeld(file: HostWriteFile): void {
    const entries = this.entries;
    for (let index = 0; index < entries.length; index++) {
      const entry = entries[index] as HostWrite;
      if (entry instanceof SpilledHostWrite || entry.zeroBytes !== undefined) continue;
      const { address, atNs, bytes } = entry;
      entries[index] = new SpilledHostWrite(address, atNs, file, file.append(bytes), bytes.length);
    }
    this.heldBytes = 0;
  }
}
