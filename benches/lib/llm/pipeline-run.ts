import type { LaunchRecord, Simulator } from "@kb/runtime";
import type { Slot } from "./pipeline-schedule.js";

/** What a pipeline bench does for one task: its launches' records, in order. */
export interface PipelineTasks {
  /** Micro-batch `microBatch` through stage `stage`'s layers. */
  forward(stage: number, microBatch: number): Promise<readonly LaunchRecord[]>;
  /** Stage `stage`'s output of `microBatch` to stage `stage + 1` (not called for the last stage). */
  send(stage: number, microBatch: number): Promise<readonly LaunchRecord[]>;
}

/** The simulated window of a task's launches: the first one's start to the last one's end. */
export function taskWindow(records: readonly LaunchRecord[]): { startNs: number; endNs: number } {
  return {
    startNs: Math.min(...records.map((record) => record.startNs)),
    endNs: Math.max(...records.map((record) => record.endNs)),
  };
}

/**
 * Runs a GPipe forward pipeline of `pp` stages and `m` micro-batches on the simulator, each stage
 * a host stream (`sim.streams`): stage s takes the micro-batches in order, micro-batch mb once
 * stage s - 1 has sent it (a `sim.signal`), runs its forward, then sends it on before it takes
 * mb + 1. The stages' launches run at the same simulated time and contend for the machine.
 * Returns each forward's and each send's simulated window (in completion order) for
 * `pipelineTimeline`. `sim.progress` counts the forwards done.
 */
export async function runPipeline(
  sim: Simulator,
  pp: number,
  m: number,
  tasks: PipelineTasks,
): Promise<{ forwards: Slot[]; sends: Slot[] }> {
  const arrived = Array.from({ length: pp }, (_stage, s) =>
    Array.from({ length: m }, (_input, mb) => sim.signal(`micro-batch ${mb} sent to stage ${s}`)),
  );
  const forwards: Slot[] = [];
  const sends: Slot[] = [];
  const total = pp * m;
  await sim.streams(
    Array.from({ length: pp }, (_stage, stage) => async () => {
      for (let microBatch = 0; microBatch < m; microBatch++) {
        if (stage > 0) await arrived[stage]?.[microBatch]?.wait();
        sim.progress(
          forwards.length,
          total,
          `micro-batch ${microBatch + 1} of ${m} on stage ${stage + 1} of ${pp}`,
        );
        forwards.push({ stage, microBatch, ...taskWindow(await tasks.forward(stage, microBatch)) });
        if (stage === pp - 1) continue;
        sends.push({ stage, microBatch, ...taskWindow(await tasks.send(stage, microBatch)) });
        arrived[stage + 1]?.[microBatch]?.fire();
      }
    }),
  );
  sim.progress(total, total, "pipeline done");
  return { forwards, sends };
}
