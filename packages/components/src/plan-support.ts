import { KbError } from "@kb/errors";
import { type DmaIndexed, type DmaMask, DTYPE_BYTES, type Dtype } from "@kb/spec";
import { decodeAddress, tcmLocation } from "@kb/topology";
import type { Component } from "./component.js";
import type { DmaCopy, MemoryBlock, OpSpec, Stage, StageParams, StageType, TilePlan } from "./message.js";

// What every plan of a PE command uses: the feed and engine types, argument checks, blocks, stages
// and memory ops. plan.ts dispatches a command to its feed; plan-math.ts and plan-composite.ts
// build the math and composite feeds.

/** The engines of one PE, by stage type. */
export interface PeEngines {
  readonly dma: Component;
  readonly fetchStore: Component;
  readonly gemm: Component;
  readonly math: Component;
  /** `sip{s}.cube{c}.pe{p}` */
  readonly pe: string;
  readonly sip: number;
  readonly cube: number;
  readonly peIndex: number;
  /** Address of the PE's TCM window start (offset 0). */
  readonly tcmBase: number;
}

/** Tile-buffer geometry a feed needs from the scheduler's reserved TCM. */
export interface BufferNeeds {
  /** Bytes of one input/output buffer set. */
  readonly setBytes: number;
  /** Bytes of one accumulator (0 when the feed accumulates nothing). */
  readonly accBytes: number;
}

/**
 * The tiles of one command, built one at a time by the scheduler's feeder with the buffer slots it
 * holds (so a million-tile command never exists as a million plans).
 */
export interface Feed {
  readonly id: string;
  readonly tileCount: number;
  readonly needs: BufferNeeds | null;
  /** Tiles per accumulation group (K tiles of one output tile); 1 when there is no accumulator. */
  readonly groupSize: number;
  /** The plan of tile `index`, using input set at `setAddress` and accumulator at `accAddress`. */
  build(index: number, setAddress: number, accAddress: number): TilePlan;
}

/** Scheduler settings a plan uses. */
export interface TileDefaults {
  readonly tileM: number;
  readonly tileN: number;
  readonly tileK: number;
  /** Bytes of one tile buffer set when sizing composite MATH tiles. */
  readonly mathTileBytes: number;
}

/**
 * Tile buffers start at multiples of this many bytes, so every buffer is aligned for any element
 * type whatever the sizes of the buffers before it (an f16 tile before an f32 one, sets of odd
 * sizes one after another).
 */
export const TILE_BUFFER_ALIGN = 16;

export function alignBuffer(bytes: number): number {
  return Math.ceil(bytes / TILE_BUFFER_ALIGN) * TILE_BUFFER_ALIGN;
}

export function invalid(where: string, what: string): KbError {
  return new KbError("MACHINE_INVALID_COMMAND", `${where}: ${what}`);
}

export function positiveInt(where: string, name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw invalid(
      where,
      `${name} must be a positive integer, got ${JSON.stringify(value) ?? String(value)}.`,
    );
  }
  return value;
}

export function dtypeBytes(where: string, name: string, dtype: unknown): number {
  const bytes = DTYPE_BYTES[dtype as Dtype];
  if (bytes === undefined) {
    throw invalid(
      where,
      `${name} must be one of ${Object.keys(DTYPE_BYTES).join(", ")}, got ${JSON.stringify(dtype)}.`,
    );
  }
  return bytes;
}

export function accDtype(dtype: Dtype): Dtype {
  return dtype === "i8" || dtype === "i32" ? "i32" : "f32";
}

export function spaceOf(address: number): "hbm" | "tcm" | "sram" {
  return decodeAddress(address).space;
}

export function block(address: number, rows: number, rowBytes: number, stride: number): MemoryBlock {
  return { address, rows, rowBytes, stride: rows === 1 ? rowBytes : stride };
}

export function memoryOp(
  name: "dma_read" | "dma_write",
  copy: DmaCopy,
  mask?: DmaMask,
  indexed?: DmaIndexed,
): OpSpec {
  const { src, dst } = copy;
  const params: Record<string, unknown> = {
    src_addr: src.address,
    dst_addr: dst.address,
    nbytes: src.rows * src.rowBytes,
    src_space: spaceOf(src.address),
    dst_space: spaceOf(dst.address),
  };
  if (src.rows > 1) {
    params.rows = src.rows;
    params.src_stride = src.stride;
    params.dst_stride = dst.stride;
  }
  if (mask !== undefined) {
    params.mask_runs = mask.runs;
    if (mask.fill !== undefined) params.mask_fill = mask.fill;
  }
  if (indexed !== undefined) {
    params.index_runs = indexed.runs;
    if (indexed.fill !== undefined) params.mask_fill = indexed.fill;
  }
  return { kind: "memory", name, params };
}

export function stage(
  type: StageType,
  component: Component,
  params: StageParams,
  ops: readonly OpSpec[] = [],
): Stage {
  return { type, component, params, ops };
}

export function dmaStage(
  type: "dma_read" | "dma_write",
  engines: PeEngines,
  copies: readonly DmaCopy[],
  ops: readonly OpSpec[] = copies.map((copy) => memoryOp(type, copy)),
): Stage {
  return stage(type, engines.dma, { type, copies }, ops);
}

/**
 * A simple command's stages (ADR-0021 D5): PE_FETCH_STORE fetches the operands from TCM into the
 * register file, the engine computes from registers, PE_FETCH_STORE stores the result back; both
 * moves go through PE_TCM. A move of 0 bytes (an op without tensor operands) is no stage.
 */
export function fetchComputeStore(
  engines: PeEngines,
  fetchBytes: number,
  compute: Stage,
  storeBytes: number,
): Stage[] {
  const stages: Stage[] = [];
  if (fetchBytes > 0) stages.push(stage("fetch", engines.fetchStore, { type: "fetch", bytes: fetchBytes }));
  stages.push(compute);
  if (storeBytes > 0) stages.push(stage("store", engines.fetchStore, { type: "store", bytes: storeBytes }));
  return stages;
}

/** Checks that a TCM address belongs to this PE. */
export function ownTcm(where: string, engines: PeEngines, address: number, name: string): void {
  const location = tcmLocation(address);
  if (location === null)
    throw invalid(where, `${name} (0x${address.toString(16)}) must be a TCM address of this PE.`);
  if (location.sip !== engines.sip || location.cube !== engines.cube || location.pe !== engines.peIndex) {
    throw invalid(
      where,
      `${name} (0x${address.toString(16)}) is in the TCM of sip${location.sip}.cube${location.cube}.pe${location.pe}, not of ${engines.pe}; a PE reaches only its own TCM.`,
    );
  }
}

export function singleFeed(id: string, plan: (index: number) => TilePlan): Feed {
  return { id, tileCount: 1, needs: null, groupSize: 1, build: (index) => plan(index) };
}

export function gemmOp(
  a: number,
  b: number,
  out: number,
  m: number,
  n: number,
  k: number,
  dtypeIn: Dtype,
  dtypeAcc: Dtype,
  dtypeOut: Dtype,
  accumulate: boolean,
  transposeA = false,
  transposeB = false,
  scales: { readonly a?: number; readonly b?: number; readonly dtype?: "f8e4m3" } = {},
  dtypeInB: Dtype = dtypeIn,
): OpSpec {
  const scaled = scales.a !== undefined || scales.b !== undefined;
  const dtypes = dtypeInB === dtypeIn ? dtypeIn : `${dtypeIn}_${dtypeInB}`;
  return {
    kind: "gemm",
    name: scaled ? `gemm_${scales.dtype === undefined ? "mx" : "nv"}_${dtypes}` : `gemm_${dtypes}`,
    params: {
      src_a_addr: a,
      src_b_addr: b,
      dst_addr: out,
      shape_a: transposeA ? [k, m] : [m, k],
      shape_b: transposeB ? [n, k] : [k, n],
      shape_out: [m, n],
      dtype_in: dtypeIn,
      dtype_acc: dtypeAcc,
      dtype_out: dtypeOut,
      transpose_a: transposeA,
      transpose_b: transposeB,
      layout_a: "row_major",
      layout_b: "row_major",
      layout_out: "row_major",
      addr_space: "tcm",
      accumulate,
      ...(scales.a === undefined ? {} : { scale_a_addr: scales.a }),
      ...(scales.b === undefined ? {} : { scale_b_addr: scales.b }),
      ...(dtypeInB === dtypeIn ? {} : { dtype_in_b: dtypeInB }),
      ...(scaled && scales.dtype !== undefined ? { scale_dtype: scales.dtype } : {}),
    },
  };
}
