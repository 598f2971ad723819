import {
  type DmaCommand,
  DTYPE_BYTES,
  type GemmCommand,
  indexedRuns,
  indexedRunsProblem,
  maskPieces,
  maskRunsProblem,
  type PeCommand,
  scaleBlockOf,
} from "@kb/spec";
import { atomicFeed } from "./dma-atomic.js";
import type { DmaCopy, StageParams } from "./message.js";
import { compositeGemmFeed, compositeMathFeed } from "./plan-composite.js";
import { mathFeed } from "./plan-math.js";
import {
  accDtype,
  block,
  dmaStage,
  dtypeBytes,
  type Feed,
  fetchComputeStore,
  gemmOp,
  invalid,
  memoryOp,
  ownTcm,
  type PeEngines,
  positiveInt,
  singleFeed,
  spaceOf,
  stage,
  type TileDefaults,
} from "./plan-support.js";

export {
  type BufferNeeds,
  type Feed,
  type PeEngines,
  TILE_BUFFER_ALIGN,
  type TileDefaults,
} from "./plan-support.js";

/** Builds the feed of one PE command. Throws `MACHINE_INVALID_COMMAND` naming the PE and command. */
export function feedOf(id: string, command: PeCommand, engines: PeEngines, defaults: TileDefaults): Feed {
  const where = `${engines.pe} command ${id} (${command.kind})`;
  switch (command.kind) {
    case "dma":
      return dmaFeed(id, where, command, engines);
    case "gemm":
      return gemmFeed(id, where, command, engines);
    case "math":
      return mathFeed(id, where, command, engines);
    case "composite_gemm":
      return compositeGemmFeed(id, where, command, engines, defaults);
    case "composite_math":
      return compositeMathFeed(id, where, command, engines, defaults);
    default:
      throw invalid(where, `the scheduler does not run "${(command as { kind: string }).kind}" commands.`);
  }
}

function dmaFeed(id: string, where: string, command: DmaCommand, engines: PeEngines): Feed {
  const bytes = positiveInt(where, "bytes", command.bytes);
  const rows = positiveInt(where, "rows", command.rows ?? 1);
  const srcStride = command.srcStride ?? bytes;
  const dstStride = command.dstStride ?? bytes;
  const srcTcm = spaceOf(command.src) === "tcm";
  const dstTcm = spaceOf(command.dst) === "tcm";
  if (srcTcm === dstTcm) {
    throw invalid(
      where,
      "exactly one of src and dst must be in the PE's TCM (a DMA copies between TCM and HBM or SRAM).",
    );
  }
  ownTcm(where, engines, srcTcm ? command.src : command.dst, srcTcm ? "src" : "dst");
  const copy: DmaCopy = {
    src: block(command.src, rows, bytes, srcStride),
    dst: block(command.dst, rows, bytes, dstStride),
  };
  const type = dstTcm ? "dma_read" : "dma_write";
  if (command.atomic !== undefined) {
    if (dstTcm) throw invalid(where, "an atomic's src is its operand tile in TCM and dst the HBM/SRAM base.");
    return atomicFeed(id, where, command, engines, copy, command.atomic);
  }
  const indexed = command.indexed;
  if (indexed !== undefined) {
    // A gather or scatter: one descriptor per run; one op record of the tile with its runs.
    if (rows !== 1 || command.mask !== undefined)
      throw invalid(
        where,
        "an indexed copy (gather or scatter) has rows 1 and no mask: its runs say what moves.",
      );
    const problem = indexedRunsProblem(indexed.runs, bytes, dstTcm);
    if (problem !== null) throw invalid(where, problem);
    const pieces = indexedRuns(indexed.runs).map((run) => ({
      src: block(command.src + run.srcOffset, 1, run.bytes, run.bytes),
      dst: block(command.dst + run.dstOffset, 1, run.bytes, run.bytes),
    }));
    const ops = [memoryOp(type, copy, undefined, indexed)];
    return singleFeed(id, (index) => ({ tileId: index, stages: [dmaStage(type, engines, pieces, ops)] }));
  }
  const mask = command.mask;
  if (mask === undefined)
    return singleFeed(id, (index) => ({ tileId: index, stages: [dmaStage(type, engines, [copy])] }));
  // A masked copy: the PE_DMA moves the runs' pieces (one descriptor each); the op log keeps one
  // record of the whole tile with its runs, so phase 2 copies the same bytes.
  const problem = maskRunsProblem(mask.runs, rows, bytes);
  if (problem !== null) throw invalid(where, problem);
  const pieces = maskPieces(mask.runs, bytes, copy.src.stride, copy.dst.stride).map((piece) => ({
    src: block(command.src + piece.srcOffset, piece.rows, piece.bytes, piece.srcStride),
    dst: block(command.dst + piece.dstOffset, piece.rows, piece.bytes, piece.dstStride),
  }));
  const ops = [memoryOp(type, copy, mask)];
  return singleFeed(id, (index) => ({ tileId: index, stages: [dmaStage(type, engines, pieces, ops)] }));
}

function gemmFeed(id: string, where: string, command: GemmCommand, engines: PeEngines): Feed {
  const m = positiveInt(where, "m", command.m);
  const n = positiveInt(where, "n", command.n);
  const k = positiveInt(where, "k", command.k);
  dtypeBytes(where, "dtype", command.dtype);
  const dtypeB = command.dtypeB ?? command.dtype;
  dtypeBytes(where, "dtypeB", dtypeB);
  const dtypeAcc = command.dtypeAcc ?? accDtype(command.dtype);
  const dtypeOut = command.dtypeOut ?? command.dtype;
  dtypeBytes(where, "dtypeAcc", dtypeAcc);
  dtypeBytes(where, "dtypeOut", dtypeOut);
  ownTcm(where, engines, command.a, "a");
  ownTcm(where, engines, command.b, "b");
  ownTcm(where, engines, command.out, "out");
  if (command.aScale !== undefined) ownTcm(where, engines, command.aScale, "aScale");
  if (command.bScale !== undefined) ownTcm(where, engines, command.bScale, "bScale");
  const scaled = command.aScale !== undefined || command.bScale !== undefined;
  if (command.scaleDtype !== undefined && command.scaleDtype !== "f8e4m3") {
    throw invalid(
      where,
      `scaleDtype ${JSON.stringify(command.scaleDtype)} must be "f8e4m3" (nvfp4's scales); omit it for e8m0 scales.`,
    );
  }
  if (command.scaleDtype !== undefined && !scaled) {
    throw invalid(
      where,
      `scaleDtype "f8e4m3" names the scales of a scaled GEMM: give aScale or bScale, or omit it.`,
    );
  }
  const op = gemmOp(
    command.a,
    command.b,
    command.out,
    m,
    n,
    k,
    command.dtype,
    dtypeAcc,
    dtypeOut,
    command.accumulate ?? false,
    command.transposeA ?? false,
    command.transposeB ?? false,
    {
      ...(command.aScale === undefined ? {} : { a: command.aScale }),
      ...(command.bScale === undefined ? {} : { b: command.bScale }),
      ...(command.scaleDtype === undefined ? {} : { dtype: command.scaleDtype }),
    },
    dtypeB,
  );
  // A scaled GEMM streams one more step per block of scales along k: 32 (e8m0) or 16 (nvfp4's
  // f8e4m3) elements (docs/latency-model.md).
  // A mixed-format GEMM (B's dtype differs) names B's dtype: PE_GEMM streams at the slower rate.
  const params: StageParams = {
    type: "gemm",
    m,
    n,
    k,
    dtype: command.dtype,
    ...(dtypeB === command.dtype ? {} : { dtypeB }),
    ...(scaled ? { scaleBlocks: Math.ceil(k / scaleBlockOf(command.scaleDtype)) } : {}),
  };
  // Operands fetched from TCM (A, B, the scales at a byte each, the accumulator it adds to), the
  // result stored.
  const outBytes = m * n * DTYPE_BYTES[dtypeOut];
  const fetchBytes =
    m * k * DTYPE_BYTES[command.dtype] +
    k * n * DTYPE_BYTES[dtypeB] +
    ((command.aScale === undefined ? 0 : m) + (command.bScale === undefined ? 0 : n)) *
      Math.ceil(k / scaleBlockOf(command.scaleDtype)) +
    (command.accumulate === true ? outBytes : 0);
  const compute = stage("gemm", engines.gemm, params, [op]);
  return singleFeed(id, (index) => ({
    tileId: index,
    stages: fetchComputeStore(engines, fetchBytes, compute, outBytes),
  }));
}
