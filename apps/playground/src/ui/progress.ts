import type { RunResults } from "@kb/runtime";
import { energyPhrase } from "@kb/web-ui/energy-model";
import { formatNs } from "@kb/web-ui/format";
import type { RunProgressMessage } from "../protocol.js";

// The progress line of a run, in the words of `kb run`'s progress line (apps/cli's
// progress-line.ts), with the wall time since Run. The page redraws it on every progress message
// and on a timer of its own, so the seconds keep counting while the worker is busy between
// messages (a host program filling a large tensor sends none).

/** A count with thousands separators (`1,727`). */
export function count(value: number): string {
  return value.toLocaleString("en-US");
}

/**
 * The line shown when a run is done: `Done in 1.2 s: simulated 5.352 µs, 3.5 µJ, 1.75 W, 1,727
 * events · verification PASS.` (the energy as the results carry it: total, average power, J per
 * token when the bench counts tokens; none for results without energy). `verdict` is appended as given.
 */
export function doneText(
  results: Pick<RunResults, "simTimeNs" | "events" | "energy">,
  seconds: string,
  verdict: string,
): string {
  const energy = energyPhrase(results);
  return `Done in ${seconds} s: simulated ${formatNs(results.simTimeNs)}${energy === "" ? "" : `, ${energy}`}, ${count(results.events)} events${verdict}.`;
}

/**
 * The line shown while a run is under way: `Running: t = 5.352 µs, 1,727 events · 0.4 s`.
 * `message` is the latest progress (null before the worker's first), `elapsedMs` the wall time
 * since Run, `topology` the topology's name.
 */
export function progressText(
  message: RunProgressMessage | null,
  elapsedMs: number,
  topology: string,
): string {
  return `Running: ${stageText(message, topology)} · ${(elapsedMs / 1000).toFixed(1)} s`;
}

/** `3 of 11 (size 8 KiB), ETA 12 s`: the host program's position (`sim.progress`) and the estimate. */
export function planText(plan: NonNullable<RunProgressMessage["plan"]>, etaMs: number | undefined): string {
  const label = plan.label === null || plan.label === "" ? "" : ` (${plan.label})`;
  return `${count(plan.done)} of ${count(plan.total)}${label}${plan.done < plan.total ? etaText(etaMs) : ""}`;
}

/** `, ETA 12 s` once an estimate is known, else nothing. */
function etaText(etaMs: number | undefined): string {
  if (etaMs === undefined) return "";
  return etaMs < 1000 ? `, ETA ${Math.round(etaMs)} ms` : `, ETA ${(etaMs / 1000).toFixed(1)} s`;
}

function stageText(message: RunProgressMessage | null, topology: string): string {
  switch (message?.stage) {
    case undefined:
      return "loading the bench's files";
    case "transpile":
      return "transpiling the bench";
    case "build":
      return `building the machine of ${topology}`;
    case "phase1": {
      const plan = message.plan === undefined ? "" : `${planText(message.plan, message.etaMs)}, `;
      return message.events === undefined || message.events === 0
        ? `${plan}running the host program`
        : `${plan}t = ${formatNs(message.simTimeNs ?? 0)}, ${count(message.events)} events`;
    }
    case "phase2":
      return message.done === undefined || message.total === undefined
        ? "phase 2"
        : `phase 2, ${count(message.done)} of ${count(message.total)} ops replayed${etaText(message.etaMs)}`;
    case "reference": {
      const reference = message.reference;
      if (reference === undefined) return "computing the references";
      const position = reference.count > 1 ? ` (${reference.index + 1} of ${reference.count})` : "";
      return `reference ${reference.check}${position}, ${Math.floor(reference.fraction * 100)}%`;
    }
    case "compare":
      return "computing the references and comparing";
  }
}
