import { defineMemoryModel, type MemoryModel, type MemoryModelDefinition } from "../../memory.js";
import { type HbmPort, type HbmPortStats, LocateCache, HbmPort as Port } from "./controller.js";
import { type HbmCtrlV2Config, hbmCtrlV2Config, hbmCtrlV2Params } from "./params.js";
import { WakeHub } from "./wake-hub.js";

/** What `hbm_ctrl_v2`'s `create` returns: a memory model plus its ports, for benches and tests. */
export interface HbmCtrlV2Model extends MemoryModel {
  /** The resolved configuration (timing in ns, organisation, knobs). */
  readonly config: HbmCtrlV2Config;
  /**
   * Bursts a request of `kind` could put into port `port`'s read or write queue now: a
   * Ramulator-style front end accepts a request only when all its bursts fit (the SDK's
   * back-pressure, `maxPending`, counts whole requests instead).
   */
  room(port: number, kind: "read" | "write"): number;
  /** Counters of port `port`. */
  stats(port: number): HbmPortStats;
}

/** The memory-model definition of `hbm_ctrl_v2` (`hbmCtrlV2WithPolicies` derives others from it). */
export const hbmCtrlV2Definition = {
  kind: "hbm_ctrl",
  impl: "hbm_ctrl_v2",
  description:
    "HBM stack controller, bank- and row-aware: per pseudo-channel, banks with open rows, read and write queues (FR-FCFS, FCFS or capped FR-FCFS; write drain), JEDEC timing (tRCD, tRP, tRAS, tRC, tCCD, tRRD, tFAW, tWTR, tRTW, tWR, tRTP, CL, CWL, burst), all-bank or per-bank refresh, open, closed or adaptive page; presets hbm2, hbm2e, hbm3, hbm3e.",
  params: hbmCtrlV2Params,
  create: (context, params): HbmCtrlV2Model => {
    const config = hbmCtrlV2Config(params);
    const ports: HbmPort[] = [];
    const cache = new LocateCache();
    const hub = new WakeHub(context.env, ports, context.ports);
    for (let i = 0; i < context.ports; i++) {
      ports.push(new Port(config, context.env, context.addressMap, hub, i, cache));
    }
    const portOf = (port: number): HbmPort => {
      const found = ports[port];
      if (found === undefined)
        throw new RangeError(`hbm_ctrl_v2: no port ${port} (0 .. ${ports.length - 1}).`);
      return found;
    };
    return {
      config,
      maxPending: config.maxPending,
      service(request) {
        if (request.bytes <= 0) return { startNs: request.arrivalNs, endNs: request.arrivalNs, busyNs: 0 };
        portOf(request.port).arrive(request);
        return undefined;
      },
      peak: () => ({ bytesPerNs: (context.ports * config.burstBytes) / config.timing.tBL }),
      room: (port, kind) => portOf(port).room(kind),
      stats: (port) => portOf(port).stats(),
    };
  },
} satisfies MemoryModelDefinition<typeof hbmCtrlV2Params>;

export const hbmCtrlV2 = defineMemoryModel(hbmCtrlV2Definition);
