import { type DmaCommand, maskPieces } from "@kb/spec";
import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { machineOf, runAlone } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
const tcm = encodeAddress({ sip: 0, cube: 0, space: "tcm", offset: 0 });
const F32_ZERO = [0, 0, 0, 0];

/** Runs `command` alone on PE 0 of default.yaml: the time it took, PE_DMA bytes, the op records. */
const run = (command: DmaCommand) => runAlone(command);

/** A 1-D f32 load of `bytes` from HBM offset 0 into TCM, masked to `runs` when given. */
function load(bytes: number, runs?: number[]) {
  return run({
    kind: "dma",
    src: hbm(0),
    dst: tcm,
    bytes,
    ...(runs === undefined ? {} : { mask: { runs, fill: F32_ZERO } }),
  });
}

describe("masked DMA commands", () => {
  it("a 1-D load of 256 of 512 f32 moves 1024 B, timed as those bytes alone (hand-computed)", () => {
    const masked = load(2048, [0, 1024]);
    // default.yaml: PE_CPU dispatch_ns 2, then one PE_MMU translation of the piece (first touch of
    // its 2 MiB page: TLB miss 50 ns), setup_ns 0, then the fabric read of 1024 B at HBM offset 0:
    // 52.06 ns as fabric.test.ts works out (4 PCs behind xbar0, request 1.03 + access 40 + 256 B
    // per PC = 10 ns of bus, xbar0 once, 1024 B at 128 GB/s to the PE_DMA, + wire).
    // Then the PE_TCM write of the 1024 B moved: 1 + 1024 / 512 = 3 ns. 2 + 50 + 52.06 + 3 = 107.06 ns.
    expect(masked.ns).toBeCloseTo(107.06, 9);
    expect(masked.bytes).toBe(1024);
    // The unmasked 2048 B copy moves (and takes) more.
    const whole = load(2048);
    expect(whole.bytes).toBe(2048);
    expect(whole.ns).toBeGreaterThan(masked.ns);
  });

  it("1000 of 1024 f32 on: the same time as an unmasked copy of 4000 B", () => {
    const masked = load(4096, [0, 4000]);
    const plain = load(4000);
    expect(masked.bytes).toBe(4000);
    expect(masked.ns).toBe(plain.ns);
  });

  it("a mask off everywhere moves nothing: only the PE_CPU's 2 ns dispatch", () => {
    const none = load(4096, []);
    expect(none.ns).toBe(2);
    expect(none.bytes).toBe(0);
    expect(none.records).toHaveLength(1);
  });

  it("a column-masked 2-D store moves the shorter rows; one op record keeps the tile and its runs", () => {
    const runs = [0, 128, 256, 128, 512, 128, 768, 128];
    const masked = run({
      kind: "dma",
      src: tcm,
      dst: hbm(0),
      bytes: 256,
      rows: 4,
      srcStride: 256,
      dstStride: 1024,
      mask: { runs },
    });
    expect(masked.bytes).toBe(512);
    expect(masked.records).toHaveLength(1);
    expect(masked.records[0]?.params).toEqual({
      src_addr: tcm,
      dst_addr: hbm(0),
      nbytes: 1024,
      src_space: "tcm",
      dst_space: "hbm",
      rows: 4,
      src_stride: 256,
      dst_stride: 1024,
      mask_runs: runs,
    });
  });

  it("refuses runs that cross a row's end (MACHINE_INVALID_COMMAND naming the PE)", () => {
    const machine = machineOf("default");
    const done = machine.submit("sip0.cube0.pe0", [
      {
        kind: "dma",
        src: hbm(0),
        dst: tcm,
        bytes: 256,
        rows: 2,
        srcStride: 1024,
        mask: { runs: [200, 100] },
      },
    ]);
    expect(() => machine.run(done)).toThrow(/sip0\.cube0\.pe0 command .*\(dma\): mask run 0 \[200, 100\]/);
  });
});

describe("masked tiles wider than the row (stride below the tile's row length)", () => {
  it("4 rows of 64 f32, 64 apart, in a 128-wide tile: 1 KiB moves, timed as 1 KiB (hand-computed)", () => {
    // A [4, 64] f32 matrix loaded as a [4, 128] tile (stride 64, column mask cols < 64): runs of
    // 256 B at tile offsets 0, 512, 1024, 1536, 256 B apart at HBM offset 0: one piece of 4 rows,
    // 1 KiB in one block.
    const runs = [0, 256, 512, 256, 1024, 256, 1536, 256];
    expect(maskPieces(runs, 512, 256, 512)).toEqual([
      { srcOffset: 0, dstOffset: 0, rows: 4, bytes: 256, srcStride: 256, dstStride: 512 },
    ]);
    const wide = run({
      kind: "dma",
      src: hbm(0),
      dst: tcm,
      bytes: 512,
      rows: 4,
      srcStride: 256,
      dstStride: 512,
      mask: { runs, fill: F32_ZERO },
    });
    // As the 1-D example above: dispatch 2 + PE_MMU miss 50 + the 1 KiB read at HBM offset 0
    // (52.06) + its PE_TCM write 3 = 107.06 ns; the masked-off half of the tile moves nothing.
    expect(wide.bytes).toBe(1024);
    expect(wide.ns).toBeCloseTo(107.06, 9);
    expect(wide.records[0]?.params).toMatchObject({
      rows: 4,
      src_stride: 256,
      dst_stride: 512,
      mask_runs: runs,
    });
  });
});
