import {
  type CompositeGemmCommand,
  type CompositeMathCommand,
  MATH_OPS,
  MATH_SHAPES,
  mathOutputShape,
} from "@kb/spec";
import type { Stage, TilePlan } from "./message.js";
import { mathInfo, mathOp } from "./plan-math.js";
import {
  accDtype,
  alignBuffer,
  type BufferNeeds,
  block,
  dmaStage,
  dtypeBytes,
  type Feed,
  gemmOp,
  invalid,
  type PeEngines,
  positiveInt,
  spaceOf,
  stage,
  type TileDefaults,
} from "./plan-support.js";

// The feeds of composite commands: a tiled GEMM and a row-tiled MATH op streamed from HBM.

export function compositeGemmFeed(
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

export function compositeMathFeed(
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
