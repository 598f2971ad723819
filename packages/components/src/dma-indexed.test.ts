import { type DmaCommand, indexedRunsProblem } from "@kb/spec";
import { encodeAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { machineOf, runAlone } from "./test-support.js";

const hbm = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "hbm", offset });
const tcm = encodeAddress({ sip: 0, cube: 0, space: "tcm", offset: 0 });

const run = (command: DmaCommand) => runAlone(command);

/** A gather of `bytes` (8 f32 by default) from HBM offset 0 into TCM through `runs`, on `topology`'s PE 0. */
const gather = (runs: number[], topology: string | Record<string, unknown> = "default", bytes = 32) =>
  runAlone({ kind: "dma", src: hbm(0), dst: tcm, bytes, indexed: { runs } }, topology);

// Offsets [4, 5, 6, 20, 21, 40, 41, 42] of f32: three runs of 12, 8 and 12 bytes.
const THREE_RUNS = [16, 0, 12, 80, 12, 8, 160, 20, 12];

describe("indexed DMA commands (gathers and scatters)", () => {
  it("8 offsets forming 3 runs are 3 pieces: 32 B moved, one op record with the runs", () => {
    const three = gather(THREE_RUNS);
    expect(three.bytes).toBe(32);
    expect(three.records).toHaveLength(1);
    expect(three.records[0]?.params).toEqual({
      src_addr: hbm(0),
      dst_addr: tcm,
      nbytes: 32,
      src_space: "hbm",
      dst_space: "tcm",
      index_runs: THREE_RUNS,
    });
  });

  it("each piece pays setup_ns: 3 runs with setup_ns 10 take 3 x 10 ns more (hand-computed)", () => {
    const withSetup = (ns: number) => ({
      overrides: [{ match: "sip0.cube0.pe0.pe_dma", params: { setup_ns: ns } }],
    });
    // T = dispatch + sum of T_mmu(piece) + setup_ns x pieces + T_fabric: only the third term moves.
    expect(gather(THREE_RUNS, withSetup(10)).ns - gather(THREE_RUNS, withSetup(0)).ns).toBeCloseTo(30, 9);
    // One run is one piece: 10 ns.
    expect(gather([0, 0, 32], withSetup(10)).ns - gather([0, 0, 32], withSetup(0)).ns).toBeCloseTo(10, 9);
  });

  it("offsets forming one run are one piece: the plain copy's time (hand-computed)", () => {
    // default.yaml: dispatch 2 + PE_MMU miss 50 (first piece) + hit 1 + hit 1 + the fabric reads.
    // A single 32 B piece at offset 0: 2 + 50 + 44.56, then its PE_TCM write 1 + 32 / 512 = 1.0625:
    // 97.6225 ns (the plain 32 B copy's time).
    expect(gather([0, 0, 32]).ns).toBeCloseTo(97.6225, 9);
    const plain = run({ kind: "dma", src: hbm(0), dst: tcm, bytes: 32 });
    expect(plain.ns).toBeCloseTo(97.6225, 9);
  });

  it("a gather is timed as a masked copy of the same device bytes (the same pieces)", () => {
    // Runs of 12, 8 and 20 bytes at device offsets 16, 80 and 160: of unequal lengths, so the
    // mask's runs are 3 pieces too.
    const indexed = gather([16, 0, 12, 80, 12, 8, 160, 20, 20], "default", 40);
    const masked = run({
      kind: "dma",
      src: hbm(0),
      dst: tcm,
      bytes: 180,
      mask: { runs: [16, 12, 80, 8, 160, 20] },
    });
    expect(indexed.bytes).toBe(40);
    expect(masked.bytes).toBe(40);
    expect(indexed.ns).toBe(masked.ns);
  });

  it("a scatter's runs go from the tile to their device offsets", () => {
    const store = run({
      kind: "dma",
      src: tcm,
      dst: hbm(0),
      bytes: 8,
      indexed: { runs: [0, 400, 4, 4, 0, 4] },
    });
    expect(store.bytes).toBe(8);
    expect(store.records[0]?.params).toMatchObject({
      src_addr: tcm,
      dst_addr: hbm(0),
      index_runs: [0, 400, 4, 4, 0, 4],
    });
  });

  it("refuses runs that leave the TCM tile or are not triples (MACHINE_INVALID_COMMAND naming the PE)", () => {
    expect(indexedRunsProblem([0, 0, 4], 4, true)).toBeNull();
    expect(indexedRunsProblem([0, 0], 4, true)).toMatch(/triples/);
    expect(indexedRunsProblem([0, 2, 4], 4, true)).toMatch(
      /leaves the 4-byte TCM tile at its destination side/,
    );
    expect(indexedRunsProblem([-8, 0, 4], 4, true)).toBeNull(); // the device side may lie before src
    const machine = machineOf("default");
    const done = machine.submit("sip0.cube0.pe0", [
      { kind: "dma", src: hbm(0), dst: tcm, bytes: 8, indexed: { runs: [0, 8, 4] } },
    ]);
    expect(() => machine.run(done)).toThrow(
      /sip0\.cube0\.pe0 command .*\(dma\): indexed run 0 \[0, 8, 4\] leaves/,
    );
  });
});
