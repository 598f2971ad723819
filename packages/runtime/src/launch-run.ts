import { type CommandSource, type Machine, type PeCommand, tcmAddress } from "@kb/components";
import type { Event } from "@kb/des";
import {
  type Kernel,
  type KernelHost,
  type KernelMemory,
  type KernelPlacement,
  type KernelRegistry,
  KernelRunner,
} from "@kb/tl";
import { type Grid, type GridSpec, gridPlacements, isGrid } from "./grid.js";
import { refuseFreedArgs } from "./host-checks.js";
import { defaultScratchBytes } from "./launch-scratch.js";
import type { DeviceMemory } from "./memory/device-memory.js";
import { ProgramQueue, programCount, programQueues, resolveProgramGrid } from "./program-grid.js";
import { LaunchMeter } from "./report/launch-meter.js";
import { HbmFootprint } from "./report/launch-work.js";
import type { LaunchRecord } from "./results.js";
import type { KernelInstance, LaunchOptions } from "./simulator-options.js";
import type { IssuingCall, SiteTap } from "./sites.js";

/** What a launch needs of its simulator (`Simulator.launch` gives it). */
export interface LaunchSite {
  readonly machine: Machine;
  readonly device: DeviceMemory;
  readonly host: KernelHost;
  readonly kernels: KernelRegistry;
  readonly sites: SiteTap | null;
  readonly scratchBytes: number | undefined;
  readonly dispatchCycles: number;
  readonly overlaps: LaunchOverlaps;
  grid(spec: GridSpec): Grid;
  kernelMemory(): KernelMemory;
  /** Runs the machine (or, in a host stream, waits) until `event` is processed. */
  drive(event: Event<unknown>, what: string): Promise<void>;
  /** Forgets a freed range's bytes in both phases. */
  forget(address: number, bytes: number): void;
  /** Keeps a finished launch's record for the results. */
  keep(record: LaunchRecord): void;
}

/**
 * The launches in flight (host streams overlap them): which ran during part of which, for the
 * records' `overlaps`.
 */
export class LaunchOverlaps {
  private readonly inFlight = new Map<object, { readonly name: string; readonly others: Set<string> }>();

  /** A launch starts: it overlaps every launch in flight. */
  begin(name: string): object {
    const token = {};
    const others = new Set<string>();
    for (const launch of this.inFlight.values()) {
      launch.others.add(name);
      others.add(launch.name);
    }
    this.inFlight.set(token, { name, others });
    return token;
  }

  /** A launch ends: the names of the launches that ran during part of it, sorted. */
  end(token: object): string[] {
    const launch = this.inFlight.get(token);
    this.inFlight.delete(token);
    return launch === undefined ? [] : [...launch.others].sort();
  }
}

/** `Simulator.launch`'s work (its documentation is there). */
export async function runLaunch<Args extends readonly unknown[]>(
  site: LaunchSite,
  kernel: Kernel<Args>,
  options: LaunchOptions<Args>,
): Promise<LaunchRecord> {
  const machine = site.machine;
  const name = options.name ?? (kernel.name || "kernel");
  const programs =
    options.programs === undefined ? null : resolveProgramGrid(name, options.programs, machine.env.now);
  refuseFreedArgs(name, options.args);
  site.kernels.define(name, kernel as Kernel);
  const grid = isGrid(options.grid) ? options.grid : site.grid(options.grid ?? {});
  const all = gridPlacements(grid);
  // PEs without a first program stay out of the launch.
  const placements = programs === null ? all : all.slice(0, Math.min(all.length, programCount(programs)));
  const memory = site.kernelMemory();
  const scratch: { address: number; bytes: number; offset: number }[] = [];
  const instances: KernelInstance[] = [];
  /** The runner of a program (instance `slot` of `onInstance`) on the PE of `placements[pe]`. */
  const runner = (slot: number, placement: KernelPlacement, pe: number, ipcqRefusal?: string) => {
    const { offset, bytes } = scratch[pe] as { offset: number; bytes: number };
    const tlOptions = {
      kernel: name,
      placement,
      scratch: { offset, bytes },
      dispatchCycles: site.dispatchCycles,
    };
    const commands: PeCommand[] | null = options.onInstance === undefined ? null : [];
    if (commands !== null) instances[slot] = { options: tlOptions, commands };
    return new KernelRunner(site.host, kernel as Kernel, options.args, {
      ...tlOptions,
      memory,
      ...(commands !== null ? { record: commands } : {}),
      ...(ipcqRefusal !== undefined ? { ipcqRefusal } : {}),
    });
  };
  try {
    for (const placement of placements) {
      const bytes = site.scratchBytes ?? defaultScratchBytes(site.device, placement);
      const address = site.device.allocTcm(
        bytes,
        { sip: placement.sip, cube: placement.cube, pe: placement.peIndex },
        `${name} scratch`,
      );
      const offset = address - tcmAddress(placement.sip, placement.cube, placement.peIndex, 0);
      scratch.push({ address, bytes, offset });
    }
    const sources: CommandSource[] =
      programs === null
        ? placements.map((placement, index) => runner(index, placement, index))
        : programQueues({
            machine,
            kernel: name,
            grid: programs,
            placements,
            dispatchCycles: site.dispatchCycles,
            start: runner,
          });
    const meter = new LaunchMeter(machine, machine.env.now);
    const sites = site.sites;
    const tally = sites?.begin(machine, name) ?? null;
    const overlap = site.overlaps.begin(name);
    const done = machine.launch({
      pes: placements.map((placement) => placement.pe),
      program: (pe, index) => {
        const source = sources[index] as CommandSource;
        return sites === null || tally === null
          ? source
          : sites.source(source, pe, callInFlight(source), tally);
      },
      name,
    });
    let overlaps: string[] = [];
    let footprint: HbmFootprint;
    try {
      footprint = await HbmFootprint.during(machine, () => site.drive(done, `launch ${name}`));
    } finally {
      overlaps = site.overlaps.end(overlap);
    }
    const measured = meter.finish(name, placements.length, footprint, {
      programs: programs === null ? placements.length : programCount(programs),
      pes: all.length,
    });
    const lines = sites === null || tally === null ? null : sites.finish(tally);
    const record: LaunchRecord = {
      ...measured,
      ...(lines === null ? {} : { sites: lines }),
      ...(overlaps.length === 0 ? {} : { overlaps }),
    };
    site.keep(record);
    for (const instance of instances) options.onInstance?.(instance);
    return record;
  } finally {
    // The scratch is free again: its bytes go in both phases, as a freed tensor's do.
    for (const { address, bytes } of scratch) {
      site.device.free(address);
      site.forget(address, bytes);
    }
  }
}

/** How a launch's command source tells the tl call in flight (the line of the command it hands out). */
function callInFlight(source: CommandSource): () => IssuingCall | null {
  if (source instanceof ProgramQueue) return () => source.callInFlight();
  if (source instanceof KernelRunner) return () => source.tl._callInFlight();
  return () => null;
}
