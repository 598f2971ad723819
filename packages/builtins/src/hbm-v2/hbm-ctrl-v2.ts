import type { MemoryModelContext, ModelStat, ModelStatInfo } from "@kb/components";
import { defineMemoryModel, type MemoryModel, type MemoryModelDefinition } from "@kb/components";
import { HBM_CTRL_V2_ENERGY } from "../energy/hbm.js";
import { batchQueues } from "./batch-port.js";
import { CommandBus } from "./command-bus.js";
import { HbmCommandLog } from "./command-log.js";
import { type HbmPort, type HbmPortStats, HbmPort as Port } from "./controller.js";
import { LocateCache } from "./locate-cache.js";
import { type HbmCtrlV2Config, hbmCtrlV2Config, hbmCtrlV2Params } from "./params.js";
import { RequestPort } from "./request-port.js";
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
  /** The model's counters per pseudo-channel ({@link HBM_CTRL_V2_COUNTERS}), as the results report them. */
  stats(): readonly ModelStat[];
  /** Counters of port `port`, in full (reads and writes apart, predictions). */
  stats(port: number): HbmPortStats;
  /**
   * Starts logging every DRAM command each pseudo-channel issues from now on (`--dram-trace`);
   * returns the logs, one per port (the same ones on a second call).
   */
  recordCommands(): readonly HbmCommandLog[];
}

/** A counter of `hbm_ctrl_v2` and how it is read from a port's {@link HbmPortStats}. */
interface PortCounter extends ModelStatInfo {
  readonly of: (stats: HbmPortStats) => number;
}

const RUN =
  "runs of bursts (reads and writes; a request's bursts to one bank and row are one run) whose first command";

/**
 * What `hbm_ctrl_v2` publishes, per pseudo-channel (`perPort[p]`: channel floor(p /
 * pseudo_channels), pseudo-channel p mod pseudo_channels). Row outcomes count runs of bursts by
 * their first command, not bursts; commands count what the controller issued up to the end of the
 * run (an idle port counts the refreshes it slept through when it next wakes).
 */
const COUNTERS: readonly PortCounter[] = [
  {
    name: "row_hits",
    unit: "count",
    description: `Row hits: ${RUN} found its row open.`,
    of: (s) => s.readHits + s.writeHits,
  },
  {
    name: "row_misses",
    unit: "count",
    description: `Row misses: ${RUN} found its bank closed (an ACT).`,
    of: (s) => s.readMisses + s.writeMisses,
  },
  {
    name: "row_conflicts",
    unit: "count",
    description: `Row conflicts: ${RUN} found another row open (a PRE, then an ACT).`,
    of: (s) => s.readConflicts + s.writeConflicts,
  },
  { name: "act", unit: "count", description: "ACT commands (rows opened).", of: (s) => s.activates },
  {
    name: "pre",
    unit: "count",
    description:
      "Banks precharged: PREs on row conflicts, closed-page auto-precharges, and each open bank a refresh's PREab closed (ACTs less the banks open at the end).",
    of: (s) => s.precharges,
  },
  {
    name: "rd",
    unit: "count",
    description: "RD commands (read bursts of burst_bytes).",
    of: (s) => s.readBursts,
  },
  {
    name: "wr",
    unit: "count",
    description: "WR commands (write bursts of burst_bytes).",
    of: (s) => s.writeBursts,
  },
  {
    name: "ref",
    unit: "count",
    description: "Refresh commands (REFab, or REFpb per bank).",
    of: (s) => s.refreshes,
  },
  {
    name: "write_drain_ns",
    unit: "ns",
    description:
      "Time in write-drain mode: from the first command in write mode to the first back in read mode (idle time between counts; a drain still going counts up to the last command).",
    of: (s) => s.writeDrainNs,
  },
  ...(["read", "write"] as const).flatMap((kind): PortCounter[] => [
    {
      name: `${kind}_queue_mean`,
      unit: "bursts",
      description: `Mean bursts waiting in the ${kind} queue (admitted, not yet issued; an entry that opened its bank leaves one burst's room, as in Ramulator), from 0 to the end of the run; under queue_scope channel a pseudo-channel's share of its channel's queue (the channel's mean is the sum over its pseudo-channels).`,
      of: (s) => (kind === "read" ? s.readQueueMean : s.writeQueueMean),
    },
    {
      name: `${kind}_queue_max`,
      unit: "bursts",
      description: `Most bursts waiting in the ${kind} queue at once (a pseudo-channel's share of its channel's queue under queue_scope channel); the total sums the pseudo-channels' maxima.`,
      of: (s) => (kind === "read" ? s.readQueueMax : s.writeQueueMax),
    },
  ]),
  {
    name: "active_ns",
    unit: "ns",
    description:
      "Time with a bank open or a refresh running (DRAMPower's rank active time: active standby, IDD3N, instead of precharged, IDD2N).",
    of: (s) => s.activeNs,
  },
];

/** The counters `hbm_ctrl_v2` publishes (`kb components list`; `components[].stats` of the results). */
export const HBM_CTRL_V2_COUNTERS: readonly ModelStatInfo[] = COUNTERS.map(({ name, unit, description }) => ({
  name,
  unit,
  description,
}));

/** The memory-model definition of `hbm_ctrl_v2` (`hbmCtrlV2WithPolicies` derives others from it). */
export const hbmCtrlV2Definition = {
  kind: "hbm_ctrl",
  impl: "hbm_ctrl_v2",
  description:
    "HBM stack controller, bank- and row-aware: per pseudo-channel, banks with open rows, read and write queues (FR-FCFS, FCFS or capped FR-FCFS; write drain), JEDEC timing (tRCD, tRP, tRAS, tRC, tCCD, tRRD, tFAW, tWTR, tRTW, tWR, tRTP, CL, CWL, burst), all-bank or per-bank refresh, open, closed or adaptive page; presets hbm2, hbm2e, hbm3, hbm3e.",
  params: hbmCtrlV2Params,
  counters: HBM_CTRL_V2_COUNTERS,
  energy: HBM_CTRL_V2_ENERGY,
  create: (context, params): HbmCtrlV2Model => {
    const config = hbmCtrlV2Config(params);
    if (config.closedForm === "request" || config.closedForm === "batch")
      return requestModel(context, config);
    const ports: HbmPort[] = [];
    const cache = locateCacheOf(context, config);
    const hub = new WakeHub(context.env, ports, context.ports);
    for (let i = 0; i < context.ports; i++) {
      ports.push(new Port(config, context.env, context.addressMap, hub, i, cache));
    }
    if (config.channelBus) {
      // One controller per channel: one row command per controller tick and one column command
      // per CK for all its pseudo-channels.
      for (let first = 0; first < ports.length; first += config.pseudoChannels) {
        const bus = new CommandBus(config.timing.preCmd, config.timing.colCmd, config.timing.actCmd);
        for (const port of ports.slice(first, first + config.pseudoChannels)) port.sched.bus = bus;
      }
    }
    if (config.channelQueues && config.pseudoChannels > 1) {
      // One controller per channel: its pseudo-channels share the read and write queues.
      for (const port of ports) {
        port.peers = channelPeers(ports, config.pseudoChannels, port);
        port.sched.peers = port.peers.map((peer) => peer.sched);
      }
    }
    const portOf = portIn(ports);
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
      recordCommands: () => {
        for (const port of ports) port.sched.commandLog ??= new HbmCommandLog();
        return ports.map((port) => port.sched.commandLog as HbmCommandLog);
      },
      stats: statsOver(ports),
    };
  },
} satisfies MemoryModelDefinition<typeof hbmCtrlV2Params>;

export const hbmCtrlV2 = defineMemoryModel(hbmCtrlV2Definition);

/**
 * `closed_form: request`: one {@link RequestPort} per pseudo-channel, each request scheduled whole
 * at its arrival and answered at once (no timers).
 */
function requestModel(context: MemoryModelContext, config: HbmCtrlV2Config): HbmCtrlV2Model {
  const cache = locateCacheOf(context, config);
  const ports: RequestPort[] = [];
  for (let i = 0; i < context.ports; i++) {
    ports.push(new RequestPort(config, context.env, context.addressMap, i, cache));
  }
  if (config.channelQueues && config.pseudoChannels > 1) {
    for (const port of ports) port.peers = channelPeers(ports, config.pseudoChannels, port);
  }
  const tracking = { on: false };
  for (const port of ports) port.tracking = tracking;
  const portOf = portIn(ports);
  // closed_form batch: the requests held and ordered per batch (batch-port.ts).
  const batch =
    config.closedForm === "batch" ? batchQueues(context.env, context.addressMap, cache, ports) : null;
  return {
    config,
    maxPending: config.maxPending,
    service(request) {
      if (request.bytes <= 0) return { startNs: request.arrivalNs, endNs: request.arrivalNs, busyNs: 0 };
      if (batch !== null) {
        batch.arrive(request.port, request);
        return undefined;
      }
      return portOf(request.port).serve(request);
    },
    peak: () => ({ bytesPerNs: (context.ports * config.burstBytes) / config.timing.tBL }),
    room: (port, kind) => {
      const k = kind === "read" ? 0 : 1;
      return batch !== null ? batch.room(port, k) : portOf(port).room(k);
    },
    recordCommands: () => {
      for (const port of ports) port.commandLog ??= new HbmCommandLog();
      return ports.map((port) => port.commandLog as HbmCommandLog);
    },
    stats: statsOver(ports),
  };
}

/** The other pseudo-channels of `port`'s channel (`pseudoChannels` ports a channel, in order). */
function channelPeers<P extends { readonly port: number }>(
  ports: readonly P[],
  pseudoChannels: number,
  port: P,
): P[] {
  const first = port.port - (port.port % pseudoChannels);
  return ports.slice(first, first + pseudoChannels).filter((peer) => peer !== port);
}

/** The port of a stack by its index (a RangeError for another index). */
function portIn<P>(ports: readonly P[]): (port: number) => P {
  return (port) => {
    const found = ports[port];
    if (found === undefined) throw new RangeError(`hbm_ctrl_v2: no port ${port} (0 .. ${ports.length - 1}).`);
    return found;
  };
}

/** The model's `stats`: one port's counters, or each counter summed over the ports with its per-port values. */
function statsOver(ports: readonly { stats(): HbmPortStats }[]): HbmCtrlV2Model["stats"] {
  return ((port?: number) => {
    if (port !== undefined) return portIn(ports)(port).stats();
    const perPort = ports.map((each) => each.stats());
    return COUNTERS.map(({ of, ...info }) => {
      const values = perPort.map(of);
      return { ...info, total: values.reduce((sum, value) => sum + value, 0), perPort: values };
    });
  }) as HbmCtrlV2Model["stats"];
}

/** The burst-location cache the model's ports use: the one shared by every stack with its address map. */
function locateCacheOf(context: MemoryModelContext, config: HbmCtrlV2Config): LocateCache {
  const map = context.addressMap;
  if (map === null) return new LocateCache();
  return LocateCache.shared(map, config.burstBytes, config.bankGroups, config.banksPerGroup);
}
