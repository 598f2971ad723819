import { MemorySink, OpLogger } from "@kb/oplog";
import type { DmaCommand } from "@kb/spec";
import { encodeAddress, tcmAddress } from "@kb/topology";
import { describe, expect, it } from "vitest";
import { machineOf, runAlone } from "./test-support.js";

const sram = (offset: number) => encodeAddress({ sip: 0, cube: 0, space: "sram", offset });
const tcmOf = (pe: number, offset = 0) => tcmAddress(0, 0, pe, offset);

/** An f32 atomic add of `elements` consecutive elements from PE `pe`'s TCM into SRAM at `offset`. */
const add = (pe: number, offset: number, elements = 1): DmaCommand => ({
  kind: "dma",
  src: tcmOf(pe),
  dst: sram(offset),
  bytes: 4 * elements,
  indexed: { runs: [0, 0, 4 * elements] },
  atomic: { op: "add", dtype: "f32", old: tcmOf(pe, 4096) },
});

/** PE 0 and PE 1 each issue `commands[i]` at t = 0; the t_end of each PE's atomic record. */
function together(commands: [DmaCommand, DmaCommand]) {
  const sink = new MemorySink();
  const logger = new OpLogger(sink, { validate: true });
  const machine = machineOf("default", { opLogger: logger });
  const done = [0, 1].map((pe) => machine.submit(`sip0.cube0.pe${pe}`, [commands[pe] as DmaCommand]));
  for (const event of done) machine.run(event);
  logger.close();
  const end = (pe: number) =>
    sink.records.find((r) => r.component_id === `sip0.cube0.pe${pe}.pe_dma`)?.t_end as number;
  return { records: sink.records, end0: end(0), end1: end(1) };
}

describe("atomic DMA commands (read-modify-write at the memory)", () => {
  it("one op record: a dma_write with its runs and atomic { op, dtype, old_addr }", () => {
    const alone = runAlone(add(0, 64));
    expect(alone.records).toHaveLength(1);
    expect(alone.records[0]?.params).toEqual({
      src_addr: tcmOf(0),
      dst_addr: sram(64),
      nbytes: 4,
      src_space: "tcm",
      dst_space: "sram",
      index_runs: [0, 0, 4],
      atomic: { op: "add", dtype: "f32", old_addr: tcmOf(0, 4096) },
    });
  });

  it("is the read, the ALU op per element, then the write (hand-computed on default.yaml, SRAM)", () => {
    // T = dispatch 2 + T_mmu miss 50 + T_tcm + T_read + atomic_alu_ns 2 x 1 + T_mmu hit 1 + T_write,
    // where the plain 4 B read is 2 + 50 + T_read + T_tcm (the fill's TCM write) and the plain 4 B
    // write 2 + 50 + T_tcm + T_write (the drain's TCM read); the atomic reads its operand from
    // PE_TCM once: T_tcm = 1 + 4 / 512.
    const tcm = 1 + 4 / 512;
    const read = runAlone({ kind: "dma", src: sram(64), dst: tcmOf(0), bytes: 4 }).ns;
    const write = runAlone({ kind: "dma", src: tcmOf(0), dst: sram(64), bytes: 4 }).ns;
    const atomic = runAlone(add(0, 64)).ns;
    expect(atomic).toBeCloseTo(read + (write - 52) + 2 + 1 - tcm, 9);
    // The ALU term is atomic_alu_ns per element: 3 elements with 10 ns are 3 x (10 - 2) ns more.
    const alu10 = {
      overrides: [{ match: "sip0.cube0.pe0.pe_dma", params: { atomic_alu_ns: 10 } }],
    };
    expect(runAlone(add(0, 64, 3), alu10).ns - runAlone(add(0, 64, 3)).ns).toBeCloseTo(24, 9);
  });

  it("two PEs on the same address: the second starts its read when the first wrote", () => {
    // Alone, PE 1's atomic takes T1 = dispatch 2 + D1. Behind PE 0's on the same address it
    // waits for PE 0's write (end0), then takes D1: it ends at end0 + T1 - 2.
    const alone1 = together([add(0, 0), add(1, 4096)]);
    const same = together([add(0, 0), add(1, 0)]);
    expect(same.end0).toBeCloseTo(alone1.end0, 9);
    expect(same.end1).toBeCloseTo(same.end0 + alone1.end1 - 2, 9);
    expect(same.end1).toBeGreaterThan(alone1.end1);
    // The op log's order is the order the atomics were applied in: PE 0's record first.
    expect(same.records.map((r) => r.component_id)).toEqual([
      "sip0.cube0.pe0.pe_dma",
      "sip0.cube0.pe1.pe_dma",
    ]);
  });

  it("refuses an atomic read into TCM, or a cas without its compared tile", () => {
    const machine = machineOf("default");
    const cas = { ...add(0, 0), atomic: { op: "cas" as const, dtype: "f32" as const, old: tcmOf(0, 4096) } };
    expect(() => machine.run(machine.submit("sip0.cube0.pe0", [cas]))).toThrow(
      /sip0\.cube0\.pe0 command .*\(dma\): atomic\.cmp is the compared tile of a cas/,
    );
  });
});
