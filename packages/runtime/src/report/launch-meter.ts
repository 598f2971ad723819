import type { Machine } from "@kb/components";
import { bottleneckVerdict } from "../bottleneck.js";
import { readEnergy } from "../energy/reading.js";
import { launchEnergy } from "../energy/summary.js";
import type { LaunchRecord } from "../results.js";
import { busyEvidence, snapshotBusy } from "./launch-busy.js";
import { busiestLinkSince, launchRoofline } from "./launch-roofline.js";
import { gemmEnginesSince, type HbmFootprint, launchDetail, snapshotLevels } from "./launch-work.js";
import { snapshotWork, workSince } from "./work.js";

/**
 * @internal The counters of a machine at a launch's start, to measure the launch when it ends:
 * its work and roofline, per-level traffic, per-launch figures and bottleneck verdict.
 */
export class LaunchMeter {
  private readonly work;
  private readonly levels;
  private readonly busy;
  private readonly energy;

  constructor(
    private readonly machine: Machine,
    private readonly startNs: number,
  ) {
    this.work = snapshotWork(machine);
    this.levels = snapshotLevels(machine);
    this.busy = snapshotBusy(machine);
    this.energy = readEnergy(machine);
  }

  /**
   * The launch's record, now that it has ended; `footprint` holds the HBM ranges its PE_DMAs
   * touched, `shape` its programs and the PEs of its grid (for the verdict's tail and imbalance note).
   */
  finish(
    name: string,
    pes: number,
    footprint: HbmFootprint,
    shape?: { readonly programs: number; readonly pes: number },
  ): LaunchRecord {
    const machine = this.machine;
    const endNs = machine.env.now;
    const work = { startNs: this.startNs, endNs, ...workSince(machine, this.work) };
    const engines = gemmEnginesSince(machine, this.work);
    const detail = launchDetail(work, this.levels, snapshotLevels(machine), footprint, engines);
    const evidence = busyEvidence(
      machine,
      this.busy,
      endNs - this.startNs,
      detail.achieved.hbmFraction,
      shape,
    );
    const roofline = launchRoofline(work, detail, busiestLinkSince(machine, this.busy));
    const energy = launchEnergy(machine, this.energy);
    return { name, pes, ...work, ...detail, verdict: bottleneckVerdict(evidence), roofline, energy };
  }
}
