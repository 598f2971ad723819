import { type Span, splitEven } from "../split.js";
import type { CapacityOutcome, TokenRoute } from "./moe-routing.js";

// Where each kept assignment travels. Expert-parallel group `g` of `ep` holds experts
// `g x perGroup .. (g + 1) x perGroup - 1` and is the source of the tokens of slice `g` (the
// tokens split evenly over the groups, in order). Group g's send buffer holds, for each
// destination group d in order, for each of d's experts in order, the kept assignments of its
// tokens to that expert in token order: the all-to-all-v moves block d to group d, whose receive
// buffer is then, for each source in order, its experts' runs of rows. The expert GEMMs run over
// those runs (segments); the reverse all-to-all brings every row back to the same place in the
// sender's layout, so a token's result for choice k is at the row its copy left from.

/** A run of received rows that one local expert computes. */
export interface Segment {
  /** The expert's index within its group. */
  readonly expert: number;
  readonly start: number;
  readonly count: number;
}

/** Group g's part of the dispatch, as source and as destination. */
export interface GroupPlan {
  /** The tokens this group routes (its slice of the batch). */
  readonly tokens: Span;
  /** Row of the send buffer -> token (global index) whose copy it is. */
  readonly sendIds: readonly number[];
  /** `sendCounts[d]`: rows sent to group d (all-to-all-v input split sizes). */
  readonly sendCounts: readonly number[];
  /** `recvCounts[s]`: rows received from group s. */
  readonly recvCounts: readonly number[];
  /** The received rows' expert runs, in receive-buffer order. */
  readonly segments: readonly Segment[];
  /** `[tokens.count x topK]`: the send-buffer row of each local token's choice (0 when dropped). */
  readonly positions: readonly number[];
  /** `[tokens.count x topK]`: 1 where the choice is kept, 0 where dropped. */
  readonly keep: readonly number[];
}

/** The dispatch of every group. */
export interface DispatchPlan {
  readonly ep: number;
  readonly perGroup: number;
  readonly groups: readonly GroupPlan[];
}

/** The dispatch plan of `routes` with `outcome` over `ep` groups of `experts / ep` experts each. */
export function dispatchPlan(
  routes: readonly TokenRoute[],
  outcome: CapacityOutcome,
  experts: number,
  ep: number,
): DispatchPlan {
  const perGroup = experts / ep;
  const topK = routes[0]?.experts.length ?? 0;
  const slices = splitEven(routes.length, ep);
  // runs[s][e]: tokens of slice s kept for expert e, in token order, with their choice.
  const runs = slices.map((slice) =>
    Array.from({ length: experts }, (_, e) => {
      const run: { token: number; choice: number }[] = [];
      for (let t = slice.start; t < slice.start + slice.count; t++) {
        const route = routes[t] as TokenRoute;
        for (let k = 0; k < topK; k++) {
          if (route.experts[k] === e && outcome.kept[t]?.[k] === true) run.push({ token: t, choice: k });
        }
      }
      return run;
    }),
  );
  const groupOf = (s: number) => runs[s] as { token: number; choice: number }[][];
  const groups = slices.map((slice, g): GroupPlan => {
    const sendIds: number[] = [];
    const sendCounts: number[] = [];
    const positions = new Array<number>(slice.count * topK).fill(0);
    const keep = new Array<number>(slice.count * topK).fill(0);
    for (let d = 0; d < ep; d++) {
      const before = sendIds.length;
      for (let e = d * perGroup; e < (d + 1) * perGroup; e++) {
        for (const { token, choice } of groupOf(g)[e] as { token: number; choice: number }[]) {
          const at = (token - slice.start) * topK + choice;
          positions[at] = sendIds.length;
          keep[at] = 1;
          sendIds.push(token);
        }
      }
      sendCounts.push(sendIds.length - before);
    }
    const recvCounts: number[] = [];
    const segments: Segment[] = [];
    let start = 0;
    for (let s = 0; s < ep; s++) {
      const before = start;
      for (let local = 0; local < perGroup; local++) {
        const count = (groupOf(s)[g * perGroup + local] as unknown[]).length;
        if (count > 0) segments.push({ expert: local, start, count });
        start += count;
      }
      recvCounts.push(start - before);
    }
    return { tokens: slice, sendIds, sendCounts, recvCounts, segments, positions, keep };
  });
  return { ep, perGroup, groups };
}
