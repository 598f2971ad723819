import { MemorySink, OpLogger } from "@kb/oplog";
import { commandList, type TL } from "@kb/tl";
import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { comparePhases, type DeviceTensor, replay, Simulator } from "./index.js";

// Masked 2-D tiles wider than the row (Triton's BLOCK_SIZE = next_power_of_2(N) with a column
// mask, several rows per program): the tile's row stride is the matrix's row length N, smaller
// than the tile's BLOCK columns; the masked-off columns (which would alias the next row) never
// move, `other` fills them, and reductions over the row see `other`.

const ROWS = 5; // rows of the matrix
const N = 6; // its row length
const R = 4; // rows per program
const BLOCK = 8; // next_power_of_2(N)

async function simulator() {
  const sink = new MemorySink();
  const sim = await Simulator.fromTopology(
    { name: "wide" },
    { opLogger: new OpLogger(sink), checkPhases: true },
  );
  return { sim, sink };
}

/** Row and column masks of program `pid`'s `[R, BLOCK]` tile, combined: `rows < ROWS & cols < N`. */
async function tileMask(tl: TL, pid: number) {
  const rows = await tl.lt(tl.expandDims(await tl.add(tl.arange(0, R), pid * R), 1), ROWS);
  const cols = await tl.lt(tl.expandDims(tl.arange(0, BLOCK), 0), N);
  return tl.and(rows, cols);
}

describe("masked tiles wider than the row", () => {
  it("loads [R, BLOCK] rows N apart: other fills the masked-off columns, only real bytes move", async () => {
    const { sim, sink } = await simulator();
    const x = await sim.toDevice(
      sim.fromArray(
        Array.from({ length: ROWS * N }, (_, i) => i),
        [ROWS, N],
        "f32",
      ),
      { name: "x" },
    );
    const sums = sim.empty([ROWS, 1], "f32", { name: "sums" });
    const tiles: number[][] = [];
    await sim.launch(
      async (tl: TL, x: DeviceTensor, sums: DeviceTensor) => {
        const pid = tl.programId(0);
        const mask = await tileMask(tl, pid);
        const tile = await tl.load(x.at(pid * R, 0), [R, BLOCK], "f32", { stride: N, mask, other: -1 });
        tiles.push([...tile.data.toFloat64Array()]);
        // The row sums see other (-1) in the masked-off columns, as in Triton.
        const rowMask = await tl.lt(tl.expandDims(await tl.add(tl.arange(0, R), pid * R), 1), ROWS);
        await tl.store(sums.at(pid * R, 0), await tl.sum(tile, 1), { stride: 1, mask: rowMask });
      },
      { grid: { pes: 2 }, programs: [2], args: [x, sums] },
    );
    const row = (r: number) => [...Array.from({ length: N }, (_, c) => r * N + c), -1, -1];
    expect(tiles).toEqual([
      [...row(0), ...row(1), ...row(2), ...row(3)],
      [...row(4), ...new Array(3 * BLOCK).fill(-1)],
    ]);
    const phase2 = replay(sim.hostWrites, sink.records).store;
    const got = new Float32Array(phase2.read(sums.address, sums.nbytes).slice().buffer);
    // Row r: the sum of r * N .. r * N + 5 plus two -1s.
    expect([...got]).toEqual(Array.from({ length: ROWS }, (_, r) => 6 * r * N + 15 - 2));
    expect(comparePhases(sim.loadObservations, sim.hostWrites, sink.records)).toMatchObject({
      observed: 2,
      compared: 2,
      differing: 0,
      unmatched: 0,
    });
    // The loads read the 5 x 6 matrix once (120 B) and the stores write 5 sums (20 B): no
    // masked-off column moves.
    const dmaBytes = sim.machine
      .stats()
      .components.filter((c) => c.kind === "pe_dma")
      .reduce((sum, c) => sum + c.bytes, 0);
    expect(dmaBytes).toBe(ROWS * N * 4 + ROWS * 4);
  });

  it("is one DMA command of the tile's geometry with the runs of the real columns", async () => {
    const commands = await commandList(
      async (tl: TL, x: number) => {
        await tl.load(x, [R, BLOCK], "f32", { stride: N, mask: await tileMask(tl, 0), other: 0 });
      },
      [encodeAddress({ sip: 0, cube: 0, space: "hbm", offset: 0 })],
      {
        kernel: "wide",
        placement: {
          pe: "sip0.cube0.pe0",
          sip: 0,
          cube: 0,
          peIndex: 0,
          programId: [0, 0, 0],
          numPrograms: [1, 1, 1],
        },
        scratch: { offset: 2 ** 20, bytes: 2 ** 20 },
      },
    );
    // Rows of 8 f32 (32 B) in TCM, 6 f32 (24 B) apart in HBM; each row's first 24 B move.
    expect(commands.filter((c) => c.kind === "dma")).toEqual([
      expect.objectContaining({
        bytes: 32,
        rows: 4,
        srcStride: 24,
        dstStride: 32,
        mask: expect.objectContaining({ runs: [0, 24, 32, 24, 64, 24, 96, 24] }),
      }),
    ]);
  });

  it("stores [R, BLOCK] rows N apart: only the masked-on columns are written", async () => {
    const { sim, sink } = await simulator();
    const x = await sim.toDevice(
      sim.fromArray(
        Array.from({ length: ROWS * N }, (_, i) => i),
        [ROWS, N],
        "f32",
      ),
      { name: "x" },
    );
    const y = sim.empty([ROWS, N], "f32", { name: "y" });
    await sim.launch(
      async (tl: TL, x: DeviceTensor, y: DeviceTensor) => {
        const pid = tl.programId(0);
        const mask = await tileMask(tl, pid);
        const tile = await tl.load(x.at(pid * R, 0), [R, BLOCK], "f32", { stride: N, mask, other: 0 });
        await tl.store(y.at(pid * R, 0), await tl.mul(tile, 2), { stride: N, mask });
      },
      { grid: { pes: 2 }, programs: [2], args: [x, y] },
    );
    const phase2 = replay(sim.hostWrites, sink.records).store;
    const got = new Float32Array(phase2.read(y.address, y.nbytes).slice().buffer);
    expect([...got]).toEqual(Array.from({ length: ROWS * N }, (_, i) => 2 * i));
  });

  it("refuses a store whose masked-on elements overlap (rows N apart, more than N columns on)", async () => {
    const { sim } = await simulator();
    const y = sim.empty([ROWS, N], "f32", { name: "y" });
    const run = sim.launch(
      async (tl: TL, y: DeviceTensor) => {
        const mask = await tl.lt(tl.expandDims(tl.arange(0, BLOCK), 0), N + 1);
        await tl.store(y, tl.zeros([2, BLOCK], "f32"), { stride: N, mask });
      },
      { grid: { pes: 1 }, args: [y] },
    );
    await expect(run).rejects.toMatchObject({ code: "TL_INVALID_CALL" });
    await expect(run).rejects.toThrow(/row 0, column 6 and row 1, column 0/);
  });

  it("without a mask a stride below the row length is still refused", async () => {
    const { sim } = await simulator();
    const x = sim.empty([ROWS, N], "f32", { name: "x" });
    const run = sim.launch(
      async (tl: TL, x: DeviceTensor) => {
        await tl.load(x, [2, BLOCK], "f32", { stride: N });
      },
      { grid: { pes: 1 }, args: [x] },
    );
    await expect(run).rejects.toMatchObject({ code: "TL_INVALID_CALL" });
    await expect(run).rejects.toThrow(/stride 6 is below the row length 8: pass a mask/);
  });
});
