import { defineMemoryModel, type MemoryModel, type MemoryRequest, type MemoryTiming } from "@kb/components";
import { hbmTopologyParams, queueDepthParam } from "@kb/spec";
import * as z from "zod";

/** The busy state of one memory port (an HBM pseudo-channel, an SRAM). */
interface PortBus {
  /** Time until which the port's data bus is promised (ns). */
  busyUntil: number;
}

/**
 * The analytic port timing of `hbm_ctrl_v1` and `sram_v1`: a read streams its bytes from
 * `max(arrival + access, busyUntil)`; a write takes the bus from `max(arrival, busyUntil)` and
 * commits at `max(bus end, tail) + access`. Bus time is per flit: `ceil(bytes / flit) x flit /
 * bw`. The access latency overlaps earlier transfers.
 */
function analyticPorts(ports: number, bwGbs: number, flitBytes: number, accessNs: number): MemoryModel {
  const buses: PortBus[] = Array.from({ length: ports }, () => ({ busyUntil: 0 }));
  const nsPerByte = 1 / bwGbs;
  return {
    service(request: MemoryRequest): MemoryTiming {
      const bus = buses[request.port] as PortBus;
      const busNs = Math.ceil(request.bytes / flitBytes) * flitBytes * nsPerByte;
      if (request.kind === "read") {
        const startNs = Math.max(request.arrivalNs + accessNs, bus.busyUntil);
        bus.busyUntil = startNs + busNs;
        return { startNs, endNs: startNs + busNs, busyNs: busNs };
      }
      const startNs = Math.max(request.arrivalNs, bus.busyUntil);
      bus.busyUntil = startNs + busNs;
      return { startNs, endNs: Math.max(startNs + busNs, request.tailNs) + accessNs, busyNs: busNs };
    },
    peak: () => ({ bytesPerNs: ports * bwGbs }),
  };
}

export const hbmCtrlV1 = defineMemoryModel({
  kind: "hbm_ctrl",
  impl: "hbm_ctrl_v1",
  analytic: true,
  description:
    "HBM stack controller, analytic: each pseudo-channel has its own bus (pc_bw_gbs) and busy state, access latency overlapped with earlier transfers, data committed per flit; no banks or rows.",
  params: hbmTopologyParams,
  create: (context, params) =>
    analyticPorts(context.ports, params.pc_bw_gbs, params.flit_bytes, params.access_latency_ns),
});

const sramParams = z.strictObject({
  capacity_bytes: z.number().int().min(0).describe("Capacity in bytes (set by the topology)."),
  bw_gbs: z.number().positive().describe("Bandwidth in GB/s."),
  latency_ns: z.number().min(0).describe("Access latency in ns."),
  flit_bytes: z.number().int().min(1).default(64).describe("Access granularity in bytes."),
  queue_depth: queueDepthParam(16),
});

export const sramV1 = defineMemoryModel({
  kind: "sram",
  impl: "sram_v1",
  analytic: true,
  description:
    "Shared SRAM of a cube: one port of bw_gbs, latency_ns per access overlapped with earlier transfers.",
  params: sramParams,
  create: (_context, params) => analyticPorts(1, params.bw_gbs, params.flit_bytes, params.latency_ns),
});
