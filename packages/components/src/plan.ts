import { KbError } from "@kb/errors";
import { broadcastShapes, MATH_OPS, MATH_SHAPES, mathOutputShape } from "@kb/oplog";
import { decodeAddress, tcmLocation } from "@kb/topology";
import type {
  CompositeGemmCommand,
  CompositeMathCommand,
  DmaCommand,
  DmaMask,
  Dtype,
  GemmCommand,
  MathCommand,
  PeCommand,
} from "./commands.js";
import { DTYPE_BYTES } from "./commands.js";
import type { Component } from "./component.js";
import { maskPieces, maskRunsProblem } from "./dma-mask.js";
import type { DmaCopy, MemoryBlock, OpSpec, Stage, StageParams, StageType, TilePlan } from "./message.js";

/** The engines of one PE, by stage type. @internal */
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

/** Tile-buffer geometry a feed needs from the scheduler's reserved TCM. @internal */
export interface BufferNeeds {
  /** Bytes of one input/output buffer set. */
  readonly setBytes: number;
  /** Bytes of one accumulator (0 when the feed accumulates nothing). */
  readonly accBytes: number;
}

/**
 * The tiles of one command, built one at a time by the scheduler's feeder with the buffer slots it
 * holds (so a million-tile command never exists as a million plans). @internal
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

/** Scheduler settings a plan uses. @internal */
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

function alignBuffer(bytes: number): number {
  return Math.ceil(bytes / TILE_BUFFER_ALIGN) * TILE_BUFFER_ALIGN;
}

function invalid(where: string, what: string): KbError {
  return new KbError("MACHINE_INVALID_COMMAND", `${where}: ${what}`);
}

function positiveInt(where: string, name: string, value: unknown): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw invalid(
      where,
      `${name} must be a positive integer, got ${JSON.stringify(value) ?? String(value)}.`,
    );
  }
  return value;
}

function dtypeBytes(where: string, name: string, dtype: unknown): number {
  const bytes = DTYPE_BYTES[dtype as Dtype];
  if (bytes === undefined) {
    throw invalid(
      where,
      `${name} must be one of ${Object.keys(DTYPE_BYTES).join(", ")}, got ${JSON.stringify(dtype)}.`,
    );
  }
  return bytes;
}

function accDtype(dtype: Dtype): Dtype {
  return dtype === "i8" || dtype === "i32" ? "i32" : "f32";
}

function spaceOf(address: number): "hbm" | "tcm" | "sram" {
  return decodeAddress(address).space;
}

function block(address: number, rows: number, rowBytes: number, stride: number): MemoryBlock {
  return { address, rows, rowBytes, stride: rows === 1 ? rowBytes : stride };
}

function memoryOp(name: "dma_read" | "dma_write", copy: DmaCopy, mask?: DmaMask): OpSpec {
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
  return { kind: "memory", name, params };
}

function stage(
  type: StageType,
  component: Component,
  params: StageParams,
  ops: readonly OpSpec[] = [],
): Stage {
  return { type, component, params, ops };
}

function dmaStage(
  type: "dma_read" | "dma_write",
  engines: PeEngines,
  copies: readonly DmaCopy[],
  ops: readonly OpSpec[] = copies.map((copy) => memoryOp(type, copy)),
): Stage {
  return stage(type, engines.dma, { type, copies }, ops);
}

/** Checks that a TCM address belongs to this PE. */
function ownTcm(where: string, engines: PeEngines, address: number, name: string): void {
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

function singleFeed(id: string, plan: (index: number) => TilePlan): Feed {
  return { id, tileCount: 1, needs: null, groupSize: 1, build: (index) => plan(index) };
}

/** Builds the feed of one PE command. Throws `MACHINE_INVALID_COMMAND` naming the PE and command. @internal */
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

function gemmOp(
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
): OpSpec {
  return {
    kind: "gemm",
    name: `gemm_${dtypeIn}`,
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
    },
  };
}

function gemmFeed(id: string, where: string, command: GemmCommand, engines: PeEngines): Feed {
  const m = positiveInt(where, "m", command.m);
  const n = positiveInt(where, "n", command.n);
  const k = positiveInt(where, "k", command.k);
  dtypeBytes(where, "dtype", command.dtype);
  const dtypeAcc = command.dtypeAcc ?? accDtype(command.dtype);
  const dtypeOut = command.dtypeOut ?? command.dtype;
  dtypeBytes(where, "dtypeAcc", dtypeAcc);
  dtypeBytes(where, "dtypeOut", dtypeOut);
  ownTcm(where, engines, command.a, "a");
  ownTcm(where, engines, command.b, "b");
  ownTcm(where, engines, command.out, "out");
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
  );
  const params: StageParams = { type: "gemm", m, n, k, dtype: command.dtype };
  return singleFeed(id, (index) => ({ tileId: index, stages: [stage("gemm", engines.gemm, params, [op])] }));
}

/** Checks a math op's name and operand count; returns its info. */
function mathInfo(where: string, op: string, operands: number, scalars: number) {
  const info = MATH_OPS[op];
  if (info === undefined) {
    throw invalid(where, `unknown math op "${op}"; known ops: ${Object.keys(MATH_OPS).join(", ")}.`);
  }
  const withScalar = info.scalar && operands === info.arity - 1 && scalars >= 1;
  if (operands !== info.arity && !withScalar) {
    throw invalid(where, `math op "${op}" takes ${info.arity} tensor operand(s), got ${operands}.`);
  }
  if (info.params.length > 0 && scalars !== info.params.length) {
    throw invalid(where, `${op} needs scalars [${info.params.join(", ")}].`);
  }
  return info;
}

function mathOp(
  op: string,
  inputs: readonly number[],
  inputShape: readonly number[],
  out: number,
  outShape: readonly number[],
  dtype: Dtype,
  axis: number | null,
  scalars: readonly number[] | undefined,
  inputDtype?: Dtype,
  operands: MathOperands = {},
): OpSpec {
  const params: Record<string, unknown> = {
    op,
    input_addrs: [...inputs],
    input_shapes: inputs.map((_, i) => [...(operands.inputShapes?.[i] ?? inputShape)]),
    dst_addr: out,
    shape_out: [...outShape],
    dtype,
    axis,
    addr_space: "tcm",
  };
  if (scalars !== undefined && scalars.length > 0) params.scalars = [...scalars];
  if (inputDtype !== undefined && inputDtype !== dtype) params.input_dtype = inputDtype;
  if (operands.inputDtypes !== undefined) params.input_dtypes = [...operands.inputDtypes];
  if (operands.scalarIndex !== undefined) params.scalar_index = operands.scalarIndex;
  return { kind: "math", name: op, params };
}

/** What a math command says of its operands beyond one shape and one dtype (broadcasting, `where`'s i1 cond, a scalar first). */
type MathOperands = Pick<MathCommand, "inputShapes" | "inputDtypes" | "scalarIndex">;

/**
 * Checks the per-operand fields of a math command: `inputShapes` (elementwise ops only) broadcast
 * to `shape`, `inputDtypes` name a dtype per operand, `scalarIndex` is an operand the scalar may
 * stand for.
 */
function checkOperands(where: string, command: MathCommand, elementwise: boolean, withScalar: boolean): void {
  const { inputShapes, inputDtypes, scalarIndex } = command;
  if (inputShapes !== undefined) {
    if (!elementwise || inputShapes.length !== command.inputs.length)
      throw invalid(where, "inputShapes needs an elementwise op and one shape per input.");
    const joint = broadcastShapes([...inputShapes, command.shape]);
    if (joint === null || joint.join() !== command.shape.join()) {
      throw invalid(
        where,
        `inputShapes ${inputShapes.map((shape) => `[${shape.join(", ")}]`).join(", ")} do not broadcast to shape [${command.shape.join(", ")}].`,
      );
    }
  }
  if (inputDtypes !== undefined) {
    if (inputDtypes.length !== command.inputs.length)
      throw invalid(where, "inputDtypes needs one dtype per input.");
    for (const [i, dtype] of inputDtypes.entries()) dtypeBytes(where, `inputDtypes[${i}]`, dtype);
  }
  if (
    scalarIndex !== undefined &&
    !(withScalar && Number.isInteger(scalarIndex) && scalarIndex >= 0 && scalarIndex <= command.inputs.length)
  ) {
    throw invalid(
      where,
      `scalarIndex ${scalarIndex} must name an operand the op's scalar stands for (0 to ${command.inputs.length}).`,
    );
  }
}

function mathFeed(id: string, where: string, command: MathCommand, engines: PeEngines): Feed {
  const info = mathInfo(where, command.op, command.inputs.length, command.scalars?.length ?? 0);
  dtypeBytes(where, "dtype", command.dtype);
  if (command.shape.length === 0) throw invalid(where, "shape must have at least one dimension.");
  for (const [i, size] of command.shape.entries()) positiveInt(where, `shape[${i}]`, size);
  for (const [i, address] of command.inputs.entries()) ownTcm(where, engines, address, `inputs[${i}]`);
  ownTcm(where, engines, command.out, "out");
  const rank = command.shape.length;
  const axis = MATH_SHAPES[info.shape].axis ? (command.axis ?? rank - 1) : null;
  if (axis !== null && (axis < -rank || axis >= rank))
    throw invalid(where, `axis ${axis} is out of range for rank ${rank}.`);
  const realAxis = axis === null ? null : axis < 0 ? axis + rank : axis;
  const withScalar = info.scalar && command.inputs.length === info.arity - 1;
  checkOperands(where, command, info.shape === "elementwise", withScalar);
  const other = command.scalars?.[0] ?? -1;
  if (info.shape === "swap" && !(Number.isInteger(other) && other >= 0 && other < rank))
    throw invalid(where, `${command.op}'s dim1 ${other} is out of range for rank ${rank}.`);
  // Elementwise: the output's elements (the operands broadcast to `shape`).
  const elements = command.shape.reduce((a, b) => a * b, 1);
  const outShape = mathOutputShape(info, command.shape, realAxis, command.scalars);
  const reduceLength = realAxis === null ? 0 : (command.shape[realAxis] as number);
  const op = mathOp(
    command.op,
    command.inputs,
    command.shape,
    command.out,
    outShape,
    command.dtype,
    realAxis,
    command.scalars,
    command.inputDtype,
    command,
  );
  if (command.inputDtype !== undefined) dtypeBytes(where, "inputDtype", command.inputDtype);
  const params: StageParams = { type: "math", op: command.op, elements, dtype: command.dtype, reduceLength };
  return singleFeed(id, (index) => ({ tileId: index, stages: [stage("math", engines.math, params, [op])] }));
}

function compositeGemmFeed(
  id: string,
  where: string,
  command: CompositeGemmCommand,
  engines: PeEngines,
  defaults: TileDefaults,
): Feed {
  const M = positiveInt(where, "m", command.m);
  const N = positiveInt(where, "n", command.n);
  const K = positiveInt(where, "k", command.k);
  const dtype = command.dtype;
  const s = dtypeBytes(where, "dtype", dtype);
  const dtypeAcc = command.dtypeAcc ?? accDtype(dtype);
  const dtypeOut = command.dtypeOut ?? dtype;
  const sAcc = dtypeBytes(where, "dtypeAcc", dtypeAcc);
  const sOut = dtypeBytes(where, "dtypeOut", dtypeOut);
  for (const [name, address] of [
    ["a", command.a],
    ["b", command.b],
    ["c", command.c],
  ] as const) {
    if (spaceOf(address) === "tcm")
      throw invalid(where, `${name} must be in HBM or SRAM; a composite GEMM streams its operands by DMA.`);
  }
  const tm = Math.min(positiveInt(where, "tile.m", command.tile?.m ?? defaults.tileM), M);
  const tn = Math.min(positiveInt(where, "tile.n", command.tile?.n ?? defaults.tileN), N);
  const tk = Math.min(positiveInt(where, "tile.k", command.tile?.k ?? defaults.tileK), K);
  const epilogue = command.epilogue ?? [];
  epilogue.forEach((entry, i) => {
    const info = MATH_OPS[entry.op];
    const scalars = entry.scalar === undefined ? 0 : 1;
    if (info === undefined || info.shape !== "elementwise") {
      throw invalid(
        where,
        `epilogue[${i}].op "${entry.op}" is not an elementwise op; known: ${Object.entries(MATH_OPS)
          .filter(([, op]) => op.shape === "elementwise")
          .map(([name]) => name)
          .join(", ")}.`,
      );
    }
    mathInfo(`${where} epilogue[${i}]`, entry.op, 1, scalars);
    if (entry.scope !== undefined && entry.scope !== "k_tile" && entry.scope !== "output_tile") {
      throw invalid(
        where,
        `epilogue[${i}].scope must be "k_tile" or "output_tile", got ${JSON.stringify(entry.scope)}.`,
      );
    }
  });
  const transA = command.transposeA === true;
  const transB = command.transposeB === true;
  const kTileOps = epilogue.filter((entry) => entry.scope === "k_tile");
  const outputOps = epilogue.filter((entry) => entry.scope !== "k_tile");
  const tilesM = Math.ceil(M / tm);
  const tilesN = Math.ceil(N / tn);
  const tilesK = Math.ceil(K / tk);
  const aBytes = alignBuffer(tm * tk * s);
  const bBytes = alignBuffer(tk * tn * s);
  const outBytes = alignBuffer(tm * tn * sOut);
  const accBytes = alignBuffer(tm * tn * sAcc);
  const needs: BufferNeeds = { setBytes: aBytes + bBytes + outBytes, accBytes };
  return {
    id,
    tileCount: tilesM * tilesN * tilesK,
    needs,
    groupSize: tilesK,
    build(index, setAddress, accAddress): TilePlan {
      const out = Math.floor(index / tilesK);
      const ki = index % tilesK;
      const mi = Math.floor(out / tilesN);
      const ni = out % tilesN;
      const m = Math.min(tm, M - mi * tm);
      const n = Math.min(tn, N - ni * tn);
      const k = Math.min(tk, K - ki * tk);
      const bufA = setAddress;
      const bufB = setAddress + aBytes;
      const bufOut = setAddress + aBytes + bBytes;
      const last = ki === tilesK - 1;
      const stages: Stage[] = [
        dmaStage("dma_read", engines, [
          // A's tile (m x k), or the stored k x m block of A's transpose.
          transA
            ? {
                src: block(command.a + (ki * tk * M + mi * tm) * s, k, m * s, M * s),
                dst: block(bufA, k, m * s, m * s),
              }
            : {
                src: block(command.a + (mi * tm * K + ki * tk) * s, m, k * s, K * s),
                dst: block(bufA, m, k * s, k * s),
              },
          // B's tile (k x n), or the stored n x k block of B's transpose.
          transB
            ? {
                src: block(command.b + (ni * tn * K + ki * tk) * s, n, k * s, K * s),
                dst: block(bufB, n, k * s, k * s),
              }
            : {
                src: block(command.b + (ki * tk * N + ni * tn) * s, k, n * s, N * s),
                dst: block(bufB, k, n * s, n * s),
              },
        ]),
        stage("fetch", engines.fetchStore, { type: "fetch", bytes: (m * k + k * n) * s }),
        stage("gemm", engines.gemm, { type: "gemm", m, n, k, dtype }, [
          gemmOp(bufA, bufB, accAddress, m, n, k, dtype, dtypeAcc, dtypeAcc, ki > 0, transA, transB),
        ]),
      ];
      const epilogueOps = last ? [...kTileOps, ...outputOps] : kTileOps;
      if (epilogueOps.length > 0) {
        stages.push(
          stage(
            "math",
            engines.math,
            {
              type: "math",
              op: epilogueOps.map((entry) => entry.op).join("+"),
              elements: m * n,
              dtype: dtypeAcc,
              reduceLength: 0,
            },
            epilogueOps.map((entry) =>
              mathOp(
                entry.op,
                [accAddress],
                [m, n],
                accAddress,
                [m, n],
                dtypeAcc,
                null,
                entry.scalar === undefined ? undefined : [entry.scalar],
              ),
            ),
          ),
        );
      }
      if (!last) {
        stages.push(stage("store", engines.fetchStore, { type: "store", bytes: m * n * sAcc }));
      } else {
        // The last K tile leaves the output in dtypeOut: the store converts (a cast op when the
        // accumulator dtype differs) and DMA_WRITE copies the tile out.
        const source = dtypeOut === dtypeAcc ? accAddress : bufOut;
        const castOps =
          dtypeOut === dtypeAcc
            ? []
            : [mathOp("cast", [accAddress], [m, n], bufOut, [m, n], dtypeOut, null, undefined, dtypeAcc)];
        stages.push(stage("store", engines.fetchStore, { type: "store", bytes: m * n * sOut }, castOps));
        stages.push(
          dmaStage("dma_write", engines, [
            {
              src: block(source, m, n * sOut, n * sOut),
              dst: block(command.c + (mi * tm * N + ni * tn) * sOut, m, n * sOut, N * sOut),
            },
          ]),
        );
      }
      return { tileId: index, stages };
    },
  };
}

function compositeMathFeed(
  id: string,
  where: string,
  command: CompositeMathCommand,
  engines: PeEngines,
  defaults: TileDefaults,
): Feed {
  const rows = positiveInt(where, "rows", command.rows);
  const cols = positiveInt(where, "cols", command.cols);
  const s = dtypeBytes(where, "dtype", command.dtype);
  const info = mathInfo(where, command.op, command.inputs.length, command.scalars?.length ?? 0);
  for (const [i, address] of [...command.inputs, command.out].entries()) {
    if (spaceOf(address) === "tcm") {
      throw invalid(
        where,
        `${i < command.inputs.length ? `inputs[${i}]` : "out"} must be in HBM or SRAM; a composite op streams by DMA.`,
      );
    }
  }
  const inputs = command.inputs.length;
  const outCols = mathOutputShape(info, [rows, cols], 1)[1] as number;
  const rowBytes = (inputs * cols + outCols) * s;
  const fit = Math.max(1, Math.floor(defaults.mathTileBytes / rowBytes));
  const tr = Math.min(rows, positiveInt(where, "tileRows", command.tileRows ?? fit));
  const tiles = Math.ceil(rows / tr);
  const inBytes = alignBuffer(tr * cols * s);
  const needs: BufferNeeds = { setBytes: inputs * inBytes + alignBuffer(tr * outCols * s), accBytes: 0 };
  return {
    id,
    tileCount: tiles,
    needs,
    groupSize: 1,
    build(index, setAddress): TilePlan {
      const r = Math.min(tr, rows - index * tr);
      const buffers = command.inputs.map((_, i) => setAddress + i * inBytes);
      const bufOut = setAddress + inputs * inBytes;
      const copies = command.inputs.map((address, i) => ({
        src: block(address + index * tr * cols * s, r, cols * s, cols * s),
        dst: block(buffers[i] as number, r, cols * s, cols * s),
      }));
      const axis = MATH_SHAPES[info.shape].axis ? 1 : null;
      return {
        tileId: index,
        stages: [
          dmaStage("dma_read", engines, copies),
          stage("fetch", engines.fetchStore, { type: "fetch", bytes: inputs * r * cols * s }),
          stage(
            "math",
            engines.math,
            {
              type: "math",
              op: command.op,
              elements: r * cols,
              dtype: command.dtype,
              reduceLength: axis === null ? 0 : cols,
            },
            [
              mathOp(
                command.op,
                buffers,
                [r, cols],
                bufOut,
                [r, outCols],
                command.dtype,
                axis,
                command.scalars,
              ),
            ],
          ),
          stage("store", engines.fetchStore, { type: "store", bytes: r * outCols * s }),
          dmaStage("dma_write", engines, [
            {
              src: block(bufOut, r, outCols * s, outCols * s),
              dst: block(command.out + index * tr * outCols * s, r, outCols * s, outCols * s),
            },
          ]),
        ],
      };
    },
  };
}
