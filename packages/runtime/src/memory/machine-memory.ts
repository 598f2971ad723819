import { ipcqRegionBytes, type Machine } from "@kb/components";
import { DeviceMemory } from "./device-memory.js";

/**
 * The allocators of a machine's memories, sized from its topology and its PEs' params: HBM and
 * SRAM per cube, and per PE the TCM less the IPCQ slots at its end (phase 1 delivers payload
 * bytes there) and the scheduler's reserved bytes.
 */
export function deviceMemoryOf(machine: Machine, pageBytes?: number): DeviceMemory {
  const topology = machine.graph.topology;
  const pe0 = "sip0.cube0.pe0";
  const paramsOf = (id: string): Record<string, unknown> =>
    machine.has(id) ? (machine.component(id).params as Record<string, unknown>) : {};
  const tcm = machine.has(`${pe0}.pe_tcm`) ? Number(paramsOf(`${pe0}.pe_tcm`).capacity_bytes) : Number.NaN;
  const reserved = machine.has(`${pe0}.pe_scheduler`)
    ? Number(paramsOf(`${pe0}.pe_scheduler`).reserved_tcm_bytes)
    : Number.NaN;
  const cpu = paramsOf(`${pe0}.pe_cpu`);
  const ipcqBytes =
    cpu.ipcq_slots === undefined ? 0 : ipcqRegionBytes(Number(cpu.ipcq_slots), Number(cpu.ipcq_slot_bytes));
  return new DeviceMemory({
    sips: topology.system.sips,
    cubesPerSip: topology.sip.cubes,
    pesPerCube: topology.cube.noc.rows * topology.cube.noc.cols,
    hbmBytesPerCube: topology.cube.hbm.capacity_bytes,
    sramBytesPerCube: topology.cube.sram.capacity_bytes,
    tcmBytesPerPe: (Number.isFinite(tcm) ? tcm : 4 * 2 ** 20) - ipcqBytes,
    ...(pageBytes !== undefined ? { pageBytes } : {}),
    ...(Number.isFinite(reserved) ? { tcmReservedBytes: reserved } : {}),
  });
}
