import { type OpLogSink, opRecordToJson } from "@kb/oplog";
import { importedSourceFiles, isBench, PlanEstimate, type RunProgress, runBenchCore } from "@kb/runtime";
import { LIMIT_FIELDS, type RunDoneMessage, type RunProgressMessage, type RunRequest } from "../protocol.js";
import { KB_PACKAGE_VERSIONS } from "./bundled-modules.js";
import { evaluateFiles, SourceError } from "./virtual-modules.js";

// One RunRequest, run: the files evaluated, then runBenchCore of @kb/runtime (the orchestration
// `kb run` uses) with the topology's text, the op log in memory and progress posted to the page.

/** Progress messages are posted at most this often, ms (the last of each stage always is). */
const PROGRESS_EVERY_MS = 100;

/**
 * Runs `request` and returns its done message; posts progress with `post` as it goes. Throws
 * {@link SourceError} for the files, and what the run throws (KbErrors, located).
 */
export async function runRequest(
  request: RunRequest,
  post: (message: RunProgressMessage) => void,
): Promise<RunDoneMessage> {
  const started = performance.now();
  post({ type: "progress", id: request.id, stage: "transpile" });
  const exports = evaluateFiles(request.files, request.main);
  const bench = exports.default;
  if (!isBench(bench)) {
    throw new SourceError(
      `${request.main} does not export a bench: write \`export default defineBench({ name, params, run })\` (defineBench of @kb/runtime).`,
      { file: request.main, line: 1, column: 1 },
    );
  }
  const opLogLines: string[] | null = request.opLog ? [] : null;
  const opLogSink: OpLogSink | null =
    opLogLines === null ? null : { write: (record) => void opLogLines.push(opRecordToJson(record)) };
  const progress = new ProgressPoster(request.id, post);
  const run = await runBenchCore({
    bench,
    params: request.params,
    topology: request.topology.text,
    topologyName: request.topology.name,
    // The bench's file and the files it imports, found as `kb run` finds them: the same digest.
    benchSource: importedSourceFiles(request.main, (path) => request.files[path]),
    packages: KB_PACKAGE_VERSIONS,
    verify: request.verify,
    limits: { ...request.limits, names: LIMIT_FIELDS },
    trace: request.trace ? {} : undefined,
    opLogSink,
    benchFile: request.main,
    isUserError: (error) => topFrameFile(error) in request.files,
    onProgress: (event) => progress.show(event),
  });
  return {
    type: "done",
    id: request.id,
    resultsJson: `${JSON.stringify(run.results, null, 2)}\n`,
    results: run.results,
    passed: run.passed,
    trace: run.recorder === null ? null : JSON.stringify(run.recorder.toChromeTrace("kernbench-ts")),
    opLog: opLogLines === null ? null : opLogLines.map((line) => `${line}\n`).join(""),
    wall: {
      totalMs: performance.now() - started,
      phase1Ms: run.wall.runMs,
      phase2Ms: run.wall.phase2Ms,
    },
  };
}

/** The file of the top frame of `error`'s stack (`benches/x.ts` for the bench's own code), or "". */
export function topFrameFile(error: unknown): string {
  if (!(error instanceof Error) || error.stack === undefined) return "";
  return /^\s+at (?:.*? \()?(.+?):\d+:\d+\)?$/m.exec(error.stack)?.[1] ?? "";
}

/**
 * Posts the run's progress as the page shows it: a stage change at once, phase 1 and phase 2
 * counts at most every {@link PROGRESS_EVERY_MS} ms of wall time (the simulation's own time is
 * untouched: this only reads the clock to drop messages).
 */
class ProgressPoster {
  private stage: RunProgressMessage["stage"] | null = null;
  private postedAt = 0;

  constructor(
    private readonly id: number,
    private readonly post: (message: RunProgressMessage) => void,
  ) {}

  /** Wall-time estimates of the host program's plan and of phase 2's replay (display only). */
  private readonly plan = new PlanEstimate();
  private readonly replay = new PlanEstimate();

  show(event: RunProgress): void {
    const now = performance.now();
    // Every plan event feeds the estimate; the throttle below drops only posts.
    if (event.stage === "phase1" && event.plan !== null) this.plan.etaMs(event.plan, now);
    if (event.stage === "phase2") this.replay.etaMs(event, now);
    if (event.stage === this.stage && now - this.postedAt < PROGRESS_EVERY_MS) return;
    this.stage = event.stage;
    this.postedAt = now;
    const { id } = this;
    if (event.stage === "phase1") {
      const { simTimeNs, events, plan } = event;
      const eta = plan === null ? null : this.plan.etaMs(plan, now);
      this.post({
        type: "progress",
        id,
        stage: "phase1",
        simTimeNs,
        events,
        ...(plan === null ? {} : { plan }),
        ...(eta === null ? {} : { etaMs: eta }),
      });
    } else if (event.stage === "phase2") {
      const eta = this.replay.etaMs(event, now);
      this.post({
        type: "progress",
        id,
        stage: "phase2",
        done: event.done,
        total: event.total,
        ...(eta === null ? {} : { etaMs: eta }),
      });
    } else if (event.stage === "reference") {
      const { check, index, count, fraction } = event.reference;
      this.post({ type: "progress", id, stage: "reference", reference: { check, index, count, fraction } });
    } else {
      this.post({ type: "progress", id, stage: event.stage });
    }
  }
}
