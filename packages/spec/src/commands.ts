import type { AtomicOp } from "./atomic-ops.js";
import type { Dtype } from "./dtype.js";
import type { MathScalar } from "./exact-math.js";

// PE commands: what a PE_CPU submits to its PE_SCHEDULER (ADR-0014 D3). Addresses are device
// addresses (`encodeAddress`); TCM addresses are in the issuing PE's own TCM window (see
// `tcmAddress`). Matrices are row-major and contiguous unless a stride is given.

/** Fields every command may carry. */
interface CommandBase {
  /**
   * When true the PE_CPU goes on to the next command at once and the command completes in the
   * background (a later `{ kind: "wait" }` waits for it); when false (the default) the PE_CPU
   * waits for it to complete.
   */
  readonly async?: boolean;
}

/**
 * A DMA copy between the PE's TCM and HBM or shared SRAM (a simple command: one PE_DMA stage).
 * Exactly one side is in the PE's TCM; the direction follows (HBM/SRAM -> TCM is a read).
 */
export interface DmaCommand extends CommandBase {
  readonly kind: "dma";
  readonly src: number;
  readonly dst: number;
  /** Bytes per row (the whole size when `rows` is 1). */
  readonly bytes: number;
  /** Rows of a 2-D copy (default 1). */
  readonly rows?: number;
  /** Bytes between row starts at the source / destination (default `bytes`: contiguous). */
  readonly srcStride?: number;
  readonly dstStride?: number;
  /** A masked copy (`tl.load` / `tl.store` with a mask): only the mask's runs move. */
  readonly mask?: DmaMask;
  /** A gather or scatter (`tl.load` / `tl.store` through offsets): only the runs move. */
  readonly indexed?: DmaIndexed;
  /**
   * An atomic (`tl.atomicAdd`, ...): a TCM -> HBM/SRAM command whose `indexed` runs are
   * read-modify-writes at the memory (see {@link DmaAtomic}).
   */
  readonly atomic?: DmaAtomic;
}

/**
 * An atomic's read-modify-writes (docs/latency-model.md, "Atomics"): each element of the
 * `indexed` runs reads the device value (old), writes `op`(old, the `src` tile's element) (`cas`:
 * the element where old equals the `cmp` tile's), and returns old into the `old` TCM tile at the
 * element's tile offset. Sequentially consistent in simulated time: an atomic waits for every
 * earlier atomic on one of its addresses to write.
 */
export interface DmaAtomic {
  readonly op: AtomicOp;
  readonly dtype: Dtype;
  /** TCM address of the tile of old values (as many bytes as `bytes`). */
  readonly old: number;
  /** TCM address of `cas`'s compared tile. */
  readonly cmp?: number;
}

/**
 * The runs of an indexed copy (a gather into TCM, or a scatter out of it): `runs` are
 * `[srcOffset, dstOffset, bytes, ...]` triples from `src` and `dst`, copied in that order (a later
 * run over the same bytes wins). The TCM side's runs stay within the `bytes` tile (`rows` is 1);
 * the device side's may go anywhere (negative offsets too). The PE_DMA moves each run as one
 * descriptor (see docs/latency-model.md, "Gathers and scatters").
 */
export interface DmaIndexed {
  readonly runs: readonly number[];
  /** A gather's value of elements no run writes (`other`), as one element's bytes; as `DmaMask.fill`. */
  readonly fill?: readonly number[];
}

/**
 * The masked-on parts of a DMA block (Triton's `mask`): `runs` are `[offset, bytes, offset, bytes,
 * ...]` within the packed tile (row after row, `rows * bytes`), in increasing order, not
 * overlapping, none crossing a row's end when `rows` > 1. Only the runs' bytes move; the PE_DMA
 * moves them as the strided pieces {@link maskPieces} groups them into, one descriptor each.
 */
export interface DmaMask {
  readonly runs: readonly number[];
  /**
   * A load's value of masked-off elements (`other`), as one element's bytes (little-endian): the
   * masked-off bytes of the TCM tile are this pattern repeated. Absent for a store (nothing is
   * written where the mask is off).
   */
  readonly fill?: readonly number[];
}

/** A GEMM on TCM operands (a simple command: fetch, one PE_GEMM stage, store). out = a (m x k) @ b (k x n). */
export interface GemmCommand extends CommandBase {
  readonly kind: "gemm";
  readonly a: number;
  readonly b: number;
  readonly out: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype: Dtype;
  /**
   * B's dtype when it differs from A's `dtype` (a mixed-format `tl.dotScaled`, e.g. f8e4m3 x
   * f4e2m1); absent: B is `dtype` too.
   */
  readonly dtypeB?: Dtype;
  /** Accumulation dtype (default f32 for floats, i32 for i8). */
  readonly dtypeAcc?: Dtype;
  /** Output dtype (default `dtype`). */
  readonly dtypeOut?: Dtype;
  /** Add into `out` instead of overwriting it. */
  readonly accumulate?: boolean;
  readonly transposeA?: boolean;
  readonly transposeB?: boolean;
  /**
   * A scaled GEMM (`tl.dotScaled`, microscaling): TCM address of A's e8m0 scales, one byte per
   * {@link MX_SCALE_BLOCK} elements along k (`[m, k / 32]`, row-major); element (i, kk) of A counts
   * `2^(byte - 127)` times its value (byte 255: NaN). Absent: scale 1.
   */
  readonly aScale?: number;
  /** B's e8m0 scales (`[n, k / 32]`, row-major), as {@link GemmCommand.aScale}. */
  readonly bScale?: number;
  /**
   * The scales' dtype when they are not e8m0 bytes: `"f8e4m3"` (nvfp4) scales are f8e4m3 values,
   * one per {@link NV_SCALE_BLOCK} elements along k (`[m, k / 16]` and `[n, k / 16]`); element
   * (i, kk) counts the scale's value times its own. Absent: e8m0 per {@link MX_SCALE_BLOCK}.
   */
  readonly scaleDtype?: "f8e4m3";
}

/** Elements along K that share one e8m0 scale in a scaled GEMM (the OCP MX block size). */
export const MX_SCALE_BLOCK = 32;

/** Elements along K that share one f8e4m3 scale in an nvfp4 scaled GEMM. */
export const NV_SCALE_BLOCK = 16;

/** Elements along K per scale of a scaled GEMM whose scales are `scaleDtype` (absent: e8m0). */
export function scaleBlockOf(scaleDtype: "f8e4m3" | undefined): number {
  return scaleDtype === "f8e4m3" ? NV_SCALE_BLOCK : MX_SCALE_BLOCK;
}

/** An elementwise or reduction op on TCM operands (a simple command: fetch, one PE_MATH stage, store). */
export interface MathCommand extends CommandBase {
  readonly kind: "math";
  /** An op of `MATH_OPS`. */
  readonly op: string;
  /** TCM addresses of the operands (1 for unary ops and reductions, 2 for binary, 3 for fma/where/clamp). */
  readonly inputs: readonly number[];
  /**
   * Shape of the operands; for an elementwise op, the output shape their shapes broadcast to
   * (PE_MATH counts these elements).
   */
  readonly shape: readonly number[];
  /** Shape of each operand of an elementwise op, when one differs from `shape` (broadcasting). */
  readonly inputShapes?: readonly (readonly number[])[];
  readonly out: number;
  readonly dtype: Dtype;
  /** Reduction axis (sum, max, min, softmax); default the last. */
  readonly axis?: number;
  /** Scalar operands (`add` with a scalar, `clamp` bounds, `fill` value); a BigInt for an exact 64-bit integer past ±2^53. */
  readonly scalars?: readonly MathScalar[];
  /** Dtype of the inputs when it differs from `dtype` (`cast`). */
  readonly inputDtype?: Dtype;
  /** Dtype of each input, when they differ (`where` with an `i1` cond); overrides `inputDtype`. */
  readonly inputDtypes?: readonly Dtype[];
  /** The operand `scalars[0]` stands for, when not the last (`tl.sub(0, x)`: 0). */
  readonly scalarIndex?: number;
}

/** An epilogue op of a composite GEMM, applied in the accumulation dtype. */
export interface EpilogueOp {
  /** An elementwise op of `MATH_OPS` (unary, or binary with `scalar`). */
  readonly op: string;
  /** Apply after every K tile (`k_tile`) or once per output tile (`output_tile`, the default). */
  readonly scope?: "k_tile" | "output_tile";
  /** Scalar second operand of a binary op. */
  readonly scalar?: number;
}

/**
 * A tiled GEMM pipeline (ADR-0014 D3.2): C (m x n) = A (m x k) @ B (k x n), all in HBM (or SRAM),
 * row-major and contiguous. With `transposeA` the matrix stored at `a` is A's transpose (k x m),
 * with `transposeB` the one at `b` is B's (n x k): each tile's DMA reads the stored block and the
 * GEMM reads it transposed. The scheduler splits it into output tiles and K tiles; each K tile
 * streams DMA_READ -> FETCH -> GEMM -> [MATH] -> STORE and the last K tile of an output tile adds
 * the output epilogue and DMA_WRITE.
 */
export interface CompositeGemmCommand extends CommandBase {
  readonly kind: "composite_gemm";
  readonly a: number;
  readonly b: number;
  readonly c: number;
  readonly m: number;
  readonly n: number;
  readonly k: number;
  readonly dtype: Dtype;
  readonly dtypeAcc?: Dtype;
  readonly dtypeOut?: Dtype;
  /** Tile shape (default: the scheduler's `tile_m`, `tile_n`, `tile_k`, clipped to the matrix). */
  readonly tile?: { readonly m?: number; readonly n?: number; readonly k?: number };
  readonly epilogue?: readonly EpilogueOp[];
  /** The matrix at `a` is stored k x m (A transposed). */
  readonly transposeA?: boolean;
  /** The matrix at `b` is stored n x k (B transposed). */
  readonly transposeB?: boolean;
}

/**
 * A tiled elementwise or row-wise op: out = op(inputs) over a `[rows, cols]` tensor in HBM.
 * Reductions and softmax reduce along the last axis, so a tile holds whole rows.
 */
export interface CompositeMathCommand extends CommandBase {
  readonly kind: "composite_math";
  readonly op: string;
  readonly inputs: readonly number[];
  readonly out: number;
  readonly rows: number;
  readonly cols: number;
  readonly dtype: Dtype;
  readonly scalars?: readonly number[];
  /** Rows per tile (default: as many as fit the scheduler's tile buffer). */
  readonly tileRows?: number;
}

/** Waits `ns` of simulated time on the PE_CPU (control flow, `tl.cycles`). */
export interface DelayCommand {
  readonly kind: "delay";
  readonly ns: number;
}

/**
 * Waits for async commands: those at the given positions of the program (0-based, counting every
 * command the program issued), or every async command issued so far when `commands` is absent.
 */
export interface WaitCommand {
  readonly kind: "wait";
  readonly commands?: readonly number[];
}

/** Keeps the PE_CPU busy for `cycles` of its clock (`tl.cycles`, per-call dispatch overhead). */
export interface CyclesCommand {
  readonly kind: "cycles";
  readonly cycles: number;
}

/**
 * Sends `bytes` from the PE's TCM at `src` to the neighbour in `direction` over its inter-PE
 * communication queue (ADR-0046 D3.10): waits for a free slot (credit) and hands the bytes to the
 * fabric, which moves them into the receiver's slot while the program goes on; its position can
 * be waited for like an async command (`wait`), and the program's end waits for it.
 */
export interface IpcqSendCommand {
  readonly kind: "ipcq_send";
  readonly direction: string;
  readonly src: number;
  readonly bytes: number;
  readonly dtype: Dtype;
  /** Phase 1: the payload's bytes, snapshotted at issue (they land in the receiver's slot). */
  readonly data?: Uint8Array;
}

/**
 * Receives `bytes` from the queue of `direction` (any direction when null): into `dst` in
 * `copy_to_dst` mode, or in place in the slot (`return_slot`). `consume: false` is the
 * diagnostic-only `recvNoConsume` (no slot-read latency). `direction` is where the data comes
 * from: what the west neighbour sent "east" is received from "west".
 */
export interface IpcqRecvCommand {
  readonly kind: "ipcq_recv";
  readonly direction: string | null;
  readonly bytes: number;
  readonly dtype: Dtype;
  readonly mode: "copy_to_dst" | "return_slot";
  readonly dst: number | null;
  readonly consume: boolean;
  readonly async?: boolean;
  /** Called with the slot's TCM address when the payload was received (and whether real bytes came). */
  readonly onReceived?: (slot: number, hasData: boolean) => void;
}

/** Any PE command. */
export type PeCommand =
  | DmaCommand
  | GemmCommand
  | MathCommand
  | CompositeGemmCommand
  | CompositeMathCommand
  | DelayCommand
  | WaitCommand
  | CyclesCommand
  | IpcqSendCommand
  | IpcqRecvCommand;
