import type { Event } from "@kb/des";
import { KbError } from "@kb/errors";
import type { OpLogger } from "@kb/oplog";
import type { Component } from "./component.js";

/** What an op-log record of a message says (ADR-0020 D5), minus times and component. */
export interface OpSpec {
  readonly kind: "memory" | "gemm" | "math";
  readonly name: string;
  readonly params: Record<string, unknown>;
  readonly dependencyIds?: readonly number[];
}

/**
 * Anything that travels between components. A message declares itself a data op (ADR-0020 D4)
 * and knows where it goes next (ADR-0021 D2: the token carries its plan); the framework's worker
 * loop calls {@link forward} after the component serviced it.
 */
export abstract class Message {
  /** Whether the op-log hooks record this message (ADR-0020 D4). Default false. */
  dataOp = false;

  /** A short name for traces (`"gemm t3"`, `"req 2048B"`). */
  abstract get label(): string;

  /**
   * Sends the message on after `from` serviced it: to the next stage or hop, or completes it.
   * Returns an event the worker must wait on before taking its next message (a put into a full
   * inbox: backpressure), or null.
   */
  abstract forward(from: Component): Event<any> | null;

  /** The op records this message stands for (only called when {@link dataOp} is true). */
  ops(): readonly OpSpec[] {
    return [];
  }

  /** What travels with this message through several components (traces draw arrows), or null. */
  get flowKey(): string | null {
    return null;
  }

  /** @internal Op-log start hook: one record per op. */
  logStart(logger: OpLogger, componentId: string, now: number): number[] {
    const specs = this.ops();
    const ids: number[] = [];
    for (const spec of specs) {
      ids.push(
        logger.start(
          now,
          componentId,
          spec.kind,
          spec.name,
          spec.params as never,
          spec.dependencyIds === undefined ? [] : [...spec.dependencyIds],
        ),
      );
    }
    return ids;
  }

  /** @internal Op-log end hook. */
  logEnd(logger: OpLogger, ids: readonly number[], now: number): void {
    for (const id of ids) logger.end(id, now);
  }
}

/**
 * Puts `message` into `target` and returns the put to wait on when the inbox was full, else null.
 * @internal
 */
export function putInto(target: Component, message: Message): Event<any> | null {
  return target.enqueue(message);
}

/**
 * A request to a service component (PE_TCM, PE_MMU) that completes when the service finished:
 * the caller puts it and waits on {@link done}.
 */
export class ServiceRequest<T = unknown> extends Message {
  /** Succeeds (with `result`) when the service component finished the request. */
  readonly done: Event<T>;
  /** What the service sets before completing (a translation, ...). */
  result: T | undefined = undefined;

  constructor(
    done: Event<T>,
    /** What is asked: `"read"`, `"write"`, `"translate"`. */
    readonly action: string,
    /** Bytes involved. */
    readonly bytes: number,
    /** An address, when the service needs one. */
    readonly address = 0,
  ) {
    super();
    this.done = done;
  }

  get label(): string {
    return `${this.action} ${this.bytes}B`;
  }

  forward(): null {
    this.done.succeed(this.result as T);
    return null;
  }
}

/**
 * Tracks the tiles of one composite command (ADR-0021 D2): the last stage of each tile calls
 * {@link completeTile} exactly once; when all tiles are done, {@link done} succeeds. A second call
 * for a tile, or more calls than tiles, is a `MACHINE_INVARIANT` error.
 */
export class PipelineContext {
  completedTiles = 0;
  private readonly seen: Uint8Array;

  constructor(
    /** Command id (for errors and traces). */
    readonly id: string,
    /** Number of tiles. */
    readonly totalTiles: number,
    /** Succeeds when every tile completed. */
    readonly done: Event<unknown>,
  ) {
    this.seen = new Uint8Array(totalTiles);
  }

  /** Marks tile `tileId` complete; succeeds {@link done} with the last one. */
  completeTile(tileId: number): void {
    if (tileId < 0 || tileId >= this.totalTiles || this.seen[tileId] === 1) {
      throw new KbError(
        "MACHINE_INVARIANT",
        `pipeline ${this.id}: tile ${tileId} completed ${tileId < 0 || tileId >= this.totalTiles ? `but the command has only ${this.totalTiles} tiles` : "a second time"}; each tile's last stage completes it exactly once. This is a bug in a component impl or plan.`,
      );
    }
    this.seen[tileId] = 1;
    this.completedTiles++;
    if (this.completedTiles === this.totalTiles) this.done.succeed(this.id);
  }
}

/** The stages a tile passes through (ADR-0021 D2). */
export type StageType = "dma_read" | "fetch" | "gemm" | "math" | "store" | "dma_write";

/** One stage of a tile plan: which component runs it and with what. */
export interface Stage {
  readonly type: StageType;
  readonly component: Component;
  /** Stage parameters; their shape depends on `type` (see the built-in engines). */
  readonly params: StageParams;
  /** The op records this stage stands for (empty for fetch/store: registers are not memory). */
  readonly ops: readonly OpSpec[];
}

/** A contiguous or strided (2-D) block of memory: `rows` rows of `rowBytes`, `stride` bytes apart. */
export interface MemoryBlock {
  /** Device address of the first byte (see `encodeAddress`). */
  readonly address: number;
  /** Rows (1 for a contiguous range). */
  readonly rows: number;
  /** Bytes per row. */
  readonly rowBytes: number;
  /** Bytes from one row's start to the next (>= rowBytes; ignored when rows is 1). */
  readonly stride: number;
}

/** One DMA copy of a stage. */
export interface DmaCopy {
  readonly src: MemoryBlock;
  readonly dst: MemoryBlock;
}

/** The elements an atomic stage read-modify-writes: device addresses of `elementBytes` each. */
export interface AtomicStage {
  readonly addresses: readonly number[];
  readonly elementBytes: number;
}

/** Parameters of a stage, by type. */
export type StageParams =
  | {
      readonly type: "dma_read" | "dma_write";
      readonly copies: readonly DmaCopy[];
      /** An atomic's copies (a dma_write): read, ALU op, write per element, serialised per address. */
      readonly atomic?: AtomicStage;
    }
  | { readonly type: "fetch" | "store"; readonly bytes: number }
  | {
      readonly type: "gemm";
      readonly m: number;
      readonly n: number;
      readonly k: number;
      readonly dtype: string;
      /** A scaled GEMM's blocks of e8m0 scales along k (`ceil(k / 32)`): one more streamed step each. */
      readonly scaleBlocks?: number;
    }
  | {
      readonly type: "math";
      readonly op: string;
      readonly elements: number;
      readonly dtype: string;
      /** Length of the reduced axis for reductions (sum, max, min, softmax); 0 for elementwise. */
      readonly reduceLength: number;
    };

/** The stages of one tile, in order (immutable). */
export interface TilePlan {
  readonly tileId: number;
  readonly stages: readonly Stage[];
}

/**
 * A tile of work (ADR-0021 D9) travelling stage to stage by its own plan: after a stage, the
 * component puts it into the next stage's component; after the last, it completes its tile.
 * Owned by one component at a time.
 */
export class TileToken extends Message {
  stageIndex = 0;
  /** Scheduler bookkeeping: the tile-buffer set this tile holds (-1 for none). */
  bufferSlot = -1;
  /** Scheduler bookkeeping: the accumulator it holds (-1 for none). */
  accSlot = -1;
  /** Whether completing this tile frees its accumulator (the last K tile of an output tile). */
  releasesAcc = false;

  constructor(
    readonly plan: TilePlan,
    readonly pipeline: PipelineContext,
    /** Called after the tile's last stage, before completing it (the scheduler frees buffers). */
    readonly onComplete: ((token: TileToken) => void) | null = null,
  ) {
    super();
    this.dataOp = (plan.stages[0] as Stage).ops.length > 0;
  }

  /** The current stage. */
  get stage(): Stage {
    return this.plan.stages[this.stageIndex] as Stage;
  }

  get label(): string {
    return `${this.stage.type} ${this.pipeline.id}/t${this.plan.tileId}`;
  }

  // The work of the current stage, typed, for timing functions (`defineStageEngine`). Read-only
  // views of `stage.params`: they change nothing and allocate nothing.

  /** The tile's number within its command (0-based). */
  get tileId(): number {
    return this.plan.tileId;
  }

  /** The current stage's type: `"dma_read"`, `"fetch"`, `"gemm"`, `"math"`, `"store"` or `"dma_write"`. */
  get stageType(): StageType {
    return this.stage.type;
  }

  /**
   * The current stage's operation: `"gemm"`; for a MATH stage its op (`"exp"`, `"sum"`, or ops
   * joined by `+` for a fused epilogue, such as `"add+relu"`); else the stage type.
   */
  get op(): string {
    const params = this.stage.params;
    return params.type === "math" ? params.op : params.type;
  }

  /** A GEMM stage's `{ m, n, k, dtype }` (`C[m x n] += A[m x k] B[k x n]`, inputs of `dtype`), else null. */
  get gemm(): Extract<StageParams, { readonly type: "gemm" }> | null {
    const params = this.stage.params;
    return params.type === "gemm" ? params : null;
  }

  /**
   * A MATH stage's `{ op, elements, dtype, reduceLength }` (`reduceLength`: the reduced axis of a
   * reduction or softmax, 0 for an elementwise op), else null.
   */
  get math(): Extract<StageParams, { readonly type: "math" }> | null {
    const params = this.stage.params;
    return params.type === "math" ? params : null;
  }

  /** The input dtype of a GEMM or MATH stage (`"f16"`, ...); null for the memory stages. */
  get dtype(): string | null {
    const params = this.stage.params;
    return params.type === "gemm" || params.type === "math" ? params.dtype : null;
  }

  /** Elements computed: a MATH stage's `elements`, a GEMM's outputs `m x n`; 0 for the memory stages. */
  get elements(): number {
    const params = this.stage.params;
    if (params.type === "math") return params.elements;
    return params.type === "gemm" ? params.m * params.n : 0;
  }

  /**
   * Bytes the current stage moves: a fetch or store its `bytes` (TCM <-> registers), a DMA stage
   * the bytes of its copies (`rows x rowBytes` each); 0 for GEMM and MATH (registers only).
   */
  get bytes(): number {
    const params = this.stage.params;
    if (params.type === "fetch" || params.type === "store") return params.bytes;
    if (params.type !== "dma_read" && params.type !== "dma_write") return 0;
    let total = 0;
    for (const copy of params.copies) total += copy.src.rows * copy.src.rowBytes;
    return total;
  }

  /**
   * Arithmetic operations, as the built-in engines count them in `stats.flops`: `2 m n k` for a
   * GEMM, `elements x` the number of `+`-joined ops for a MATH stage; 0 for the memory stages.
   */
  get flops(): number {
    const params = this.stage.params;
    if (params.type === "gemm") return 2 * params.m * params.n * params.k;
    return params.type === "math" ? params.elements * params.op.split("+").length : 0;
  }

  override ops(): readonly OpSpec[] {
    return this.stage.ops;
  }

  override get flowKey(): string {
    return `${this.pipeline.id}/t${this.plan.tileId}`;
  }

  forward(): Event<any> | null {
    const next = this.stageIndex + 1;
    const stages = this.plan.stages;
    if (next < stages.length) {
      this.stageIndex = next;
      const stage = stages[next] as Stage;
      this.dataOp = stage.ops.length > 0;
      return putInto(stage.component, this);
    }
    if (this.onComplete !== null) this.onComplete(this);
    this.pipeline.completeTile(this.plan.tileId);
    return null;
  }
}
